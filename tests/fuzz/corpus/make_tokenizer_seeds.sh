#!/usr/bin/env bash
# Writes the seed corpus of fuzz_tokenizer (tests/fuzz/corpus/tokenizer/): model-mode seeds (a
# 0 byte, then a .model file: the one `minigraph train` makes at V = 256 from the shipped
# corpus, ~240 KB with SentencePiece's NFKC table, cut to 200 bytes; and nothing), text-mode
# seeds (a 1 byte, then text: ASCII, accents, CJK, an emoji, bytes that are not UTF-8, one
# word) and edit-mode seeds (a 2 byte, then edits of the target's own small model: none, a cut,
# a few bytes changed). The whole .model file is not kept: at 240 KB an input, fuzzing crawls.
# Deterministic: the tokenizer's training is.
#   tests/fuzz/corpus/make_tokenizer_seeds.sh [path/to/minigraph]   (default build/tools/minigraph)
set -euo pipefail
cd "$(dirname "$0")/../../.."
mg=${1:-build/tools/minigraph}
out=tests/fuzz/corpus/tokenizer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mg" train --vocab-size 256 --d-model 8 --context 8 --batch 2 --steps 1 --eval-every 0 \
  --checkpoint "$work/ck" > /dev/null
rm -rf "$out" && mkdir -p "$out"
{ printf '\x00'; head -c 200 "$work/ck/latest/tokenizer.model"; } > "$out/model_cut"
printf '\x00' > "$out/model_empty"
printf '\x01the cat sleeps on the sofa on Tuesday morning.' > "$out/text_ascii"
printf '\x01Ünïcödé wörds, 数字 and 🙂' > "$out/text_unicode"
printf '\x01\xff\xfe\xc3\x28 not UTF-8' > "$out/text_invalid_utf8"
printf '\x01cat' > "$out/text_word"
printf '\x02' > "$out/edit_none"
printf '\x02\x00\x01' > "$out/edit_cut_256"
printf '\x02\xff\xff\x10\x00\x7f\x40\x00\x00\x80\x01\xff' > "$out/edit_bytes"
