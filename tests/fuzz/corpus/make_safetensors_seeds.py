#!/usr/bin/env python3
"""Writes the seed corpus of the safetensors fuzz target (tests/fuzz/fuzz_safetensors.cpp) into
tests/fuzz/corpus/safetensors/: small valid files (every dtype minigraph reads, the dtypes it
cannot represent, a 0-d and a zero-size tensor, metadata, unaligned data) and invalid ones (one
rule of the format broken each). Plain struct + json, so the bytes are exact and the script needs
nothing installed; run it again after changing it and commit what it writes (the output is
deterministic). Names start with valid_ or invalid_ so a reader sees what each file is for.

    python3 tests/fuzz/corpus/make_safetensors_seeds.py
"""
import json
import math
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "safetensors")


def header_bytes(header, pad_to=None, raw_json=None):
    """The 8-byte little-endian length and the JSON header (padded with spaces to a multiple
    of `pad_to`, as writers do to align the data section)."""
    if raw_json is None:
        raw_json = json.dumps(header, separators=(",", ":"))
    body = raw_json if isinstance(raw_json, bytes) else raw_json.encode("utf-8")
    if pad_to:
        body += b" " * ((-(8 + len(body))) % pad_to)
    return struct.pack("<Q", len(body)) + body


def file_of(tensors, metadata=None, pad_to=8):
    """A valid file from [(name, dtype, shape, data bytes)], data laid out in the given order."""
    header, data, offset = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    return header_bytes(header, pad_to) + data


def pack(fmt, values):
    return struct.pack("<%d%s" % (len(values), fmt), *values)


def bf16(values):
    # The upper half of each f32 (truncation: exact for these values).
    return b"".join(struct.pack("<f", v)[2:] for v in values)


def seeds():
    s = {}
    f32 = pack("f", [1.0, -2.5, 3.25, float("inf"), -0.0, float("nan")])
    s["valid_f32"] = file_of([("w", "F32", [2, 3], f32)])
    s["valid_f64"] = file_of([("w", "F64", [3], pack("d", [math.pi, -1e300, 5e-324]))])
    s["valid_i32"] = file_of([("ids", "I32", [4], pack("i", [0, -1, 2**31 - 1, -(2**31)]))])
    s["valid_i64"] = file_of([("ids", "I64", [2, 1], pack("q", [2**63 - 1, -(2**63)]))])
    s["valid_bf16"] = file_of([("w", "BF16", [4], bf16([1.0, -2.0, 0.5, float("inf")]))])
    s["valid_f16"] = file_of([("w", "F16", [5], pack("e", [1.0, -2.0, 65504.0, 6e-8, float("-inf")]))])
    # Dtypes of the format that minigraph cannot represent: parsing accepts them, tensor() throws.
    s["valid_other_dtypes"] = file_of([
        ("a_bool", "BOOL", [2], b"\x00\x01"),
        ("b_u8", "U8", [3], b"\x01\x02\xff"),
        ("c_i8", "I8", [1], b"\x80"),
        ("d_i16", "I16", [1], pack("h", [-3])),
        ("e_u16", "U16", [1], pack("H", [7])),
        ("f_u32", "U32", [1], pack("I", [9])),
        ("g_u64", "U64", [1], pack("Q", [11])),
        ("h_f8", "F8_E4M3", [2], b"\x38\x40"),
        ("i_f8", "F8_E5M2", [1], b"\x3c"),
    ])
    s["valid_scalar_0d"] = file_of([("s", "F32", [], pack("f", [42.0]))])
    s["valid_zero_size"] = file_of([("empty", "F32", [0, 3], b""), ("x", "I64", [1], pack("q", [5])),
                                    ("z", "F64", [2, 0], b"")])
    s["valid_metadata"] = file_of([("w", "F32", [1], pack("f", [1.0]))],
                                  metadata={"format": "pt", "framework": "minigraph", "note": "\u00e9\u4e2d"})
    s["valid_only_metadata"] = file_of([], metadata={"format": "pt"})
    s["valid_empty"] = file_of([])
    # Unaligned data section (no padding): tensors come back as copies, not views.
    s["valid_unaligned"] = file_of([("a", "F32", [2], pack("f", [1.0, 2.0])),
                                    ("b", "F64", [1], pack("d", [3.0]))], pad_to=None)
    # Names sorted one way, data the other; several tensors, mixed dtypes.
    s["valid_order"] = file_of([("z.weight", "F32", [2, 2], pack("f", [1, 2, 3, 4])),
                                ("a.bias", "I32", [2], pack("i", [5, 6])),
                                ("m.scale", "BF16", [1], bf16([0.25])),
                                ("b.half", "F16", [2], pack("e", [0.5, -0.5]))])

    good = file_of([("w", "F32", [2], pack("f", [1.0, 2.0]))])
    s["invalid_short_length"] = good[:5]
    s["invalid_truncated_header"] = good[:20]
    s["invalid_truncated_data"] = good[:-1]
    s["invalid_trailing_data"] = good + b"\x00\x00\x00\x00"
    s["invalid_bad_json"] = header_bytes(None, raw_json='{"w": {"dtype": "F32", "shape": [1], ') + b"\x00" * 4
    s["invalid_not_object"] = header_bytes([1, 2, 3])
    s["invalid_not_utf8"] = header_bytes(None, raw_json=b'{"\xff":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}')
    s["invalid_huge_header_length"] = struct.pack("<Q", 2**64 - 1) + b"{}"
    s["invalid_header_length_int64_max"] = struct.pack("<Q", 2**63 - 1) + b"{}"
    s["invalid_header_over_100mb"] = struct.pack("<Q", 100_000_001) + b"{}      "

    def one(entry, data=b"\x00" * 8):
        return header_bytes({"t": entry}, 8) + data

    s["invalid_unknown_dtype"] = one({"dtype": "F31", "shape": [2], "data_offsets": [0, 8]})
    s["invalid_size_mismatch"] = one({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]})
    s["invalid_negative_dim"] = one({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})
    s["invalid_shape_overflow"] = one({"dtype": "F64", "shape": [2**32, 2**32, 2], "data_offsets": [0, 8]})
    s["invalid_offset_int64_max"] = one({"dtype": "U8", "shape": [8],
                                         "data_offsets": [2**63 - 1, 2**63 + 7]})
    s["invalid_begin_after_end"] = one({"dtype": "U8", "shape": [0], "data_offsets": [8, 0]})
    s["invalid_offsets_three"] = one({"dtype": "U8", "shape": [8], "data_offsets": [0, 8, 8]})
    s["invalid_offsets_float"] = one({"dtype": "U8", "shape": [8], "data_offsets": [0.0, 8.0]})
    s["invalid_missing_shape"] = one({"dtype": "U8", "data_offsets": [0, 8]})
    s["invalid_metadata_not_string"] = header_bytes({"__metadata__": {"epoch": 3}}, 8)
    s["invalid_overlapping"] = header_bytes({
        "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, 8) + b"\x00" * 12
    s["invalid_gap"] = header_bytes({
        "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
        "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, 8) + b"\x00" * 12
    s["invalid_past_the_end"] = one({"dtype": "F32", "shape": [4], "data_offsets": [0, 16]})
    # The same name twice: a parser keeping the last one would hide the first.
    s["invalid_duplicate_name"] = header_bytes(None, raw_json=(
        '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
        '"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}')) + b"\x00" * 8
    return s


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        os.remove(os.path.join(OUT, old))
    for name, data in sorted(seeds().items()):
        with open(os.path.join(OUT, name + ".safetensors"), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds()), OUT))


if __name__ == "__main__":
    main()
