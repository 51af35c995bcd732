#!/usr/bin/env bash
# SIGTERM while `minigraph train` is still training its tokenizer (before the first step): the
# run must stop as it does between steps (exit 4, the stop said on stderr) with its checkpoint
# written at step 0, and --resume from it must give the losses of a run never stopped.
#   stop_while_setting_up.sh MINIGRAPH DIR TRAIN_ARGS...
set -u
mg=$1 dir=$2
shift 2
rm -rf "$dir" "$dir-whole"
"$mg" train "$@" --checkpoint "$dir" --json > "$dir.log" 2> "$dir.err" &
pid=$!
# The lock appears once the run has its signal handlers and before the tokenizer is trained
# (about a second for the default vocabulary of the shipped corpus).
until [ -e "$dir/lock" ]; do
  kill -0 $pid 2> /dev/null || { echo "the run ended before it was stopped"; exit 1; }
  sleep 0.02
done
kill -TERM $pid
wait $pid
rc=$?
cat "$dir.err" >&2
[ -s "$dir.log" ] && { echo "the run took steps before it stopped: $(head -c 200 "$dir.log")"; exit 1; }
resumed=$("$mg" train "$@" --checkpoint "$dir" --resume --json | tail -n 1) || exit 1
whole=$("$mg" train "$@" --checkpoint "$dir-whole" --json | tail -n 1) || exit 1
echo "resumed: $resumed"
echo "whole:   $whole"
loss() { sed -E 's/.*"loss":([^,]*).*"val_loss":([^,}]*).*/\1 \2/' <<< "$1"; }
[ "$(loss "$resumed")" = "$(loss "$whole")" ] || { echo "the resumed run's losses differ"; exit 1; }
exit $rc
