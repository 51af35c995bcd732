// safetensors files (the format of Hugging Face's `safetensors` library, which PyTorch users save
// weights in): an 8-byte little-endian header length N, N bytes of a JSON object mapping each
// tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data
// section after the header) plus an optional "__metadata__" string map, then the raw
// little-endian row-major data.
//
// Reading maps the file (mmap) and validates everything before handing out a tensor, as the
// reference implementation does: each problem is an mg::Error naming the file, the tensor and
// what is wrong. Tensors whose dtype minigraph has (F32, F64, I32, I64) and whose data are
// aligned come back without a copy, sharing the mapping; BF16 and F16 are converted on load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

// Names to tensors, in a fixed order: what Module::state_dict() returns and a file holds.
using StateDict = std::vector<std::pair<std::string, Tensor>>;

// One tensor's entry in a file's header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // as the file spells it: "F32", "F64", "I32", "I64", "BF16", "F16", ...
  Shape shape;
  std::int64_t begin = 0, end = 0;  // byte range within the data section
};

class SafetensorsFile {
 public:
  // Maps and validates the file at `path`; throws mg::Error naming the file and the problem.
  static SafetensorsFile open(const std::string& path);
  // Validates bytes in memory (`source` names them in errors). The bytes are copied once into
  // memory the file object owns. The fuzz target drives this.
  static SafetensorsFile parse(std::span<const std::byte> bytes, std::string source = "<memory>");

  const std::string& source() const;
  // Every tensor in the header, sorted by name.
  const std::vector<SafetensorsEntry>& entries() const;
  const SafetensorsEntry* find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const;  // "__metadata__"
  std::int64_t data_bytes() const;                             // the data section's size

  // A tensor of the file on the CPU: for F32/F64/I32/I64 in its own dtype, sharing the mapping
  // when its data is aligned (else a copy); BF16/F16 are converted to f32. Throws for a name
  // the file lacks or a dtype minigraph cannot represent (naming both). A shared tensor is
  // writable: the mapping is private (copy-on-write), so a write never reaches the file, but
  // later tensor() calls on this object for that name see it; clone() for a separate copy.
  Tensor tensor(std::string_view name) const;
  // The same, converted to `dtype` (floats to floats, ints to ints; I64 to i32 checks that
  // every value fits). Shares the mapping when the file's dtype is `dtype` and aligned.
  Tensor tensor(std::string_view name, DType dtype) const;
  // Every tensor, sorted by name.
  StateDict tensors() const;

 private:
  struct Mapping;
  std::shared_ptr<const Mapping> mapping_;
  std::string source_;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
  std::int64_t data_offset_ = 0;  // 8 + header length
};

// Writes `tensors` to `path`: names sorted in the header, which is padded with spaces to a
// multiple of 8 bytes so that the data section starts 8-aligned; the data back to back (the
// format allows no padding between tensors), tensors with 8-byte elements first and then those
// with 4-byte ones, each group by name, as the reference writer orders them: every tensor
// starts at a multiple of its element size, so readers map each without a copy.
// `__metadata__` holds "format": "pt", "framework": "minigraph", "version" (the
// MINIGRAPH_VERSION_STRING) and whatever `metadata` adds (its entries win over those three).
// Tensors may live on any device. Written to `path.tmp-<pid>-<n>` and renamed, so a failure
// leaves no file (and an old file at `path` untouched). Throws mg::Error, before creating
// anything, for duplicate or empty names, the reserved name "__metadata__" and undefined
// tensors; and for paths that cannot be written.
void save_safetensors(const std::string& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads every tensor of the file (SafetensorsFile::open(path).tensors()).
StateDict load_safetensors(const std::string& path);

}  // namespace mg
