#!/usr/bin/env bash
# Runs commands that allocate (train, similar, demo, inspect, gradcheck) under ulimit -v at
# many sizes, from the least the program needs to start up to enough for the work, so that
# allocations fail at every stage: loading, tokenizer training, the GEMM library's buffers,
# building the model, the steps, the output. Each run must end with exit 0, or exit 3 and
# exactly one "error: " line on stderr, within 120 s: never a signal (an abort from an
# exception that escaped), never a hang (OpenBLAS retries a failed mapping forever), never
# another code.
#   memory_sweep.sh MINIGRAPH WORK_DIR
set -u
mg=$1 work=$2
# 16 threads whatever the machine: each thread's stack and malloc arena count against
# ulimit -v, so a 2-core CI machine checks what a 16-core one meets (libgomp ended `train`
# there, exit 1, when a parallel loop took OpenMP's default count instead of minigraph's).
export OMP_NUM_THREADS=16
rm -rf "$work" && mkdir -p "$work" || exit 1
tiny=(--d-model 8 --context 8 --batch 2)
"$mg" train --vocab-size 2048 "${tiny[@]}" --steps 2 --eval-every 0 --checkpoint "$work/ck" \
  > /dev/null || { echo "the training run that makes the checkpoint failed"; exit 1; }

# The least address space in which the program starts at all (its libraries mapped).
start=0
for kib in $(seq 100000 25000 4000000); do
  if (ulimit -v "$kib" && "$mg" --version > /dev/null 2>&1); then start=$kib; break; fi
done
[ "$start" -gt 0 ] || { echo "minigraph --version does not start under 4 GB"; exit 1; }
echo "starts within ulimit -v $start KiB"

words=$(yes cat | head -n 1000 | tr '\n' ' ')
# extra KiB from which the command must succeed (-1: none; where it needs the GEMM library it
# depends on the machine's cores) | the command. `similar` streams its 1,000 x 1,000 tables and
# 2 x 1,000 neighbour lists of each word (before, it built them whole: about a GiB), so 200 MiB
# more than the start must do.
commands=(
  "200000|similar $words --k 1000 --vocab-size 2048 --json"
  "-1|similar cat dog --checkpoint $work/ck"
  "-1|train --vocab-size 512 ${tiny[*]} --steps 3 --eval-every 2 --checkpoint $work/ck-sweep"
  "-1|demo --batch 2"
  "-1|inspect $work/ck/latest/model.safetensors"
  "-1|gradcheck --op embedding"
)
failed=0 runs=0
for extra in 0 16000 60000 100000 200000 400000 600000; do
  for entry in "${commands[@]}"; do
    must=${entry%%|*} command=${entry#*|}
    read -r -a args <<< "$command"
    rm -rf "$work/ck-sweep"
    (ulimit -v $((start + extra)) && exec timeout -k 5 120 "$mg" "${args[@]}") \
      > /dev/null 2> "$work/err" < /dev/null
    rc=$? runs=$((runs + 1))
    lines=$(wc -l < "$work/err")
    shown="ulimit -v +$extra KiB: ${command:0:60}"
    if [ "$must" -ge 0 ] && [ "$extra" -ge "$must" ] && [ "$rc" -ne 0 ]; then
      failed=$((failed + 1))
      echo "FAIL exit $rc, expected 0 from +$must KiB on: $shown"
      head -c 600 "$work/err"
    elif [ "$rc" -eq 0 ] || { [ "$rc" -eq 3 ] && [ "$lines" -eq 1 ] && grep -q '^error: ' "$work/err"; }; then
      echo "ok $rc  $shown  $(head -c 120 "$work/err")"
    else
      failed=$((failed + 1))
      echo "FAIL exit $rc, $lines lines on stderr: $shown"
      head -c 600 "$work/err"
    fi
  done
done
echo "memory_sweep: $runs runs, $failed failed"
[ "$failed" -eq 0 ]
