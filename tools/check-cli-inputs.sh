#!/usr/bin/env bash
# Every class of bad input through the `minigraph` command line: numbers at and past the int64
# edges, words that are not numbers, empty paths, options that contradict each other, missing
# and unreadable files, files of the wrong kind (a directory, text where a safetensors file, a
# SentencePiece model or a shared library is expected), special files (a FIFO with no writer,
# /dev/zero, /dev/stdin, inside a checkpoint too), weights that are not finite, truncated and
# corrupted files, checkpoints with a part missing. Each must end with its documented exit
# code (2: the command line, 3: the work could not be done), exactly one line on stderr
# starting "error: ", never a signal, and within 60 s (a hang fails its case). Prints one line
# per case and a summary; exits 1 if any case fails.
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
mkfifo "$work/fifo"
tiny=(--vocab-size 256 --d-model 8 --context 8 --batch 2 --steps 2 --eval-every 0)
"$mg" train "${tiny[@]}" --checkpoint "$work/ck" > /dev/null 2>&1 ||
  { echo "check-cli-inputs: the tiny training run that makes a checkpoint failed" >&2; exit 1; }
cp -r "$work/ck" "$work/ck_no_optimizer" && rm "$work/ck_no_optimizer/latest/optimizer.safetensors"
cp -r "$work/ck" "$work/ck_bad_tokenizer" && cp "$work/random.bin" "$work/ck_bad_tokenizer/latest/tokenizer.model"
cp -r "$work/ck" "$work/ck_cut_model" && truncate -s 100 "$work/ck_cut_model/latest/model.safetensors"
for part in model.safetensors tokenizer.model; do  # a FIFO in place of a checkpoint's file
  cp -r "$work/ck" "$work/ck_fifo_$part" && rm "$work/ck_fifo_$part/latest/$part" &&
    mkfifo "$work/ck_fifo_$part/latest/$part"
done
# Weights of the tiny model (V=16, D=8, T=4) with one element not finite: f32 little-endian
# NaN (head.weight[0, 13]) and -inf (input.tok_emb.weight[0, 1]; its data start at 640).
small=(--vocab 16 --d-model 8 --context 4)
"$mg" demo "${small[@]}" --save "$work/w.safetensors" > /dev/null 2>&1 ||
  { echo "check-cli-inputs: the tiny demo that writes weights failed" >&2; exit 1; }
data=$((8 + $(od -An -t u8 -N 8 "$work/w.safetensors" | tr -d ' ')))
cp "$work/w.safetensors" "$work/nan.safetensors" && cp "$work/w.safetensors" "$work/inf.safetensors"
printf '\x00\x00\xc0\x7f' | dd of="$work/nan.safetensors" bs=1 seek=$((data + 4 * 13)) conv=notrunc 2> /dev/null
printf '\x00\x00\x80\xff' | dd of="$work/inf.safetensors" bs=1 seek=$((data + 640 + 4)) conv=notrunc 2> /dev/null

max=9223372036854775807
cases=(
  # code | command line (words split on spaces; @W is the work folder, @E an empty word)
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
  "2|train --corpus @E"
  "2|train --checkpoint @E"
  "2|train --tokenizer @E"
  "2|similar cat --checkpoint @E"
  "2|demo --weights @E"
  "2|demo --save @E"
  "2|inspect @E"
  "2|graph --out @E"
  "2|bench --json @E"
  "2|--plugin @E ops"
  "2|train --vocab-size 2"
  "2|train --vocab-size 4"
  "2|similar cat --vocab-size 4"
  "2|train --lr 0.001 --min-lr 0.01"
  "2|train --lr 0.0005"
  "2|train --warmup 50 --steps 10"
  "2|train --warmup 11 --steps 10"
  "2|train --momentum 0.5"
  "2|train --optimizer adamw --momentum 0.5"
  "2|train --eval-every 0 --eval-batches 3"
  "2|train --json --log-every 3"
  "2|train --dist mpi"
  "2|similar cat --checkpoint @W/ck --vocab-size 256"
  "2|similar cat --checkpoint @W/ck --corpus @W/text.txt"
  "2|similar cat --checkpoint @W/ck --d-model 8"
  "2|similar cat --checkpoint @W/ck --seed 2"
  "3|inspect @W/missing.safetensors"
  "3|inspect @W/dir"
  "3|inspect @W/empty"
  "3|inspect @W/text.txt"
  "3|inspect @W/random.bin"
  "3|inspect @W/huge_header.safetensors"
  "3|inspect @W/cut.safetensors"
  "3|inspect @W/fifo"
  "3|inspect /dev/zero"
  "3|demo --weights @W/fifo"
  "3|demo ${small[*]} --weights @W/nan.safetensors"
  "3|demo ${small[*]} --weights @W/inf.safetensors"
  "3|graph --out @W/fifo"
  "3|bench --json @W/fifo"
  "3|--plugin @W/fifo ops"
  "3|train --corpus @W/fifo --vocab-size 256"
  "3|train --corpus /dev/zero"
  "3|train --corpus /dev/urandom"
  "3|train --corpus /dev/stdin"
  "3|train --tokenizer @W/fifo"
  "3|train --checkpoint @W/ck_fifo_model.safetensors --resume ${tiny[*]}"
  "3|train --checkpoint @W/ck_fifo_tokenizer.model --resume ${tiny[*]}"
  "3|train --checkpoint @W/ck --resume --vocab-size 300 --d-model 8 --context 8 --batch 2 --steps 2"
  "3|train --tokenizer @W/ck/latest/tokenizer.model --vocab-size 300"
  "3|similar cat --checkpoint @W/ck_fifo_model.safetensors"
  "3|similar cat --checkpoint @W/ck_fifo_tokenizer.model"
  "3|similar cat --corpus @W/fifo"
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
  for i in "${!args[@]}"; do [ "${args[$i]}" = @E ] && args[$i]=""; done
  timeout -k 5 60 "$mg" "${args[@]}" > "$work/out" 2> "$work/err" < /dev/null
  rc=$?
  lines=$(wc -l < "$work/err")
  first=$(head -n 1 "$work/err")
  problem=""
  if [ "$rc" -eq 124 ]; then
    problem="still running after 60 s: a hang"
  elif [ "$rc" -ge 128 ]; then
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
