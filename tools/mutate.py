#!/usr/bin/env python3
"""Mutation testing for minigraph: does the test suite catch realistic one-line bugs?

Each mutation in tools/mutations.txt (its format is documented at the top of that file) is a
small bug planted in one source file: "accumulate" turned into "assign", an offset forgotten,
a tolerance loosened. For each, this tool builds the mutated tree and runs ctest. A mutant is

  killed            some test failed (the names of the failing tests are recorded),
  did not compile   the build failed (counted as killed by the compiler, but listed apart:
                    a mutation should compile, or it tests the compiler and not the suite),
  survived          every test still passed: a gap in the suite. Either strengthen a test so
                    that it fails on this bug, or, where the mutant cannot be observed (it
                    changes nothing the code promises), say why next to the line in the list.

The score is killed / total (did-not-compile included in killed, and shown separately). Record
it, with the survivors and why they survive, in the docs (docs/testing.md or the README's
testing section) after a full run.

How it runs: ONE scratch copy of the committed tree (git HEAD; --uncommitted adds the working
tree's changes and untracked, not ignored, files), configured once CPU-only
(-G Ninja -DMINIGRAPH_CUDA=OFF -DCMAKE_BUILD_TYPE=Release), built once, and the whole suite
run once: it must pass (else the tool stops). Then for each mutation: patch the scratch copy,
rebuild incrementally, run ctest with --stop-on-failure (so a killed mutant ends early) and a
per-test timeout, record the outcome, restore the file byte for byte (also on Ctrl-C, SIGTERM
or an error) and rebuild it. Your working tree is never written to. Plan on one full build (2-3
minutes on two cores) and a baseline suite run, then about a minute per mutant (less when a
test fails early, the whole suite when it survives, a few minutes when a header changes). Logs
of every step: <scratch>/build/mutate-logs (with --keep or --scratch).

Usage (from anywhere; Python 3 standard library only):
  tools/mutate.py --check                 every snippet occurs exactly once? (no build)
  tools/mutate.py --list                  print the mutations, numbered
  tools/mutate.py --only 1,2,5-7          run these mutations
  tools/mutate.py --filter gradcheck      run the mutations whose file/snippet/description match
  tools/mutate.py --report mutants.json   also write a JSON report (.md/.markdown: Markdown)
  tools/mutate.py                         run them all (slow: do it once the suite is ready)
Other options: --jobs N (ninja and ctest, default 2), --timeout S (per test; default ten times
the slowest test of the baseline, at least 60 s), --keep (keep the scratch directory),
--scratch DIR (use and keep DIR; a later run with the same DIR reuses its build),
--uncommitted, --tests REGEX / --exclude REGEX (passed to ctest -R / -E), --mutations FILE.
Exit status: 0 the run completed (whatever survived), 1 a mutation list that does not apply,
2 the scratch build or its baseline suite failed, 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_LIST = REPO / "tools" / "mutations.txt"
SEPARATOR = "|||"
MARKER = ".minigraph-mutate-scratch"  # marks a directory this tool may overwrite and prune
CMAKE_ARGS = ["-G", "Ninja", "-DMINIGRAPH_CUDA=OFF", "-DCMAKE_BUILD_TYPE=Release"]


class Refused(Exception):
    """A problem reported without a traceback; code is the exit status (1: the mutation list,
    2: the scratch build or its baseline)."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------------------------
# The mutation list


@dataclasses.dataclass
class Mutation:
    number: int  # 1-based, in list order
    list_line: int  # line in the list file
    path: str
    old: str
    new: str
    description: str
    error: str | None = None  # a malformed line: the reason


def parse_list(list_path: Path) -> list[Mutation]:
    try:
        text = list_path.read_text(encoding="utf-8")
    except OSError as e:
        raise Refused(f"cannot read the mutation list {list_path}: {e.strerror}")
    mutations = []
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(SEPARATOR)]
        m = Mutation(len(mutations) + 1, lineno, *(fields + [""] * 4)[:4])
        if len(fields) != 4:
            m.error = (f"expected 4 fields separated by '{SEPARATOR}' (file, old, new, "
                       f"description), found {len(fields)}")
        elif not m.path or not m.old or not m.description:
            m.error = "the file, the old snippet and the description must not be empty"
        elif m.old == m.new:
            m.error = "the new snippet equals the old one"
        elif Path(m.path).is_absolute() or ".." in Path(m.path).parts:
            m.error = "the file must be a path inside the repository"
        mutations.append(m)
    return mutations


def where(list_path: Path, m: Mutation) -> str:
    try:
        shown = list_path.relative_to(REPO)
    except ValueError:
        shown = list_path
    return f"{shown}:{m.list_line}: mutation {m.number}"


def find_once(data: bytes, snippet: str) -> tuple[int | None, str]:
    """(offset, "") when snippet occurs exactly once (overlaps counted), else (None, why)."""
    needle = snippet.encode("utf-8")
    hits = []
    start = data.find(needle)
    while start != -1 and len(hits) < 10:
        hits.append(start)
        start = data.find(needle, start + 1)
    if len(hits) == 1:
        return hits[0], ""
    if not hits:
        return None, "snippet not found"
    lines = ", ".join(str(data.count(b"\n", 0, h) + 1) for h in hits)
    more = " or more" if len(hits) == 10 else ""
    return None, (f"snippet is ambiguous: {len(hits)}{more} occurrences (lines {lines}); "
                  "take more of the line to make it unique")


def line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def select(mutations: list[Mutation], only: str | None, text: str | None) -> list[Mutation]:
    chosen = mutations
    if only:
        wanted = set()
        for part in only.split(","):
            part = part.strip()
            if not part:
                continue
            m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
            if not m:
                raise Refused(f"--only: '{part}' is not a number or a range N-M")
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            if lo < 1 or hi > len(mutations) or lo > hi:
                raise Refused(f"--only: {part} is outside 1..{len(mutations)}")
            wanted.update(range(lo, hi + 1))
        chosen = [m for m in chosen if m.number in wanted]
    if text:
        t = text.lower()
        chosen = [m for m in chosen
                  if t in f"{m.path}\n{m.old}\n{m.new}\n{m.description}".lower()]
    if not chosen:
        raise Refused("no mutation matches --only/--filter")
    return chosen


# ---------------------------------------------------------------------------------------------
# Source trees: HEAD, the working tree, the scratch copy


def git(*args: str, binary: bool = False):
    out = subprocess.run(["git", "-C", str(REPO), *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, check=False)
    if out.returncode != 0:
        raise Refused(f"git {' '.join(args)} failed: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout if binary else out.stdout.decode().strip()


class Tree:
    """Reads files of HEAD (committed) or of the working tree."""

    def __init__(self, uncommitted: bool):
        self.uncommitted = uncommitted
        self.commit = git("rev-parse", "--short=12", "HEAD")
        self.name = "the working tree" if uncommitted else f"HEAD {self.commit}"
        self._cache: dict[str, bytes | None] = {}

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            if self.uncommitted:
                p = REPO / path
                self._cache[path] = p.read_bytes() if p.is_file() else None
            else:
                out = subprocess.run(["git", "-C", str(REPO), "show", f"HEAD:{path}"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                self._cache[path] = out.stdout if out.returncode == 0 else None
        return self._cache[path]

    def files(self) -> dict[str, tuple[bytes, int, str | None]]:
        """path -> (content, mode, symlink target or None) for the whole tree."""
        out = {}
        if not self.uncommitted:
            with tarfile.open(fileobj=io.BytesIO(git("archive", "--format=tar", "HEAD",
                                                     binary=True))) as tar:
                for member in tar.getmembers():
                    if member.isfile():
                        out[member.name] = (tar.extractfile(member).read(), member.mode, None)
                    elif member.issym():
                        out[member.name] = (b"", 0o777, member.linkname)
            return out
        listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", binary=True)
        for name in filter(None, listed.decode().split("\0")):
            p = REPO / name
            if p.is_symlink():
                out[name] = (b"", 0o777, os.readlink(p))
            elif p.is_file():  # a file deleted but not yet committed is left out
                out[name] = (p.read_bytes(), p.stat().st_mode & 0o777, None)
        return out


def check(mutations: list[Mutation], tree: Tree, list_path: Path) -> dict[int, str]:
    """{mutation number: refusal message} for the mutations that do not apply to `tree`."""
    problems = {}
    for m in mutations:
        if m.error:
            problems[m.number] = f"{where(list_path, m)}: {m.error}"
            continue
        data = tree.read(m.path)
        if data is None:
            problems[m.number] = f"{where(list_path, m)}: {m.path} does not exist in {tree.name}"
            continue
        offset, why = find_once(data, m.old)
        if offset is None:
            problems[m.number] = f"{where(list_path, m)}: {m.path} in {tree.name}: {why}: {m.old!r}"
    return problems


def mutation_line(m: Mutation, tree: Tree) -> int | None:
    data = tree.read(m.path) if not m.error else None
    if data is None:
        return None
    offset, _ = find_once(data, m.old)
    return None if offset is None else line_of(data, offset)


def sync_scratch(scratch: Path, files: dict[str, tuple[bytes, int, str | None]]) -> int:
    """Makes scratch hold exactly `files` (besides build/ and the marker), writing only files
    that differ so that a reused build stays incremental. Returns how many were written."""
    written = 0
    for name, (content, mode, link) in files.items():
        p = scratch / name
        if link is not None:
            if p.is_symlink() and os.readlink(p) == link:
                continue
            if p.exists() or p.is_symlink():
                p.unlink()
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(link, p)
            written += 1
            continue
        if p.is_file() and not p.is_symlink() and p.read_bytes() == content:
            if (p.stat().st_mode & 0o777) != (mode & 0o777):
                p.chmod(mode & 0o777)
            continue
        if p.is_symlink():
            p.unlink()
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
        p.chmod(mode & 0o777)
        written += 1
    keep = set(files)
    for root, dirs, names in os.walk(scratch, topdown=True):
        rel_root = Path(root).relative_to(scratch)
        if rel_root == Path("."):
            dirs[:] = [d for d in dirs if d != "build"]
        for n in names:
            rel = str(rel_root / n) if rel_root != Path(".") else n
            if rel != MARKER and rel not in keep:
                (Path(root) / n).unlink()
    return written


# ---------------------------------------------------------------------------------------------
# Running the build and the tests


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted("Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name)


def run(cmd: list[str], log: Path, timeout: float | None = None) -> tuple[int, float]:
    """Runs cmd with its output in `log`, in its own process group (ended on any exception,
    Ctrl-C included). Returns (exit status, seconds); 124 on timeout."""
    start = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            rc = 124
        except BaseException:
            stop_group(proc)
            raise
    return rc, time.monotonic() - start


STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def stop_group(proc: subprocess.Popen) -> None:
    """Ends the child's process group (SIGTERM, then SIGKILL); a second Ctrl-C waits."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=10)
                return
            except subprocess.TimeoutExpired:
                continue
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


FAILED_HEADER = "The following tests FAILED:"
FAILED_LINE = re.compile(r"^\s*\d+\s+-\s+(.+?)\s+\(([^()]*)\)\s*$")


GTEST_FAILED = re.compile(r"^\[  FAILED  \] (\S+) \(")


def failing_tests(log: Path, junit: Path) -> list[tuple[str, str]]:
    """[(test, reason)] from ctest's summary ("Failed", "Timeout", "SEGFAULT", "Not Run", ...),
    else from its JUnit file. A GoogleTest group (one ctest test per op or suite) is named with
    the tests that failed in it, from its output in the JUnit file: "ops.add (ops.add_x_..)"."""
    text = log.read_text(errors="replace") if log.exists() else ""
    found = []
    if FAILED_HEADER in text:
        for line in text.split(FAILED_HEADER, 1)[1].splitlines()[1:]:
            m = FAILED_LINE.match(line)
            if not m:
                break
            found.append((m.group(1), m.group(2)))
    inside: dict[str, list[str]] = {}
    if junit.exists():
        try:
            for case in ET.parse(junit).getroot().iter("testcase"):
                failed = case.get("status") == "fail" or case.find("failure") is not None
                if not failed:
                    continue
                out = case.findtext("system-out") or ""
                inside[case.get("name", "?")] = sorted(
                    {m.group(1) for l in out.splitlines() if (m := GTEST_FAILED.match(l))})
                if not found:
                    found.append((case.get("name", "?"), "Failed"))
        except ET.ParseError:
            pass
    return [(f"{name} ({', '.join(inside[name])})" if inside.get(name) else name, why)
            for name, why in found]


def test_times(junit: Path) -> dict[str, float]:
    try:
        return {c.get("name", "?"): float(c.get("time", "0"))
                for c in ET.parse(junit).getroot().iter("testcase")}
    except (ET.ParseError, OSError, ValueError):
        return {}


def compiler_errors(log: Path, limit: int = 3, root: Path | None = None) -> list[str]:
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    if root is not None:
        lines = [l.replace(f"{root}/", "") for l in lines]
    errors = [l.strip() for l in lines if re.search(r"\berror\b", l)]
    return (errors or [l.strip() for l in lines if l.strip()][-limit:])[:limit]


def tail(log: Path, n: int = 25) -> str:
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return "\n".join(lines[-n:])


class Scratch:
    def __init__(self, root: Path, args):
        self.root = root
        self.build = root / "build"
        self.logs = self.build / "mutate-logs"
        self.args = args

    def configure_and_build(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        cmd = ["cmake", "-S", str(self.root), "-B", str(self.build), *CMAKE_ARGS,
               *self.args.cmake_arg]
        say(f"configuring: {' '.join(cmd)}")
        rc, secs = run(cmd, self.logs / "configure.log")
        if rc != 0:
            raise Refused(f"the scratch configure failed ({rc}):\n{tail(self.logs / 'configure.log')}",
                          2)
        say(f"building the scratch copy (-j{self.args.jobs}) ...")
        rc, secs = self.compile(self.logs / "build.log")
        if rc != 0:
            raise Refused(f"the scratch build of the unmutated tree failed ({rc}):\n"
                          + "\n".join(compiler_errors(self.logs / "build.log", 10, self.root)), 2)
        say(f"built in {secs:.0f} s")

    def compile(self, log: Path) -> tuple[int, float]:
        return run(["cmake", "--build", str(self.build), "-j", str(self.args.jobs)], log)

    def ctest(self, log: Path, junit: Path, timeout: float, stop_on_failure: bool):
        cmd = ["ctest", "--test-dir", str(self.build), "-j", str(self.args.jobs), "--timeout",
               str(int(timeout)), "--output-junit", str(junit), "--no-tests=error"]
        if stop_on_failure:
            cmd.append("--stop-on-failure")
        if self.args.tests:
            cmd += ["-R", self.args.tests]
        if self.args.exclude:
            cmd += ["-E", self.args.exclude]
        return run(cmd, log)


# The file now mutated and its original bytes: restored by run_mutant, and again by main on
# any way out (a signal can land anywhere), with signals held off while it is written.
PENDING: dict[Path, bytes] = {}


def restore_pending() -> None:
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        for path, original in list(PENDING.items()):
            write_restoring_mtime(path, original)
            if path.read_bytes() != original:
                raise RuntimeError(f"could not restore {path}")
            del PENDING[path]
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def write_restoring_mtime(path: Path, content: bytes) -> None:
    """Writes content; the mtime moves forward even on a coarse clock, so ninja rebuilds."""
    before = path.stat().st_mtime_ns
    path.write_bytes(content)
    after = path.stat().st_mtime_ns
    if after <= before:
        os.utime(path, ns=(after, before + 1_000_000))


@dataclasses.dataclass
class Result:
    mutation: Mutation
    line: int | None
    status: str  # "killed", "did not compile", "survived", "error"
    tests: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    detail: str = ""
    build_s: float = 0.0
    test_s: float = 0.0
    restore_s: float = 0.0  # rebuilding the restored file, so the next mutant starts clean

    @property
    def seconds(self) -> float:
        return self.build_s + self.test_s + self.restore_s


def run_mutant(scratch: Scratch, m: Mutation, timeout: float) -> Result:
    path = scratch.root / m.path
    original = path.read_bytes()
    offset, why = find_once(original, m.old)
    if offset is None:
        return Result(m, None, "error", detail=f"{m.path}: {why}")
    line = line_of(original, offset)
    old = m.old.encode("utf-8")
    mutant = original[:offset] + m.new.encode("utf-8") + original[offset + len(old):]
    tag = f"{m.number:03d}"
    PENDING[path] = original
    try:
        write_restoring_mtime(path, mutant)
        result = outcome(scratch, m, line, tag, timeout)
    finally:
        restore_pending()  # a Ctrl-C meanwhile is delivered just after
    rc, result.restore_s = scratch.compile(scratch.logs / f"{tag}-restore.log")
    if rc != 0:
        raise Refused(f"after mutation {m.number} was undone the tree no longer builds:\n"
                      + "\n".join(compiler_errors(scratch.logs / f"{tag}-restore.log", 10,
                                                   scratch.root)), 2)
    return result


def outcome(scratch: Scratch, m: Mutation, line: int, tag: str, timeout: float) -> Result:
    """Builds and tests the mutated scratch copy."""
    rc, build_s = scratch.compile(scratch.logs / f"{tag}-build.log")
    if rc != 0:
        errors = compiler_errors(scratch.logs / f"{tag}-build.log", 3, scratch.root)
        return Result(m, line, "did not compile", detail=" | ".join(errors), build_s=build_s)
    log, junit = scratch.logs / f"{tag}-ctest.log", scratch.logs / f"{tag}-ctest.xml"
    rc, test_s = scratch.ctest(log, junit, timeout, stop_on_failure=True)
    if rc == 0:
        return Result(m, line, "survived", build_s=build_s, test_s=test_s)
    tests = failing_tests(log, junit)
    detail = "" if tests else f"ctest exited {rc}: {tail(log, 3)}"
    return Result(m, line, "killed", tests, detail, build_s, test_s)


# ---------------------------------------------------------------------------------------------
# Output


def say(text: str) -> None:
    print(text, flush=True)


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def tests_text(r: Result, first: int = 3) -> str:
    if r.status == "did not compile":
        return shorten(r.detail, 70)
    if r.status == "error":
        return r.detail
    names = [t if why == "Failed" else f"{t} ({why})" for t, why in r.tests]
    text = ", ".join(names[:first]) + (f" +{len(names) - first} more" if len(names) > first else "")
    return text or r.detail


def totals(results: list[Result]) -> dict:
    count = {s: sum(r.status == s for r in results)
             for s in ("killed", "did not compile", "survived", "error")}
    ran = len(results) - count["error"]
    killed = count["killed"] + count["did not compile"]
    return {"total": ran, "killed": killed, "killed_by_tests": count["killed"],
            "did_not_compile": count["did not compile"], "survived": count["survived"],
            "errors": count["error"], "score": f"{killed} / {ran}",
            "percent": round(100.0 * killed / ran, 1) if ran else 0.0}


def print_table(results: list[Result]) -> None:
    rows = [("#", "where", "bug", "result", "killing tests (first 3)")]
    for r in results:
        loc = f"{r.mutation.path}:{r.line}" if r.line else r.mutation.path
        rows.append((str(r.mutation.number), loc, shorten(r.mutation.description, 60),
                     r.status.upper() if r.status == "survived" else r.status, tests_text(r)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    say("")
    for i, row in enumerate(rows):
        say("  ".join(row[c].ljust(widths[c]) for c in range(4)) + "  " + row[4])
        if i == 0:
            say("  ".join("-" * w for w in widths) + "  " + "-" * 23)
    t = totals(results)
    say(f"\nscore: {t['score']} killed ({t['percent']}%): {t['killed_by_tests']} by the tests, "
        f"{t['did_not_compile']} did not compile; {t['survived']} survived"
        + (f"; {t['errors']} could not be applied" if t["errors"] else ""))
    survivors = [r for r in results if r.status == "survived"]
    if survivors:
        say("survivors (bugs no test catches): "
            + ", ".join(f"#{r.mutation.number}" for r in survivors))


def write_report(path: Path, results: list[Result], meta: dict) -> None:
    t = totals(results)
    if path.suffix.lower() == ".json":
        doc = {**meta, **t, "mutants": [{
            "number": r.mutation.number, "file": r.mutation.path, "line": r.line,
            "list_line": r.mutation.list_line, "description": r.mutation.description,
            "old": r.mutation.old, "new": r.mutation.new, "status": r.status,
            "killing_tests": [{"name": n, "reason": why} for n, why in r.tests],
            "detail": r.detail, "build_seconds": round(r.build_s, 1),
            "test_seconds": round(r.test_s, 1), "restore_build_seconds": round(r.restore_s, 1)}
            for r in results]}
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    md = ["# Mutation testing report", "",
          f"Tree: {meta['tree']}; {meta['date']}; `{meta['command']}`", "",
          f"**Score: {t['score']} killed ({t['percent']}%)**: {t['killed_by_tests']} by the "
          f"tests, {t['did_not_compile']} did not compile, {t['survived']} survived"
          + (f", {t['errors']} could not be applied" if t["errors"] else "")
          + (" (interrupted: partial)" if meta.get("interrupted") else "") + ".", "",
          "| # | where | bug | result | killing tests |", "|---|---|---|---|---|"]
    for r in results:
        cell = lambda s: s.replace("|", "\\|")
        loc = f"{r.mutation.path}:{r.line}" if r.line else r.mutation.path
        result = "**survived**" if r.status == "survived" else r.status
        md.append(f"| {r.mutation.number} | `{loc}` | {cell(r.mutation.description)} | {result} "
                  f"| {cell(tests_text(r, 5))} |")
    path.write_text("\n".join(md) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tools/mutate.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Mutation testing: plant each bug of tools/mutations.txt in a scratch copy, "
                    "rebuild, run ctest, and report which bugs the suite catches.",
        epilog=__doc__.split("Usage", 1)[1].split("\n", 1)[1] if "Usage" in __doc__ else None)
    p.add_argument("--mutations", type=Path, default=DEFAULT_LIST, metavar="FILE",
                   help="the mutation list (default tools/mutations.txt)")
    p.add_argument("--list", action="store_true", help="print the mutations and exit")
    p.add_argument("--check", action="store_true",
                   help="check that every snippet occurs exactly once, without building")
    p.add_argument("--only", metavar="N,M,A-B", help="run only these mutation numbers")
    p.add_argument("--filter", metavar="TEXT",
                   help="run only mutations whose file, snippets or description contain TEXT")
    p.add_argument("--report", type=Path, metavar="FILE",
                   help="write a report: JSON if FILE ends in .json, else Markdown")
    p.add_argument("--jobs", "-j", type=int, default=2, help="ninja and ctest jobs (default 2)")
    p.add_argument("--timeout", type=float,
                   help="per-test timeout in seconds (default: 10x the slowest baseline test, "
                        "at least 60)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--scratch", type=Path, metavar="DIR",
                   help="scratch directory to use and keep (reused, build included, next time)")
    p.add_argument("--uncommitted", action="store_true",
                   help="copy the working tree (uncommitted and untracked files) instead of HEAD")
    p.add_argument("--tests", metavar="REGEX", help="run only the tests matching REGEX (ctest -R)")
    p.add_argument("--exclude", metavar="REGEX", help="skip the tests matching REGEX (ctest -E)")
    p.add_argument("--cmake-arg", action="append", default=[], metavar="ARG",
                   help="an extra argument for the scratch configure (repeatable)")
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        p.error("--timeout must be positive")
    return args


def do_list(mutations, tree, list_path) -> None:
    for m in mutations:
        line = mutation_line(m, tree)
        loc = f"{m.path}:{line}" if line else f"{m.path}:?"
        say(f"{m.number:3d}. {loc}  -- {m.description}")
        if m.error:
            say(f"     ! {where(list_path, m)}: {m.error}")
        else:
            say(f"     - {m.old}\n     + {m.new}")
    say(f"\n{len(mutations)} mutations in {list_path} (lines as in {tree.name})")


def do_check(mutations, tree, list_path) -> int:
    problems = check(mutations, tree, list_path)
    for message in problems.values():
        say(f"refused: {message}")
    say(f"{len(mutations)} mutations checked against {tree.name}: "
        f"{len(mutations) - len(problems)} apply exactly once, {len(problems)} refused")
    # The other tree, for information: a colleague's edit that moves a snippet shows here first.
    other = Tree(not tree.uncommitted)
    other_problems = check(mutations, other, list_path)
    if other_problems.keys() != problems.keys():
        say(f"note: against {other.name}, {len(mutations) - len(other_problems)} apply and "
            f"{len(other_problems)} are refused:")
        for number in sorted(other_problems.keys() - problems.keys()):
            say(f"  refused there: {other_problems[number]}")
        for number in sorted(problems.keys() - other_problems.keys()):
            say(f"  applies there: mutation {number}")
    else:
        say(f"(the same against {other.name})")
    return 1 if problems else 0


def main(argv=None) -> int:
    args = parse_args(argv)
    list_path = args.mutations.resolve()
    mutations = parse_list(list_path)
    if not mutations:
        raise Refused(f"{list_path} holds no mutations")
    tree = Tree(args.uncommitted)
    if args.list:
        do_list(select(mutations, args.only, args.filter) if (args.only or args.filter)
                else mutations, tree, list_path)
        return 0
    if args.check:
        return do_check(select(mutations, args.only, args.filter) if (args.only or args.filter)
                        else mutations, tree, list_path)

    chosen = select(mutations, args.only, args.filter)
    problems = check(chosen, tree, list_path)
    if problems:
        for message in problems.values():
            say(f"refused: {message}")
        raise Refused(f"{len(problems)} of the chosen mutations do not apply to {tree.name}; "
                      "fix tools/mutations.txt (see --check)")

    # SIGINT too: a shell without job control starts background commands with it ignored.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    keep = args.keep or args.scratch is not None
    if args.scratch:
        root = args.scratch.resolve()
        if root == REPO or REPO in root.parents:
            raise Refused("--scratch must be outside the repository (its build would find the "
                          "repository's .git)")
        if root.exists() and any(root.iterdir()) and not (root / MARKER).exists():
            raise Refused(f"{root} is not empty and was not made by this tool ({MARKER} missing)")
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="minigraph-mutate-"))
    (root / MARKER).write_text(f"scratch copy of {REPO} for tools/mutate.py\n")
    scratch = Scratch(root, args)
    started = time.monotonic()
    results: list[Result] = []
    interrupted = None
    meta = {"tree": tree.name, "date": time.strftime("%Y-%m-%d %H:%M"),
            "command": "tools/mutate.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    try:
        say(f"scratch copy of {tree.name} in {root}")
        written = sync_scratch(root, tree.files())
        say(f"{written} files written")
        scratch.configure_and_build()

        chosen_tests = "".join(f" {o} '{r}'" for o, r in (("-R", args.tests), ("-E", args.exclude)) if r)
        say(f"running the suite on the unmutated tree (ctest -j{args.jobs}{chosen_tests}) ...")
        log, junit = scratch.logs / "baseline-ctest.log", scratch.logs / "baseline-ctest.xml"
        rc, secs = scratch.ctest(log, junit, args.timeout or 600, stop_on_failure=False)
        if rc != 0:
            failed = failing_tests(log, junit)
            names = "\n  ".join(f"{t} ({why})" for t, why in failed) or tail(log)
            raise Refused(f"the baseline is not green: ctest exited {rc} on the unmutated tree; "
                          f"failing:\n  {names}\n(no mutant can be judged; fix these first)", 2)
        times = test_times(junit)
        slowest = max(times.items(), key=lambda kv: kv[1], default=("-", 0.0))
        timeout = args.timeout or max(60.0, 10 * slowest[1])
        say(f"baseline green: {len(times)} tests in {secs:.0f} s (slowest {slowest[0]}, "
            f"{slowest[1]:.1f} s); per-test timeout {timeout:.0f} s")
        meta.update(baseline_tests=len(times), baseline_test_seconds=round(secs),
                    per_test_timeout=round(timeout))

        mutants_started = time.monotonic()
        for i, m in enumerate(chosen, 1):
            say(f"[{i}/{len(chosen)}] #{m.number} {m.path}: {m.description}")
            r = run_mutant(scratch, m, timeout)
            results.append(r)
            left = (time.monotonic() - mutants_started) / i * (len(chosen) - i)
            say(f"    -> {r.status.upper() if r.status == 'survived' else r.status} "
                f"(build {r.build_s:.0f} s, tests {r.test_s:.0f} s, rebuild after undo "
                f"{r.restore_s:.0f} s)" + (f": {tests_text(r)}" if r.status != "survived" else "")
                + (f"; about {left / 60:.0f} min left" if i < len(chosen) else ""))
    except (KeyboardInterrupt, Interrupted) as e:
        interrupted = str(e) or "Ctrl-C"
        say(f"\ninterrupted ({interrupted}); every mutated file was restored")
    finally:
        restore_pending()
        if results:
            print_table(results)
            if args.report:
                meta.update(seconds=round(time.monotonic() - started),
                            interrupted=bool(interrupted))
                write_report(args.report, results, meta)
                say(f"report written to {args.report}")
        if keep:
            say(f"scratch directory kept: {root} (logs in {scratch.logs})")
        else:
            shutil.rmtree(root, ignore_errors=True)
    if results and not interrupted:
        per = sum(r.seconds for r in results) / len(results)
        say(f"{len(results)} mutants in {time.monotonic() - started:.0f} s in all, "
            f"{per:.0f} s per mutant on average")
    return 130 if interrupted else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Refused as e:
        print(f"mutate.py: {e}", file=sys.stderr)
        sys.exit(e.code)
