#!/usr/bin/env bash
# `mpirun -np 2 minigraph train` end to end, on this machine (ctest distributed_cli_mpi):
#   1. a 2-rank run logs once (rank 0), writes its checkpoint, and ends with the loss one
#      process with the same batch reaches (to f32 reduction order); a second 2-rank run and a
#      single process resume that checkpoint;
#   2. a batch the ranks cannot share is one error line, exit 2;
#   3. ranks with different models (MPMD: another --d-model on rank 1) fail at start, exit 3,
#      and a rank that raises alone (a missing file) ends the job, exit 3;
#   4. a rank killed with SIGKILL ends the job within seconds, not a hang;
#   5. a rank that stalls (SIGSTOP) ends the job after --dist-timeout with the timeout's error;
#   6. SIGTERM to one rank stops every rank after the same step, checkpoint written, exit 4.
#   cli_distributed.sh MINIGRAPH MPIEXEC [MPIEXEC FLAGS...]
set -u
mg=$1 mpiexec=$2
shift 2
flags=("$@")
work=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2> /dev/null; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

base=(--vocab-size 512 --context 16 --lr 3e-2 --seed 5)
small=("${base[@]}" --d-model 16 --batch 8)
mpirun2() { "$mpiexec" -np 2 "${flags[@]}" "$@"; }

# The loss of the last JSON line of a run's stdout.
last_loss() { tail -n 1 "$1" | sed -n 's/.*"loss":\([-0-9.e+]*\).*/\1/p'; }

# ---- 1. a run, its log, its checkpoint and its loss ------------------------------------------
mpirun2 "$mg" train "${small[@]}" --steps 20 --eval-every 10 --checkpoint "$work/ck" \
  > "$work/run.out" 2> "$work/run.err"
rc=$?
[[ $rc -eq 0 ]] || fail "2-rank run exit $rc: $(cat "$work/run.err")"
[[ $(grep -c '^done: 20 steps' "$work/run.out") -eq 1 ]] || fail "expected one 'done:' line"
[[ $(grep -c '^data parallel: mpi, 2 ranks' "$work/run.out") -eq 1 ]] ||
  fail "expected one 'data parallel' line: $(cat "$work/run.out")"
[[ -f $work/ck/latest/model.safetensors ]] || fail "no checkpoint written"
mpirun2 "$mg" train "${small[@]}" --steps 20 --json > "$work/two.json" 2> /dev/null
"$mg" train "${small[@]}" --steps 20 --json > "$work/one.json" 2> /dev/null
two=$(last_loss "$work/two.json") one=$(last_loss "$work/one.json")
[[ $(wc -l < "$work/two.json") -eq 20 ]] || fail "expected 20 JSON lines from rank 0 alone"
if awk -v a="$two" -v b="$one" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-4 && d > -1e-4) }'; then
  ok "2 ranks x 4 rows: loss $two, 1 process x 8 rows: $one"
else
  fail "losses differ: 2 ranks $two, 1 process $one"
fi
mpirun2 "$mg" train "${small[@]}" --steps 24 --checkpoint "$work/ck" --resume > "$work/r2.out" 2>&1 ||
  fail "2 ranks could not resume: $(tail -3 "$work/r2.out")"
grep -q '^resumed at step 20' "$work/r2.out" || fail "no 'resumed at step 20': $(cat "$work/r2.out")"
"$mg" train "${small[@]}" --steps 28 --checkpoint "$work/ck" --resume > "$work/r1.out" 2>&1 ||
  fail "1 process could not resume the 2-rank checkpoint: $(tail -3 "$work/r1.out")"
grep -q '^resumed at step 24' "$work/r1.out" || fail "no 'resumed at step 24'"
ok "run, log, checkpoint, resumed by 2 ranks and by 1"

# ---- 2. a batch the ranks cannot share -------------------------------------------------------
mpirun2 "$mg" train "${base[@]}" --d-model 16 --batch 7 --steps 2 > "$work/b.out" 2> "$work/b.err"
rc=$?
errors=$(grep -c '^error: ' "$work/b.err")
if [[ $rc -eq 2 && $errors -eq 1 ]] &&
  grep -q '^error: train --batch: expected a multiple of the 2 ranks (each takes B / 2 windows), got 7$' "$work/b.err"; then
  ok "batch 7 on 2 ranks: exit 2, one error line"
else
  fail "batch 7: exit $rc, $errors error lines: $(cat "$work/b.err")"
fi

# ---- 3. ranks with different models ----------------------------------------------------------
"$mpiexec" "${flags[@]}" -np 1 "$mg" train "${small[@]}" --steps 2 : \
  -np 1 "$mg" train "${base[@]}" --batch 8 --d-model 24 --steps 2 > "$work/m.out" 2> "$work/m.err"
rc=$?
if [[ $rc -eq 3 ]] && grep -q "differ from rank 0" "$work/m.err"; then
  ok "d_model 16 and 24: exit 3, $(grep -m1 'differ' "$work/m.err" | cut -c1-160)"
else
  fail "different models: exit $rc: $(cat "$work/m.err")"
fi

# ---- 3b. one rank raises alone (its tokenizer file is missing) while rank 0 waits for it ------
"$mg" train "${small[@]}" --steps 1 --eval-every 0 --checkpoint "$work/tok" > /dev/null 2>&1
start=$SECONDS
"$mpiexec" "${flags[@]}" -np 1 "$mg" train "${small[@]}" --tokenizer "$work/tok/latest/tokenizer.model" \
  --steps 2 : -np 1 "$mg" train "${small[@]}" --tokenizer "$work/missing.model" --steps 2 \
  > "$work/r.out" 2> "$work/r.err"
rc=$?
if [[ $rc -eq 3 && $((SECONDS - start)) -le 30 ]] &&
  grep -q "^error: rank 1 of 2: Tokenizer::load: argument 'path'" "$work/r.err"; then
  ok "rank 1 raised alone: the job ended in $((SECONDS - start)) s, exit 3: $(grep -m1 '^error' "$work/r.err" | cut -c1-120)"
else
  fail "rank 1 raising alone: exit $rc after $((SECONDS - start)) s: $(cat "$work/r.err")"
fi

# The pid of rank R of the long run: a process whose command line names this script's folder
# (never another job's, should two run at once) with that rank in its environment. Looks for up
# to 5 s (a loaded machine may still be starting the rank).
rank_pid() {
  local pid tries
  for tries in $(seq 25); do
    for pid in $(pgrep -f -- "--checkpoint $work/"); do
      tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
        { echo "$pid"; return 0; }
    done
    sleep 0.2
  done
  return 1
}
# Sends signal SIG to rank R of the long run; where no such process is found the job is ended,
# so that a case fails with what was running instead of waiting for ctest's timeout.
signal_rank() {
  local pid
  if pid=$(rank_pid "$2"); then
    kill "-$1" "$pid" && return 0
  fi
  fail "SIG$1 to rank $2: no such process among: $(pgrep -a -f -- "--checkpoint $work/")"
  pkill -9 -f -- "--checkpoint $work/"
  wait "$job"
  return 1
}
# Starts a long 2-rank run in the background and waits for its first logged step.
start_long() {
  mpirun2 "$mg" train "${small[@]}" --steps 100000000 --log-every 1 "$@" \
    > "$work/long.out" 2> "$work/long.err" &
  job=$!
  local waited=0
  until grep -q '^step ' "$work/long.out" 2> /dev/null; do
    kill -0 "$job" 2> /dev/null ||
      { wait "$job"; fail "the long run ended before its first step: $(cat "$work/long.err")"; return 1; }
    sleep 0.2
    waited=$((waited + 1))
    [[ $waited -lt 600 ]] || { fail "the long run logged no step"; return 1; }
  done
}
# Waits up to 60 s for the background job (every case below must end it well within that);
# sets rc (124 when it had to be killed) and seconds.
finish_long() {
  local start=$SECONDS
  while kill -0 "$job" 2> /dev/null && [[ $((SECONDS - start)) -lt 60 ]]; do sleep 0.2; done
  if kill -0 "$job" 2> /dev/null; then
    echo "still running after 60 s: $(pgrep -a -f -- "--checkpoint $work/")"
    pkill -9 -f -- "--checkpoint $work/"
    wait "$job"
    rc=124
  else
    wait "$job"
    rc=$?
  fi
  seconds=$((SECONDS - start))
}

# ---- 4. a rank that dies ---------------------------------------------------------------------
if start_long --checkpoint "$work/killed" && signal_rank KILL 1; then
  finish_long
  if [[ $rc -ne 0 && $seconds -le 30 ]]; then
    ok "rank 1 killed: the job ended in ${seconds} s, exit $rc: $(grep -m1 -i 'signal\|killed' "$work/long.err")"
  else
    fail "rank 1 killed: exit $rc after ${seconds} s: $(cat "$work/long.err")"
  fi
fi

# ---- 5. a rank that stalls -------------------------------------------------------------------
if start_long --dist-timeout 3 --checkpoint "$work/stalled" && signal_rank STOP 1; then
  finish_long
  if [[ $rc -eq 3 && $seconds -le 30 ]] &&
    grep -q "^error: rank 0 of 2: .*within 3 s (the timeout), got no answer" "$work/long.err"; then
    ok "rank 1 stopped: the job ended in ${seconds} s, exit 3: $(grep -m1 '^error' "$work/long.err" | cut -c1-160)"
  else
    fail "rank 1 stopped: exit $rc after ${seconds} s: $(cat "$work/long.err")"
  fi
fi

# ---- 6. SIGTERM to one rank ------------------------------------------------------------------
if start_long --checkpoint "$work/stop" && signal_rank TERM 1; then
  finish_long
  step=$("$mg" inspect "$work/stop/latest/model.safetensors" 2> /dev/null | awk '$1 == "step" { print $2 }')
  if [[ $rc -eq 4 && -n $step ]] && grep -q "stopped by a signal to another rank after step $step " "$work/long.err"; then
    ok "SIGTERM to rank 1: every rank stopped after step $step, checkpoint written, exit 4"
  else
    fail "SIGTERM to rank 1: exit $rc, step '$step': $(cat "$work/long.err")"
  fi
fi

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
