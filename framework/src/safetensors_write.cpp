// Writing safetensors files. Layout, as the reference writer (safetensors/src/tensor.rs,
// prepare) lays it out: the header is padded with spaces to a multiple of 8 bytes, so the data
// section starts 8-aligned in the file; the data are stored back to back (the format requires
// the tensors to tile the data section, so there is no room for padding between them), the
// tensors with 8-byte elements first, then those with 4-byte elements, each group by name. So
// every tensor starts at a multiple of its own element size, and a reader maps every one of
// them without a copy; the header lists the names sorted (a JSON object with sorted keys).
//
// The file is written through AtomicFile: a failure leaves no file (and the old one, if any,
// untouched), and a reader that maps the old file keeps it.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "minigraph/atomic_file.h"
#include "minigraph/error.h"
#include "minigraph/safetensors.h"
#include "minigraph/version.h"
#include "safetensors_format.h"

namespace mg {

namespace {

constexpr const char* kOp = "save_safetensors";

// The entries in the order their data are written.
using DataOrder = std::vector<const StateDict::value_type*>;

void check_save_arguments(const std::string& path, const StateDict& tensors) {
  MG_CHECK(!path.empty(), kOp, "path", "the path of the file to write", "an empty path");
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    MG_CHECK(!name.empty(), kOp, "tensors", "a non-empty name for every tensor",
             "an empty name at entry {}", i);
    MG_CHECK(name != "__metadata__", kOp, name, "a tensor name other than __metadata__",
             "the name the format reserves for the metadata");
    MG_CHECK(names.insert(name).second, kOp, name, "each name once", "'{}' twice", name);
    MG_CHECK(t.defined(), kOp, name, "a defined tensor", "an undefined tensor");
  }
}

// Data order: larger elements first, then by name, so every tensor is aligned (header note).
DataOrder data_order(const StateDict& tensors) {
  DataOrder order;
  for (const auto& item : tensors) order.push_back(&item);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    const auto sa = dtype_size(a->second.dtype()), sb = dtype_size(b->second.dtype());
    return sa != sb ? sa > sb : a->first < b->first;
  });
  return order;
}

// The metadata, then each tensor's entry, its data_offsets following `order`.
nlohmann::json header_json(const DataOrder& order,
                           const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  auto& meta = header["__metadata__"];
  meta = {{"format", "pt"}, {"framework", "minigraph"}, {"version", MINIGRAPH_VERSION_STRING}};
  for (const auto& [key, value] : metadata) meta[key] = value;  // the caller's entries win
  std::int64_t offset = 0;
  for (const auto* item : order) {
    const Tensor& t = item->second;
    const auto bytes = static_cast<std::int64_t>(t.nbytes());
    const std::int64_t end = checked_add(offset, bytes, kOp, "data section bytes");
    header[item->first] = {{"dtype", safetensors_detail::format_dtype_name(t.dtype())},
                           {"shape", t.shape()},
                           {"data_offsets", {offset, end}}};
    offset = end;
  }
  return header;
}

// The header as written: JSON padded with spaces to a multiple of 8 bytes.
std::string header_text(const nlohmann::json& header) {
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // a name or value that is not UTF-8
    throw Error(kOp, "tensors", "names and metadata in UTF-8", e.what());
  }
  text.resize((text.size() + 7) / 8 * 8, ' ');
  MG_CHECK(text.size() <= safetensors_detail::kMaxHeaderBytes, kOp, "metadata",
           "a header of at most 100000000 bytes (what readers accept)", "{} bytes", text.size());
  return text;
}

void write_file(const std::string& path, const std::string& text, const DataOrder& order) {
  AtomicFile file(kOp, path);
  unsigned char length[8];
  std::uint64_t n = text.size();
  for (auto& byte : length) {
    byte = static_cast<unsigned char>(n & 0xFF);
    n >>= 8;
  }
  file.write(length, sizeof length);
  file.write(text.data(), text.size());
  for (const auto* item : order) {
    const Tensor host = item->second.to(Device::cpu());  // the same tensor when on the CPU
    file.write(host.raw_data(), host.nbytes());
  }
  file.commit();
}

}  // namespace

void save_safetensors(const std::string& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // Everything that can be refused is refused before a file is created.
  check_save_arguments(path, tensors);
  const DataOrder order = data_order(tensors);
  const std::string text = header_text(header_json(order, metadata));
  write_file(path, text, order);
}

}  // namespace mg
