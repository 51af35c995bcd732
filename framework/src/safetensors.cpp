// Reading safetensors files: the file is mapped (or, for parse(), copied once into aligned
// memory) and validated (safetensors_validate.cpp); tensor() hands out tensors that share that
// memory when minigraph has the dtype and the data are aligned for it, and converted copies
// otherwise (BF16/F16 to f32, floats to the requested float dtype, ints to ints).
//
// The mapping is MAP_PRIVATE with PROT_READ | PROT_WRITE: a tensor is writable like any other
// (copy_, fill_, a kernel's output), and a write copies the page it touches (copy-on-write),
// so it never reaches the file. A read-only mapping would turn such a write into a crash.
#include "minigraph/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>

#include "minigraph/error.h"
#include "minigraph/regular_file.h"
#include "safetensors_format.h"

namespace mg {

using safetensors_detail::find_format_dtype;
using safetensors_detail::load_unaligned;

// The file's bytes: a mapping (open) or an aligned heap copy (parse), freed with the last
// tensor or file object that uses them.
struct SafetensorsFile::Mapping {
  const std::byte* data = nullptr;
  std::size_t size = 0;
  bool mapped = false;

  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (data == nullptr) return;
    if (mapped) {
      munmap(const_cast<std::byte*>(data), size);
    } else {
      ::operator delete(const_cast<std::byte*>(data), kAlignment);
    }
  }
  // As the CPU allocator aligns: any element type, and a cache line.
  static constexpr std::align_val_t kAlignment{64};
};

namespace {

std::string file_op(const std::string& source) { return fmt::format("safetensors '{}'", source); }

// Element-wise conversion of `numel` little-endian elements at `src` (any alignment) into `out`.
template <typename Out, typename Convert>
void convert_into(Out* out, const std::byte* src, std::int64_t numel, std::size_t stride,
                  Convert&& convert) {
  for (std::int64_t i = 0; i < numel; ++i)
    out[i] = convert(src + static_cast<std::size_t>(i) * stride);
}

// Floats convert to floats and ints to ints; anything else is refused.
void check_convertible(const SafetensorsEntry& entry, DType dtype, const std::string& op) {
  const bool float_source =
      entry.dtype == "F32" || entry.dtype == "F64" || entry.dtype == "BF16" || entry.dtype == "F16";
  const bool int_source = entry.dtype == "I32" || entry.dtype == "I64";
  MG_CHECK((float_source && is_floating(dtype)) || (int_source && is_integer(dtype)), op,
           entry.name,
           fmt::format("a conversion to {} minigraph makes (floats to f32/f64 from F32, F64, "
                       "BF16, F16; ints to i32/i64 from I32, I64)",
                       dtype_name(dtype)),
           "dtype {}", entry.dtype);
}

// I64 elements at `src` into i32: every value must fit.
void narrow_i64_into(std::int32_t* dst, const std::byte* src, std::int64_t numel,
                     const SafetensorsEntry& entry, const std::string& op) {
  for (std::int64_t i = 0; i < numel; ++i) {
    const auto v = load_unaligned<std::int64_t>(src + static_cast<std::size_t>(i) * 8);
    MG_CHECK(v >= std::numeric_limits<std::int32_t>::min() &&
                 v <= std::numeric_limits<std::int32_t>::max(),
             op, entry.name, "I64 values that fit in i32", "{} at element {}", v, i);
    dst[i] = static_cast<std::int32_t>(v);
  }
}

// A new tensor of `dtype` from the entry's `numel` elements at `src`, of another dtype
// (check_convertible allows the conversion).
Tensor converted_copy(const SafetensorsEntry& entry, const safetensors_detail::FormatDType& format,
                      const std::byte* src, std::int64_t numel, DType dtype,
                      const std::string& op) {
  Tensor out = Tensor::empty(entry.shape, dtype);
  const std::size_t stride = static_cast<std::size_t>(format.bits / 8);
  auto read_float = [&](const std::byte* p) -> double {
    if (entry.dtype == "F32") return load_unaligned<float>(p);
    if (entry.dtype == "F64") return load_unaligned<double>(p);
    if (entry.dtype == "BF16")
      return safetensors_detail::bf16_to_f32(load_unaligned<std::uint16_t>(p));
    return safetensors_detail::f16_to_f32(load_unaligned<std::uint16_t>(p));
  };
  switch (dtype) {
    case DType::f32:
      // Through double: every F32/BF16/F16 value is exact in it, and F64 rounds once.
      convert_into(out.data<float>(), src, numel, stride,
                   [&](const std::byte* p) { return static_cast<float>(read_float(p)); });
      break;
    case DType::f64:
      convert_into(out.data<double>(), src, numel, stride, read_float);
      break;
    case DType::i64:  // only from I32 (I64 itself is the same dtype, above)
      convert_into(out.data<std::int64_t>(), src, numel, stride, [](const std::byte* p) {
        return static_cast<std::int64_t>(load_unaligned<std::int32_t>(p));
      });
      break;
    case DType::i32:  // from I64
      narrow_i64_into(out.data<std::int32_t>(), src, numel, entry, op);
      break;
    case DType::boolean:  // only from BOOL, the same dtype: never converted
      break;
  }
  return out;
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  const RegularFile input(file_op(path), "path", path);  // never a FIFO, device or directory
  auto mapping = std::make_shared<Mapping>();
  const auto size = static_cast<std::size_t>(input.size());
  if (size > 0) {
    void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, input.fd(), 0);
    MG_CHECK(base != MAP_FAILED, file_op(path), "path", "a file that can be mapped into memory",
             "{}", std::strerror(errno));
    mapping->data = static_cast<const std::byte*>(base);
    mapping->size = size;
    mapping->mapped = true;
  }
  auto header = safetensors_detail::validate_file({mapping->data, mapping->size}, path);
  SafetensorsFile file;
  file.mapping_ = std::move(mapping);
  file.source_ = path;
  file.entries_ = std::move(header.entries);
  file.metadata_ = std::move(header.metadata);
  file.data_offset_ = header.data_offset;
  return file;
}

SafetensorsFile SafetensorsFile::parse(std::span<const std::byte> bytes, std::string source) {
  // Validated where they are, so refused input costs no copy (the fuzz target's common case).
  auto header = safetensors_detail::validate_file(bytes, source);
  auto mapping = std::make_shared<Mapping>();
  auto* copy = static_cast<std::byte*>(::operator new(bytes.size(), Mapping::kAlignment));
  std::memcpy(copy, bytes.data(), bytes.size());
  mapping->data = copy;
  mapping->size = bytes.size();
  SafetensorsFile file;
  file.mapping_ = std::move(mapping);
  file.source_ = std::move(source);
  file.entries_ = std::move(header.entries);
  file.metadata_ = std::move(header.metadata);
  file.data_offset_ = header.data_offset;
  return file;
}

const std::string& SafetensorsFile::source() const { return source_; }
const std::vector<SafetensorsEntry>& SafetensorsFile::entries() const { return entries_; }
const std::map<std::string, std::string>& SafetensorsFile::metadata() const { return metadata_; }

std::int64_t SafetensorsFile::data_bytes() const {
  return static_cast<std::int64_t>(mapping_ ? mapping_->size : 0) - data_offset_;
}

const SafetensorsEntry* SafetensorsFile::find(std::string_view name) const {
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), name,
                       [](const SafetensorsEntry& e, std::string_view n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

Tensor SafetensorsFile::tensor(std::string_view name) const {
  const SafetensorsEntry* entry = find(name);
  MG_CHECK(entry != nullptr, file_op(source_), std::string(name),
           "the name of a tensor in the file", "no such tensor ({} tensors in the file)",
           entries_.size());
  const auto* format = find_format_dtype(entry->dtype);
  if (format->same) return tensor(name, *format->same);
  MG_CHECK(entry->dtype == "BF16" || entry->dtype == "F16", file_op(source_), entry->name,
           "a dtype minigraph can load (F32, F64, I32, I64, BOOL, or BF16/F16 converted to f32)",
           "dtype {}", entry->dtype);
  return tensor(name, DType::f32);
}

Tensor SafetensorsFile::tensor(std::string_view name, DType dtype) const {
  const SafetensorsEntry* entry = find(name);
  const std::string op = file_op(source_);
  MG_CHECK(entry != nullptr, op, std::string(name), "the name of a tensor in the file",
           "no such tensor ({} tensors in the file)", entries_.size());
  const auto* format = find_format_dtype(entry->dtype);
  const std::byte* src = mapping_->data + data_offset_ + entry->begin;
  const std::int64_t numel = shape_numel(entry->shape);

  if (format->same == dtype) {
    const std::size_t bytes = static_cast<std::size_t>(entry->end - entry->begin);
    // A bool byte other than 0 or 1 would be undefined behaviour wherever it is read.
    if (dtype == DType::boolean) {
      const auto* bad =
          std::find_if(src, src + bytes, [](std::byte b) { return b > std::byte{1}; });
      MG_CHECK(bad == src + bytes, op, entry->name, "BOOL bytes that are 0 or 1",
               "{} at element {}", static_cast<int>(*bad), bad - src);
    }
    if (reinterpret_cast<std::uintptr_t>(src) % dtype_size(dtype) == 0) {
      // The mapping stays alive as long as this storage: it holds the file's handle.
      auto storage = std::make_shared<Storage>(Device::cpu(), const_cast<std::byte*>(src), bytes,
                                               std::shared_ptr<const void>(mapping_));
      return Tensor::from_storage(std::move(storage), entry->shape, dtype);
    }
    Tensor copy = Tensor::empty(entry->shape, dtype);
    if (bytes > 0) std::memcpy(copy.raw_data(), src, bytes);
    return copy;
  }

  check_convertible(*entry, dtype, op);
  return converted_copy(*entry, *format, src, numel, dtype, op);
}

StateDict SafetensorsFile::tensors() const {
  StateDict out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.emplace_back(e.name, tensor(e.name));
  return out;
}

StateDict load_safetensors(const std::string& path) {
  return SafetensorsFile::open(path).tensors();
}

}  // namespace mg
