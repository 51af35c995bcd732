#!/usr/bin/env bash
# Lists functions longer than N lines (default 60) in the project's own C++ sources.
#
#   tools/check-function-length.sh [--max N] ROOT
#
# Scans *.cpp, *.h, *.cu, *.cuh under ROOT's source folders (framework ops models optim
# distributed train tools tests examples include, whichever exist), skipping build*
# folders and .git. Needs only bash, find, sort and a POSIX awk (mawk is enough).
#
# A function body is a { ... } block opened right after a ')' (with qualifiers such as const,
# noexcept, override, a trailing return type or a constructor's initializer list allowed in
# between, over as many lines as needed) where no other function body is open. Namespace, class,
# struct, union and enum blocks are not functions, but member functions defined in a class are;
# lambdas and nested blocks count toward the enclosing function. Braces in comments, string,
# raw string and character literals and in preprocessor lines are ignored.
#
# Length = closing brace's line - opening brace's line + 1. A function is exempt when a comment
# containing "long function:" (say why) is inside its body, on its signature's lines, or in the
# 3 lines before its signature, e.g.
#     // long function: one table of cases, read top to bottom
#
# Prints "path:line: function of N lines (over M): signature" for each offender and a summary,
# and exits 1 if there is any; otherwise prints the ok line and exits 0. Exit 2 on usage errors.

set -euo pipefail

usage() {
  echo "usage: $0 [--max N] ROOT" >&2
  exit 2
}

max=60
root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --max) [ $# -ge 2 ] || usage; max="$2"; shift 2 ;;
    --max=*) max="${1#--max=}"; shift ;;
    -h|--help) usage ;;
    -*) echo "$0: unknown option: $1" >&2; usage ;;
    *) [ -z "$root" ] || usage; root="$1"; shift ;;
  esac
done
[ -n "$root" ] || usage
case "$max" in ''|*[!0-9]*) echo "$0: --max wants a whole number, got '$max'" >&2; exit 2 ;; esac
[ -d "$root" ] || { echo "$0: no such folder: $root" >&2; exit 2; }
cd "$root"

dirs=()
for d in framework ops models optim distributed train tools tests examples include; do
  [ -d "$d" ] && dirs+=("$d")
done
if [ ${#dirs[@]} -eq 0 ]; then
  echo "no function over $max lines without a stated reason: ok (0 files)"
  exit 0
fi

read -r -d '' AWK_PROG <<'AWK' || true
# Reads file names (one per line) on stdin and scans each file with getline.

function reset_file() {
  depth = 0; in_comment = 0; in_raw = 0; in_pp = 0; fopen = 0
  head = ""; head_line = 0; last_fclose = 0
  split("", kind); split("", saved); split("", saved_line); split("", src); split("", cmt)
}

# Replace every balanced (...) group by "()", so a signature's parameter list does not matter.
function flatten(s,    out, i, c, n, pd) {
  out = ""; pd = 0; n = length(s)
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (c == "(") { if (pd == 0) out = out "("; pd++ }
    else if (c == ")") { if (pd > 0) pd--; if (pd == 0) out = out ")" }
    else if (pd == 0) out = out c
  }
  return out
}

# Drop "template <...>" parameter lists (balanced angle brackets), so "template <class T>"
# does not look like a class head.
function strip_templates(s,    out, p, i, c, ad, n) {
  out = ""
  while (match(s, /(^|[^A-Za-z0-9_])template[ \t]*</)) {
    out = out substr(s, 1, RSTART - 1) " "
    s = substr(s, RSTART + RLENGTH)
    ad = 1; n = length(s)
    for (i = 1; i <= n && ad > 0; i++) {
      c = substr(s, i, 1)
      if (c == "<") ad++
      else if (c == ">") ad--
    }
    s = substr(s, i)
  }
  return out s
}

# What the brace after head opens: "func", "scope" (namespace/class/...) or "expr" (anything
# else: initializers, brace-initialised members, enum-like lists).
function classify(h,    f, t) {
  f = flatten(h)
  t = f
  sub(/[ \t]+$/, "", t)
  # peel trailing qualifiers: const noexcept override final mutable try volatile & &&
  while (1) {
    if (t ~ /&$/) t = substr(t, 1, length(t) - 1)
    else if (match(t, /(const|volatile|noexcept|override|final|mutable|try)$/) &&
             (RSTART == 1 || substr(t, RSTART - 1, 1) !~ /[A-Za-z0-9_]/)) t = substr(t, 1, RSTART - 1)
    else break
    sub(/[ \t]+$/, "", t)
  }
  if (t ~ /\)$/) return "func"                                  # f(...) / f(...) const / ... : a_(x)
  if (t ~ /\)[^;]*[^:]:[^:][^;]*[}]$/ && t !~ /=/) return "func"  # Foo(...) : a_{x} {
  if (t ~ /\)[^;=]*->/) return "func"                            # auto f(...) -> T {
  if (t ~ /\)[ \t]*(const|noexcept|&)*[ \t]*requires[ \t]/) return "func"  # f(...) requires C<T> {
  t = strip_templates(f)
  if (t ~ /(^|[^A-Za-z0-9_])(namespace|class|struct|union|enum)([^A-Za-z0-9_]|$)/) return "scope"
  if (t ~ /(^|[^A-Za-z0-9_])extern[ \t]*""[ \t]*$/) return "scope"
  return "expr"
}

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }

# Strip comments and literals from one line; returns code, sets line_cmt to its comment text.
function strip_line(rest,    out, c, pre, nx, p, m) {
  out = ""; line_cmt = ""
  while (rest != "") {
    if (in_comment) {
      p = index(rest, "*/")
      if (p == 0) { line_cmt = line_cmt " " rest; rest = ""; break }
      line_cmt = line_cmt " " substr(rest, 1, p - 1)
      rest = substr(rest, p + 2); in_comment = 0; out = out " "
      continue
    }
    if (in_raw) {
      p = index(rest, raw_end)
      if (p == 0) { rest = ""; break }
      rest = substr(rest, p + length(raw_end)); in_raw = 0; out = out "\"\""
      continue
    }
    if (!match(rest, /["'\/]/)) { out = out rest; break }
    c = substr(rest, RSTART, 1)
    pre = substr(rest, 1, RSTART - 1)
    rest = substr(rest, RSTART + 1)
    if (c == "/") {
      nx = substr(rest, 1, 1)
      if (nx == "/") { out = out pre; line_cmt = line_cmt " " substr(rest, 2); rest = ""; break }
      if (nx == "*") { out = out pre " "; rest = substr(rest, 2); in_comment = 1; continue }
      out = out pre "/"
      continue
    }
    if (c == "\"" && pre ~ /(^|[^A-Za-z0-9_])(u8|u|U|L)?R$/ && (p = index(rest, "(")) > 0) {
      raw_end = ")" substr(rest, 1, p - 1) "\""
      rest = substr(rest, p + 1); in_raw = 1; out = out pre
      continue
    }
    if (c == "'" && pre ~ /(^|[^A-Za-z0-9_.])[0-9][A-Za-z0-9_.]*$/) {   # digit separator 1'000
      out = out pre
      continue
    }
    # ordinary string or character literal: skip to the unescaped closing quote on this line
    out = out pre c c
    while (rest != "") {
      m = (c == "\"") ? match(rest, /[\\"]/) : match(rest, /[\\']/)
      if (!m) { rest = ""; break }
      if (substr(rest, RSTART, 1) == "\\") { rest = substr(rest, RSTART + 2); continue }
      rest = substr(rest, RSTART + 1); break
    }
  }
  return out
}

function signature(from, to,    i, s, t) {
  s = ""
  if (from < 1 || from > to) from = to
  for (i = from; i <= to; i++) {
    t = trim(src[i])
    if (t != "") s = (s == "" ? t : s " " t)
  }
  sub(/[ \t]*[{][^{]*$/, "", s)   # drop the opening brace and what follows it on its line
  if (length(s) > 100) s = substr(s, 1, 100)
  return s
}

function exempt(from, to,    i) {
  if (from > fstart) from = fstart
  from -= 3
  if (from <= last_fclose) from = last_fclose + 1   # not the previous function's comments
  for (i = from; i <= to; i++)
    if ((i in cmt) && index(cmt[i], "long function:")) return 1
  return 0
}

function add_head(s) {
  if (head_line == 0 && s ~ /[^ \t]/) head_line = ln
  head = head s
  # "public:" and friends on a line of their own start no declaration
  if (head ~ /^[ \t]*(public|private|protected)[ \t]*:[ \t]*$/) { head = ""; head_line = 0 }
}

function open_brace(    k) {
  depth++
  if (fopen) { kind[depth] = "block"; return }
  k = classify(head)
  kind[depth] = k
  saved[depth] = head
  saved_line[depth] = head_line
  if (k == "func") {
    fopen = 1; fdepth = depth; fstart = ln; fsig = head_line
  }
  head = ""; head_line = 0
}

function close_brace(    k, n) {
  if (depth == 0) { unbalanced = 1; return }
  k = kind[depth]
  if (fopen && depth == fdepth) {
    fopen = 0
    n = ln - fstart + 1
    if (n > max && !exempt(fsig, ln)) {
      printf "%s:%d: function of %d lines (over %d): %s\n", file, fstart, n, max, signature(fsig ? fsig : fstart, fstart)
      bad++
    }
    last_fclose = ln
  }
  if (k == "block") { depth--; return }
  # After an initializer-like block, the enclosing statement goes on; after a function or
  # a scope, a new declaration starts (unless we are inside an initializer ourselves).
  if (k == "expr" || (depth > 1 && kind[depth - 1] == "expr")) {
    head = saved[depth] "{}"; head_line = saved_line[depth]
  } else {
    head = ""; head_line = 0
  }
  depth--
}

function scan_code(code,    c) {
  while (match(code, /[{};]/)) {
    c = substr(code, RSTART, 1)
    if (!fopen) add_head(substr(code, 1, RSTART - 1))
    code = substr(code, RSTART + 1)
    if (c == "{") open_brace()
    else if (c == "}") close_brace()
    else if (!fopen) {
      if (depth > 0 && kind[depth] == "expr") add_head(";")
      else { head = ""; head_line = 0 }
    }
  }
  if (!fopen) add_head(code " ")
}

BEGIN { bad = 0; files = 0 }

{
  file = $0
  if (file == "") next
  files++
  reset_file()
  unbalanced = 0
  ln = 0
  while ((r = (getline line < file)) > 0) {
    ln++
    sub(/\r$/, "", line)
    src[ln] = line
    was_pp = in_pp
    cline = strip_line(line)
    if (line_cmt != "") cmt[ln] = line_cmt
    if (was_pp || cline ~ /^[ \t]*#/) {          # preprocessor line (and its continuations)
      in_pp = (line ~ /\\$/)
      continue
    }
    in_pp = 0
    scan_code(cline)
  }
  close(file)
  if (r < 0) { printf "%s: cannot read\n", file > "/dev/stderr"; unreadable = 1 }
  if (fopen || depth != 0 || unbalanced)
    printf "%s: warning: unbalanced braces (depth %d at end of file)\n", file, depth > "/dev/stderr"
}

END {
  if (bad > 0) {
    printf "%d function%s over %d lines without a stated reason (%d files scanned); split %s, or say why with a \"// long function: <reason>\" comment\n", bad, (bad == 1 ? "" : "s"), max, files, (bad == 1 ? "it" : "them")
    exit 1
  }
  if (unreadable) exit 2
  printf "no function over %d lines without a stated reason: ok (%d files)\n", max, files
  exit 0
}
AWK

# AWK may name another awk, with options (say AWK="gawk --posix"); the default is plain awk.
read -r -a awk_cmd <<< "${AWK:-awk}"
find "${dirs[@]}" \( -name 'build*' -o -name .git \) -prune -o -type f \
  \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print |
  LC_ALL=C sort |
  "${awk_cmd[@]}" -v max="$max" "$AWK_PROG"
