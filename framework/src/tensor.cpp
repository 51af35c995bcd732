// Tensor handles, storage, construction and host access.
#include "minigraph/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

#include "minigraph/autograd.h"
#include "minigraph/backend.h"
#include "minigraph/error.h"
#include "minigraph/layout.h"
#include "strided_copy.h"

namespace mg {

Storage::Storage(Device device, std::size_t bytes)
    : backend_(&backend_for(device)),
      device_(device),
      bytes_(bytes),
      data_(backend_->allocate(bytes)) {}

Storage::Storage(Device device, void* data, std::size_t bytes, std::shared_ptr<const void> owner)
    : backend_(&backend_for(device)),
      device_(device),
      bytes_(bytes),
      data_(data),
      owner_(std::move(owner)),
      wraps_(true) {}

Storage::~Storage() {
  if (!wraps_) backend_->deallocate(data_, bytes_);
}

namespace {

double load(const void* base, DType dtype, std::int64_t i) {
  switch (dtype) {
    case DType::f32:
      return static_cast<const float*>(base)[i];
    case DType::f64:
      return static_cast<const double*>(base)[i];
    case DType::i32:
      return static_cast<const std::int32_t*>(base)[i];
    case DType::i64:
      return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
    case DType::boolean:  // as a byte: a poisoned mask (0xA5) reads as 165, not as true
      return static_cast<const std::uint8_t*>(base)[i];
  }
  return 0;
}

// Stores v converted to the dtype; a value an integer dtype cannot hold (NaN, an infinity, out
// of range) is an mg::Error naming `op` and the element, never a wrapped or undefined value.
void store(void* base, DType dtype, std::int64_t i, double v, std::string_view op) {
  MG_CHECK(holds_value(dtype, v), std::string(op), "value",
           fmt::format("a finite value inside {}'s range", dtype_name(dtype)), "{} (element {})", v,
           i);
  switch (dtype) {
    case DType::f32:
      static_cast<float*>(base)[i] = static_cast<float>(v);
      break;
    case DType::f64:
      static_cast<double*>(base)[i] = v;
      break;
    case DType::i32:
      static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v);
      break;
    case DType::i64:
      static_cast<std::int64_t*>(base)[i] = static_cast<std::int64_t>(v);
      break;
    case DType::boolean:
      static_cast<bool*>(base)[i] = v != 0;
      break;
  }
}

// An integer element as int64, exactly (a double would round ids past 2^53).
std::int64_t load_integer(const void* base, DType dtype, std::int64_t i) {
  if (dtype == DType::boolean) return static_cast<const std::uint8_t*>(base)[i];
  return dtype == DType::i32 ? static_cast<const std::int32_t*>(base)[i]
                             : static_cast<const std::int64_t*>(base)[i];
}

// Host bytes of a tensor's elements in row-major order.
std::vector<unsigned char> host_bytes(const Tensor& t) {
  const Tensor dense = t.is_contiguous() ? t : t.clone();
  std::vector<unsigned char> bytes(dense.nbytes());
  backend_for(dense.device()).copy_to_host(bytes.data(), dense.raw_data(), bytes.size());
  return bytes;
}

Tensor from_host_bytes(const void* src, const Shape& shape, DType dtype, Device device) {
  Tensor t = Tensor::empty(shape, dtype, device);
  backend_for(device).copy_from_host(t.raw_data(), src, t.nbytes());
  return t;
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  auto storage =
      std::make_shared<Storage>(device, static_cast<std::size_t>(shape_nbytes(shape, dtype)));
  return from_storage(std::move(storage), shape, dtype);
}

namespace {

// The checks of both from_storage forms: elements [offset, end) of `dtype` lie in the storage.
void check_fits(const Storage* storage, std::int64_t offset, std::int64_t extent, DType dtype) {
  MG_CHECK(storage != nullptr, "tensor", "storage", "a storage to view", "a null pointer");
  MG_CHECK(offset >= 0, "tensor", "offset", "a non-negative element offset", "{}", offset);
  const std::int64_t end = checked_add(extent, offset, "tensor", "offset + elements");
  const std::int64_t bytes = checked_mul(end, static_cast<std::int64_t>(dtype_size(dtype)),
                                         "tensor", "bytes up to the last element");
  MG_CHECK(static_cast<std::uint64_t>(bytes) <= storage->bytes(), "tensor", "storage",
           fmt::format("at least {} bytes (offset {} + {} elements)", bytes, offset, extent),
           "{} bytes", storage->bytes());
}

Tensor make_tensor(std::shared_ptr<Storage> storage, const Shape& shape, Shape strides,
                   bool contiguous, std::int64_t numel, DType dtype, std::int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->numel = numel;
  impl->offset = offset;
  impl->storage = std::move(storage);
  impl->shape = shape;
  if (!contiguous) impl->strides = std::move(strides);
  impl->contiguous = contiguous;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

}  // namespace

// The path of every op's output: no layout to work out beyond the row-major strides.
Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype,
                            std::int64_t offset) {
  const std::int64_t numel = shape_numel(shape);
  check_fits(storage.get(), offset, numel, dtype);
  return make_tensor(std::move(storage), shape, Shape(), true, numel, dtype, offset);
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, const Shape& shape,
                            const Shape& strides, DType dtype, std::int64_t offset) {
  MG_CHECK(strides.size() == shape.size() &&
               std::all_of(strides.begin(), strides.end(), [](auto s) { return s >= 0; }),
           "tensor", "strides", fmt::format("{} non-negative strides", shape.size()), "{}",
           shape_str(strides));
  const std::int64_t numel = shape_numel(shape);
  check_fits(storage.get(), offset, layout_extent(shape, strides), dtype);
  return make_tensor(std::move(storage), shape, strides, is_contiguous_layout(shape, strides),
                     numel, dtype, offset);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  backend_for(device).fill_zero(t.raw_data(), t.nbytes());
  return t;
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor host = empty(shape, dtype);
  for (std::int64_t i = 0; i < host.numel(); ++i) store(host.raw_data(), dtype, i, value, "full");
  return host.to(device);
}

Tensor Tensor::normal(const Shape& shape, double mean, double stddev, std::uint64_t seed,
                      DType dtype, Device device) {
  MG_CHECK(is_floating(dtype), "normal", "dtype", "f32 or f64", "{}", dtype_name(dtype));
  Tensor host = empty(shape, dtype);
  // Box-Muller over mt19937_64: std::normal_distribution differs between standard libraries.
  std::mt19937_64 engine(seed);
  auto uniform = [&] { return (static_cast<double>(engine() >> 11) + 0.5) * 0x1.0p-53; };
  for (std::int64_t i = 0; i < host.numel(); i += 2) {
    double radius = std::sqrt(-2.0 * std::log(uniform()));
    double angle = 2.0 * std::numbers::pi * uniform();
    store(host.raw_data(), dtype, i, mean + stddev * radius * std::cos(angle), "normal");
    if (i + 1 < host.numel())
      store(host.raw_data(), dtype, i + 1, mean + stddev * radius * std::sin(angle), "normal");
  }
  return host.to(device);
}

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape, Device device) {
  MG_CHECK(static_cast<std::int64_t>(values.size()) == shape_numel(shape), "from_vector", "values",
           fmt::format("{} values for shape {}", shape_numel(shape), shape_str(shape)), "{} values",
           values.size());
  return from_host_bytes(values.data(), shape, dtype_of<T>(), device);
}

void Tensor::throw_undefined() {
  throw Error("tensor", "self", "a defined tensor", "an undefined tensor");
}

void* Tensor::raw_data() const {
  const TensorImpl& impl = checked_impl();
  if (impl.offset == 0) return impl.storage->data();
  return static_cast<unsigned char*>(impl.storage->data()) +
         static_cast<std::size_t>(impl.offset) * dtype_size(impl.dtype);
}

std::int64_t Tensor::size(std::int64_t axis) const {
  auto rank = dim();
  MG_CHECK(axis >= -rank && axis < rank, "size", "axis", fmt::format("in [{}, {})", -rank, rank),
           "{}", axis);
  return shape()[axis < 0 ? axis + rank : axis];
}

Shape Tensor::strides() const {
  const TensorImpl& impl = checked_impl();
  return impl.contiguous ? contiguous_strides(impl.shape) : impl.strides;
}

std::int64_t Tensor::stride(std::int64_t axis) const {
  return strides()[wrap_dim(axis, dim(), "stride", "axis")];
}

template <typename T>
T* Tensor::data_ptr() const {
  MG_CHECK(dtype() == dtype_of<T>(), "data", "T", std::string(dtype_name(dtype())), "{}",
           dtype_name(dtype_of<T>()));
  return static_cast<T*>(raw_data());
}

template <typename T>
T* Tensor::data() const {
  MG_CHECK(is_contiguous(), "data", "self",
           "a contiguous tensor (call contiguous() first, or read its strides with data_ptr)",
           "a view of shape {} with strides {}", shape_str(shape()), shape_str(strides()));
  return data_ptr<T>();
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  MG_CHECK(dtype() == dtype_of<T>(), "to_vector", "T", std::string(dtype_name(dtype())), "{}",
           dtype_name(dtype_of<T>()));
  const Tensor dense = is_contiguous() ? *this : clone();
  std::vector<T> out(static_cast<std::size_t>(numel()));
  backend_for(device()).copy_to_host(out.data(), dense.raw_data(), nbytes());
  return out;
}

std::vector<double> Tensor::to_f64_vector() const {
  auto bytes = host_bytes(*this);
  std::vector<double> out(static_cast<std::size_t>(numel()));
  for (std::int64_t i = 0; i < numel(); ++i) out[i] = load(bytes.data(), dtype(), i);
  return out;
}

double Tensor::item() const {
  MG_CHECK(numel() == 1, "item", "self", "a tensor with one element", "shape {}",
           shape_str(shape()));
  return at_flat(0);
}

double Tensor::at(std::initializer_list<std::int64_t> index) const {
  MG_CHECK(static_cast<std::int64_t>(index.size()) == dim(), "at", "index",
           fmt::format("{} indices", dim()), "{}", index.size());
  std::int64_t flat = 0, axis = 0;
  for (auto i : index) {
    auto extent = shape()[axis];
    MG_CHECK(i >= 0 && i < extent, "at", "index", fmt::format("axis {} in [0, {})", axis, extent),
             "{}", i);
    flat = flat * extent + i;
    ++axis;
  }
  return at_flat(flat);
}

double Tensor::at_flat(std::int64_t flat_index) const {
  MG_CHECK(flat_index >= 0 && flat_index < numel(), "at_flat", "index",
           fmt::format("in [0, {})", numel()), "{}", flat_index);
  auto size = dtype_size(dtype());
  alignas(8) unsigned char element[8];
  backend_for(device()).copy_to_host(
      element, static_cast<const unsigned char*>(raw_data()) + element_offset(flat_index) * size,
      size);
  return load(element, dtype(), 0);
}

void Tensor::set_flat(std::int64_t flat_index, double value) {
  MG_CHECK(flat_index >= 0 && flat_index < numel(), "set_flat", "index",
           fmt::format("in [0, {})", numel()), "{}", flat_index);
  check_writable("set_flat");
  check_no_overlap("set_flat");
  auto size = dtype_size(dtype());
  alignas(8) unsigned char element[8];
  store(element, dtype(), 0, value, "set_flat");  // may throw: before anything changes
  checked_impl().storage->bump_version();
  backend_for(device()).copy_from_host(
      static_cast<unsigned char*>(raw_data()) + element_offset(flat_index) * size, element, size);
}

Tensor Tensor::to(Device target) const {
  if (device() == target) return *this;
  if (device().is_cpu() && is_contiguous())
    return from_host_bytes(raw_data(), shape(), dtype(), target);
  auto bytes = host_bytes(*this);
  return from_host_bytes(bytes.data(), shape(), dtype(), target);
}

Tensor Tensor::to(DType target) const {
  if (target == dtype()) return clone();
  auto bytes = host_bytes(*this);
  Tensor host = empty(shape(), target);
  const bool integers = !is_floating(dtype()) && !is_floating(target);
  for (std::int64_t i = 0; i < numel(); ++i) {
    if (is_bool(target)) {  // as torch: any nonzero value (NaN included) is true
      static_cast<bool*>(host.raw_data())[i] = load(bytes.data(), dtype(), i) != 0;
    } else if (integers) {  // exactly, through int64: only i64 -> i32 can be out of range
      const std::int64_t v = load_integer(bytes.data(), dtype(), i);
      MG_CHECK(target == DType::i64 || (v >= INT32_MIN && v <= INT32_MAX), "to", "value",
               "a value inside i32's range", "{} (element {})", v, i);
      store(host.raw_data(), target, i, static_cast<double>(v), "to");
    } else {
      store(host.raw_data(), target, i, load(bytes.data(), dtype(), i), "to");
    }
  }
  return host.to(device());
}

Tensor Tensor::clone() const {
  Tensor copy = empty(shape(), dtype(), device());
  if (is_contiguous()) {
    backend_for(device()).copy(copy.raw_data(), raw_data(), nbytes());
  } else {
    copy_elements(copy, *this);
  }
  return copy;
}

Tensor Tensor::detach() const {
  const TensorImpl& impl = checked_impl();
  if (impl.contiguous) return from_storage(impl.storage, impl.shape, impl.dtype, impl.offset);
  return from_storage(impl.storage, impl.shape, impl.strides, impl.dtype, impl.offset);
}

std::int64_t Tensor::element_offset(std::int64_t flat_index) const {
  if (is_contiguous()) return flat_index;
  const Shape& strides = checked_impl().strides;
  std::int64_t offset = 0;
  for (std::int64_t axis = dim() - 1; axis >= 0; --axis) {
    offset += flat_index % shape()[axis] * strides[axis];
    flat_index /= shape()[axis];
  }
  return offset;
}

bool Tensor::requires_grad() const { return checked_impl().requires_grad; }

Tensor& Tensor::set_requires_grad(bool requires_grad) {
  MG_CHECK(!requires_grad || is_floating(dtype()), "set_requires_grad", "self",
           "a floating-point tensor", "{}", dtype_name(dtype()));
  MG_CHECK(is_leaf(), "set_requires_grad", "self", "a leaf tensor", "the output of a recorded op");
  checked_impl().requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const { return checked_impl().grad_fn == nullptr; }

Tensor Tensor::grad() const {
  auto& g = checked_impl().grad;
  return g ? Tensor(g) : Tensor();
}

void Tensor::zero_grad() { checked_impl().grad.reset(); }

const std::shared_ptr<Node>& Tensor::grad_fn() const { return checked_impl().grad_fn; }

void Tensor::backward(const Tensor& grad, bool retain_graph) const {
  mg::backward(*this, grad, retain_graph);
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  constexpr std::int64_t kShown = 6;
  std::vector<double> values;
  if (numel() <= kShown) {
    values = to_f64_vector();
  } else {
    for (std::int64_t i = 0; i < kShown; ++i) values.push_back(at_flat(i));
  }
  return fmt::format("Tensor(shape={}, dtype={}, device={}{}, values=[{:.6g}{}])",
                     shape_str(shape()), dtype_name(dtype()), device().str(),
                     requires_grad() ? ", requires_grad" : "", fmt::join(values, ", "),
                     numel() > kShown ? ", ..." : "");
}

#define MG_INSTANTIATE(T)                                                              \
  template Tensor Tensor::from_vector<T>(const std::vector<T>&, const Shape&, Device); \
  template T* Tensor::data<T>() const;                                                 \
  template T* Tensor::data_ptr<T>() const;                                             \
  template std::vector<T> Tensor::to_vector<T>() const;
MG_INSTANTIATE(float)
MG_INSTANTIATE(double)
MG_INSTANTIATE(std::int32_t)
MG_INSTANTIATE(std::int64_t)
#undef MG_INSTANTIATE
// Masks: raw access only (std::vector<bool> packs bits, so no from_vector or to_vector).
template bool* Tensor::data<bool>() const;
template bool* Tensor::data_ptr<bool>() const;

}  // namespace mg
