#!/usr/bin/env bash
# Stops a long `minigraph train` run with ^C (SIGINT) once its loop has logged a step, shows the
# step its checkpoint holds, then resumes from it for two more steps. Exits with the stopped
# run's exit code (4 expected), or 1 when the run ended before it was stopped or the resume failed.
#   stop_and_resume.sh MINIGRAPH DIR TRAIN_ARGS...
set -u
mg=$1 dir=$2
shift 2
rm -rf "$dir" "$dir.log"
"$mg" train "$@" --steps 100000000 --warmup 0 --checkpoint "$dir" --log-every 1 > "$dir.log" &
pid=$!
until grep -q '^step ' "$dir.log" 2> /dev/null; do
  kill -0 $pid 2> /dev/null || { echo "the run ended before it was stopped"; exit 1; }
  sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
step=$("$mg" inspect "$dir/latest/model.safetensors" | awk '$1 == "step" { print $2 }')
echo "checkpoint at step $step"
"$mg" train "$@" --steps $((step + 2)) --warmup 0 --checkpoint "$dir" --resume || exit 1
exit $rc
