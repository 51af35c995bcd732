#!/usr/bin/env bash
# make_binary_corpus.sh TEXT OUT: OUT is TEXT followed by 100 lines "bin ?? ? ?? x", each with
# 10 bytes that are not text: FF FE (never in UTF-8), a NUL, C0 AF (an overlong '/'), then
# FF FE, NUL, C0 AF once more.
set -eu
cp "$1" "$2"
for _ in $(seq 100); do printf 'bin \377\376\000\300\257 \377\376\000\300\257 x\n' >> "$2"; done
