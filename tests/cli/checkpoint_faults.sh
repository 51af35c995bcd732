#!/usr/bin/env bash
# Faults during `minigraph train --checkpoint DIR` saves, each followed by `--resume`, whose
# losses must equal an uninterrupted run's bit for bit (the JSON lines' loss fields, printed
# with every digit). Prints what it saw; exits 0 when every check holds, 1 when one fails, 77
# when the case cannot run here (a tmpfs that may not be mounted).
#
#   checkpoint_faults.sh MINIGRAPH WORK kill POINT STEP  a SIGKILL at the save's POINT
#                                                        (MINIGRAPH_CHECKPOINT_KILL_AT); the
#                                                        checkpoint left must be at STEP
#   checkpoint_faults.sh MINIGRAPH WORK random N SEED    N SIGKILLs at random moments of runs
#                                                        that save after every step
#   checkpoint_faults.sh MINIGRAPH WORK file_too_large   a save cut by ulimit -f (EFBIG)
#   checkpoint_faults.sh MINIGRAPH WORK disk_full        a save into a full tmpfs (ENOSPC)
#   checkpoint_faults.sh MINIGRAPH WORK read_only        a run on a read-only directory
#   checkpoint_faults.sh MINIGRAPH WORK two_writers      a second run on a held directory
#   checkpoint_faults.sh MINIGRAPH WORK mixed            a hand-made mix of two saves' files
set -u
mg=$1 work=$2 mode=$3
shift 3
rm -rf --one-file-system "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

# A small run on the corpus's first 2,000 lines (4 MB of checkpoint, so that saves take much of
# a step's time), with a tokenizer made once: no run below trains one.
corpus=$(dirname "$0")/../../data/corpus.txt
head -n 2000 "$corpus" > "$work/corpus.txt"
"$mg" train --corpus "$work/corpus.txt" --vocab-size 1024 --d-model 8 --context 8 --batch 2 \
  --steps 1 --eval-every 0 --checkpoint "$work/tok" > /dev/null || fail "the run that makes the tokenizer failed"
cp "$work/tok/latest/tokenizer.model" "$work/tokenizer.model"
# A flat learning rate: a run of 4 steps takes the same first 4 steps as one of 12.
run=(--corpus "$work/corpus.txt" --d-model 256 --context 8 --batch 2 --eval-every 0 --warmup 0
     --lr 0.01 --min-lr 0.01 --seed 7 --threads 1 --json)
# A resumed run takes the checkpoint's tokenizer; `start` runs in the background (pid: $pid).
tokenizer() { [[ " $* " == *" --resume "* ]] || echo "--tokenizer=$work/tokenizer.model"; }
train() { "$mg" train "${run[@]}" $(tokenizer "$@") "$@"; }
start() {
  "$mg" train "${run[@]}" $(tokenizer "$@") "$@" &
  pid=$!
}
wait_for_a_step() {  # until the run started by `start` has printed a step
  until grep -q '"step"' "$1" 2> /dev/null; do
    kill -0 $pid 2> /dev/null || fail "the run ended before its first step: $1"
    sleep 0.01
  done
}
losses() { grep -o '"loss":[^,]*,"lr"' "$1"; }

# The reference: `steps` steps without a stop.
steps=12
[[ $mode == random ]] && steps=40
train --steps $steps > "$work/reference.json" || fail "the reference run failed"

# Resumes DIR to the last step (or, when no save was ever complete, runs from the start) and
# checks every loss it printed against the reference's.
resume_matches() {
  local dir=$1 from=0 resume=()
  if [[ -L $dir/latest ]]; then
    from=$("$mg" inspect "$dir/latest/model.safetensors" | awk '$1 == "checkpoint.step" { print $2 }')
    resume=(--resume)
  fi
  train --steps $steps --checkpoint "$dir" "${resume[@]}" > "$work/resumed.json" ||
    fail "--resume from '$dir' (step $from) failed"
  diff <(losses "$work/reference.json" | tail -n +$((from + 1))) <(losses "$work/resumed.json") \
    > /dev/null || fail "resumed from step $from: the losses differ from the uninterrupted run's"
  echo "resumed from step $from: steps $((from + 1))-$steps equal the uninterrupted run's bit for bit"
}

# Only the lock, `latest` and the folder it names: nothing an interrupted save left.
only_latest() {
  local dir=$1 names
  names=$(cd "$dir" && ls -A | tr '\n' ' ')
  [[ $names == "latest lock $(readlink "$dir/latest") " ]] ||
    fail "'$dir' holds more than its latest save: $names"
}

case $mode in
  kill)
    point=$1 expected=$2
    train --steps 4 --checkpoint "$work/ck" > /dev/null || fail "the first run failed"
    MINIGRAPH_CHECKPOINT_KILL_AT=$point train --steps 12 --save-every 2 --checkpoint "$work/ck" \
      --resume > /dev/null 2> "$work/killed.err"
    rc=$?
    [[ $rc -eq 137 ]] && grep -q "killed at '$point'" "$work/killed.err" ||
      fail "expected a SIGKILL at '$point' (exit 137), got exit $rc: $(cat "$work/killed.err")"
    step=$("$mg" inspect "$work/ck/latest/model.safetensors" | awk '$1 == "checkpoint.step" { print $2 }')
    [[ $step == "$expected" ]] || fail "killed at '$point': checkpoint at step '$step', expected $expected"
    echo "killed at '$point' during the save of step 6: the checkpoint holds step $step"
    resume_matches "$work/ck"
    only_latest "$work/ck"
    ;;
  random)
    count=$1
    RANDOM=$2
    # How long the training loop of a run that saves after every step takes (from its first
    # step's line to its end): the kills fall inside it.
    start --steps $steps --save-every 1 --checkpoint "$work/timing" > "$work/timing.json"
    wait_for_a_step "$work/timing.json"
    begin=$(date +%s%N)
    wait $pid || fail "the timing run failed"
    span_ms=$((($(date +%s%N) - begin) / 1000000 + 1))
    kills=0 saves_cut=0 before_first=0
    while ((kills < count)); do
      rm -rf "$work/ck"
      start --steps $steps --save-every 1 --checkpoint "$work/ck" > "$work/random.json" 2> /dev/null
      wait_for_a_step "$work/random.json"
      sleep "$(printf '%d.%03d' $((RANDOM % span_ms / 1000)) $((RANDOM % span_ms % 1000)))"
      kill -KILL $pid 2> /dev/null || { wait $pid; continue; }  # it had finished: no kill
      wait $pid 2> /dev/null
      kills=$((kills + 1))
      # A step folder that `latest` does not name: the kill cut a save short.
      for folder in "$work"/ck/step-*; do
        [[ -d $folder && $(basename "$folder") != "$(readlink "$work/ck/latest")" ]] &&
          saves_cut=$((saves_cut + 1))
      done
      [[ -L $work/ck/latest ]] || before_first=$((before_first + 1))
      resume_matches "$work/ck" > /dev/null
      only_latest "$work/ck"
    done
    echo "$count SIGKILLs at random moments of ${span_ms} ms training loops ($saves_cut inside a save, $before_first before the first save): every resume equal bit for bit"
    ;;
  file_too_large | disk_full)
    train --steps 4 --checkpoint "$work/ck" > /dev/null || fail "the first run failed"
    size_kib=$(du -sk "$work/ck/latest/" | cut -f1)
    if [[ $mode == disk_full ]]; then
      mkdir "$work/full"
      # Room for the checkpoint and half another: the next save runs out of space.
      if ! mount -t tmpfs -o size=$((size_kib * 3 / 2))k tmpfs "$work/full" 2> /dev/null; then
        echo "cannot mount a tmpfs here (needs root and mount rights): skipped"
        exit 77
      fi
      trap 'umount "$work/full"' EXIT
      cp -a "$work/ck" "$work/full/ck"
      dir=$work/full/ck reason="No space left on device"
      train --steps 12 --save-every 2 --checkpoint "$dir" --resume > /dev/null 2> "$work/save.err"
      rc=$?
    else
      dir=$work/ck reason="File too large"
      (trap '' XFSZ && ulimit -f $((size_kib / 2)) &&
        train --steps 12 --save-every 2 --checkpoint "$dir" --resume > /dev/null 2> "$work/save.err")
      rc=$?
    fi
    kept=$("$mg" inspect "$dir/latest/model.safetensors" | awk '$1 == "checkpoint.id" { print $2 }')
    expected="^error: .*got $reason while writing '$dir/step-000000000006-[0-9a-f]{16}/[a-z]+\.(model|safetensors)'. the save of step 6 is undone, '$dir' still holds step 4, id $kept$"
    [[ $rc -eq 3 && $(wc -l < "$work/save.err") -eq 1 ]] && grep -Eq "$expected" "$work/save.err" ||
      fail "expected exit 3 and one line matching '$expected', got exit $rc: $(cat "$work/save.err")"
    echo "exit 3: $(cat "$work/save.err")"
    only_latest "$dir"
    if [[ $mode == disk_full ]]; then
      rm -rf "$work/ck" && cp -a "$dir" "$work/ck"
      umount "$work/full" && trap - EXIT
    fi
    resume_matches "$work/ck"
    ;;
  read_only)
    train --steps 4 --checkpoint "$work/ck" > /dev/null || fail "the first run failed"
    mkdir "$work/ro"
    if ! mount -t tmpfs -o size=64m tmpfs "$work/ro" 2> /dev/null; then
      echo "cannot mount a tmpfs here (needs root and mount rights): skipped"
      exit 77
    fi
    trap 'umount "$work/ro"' EXIT
    cp -a "$work/ck" "$work/ro/ck" && mount -o remount,ro "$work/ro" || fail "cannot remount read-only"
    train --steps 12 --save-every 2 --checkpoint "$work/ro/ck" --resume > /dev/null 2> "$work/ro.err"
    rc=$?
    expected="^error: checkpoint: argument 'dir': expected a directory that can be made and written, got '$work/ro/ck': Read-only file system$"
    [[ $rc -eq 3 ]] && grep -Eq "$expected" "$work/ro.err" ||
      fail "expected exit 3 and '$expected', got exit $rc: $(cat "$work/ro.err")"
    echo "a run on a read-only checkpoint directory: exit 3 at once, $(cat "$work/ro.err")"
    "$mg" similar the --checkpoint "$work/ro/ck" > /dev/null || fail "the read-only checkpoint cannot be read"
    only_latest "$work/ro/ck"
    rm -rf "$work/ck" && cp -a "$work/ro/ck" "$work/ck"
    umount "$work/ro" && trap - EXIT
    resume_matches "$work/ck"
    ;;
  two_writers)
    start --steps 100000 --checkpoint "$work/ck" > "$work/first.json" 2> /dev/null
    wait_for_a_step "$work/first.json"
    train --steps 4 --checkpoint "$work/ck" > /dev/null 2> "$work/second.err"
    rc=$?
    expected="^error: checkpoint: argument 'dir': expected a checkpoint directory no other run writes, got '$work/ck' held by pid $pid \(lock '$work/ck/lock'\)$"
    [[ $rc -eq 3 && $(wc -l < "$work/second.err") -eq 1 ]] && grep -Eq "$expected" "$work/second.err" ||
      fail "second run: expected exit 3 and '$expected', got exit $rc: $(cat "$work/second.err")"
    echo "a second run on the held directory: exit 3, $(cat "$work/second.err")"
    kill -INT $pid && wait $pid
    [[ $? -eq 4 ]] || fail "the first run, stopped by SIGINT, did not exit with 4"
    echo "the first run, stopped by SIGINT, wrote its checkpoint: exit 4"
    # A holder killed outright releases the lock with its death.
    start --steps 100000 --checkpoint "$work/ck2" > "$work/third.json" 2> /dev/null
    wait_for_a_step "$work/third.json"
    kill -KILL $pid && wait $pid 2> /dev/null
    train --steps 4 --checkpoint "$work/ck2" > /dev/null || fail "the lock of a killed run was not released"
    echo "after a SIGKILL of its holder, the directory is free"
    ;;
  mixed)
    train --steps 4 --checkpoint "$work/a" > /dev/null && train --steps 4 --checkpoint "$work/b" > /dev/null ||
      fail "the two runs failed"
    id() { "$mg" inspect "$1/latest/model.safetensors" | awk '$1 == "checkpoint.id" { print $2 }'; }
    a=$(id "$work/a") b=$(id "$work/b")
    cp -rL "$work/a/latest" "$work/mix"
    cp "$work/b/latest/optimizer.safetensors" "$work/mix/"
    train --steps 12 --checkpoint "$work/mix" --resume > /dev/null 2> "$work/mix.err"
    rc=$?
    expected="^error: train --resume: argument 'checkpoint': expected every file from one save: step 4, id $a \(as in '$work/mix/model.safetensors'\), got step 4, id $b in '$work/mix/optimizer.safetensors' \(files of two saves mixed\)$"
    [[ $rc -eq 3 ]] && grep -Eq "$expected" "$work/mix.err" ||
      fail "expected exit 3 and '$expected', got exit $rc: $(cat "$work/mix.err")"
    echo "a mix of two saves' files: exit 3, $(cat "$work/mix.err")"
    ;;
  *)
    echo "checkpoint_faults.sh: unknown mode '$mode'" >&2
    exit 2
    ;;
esac
rm -rf --one-file-system "$work"
