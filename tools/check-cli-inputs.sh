#!/usr/bin/env bash
# Every class of bad input through the `minigraph` command line: numbers at and past the int64
# edges, words that are not numbers, missing and unreadable files, files of the wrong kind
# (a directory, text where a safetensors file, a SentencePiece model or a shared library is
# expected), truncated and corrupted files, checkpoints with a part missing. Each must end
# with its documented exit code (2: the command line, 3: the work could not be done), exactly
# one line on stderr starting "error: ", and never a signal. Prints one line per case and a
# summary; exits 1 if any case fails.
#   tools/check-cli-inputs.sh [path/to/minigraph]      (default: build/tools/minigraph)
set -u
mg=${1:-build/tools/minigraph}
[ -x "$mg" ] || { echo "check-cli-inputs: no minigraph at '$mg'" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Files of every wrong kind.
printf 'just text\n' > "$work/text.txt"
: > "$work/empty"
head -c 4096 /dev/urandom > "$work/random.bin" 2> /dev/null || dd if=/dev/zero of="$work/random.bin" bs=4096 count=1 2> /dev/null
printf '\xff\xff\xff\xff\xff\xff\xff\x7f{}' > "$work/huge_header.safetensors"  # header length 2^63 - 1
printf '\x10\x00\x00\x00\x00\x00\x00\x00{"a":{"dtype":"F' > "$work/cut.safetensors"
mkdir -p "$work/dir"
tiny=(--vocab-size 256 --d-model 8 --context 8 --batch 2 --steps 2 --eval-every 0)
"$mg" train "${tiny[@]}" --checkpoint "$work/ck" > /dev/null 2>&1 ||
  { echo "check-cli-inputs: the tiny training run that makes a checkpoint failed" >&2; exit 1; }
cp -r "$work/ck" "$work/ck_no_optimizer" && rm "$work/ck_no_optimizer/latest/optimizer.safetensors"
cp -r "$work/ck" "$work/ck_bad_tokenizer" && cp "$work/random.bin" "$work/ck_bad_tokenizer/latest/tokenizer.model"
cp -r "$work/ck" "$work/ck_cut_model" && truncate -s 100 "$work/ck_cut_model/latest/model.safetensors"

max=9223372036854775807
cases=(
  # code | command line (words split on spaces; @W is the work folder)
  "2|summary --vocab $max"
  "2|summary --vocab 9223372036854775808"
  "2|summary --vocab -9223372036854775808"
  "2|summary --d-model 0"
  "2|summary --context 1e3"
  "2|demo --batch $max"
  "2|demo --seed 18446744073709551616"
  "2|demo --seed abc"
  "2|graph --tokens $max"
  "2|bench --reps $max"
  "2|bench --threads 0"
  "2|train --steps $max"
  "2|train --lr nan"
  "2|train --lr inf"
  "2|train --lr 1e400"
  "2|train --clip -1"
  "2|train --batch $max"
  "2|train --eval-every -1"
  "2|similar cat --k $max"
  "2|gradcheck --op"
  "2|--plugin"
  "2|gradcheck --op no_such_op"
  "3|inspect @W/missing.safetensors"
  "3|inspect @W/dir"
  "3|inspect @W/empty"
  "3|inspect @W/text.txt"
  "3|inspect @W/random.bin"
  "3|inspect @W/huge_header.safetensors"
  "3|inspect @W/cut.safetensors"
  "3|demo --weights @W/random.bin"
  "3|demo --weights @W/ck/latest/model.safetensors"
  "3|demo --save @W/dir"
  "3|--plugin @W/text.txt ops"
  "3|--plugin @W/random.bin ops"
  "3|--plugin @W/dir ops"
  "3|--plugin @W/missing.so ops"
  "3|train --corpus @W/missing.txt --vocab-size 256"
  "3|train --corpus @W/dir --vocab-size 256"
  "3|train --corpus @W/empty --vocab-size 256"
  "3|train --corpus @W/text.txt --vocab-size 256"
  "3|train --tokenizer @W/random.bin"
  "3|train --tokenizer @W/text.txt"
  "3|train --context 1048576 --vocab-size 256 --d-model 8"
  "3|train --checkpoint @W/text.txt"
  "3|train --checkpoint @W/missing --resume"
  "3|train --checkpoint @W/ck_no_optimizer --resume ${tiny[*]}"
  "3|train --checkpoint @W/ck_bad_tokenizer --resume ${tiny[*]}"
  "3|train --checkpoint @W/ck_cut_model --resume ${tiny[*]}"
  "3|train --checkpoint @W/ck --resume --vocab-size 256 --d-model 16 --context 8 --batch 2 --steps 2"
  "3|similar cat --checkpoint @W/missing"
  "3|similar cat --checkpoint @W/ck_cut_model"
  "3|similar cat --checkpoint @W/ck_bad_tokenizer"
  "3|similar zzqxv --checkpoint @W/ck"
)

failed=0
for entry in "${cases[@]}"; do
  want=${entry%%|*}
  line=${entry#*|}
  line=${line//@W/$work}
  read -r -a args <<< "$line"
  "$mg" "${args[@]}" > "$work/out" 2> "$work/err" < /dev/null
  rc=$?
  lines=$(wc -l < "$work/err")
  first=$(head -n 1 "$work/err")
  problem=""
  if [ "$rc" -ge 128 ]; then
    problem="ended by signal $((rc - 128))"
  elif [ "$rc" -ne "$want" ]; then
    problem="exit $rc, expected $want"
  elif [ "$lines" -ne 1 ]; then
    problem="$lines lines on stderr, expected one"
  elif [[ $first != error:\ * ]]; then
    problem="stderr does not start with 'error: '"
  fi
  shown=${line//$work/W}
  if [ -n "$problem" ]; then
    failed=$((failed + 1))
    printf 'FAIL  %s: %s\n      %s\n' "$shown" "$problem" "$(head -c 300 "$work/err")"
  else
    printf 'ok %s  %s\n      %s\n' "$rc" "$shown" "${first:0:160}"
  fi
done
echo "check-cli-inputs: ${#cases[@]} bad inputs, $failed failed"
[ "$failed" -eq 0 ]
