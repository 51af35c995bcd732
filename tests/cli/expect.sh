#!/usr/bin/env bash
# Runs one command and checks how it ended: the exit code (and that no signal ended it),
# stdout and stderr against extended regular expressions (each matched line by line).
#
#   expect.sh [checks...] -- COMMAND [ARGS...]
#
#   --code N          the exit code must be N (default 0); any code >= 128 fails (a signal)
#   --stdout RE       some line of stdout must match RE (repeatable)
#   --stderr RE       some line of stderr must match RE (repeatable)
#   --not-stdout RE   no line of stdout may match RE (repeatable)
#   --error RE        stderr must be exactly one line, starting "error: " and matching RE
#   --stderr-empty    nothing on stderr
#   --stdout-empty    nothing on stdout
#   --env NAME=VALUE  run with this variable set (repeatable)
#   --ulimit-v KIB    run under ulimit -v KIB (virtual memory)
#   --tty             run on a pseudo-terminal (util-linux `script`; skips with 77 without it):
#                     stdout and stderr then arrive together as stdout
#   --progress        the output must hold a progress update (ESC [ K after a \r line)
#   --no-progress     the output must hold none
set -u

code=0
stdout_res=() stderr_res=() not_stdout_res=() envs=()
error_re="" stderr_empty=0 stdout_empty=0 ulimit_v="" tty=0 progress="" 
while [[ $# -gt 0 && $1 != "--" ]]; do
  case $1 in
    --code) code=$2; shift 2 ;;
    --stdout) stdout_res+=("$2"); shift 2 ;;
    --stderr) stderr_res+=("$2"); shift 2 ;;
    --not-stdout) not_stdout_res+=("$2"); shift 2 ;;
    --error) error_re=$2; shift 2 ;;
    --stderr-empty) stderr_empty=1; shift ;;
    --stdout-empty) stdout_empty=1; shift ;;
    --env) envs+=("$2"); shift 2 ;;
    --ulimit-v) ulimit_v=$2; shift 2 ;;
    --tty) tty=1; shift ;;
    --progress) progress=yes; shift ;;
    --no-progress) progress=no; shift ;;
    *) echo "expect.sh: unknown check '$1'" >&2; exit 2 ;;
  esac
done
shift  # the --
[[ $# -gt 0 ]] || { echo "expect.sh: no command after --" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command=("$@")
if [[ $tty -eq 1 ]]; then
  if ! command -v script > /dev/null; then
    echo "expect.sh: no 'script' here to make a terminal: skipped"
    exit 77
  fi
  # script -e returns the command's exit code; -q leaves out its own start and end lines.
  command=(script -qec "$(printf '%q ' "$@")" /dev/null)
fi

(
  [[ -n $ulimit_v ]] && ulimit -v "$ulimit_v"
  exec env "${envs[@]}" "${command[@]}"
) > "$work/out" 2> "$work/err" < /dev/null
rc=$?

failed=0
fail() { echo "FAIL: $*"; failed=1; }

echo "command: ${*}"
[[ ${#envs[@]} -gt 0 ]] && echo "environment: ${envs[*]}"
[[ -n $ulimit_v ]] && echo "ulimit -v $ulimit_v"
echo "exit code: $rc"
echo "--- stdout"; cat "$work/out"
echo "--- stderr"; cat "$work/err"
echo "---"

if [[ $rc -ge 128 ]]; then fail "ended by a signal or abort (exit $rc)"; fi
if [[ $rc -ne $code ]]; then fail "exit code $rc, expected $code"; fi
for re in "${stdout_res[@]}"; do
  grep -Eq -- "$re" "$work/out" || fail "no line of stdout matches: $re"
done
for re in "${not_stdout_res[@]}"; do
  grep -Eq -- "$re" "$work/out" && fail "a line of stdout matches: $re"
done
for re in "${stderr_res[@]}"; do
  grep -Eq -- "$re" "$work/err" || fail "no line of stderr matches: $re"
done
if [[ -n $error_re ]]; then
  lines=$(wc -l < "$work/err")
  [[ $lines -eq 1 ]] || fail "stderr has $lines lines, expected one error line"
  grep -Eq -- '^error: ' "$work/err" || fail "stderr does not start with 'error: '"
  grep -Eq -- "$error_re" "$work/err" || fail "the error line does not match: $error_re"
fi
if [[ $stderr_empty -eq 1 && -s $work/err ]]; then fail "stderr is not empty"; fi
if [[ $stdout_empty -eq 1 && -s $work/out ]]; then fail "stdout is not empty"; fi
if [[ -n $progress ]]; then
  if grep -q $'\e\\[K' "$work/out" "$work/err"; then shown=yes; else shown=no; fi
  [[ $shown == "$progress" ]] || fail "progress shown: $shown, expected $progress"
fi

if [[ $failed -eq 0 ]]; then echo "PASS"; fi
exit $failed
