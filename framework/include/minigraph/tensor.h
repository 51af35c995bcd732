// Tensor: a shared handle to elements of a storage on one device, laid out by a shape, strides
// and an offset (layout.h).
//
// Copying a Tensor shares its storage and its autograd state (like torch.Tensor or
// std::shared_ptr): `Tensor b = a;` makes b another name for a. `clone()` copies the data.
// Views (view, reshape, narrow, select, transpose, permute, t, expand, unsqueeze, squeeze,
// split, chunk, detach) share the data under another layout without copying; each is recorded
// by autograd, with a backward rule that only moves gradients. Fresh tensors and every op's
// output are contiguous; `contiguous()` copies a view that is not.
//
// Writing into a tensor: `copy_`, `fill_`, `zero_` here, `add_` and `mul_` (defined by the ops
// library), and apply_op_into (op.h), through any view whose elements do not overlap (an
// expanded one is refused). None is recorded by autograd, so each refuses a tensor that a
// recording would need (check_writable), and each bumps the version of the storage that all
// views of it share: a backward through a graph that saved the tensor (or another view of it)
// before the write fails instead of returning a wrong gradient. Setting a parameter's values is `{
// NoGradGuard g; p.copy_(values); }`.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "minigraph/dtype.h"

namespace mg {

class Backend;
struct Node;

// Memory on one device: allocated by its backend and freed through it when the last tensor
// using it goes, or memory the storage wraps without owning it (a file mapping).
class Storage {
 public:
  Storage(Device device, std::size_t bytes);
  // Wraps `bytes` at `data`, which this storage did not allocate and never frees: `owner`
  // (e.g. the handle of a file mapping) is held until the storage goes, so the memory stays
  // valid as long as a tensor uses it. Writes and the version counter work as for any storage.
  Storage(Device device, void* data, std::size_t bytes, std::shared_ptr<const void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  Backend& backend() const { return *backend_; }
  // Counts the writes into this storage made through the write paths (tensor.h's header).
  std::uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Backend* backend_;
  Device device_;
  std::size_t bytes_;
  void* data_;
  std::shared_ptr<const void> owner_;  // what keeps wrapped memory alive
  bool wraps_ = false;                 // memory not allocated by backend_: never freed here
  std::atomic<std::uint64_t> version_{0};
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  std::int64_t offset = 0;  // in elements, from the start of the storage
  Shape shape;
  // In elements, one per axis (layout.h); empty while contiguous: Tensor::strides() derives
  // the row-major ones, so that an op's output allocates no strides of its own.
  Shape strides;
  std::int64_t numel = 0;
  bool contiguous = true;  // is_contiguous_layout(shape, strides), kept with the layout
  DType dtype = DType::f32;
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;  // accumulated gradient of a leaf
  std::shared_ptr<Node> grad_fn;     // the op that made this tensor, when recorded
};

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Uninitialised memory; kernels fill it.
  static Tensor empty(const Shape& shape, DType dtype, Device device = Device::cpu());
  // A tensor over existing storage from element `offset` (the storage may be larger, e.g. with
  // guard bytes after it).
  static Tensor from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype,
                             std::int64_t offset = 0);
  // The same with explicit strides (in elements, none negative): what views are made of. Not
  // recorded; an mg::Error when the layout reaches past the storage.
  static Tensor from_storage(std::shared_ptr<Storage> storage, const Shape& shape,
                             const Shape& strides, DType dtype, std::int64_t offset);
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  // Every element `value`; for i32/i64 a value they cannot hold (NaN, an infinity, out of
  // range) is an mg::Error (a fraction is truncated toward zero).
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32,
                     Device device = Device::cpu());
  static Tensor ones(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu()) {
    return full(shape, 1.0, dtype, device);
  }
  // Normal(mean, stddev) from a seeded generator: the same seed gives the same bits everywhere.
  static Tensor normal(const Shape& shape, double mean, double stddev, std::uint64_t seed,
                       DType dtype = DType::f32, Device device = Device::cpu());
  // Values in row-major order; their count must match the shape.
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape,
                            Device device = Device::cpu());

  bool defined() const { return impl_ != nullptr; }
  // The accessors every op call runs are inline: a dispatch reads each several times.
  const Shape& shape() const { return checked_impl().shape; }
  std::int64_t dim() const { return static_cast<std::int64_t>(shape().size()); }
  std::int64_t size(std::int64_t axis) const;  // negative counts from the end
  std::int64_t numel() const { return checked_impl().numel; }
  DType dtype() const { return checked_impl().dtype; }
  Device device() const { return checked_impl().storage->device(); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype()); }

  std::int64_t storage_offset() const { return checked_impl().offset; }  // in elements
  Shape strides() const;  // in elements (by value: a contiguous tensor stores none)
  std::int64_t stride(std::int64_t axis) const;  // negative counts from the end
  bool is_contiguous() const { return checked_impl().contiguous; }
  // The version of the storage (bumped by every write through the write paths).
  std::uint64_t version() const { return checked_impl().storage->version(); }

  // Raw device pointer to the first element; typed access checks the dtype. For kernels:
  // writes through it are not versioned (use the write paths above to set values). data<T>()
  // also requires a contiguous tensor (an mg::Error otherwise, never a misread view); a kernel
  // that reads strides takes data_ptr<T>().
  void* raw_data() const;
  template <typename T>
  T* data() const;
  template <typename T>
  T* data_ptr() const;

  // Host copies. to_vector<T> requires T to match the dtype exactly.
  template <typename T>
  std::vector<T> to_vector() const;
  std::vector<double> to_f64_vector() const;  // any dtype, widened
  double item() const;                        // a one-element tensor's value
  double at(std::initializer_list<std::int64_t> index) const;
  double at_flat(std::int64_t flat_index) const;
  void set_flat(std::int64_t flat_index, double value);  // for tests and gradcheck

  Tensor to(Device device) const;  // a copy on that device (or this tensor if already there)
  // A converted copy on the same device, not recorded by autograd; the same dtype gives a copy.
  // Floats to integers truncate toward zero, and a value the integer dtype cannot hold (NaN,
  // an infinity, out of range) is an mg::Error naming the element; integers convert exactly.
  // To boolean: any nonzero value (NaN included) is true; from it, 0 and 1.
  Tensor to(DType dtype) const;
  Tensor clone() const;   // a contiguous copy of the data, without autograd history
  Tensor detach() const;  // shares data and layout, without autograd history

  // Views, as libtorch names them (views.cpp). Axes may count from the end (-1 is the last).
  // Each shares this tensor's storage and is recorded by autograd; the gradient moves back
  // through the inverse movement (narrow and select: into a tensor zero elsewhere; expand:
  // one sum over the expanded axes).
  // The same elements in row-major order under another shape; one size may be -1 (worked out
  // from the others). An mg::Error when the strides cannot say it (a transposed tensor viewed
  // flat): reshape copies then.
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;  // a view when the strides allow, else a copy
  Tensor flatten() const;                    // reshape({-1})
  // Indices [start, start + length) of axis `dim`; select: index `index` of it, the axis gone.
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor permute(const std::vector<std::int64_t>& dims) const;  // axis i is dims[i] of this
  Tensor t() const;  // a matrix transposed (rank 0 and 1: itself), as libtorch
  Tensor unsqueeze(std::int64_t dim) const;  // a size-1 axis inserted at dim
  Tensor squeeze() const;                    // every size-1 axis removed
  Tensor squeeze(std::int64_t dim) const;    // that axis removed if its size is 1
  // Pieces of `split_size` along dim (the last one shorter), or `chunks` pieces of
  // ceil(size / chunks) (fewer when the size runs out), as libtorch.
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0) const;
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0) const;
  // Size-1 axes repeated to `shape` (stride 0; -1 keeps a size; new leading axes allowed), a
  // view that nothing may write through. Defined by the ops library (ops/expand), whose
  // sum_to is its backward.
  Tensor expand(const Shape& shape) const;
  // This tensor if it is contiguous, else a contiguous copy (recorded: the gradient passes
  // through unchanged).
  Tensor contiguous() const;

  // Writes (see the header comment). copy_ takes a tensor of the same shape and dtype from any
  // device; fill_ stores `value` converted to the dtype (as full does: an mg::Error for a value
  // an integer dtype cannot hold, the tensor unchanged).
  Tensor& copy_(const Tensor& src);
  Tensor& fill_(double value);
  Tensor& zero_();
  // this += alpha * x and this *= x (x broadcast to this tensor's shape): the ops library's
  // add and mul kernels writing into this tensor (ops/tensor_methods.cpp).
  Tensor& add_(const Tensor& x, double alpha = 1.0);
  Tensor& mul_(const Tensor& x);
  // Moves the data to `device` in place: every handle to this tensor sees it there (Module::to
  // uses it, so tensors handed out before stay valid). Refuses a tensor that shares its
  // storage with another (a view or a detach()), which would be left behind.
  void to_(Device device);
  // Throws mg::Error naming `op` unless a write into this tensor is safe for autograd: grad
  // mode off, or a tensor that neither requires grad nor came out of a recorded op.
  void check_writable(std::string_view op) const;
  // Throws mg::Error naming `op` when two indices reach one element (an expanded view), so a
  // write through it would be ambiguous.
  void check_no_overlap(std::string_view op) const;

  // Ops as methods and operators, so code reads like libtorch's; each is the op of the same
  // name (defined by the ops library, ops/tensor_methods.cpp; the core never calls them).
  Tensor matmul(const Tensor& other) const;
  Tensor sum() const;  // every element
  Tensor sum(const std::vector<std::int64_t>& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const std::vector<std::int64_t>& dims, bool keepdim = false) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor neg() const;
  Tensor relu() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor square() const;
  Tensor pow(double exponent) const;
  // Comparisons, giving a bool mask; where(mask, other) and masked_fill(mask, value).
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor where(const Tensor& condition,
               const Tensor& other) const;  // where(condition, *this, other)
  Tensor masked_fill(const Tensor& mask, double value) const;

  // Autograd.
  bool requires_grad() const;
  Tensor& set_requires_grad(bool requires_grad = true);
  bool is_leaf() const;
  Tensor grad() const;  // undefined until a backward pass reaches this leaf
  void zero_grad();     // drops the gradient (as PyTorch's set_to_none)
  const std::shared_ptr<Node>& grad_fn() const;
  // Backward from this tensor: a scalar seeds 1; otherwise pass the upstream gradient.
  void backward(const Tensor& grad = Tensor(), bool retain_graph = false) const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  std::string str() const;  // shape, dtype, device and (up to a few) values

 private:
  std::int64_t element_offset(std::int64_t flat_index) const;  // row-major index -> storage
  const TensorImpl& checked_impl() const {
    if (impl_ == nullptr) [[unlikely]]
      throw_undefined();
    return *impl_;
  }
  TensorImpl& checked_impl() {
    if (impl_ == nullptr) [[unlikely]]
      throw_undefined();
    return *impl_;
  }
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<TensorImpl> impl_;
};

// a + b, a - b, a * b, a / b with broadcasting, -a, and tensor-scalar arithmetic (x + 1,
// 1 - x, x * s, x / 2): the ops add, sub, mul, div, neg, add_scalar, rsub_scalar, scale and
// div_scalar (ops library).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& x, double value);
Tensor operator+(double value, const Tensor& x);
Tensor operator-(const Tensor& x, double value);
Tensor operator-(double value, const Tensor& x);
Tensor operator*(const Tensor& x, double value);
Tensor operator*(double value, const Tensor& x);
Tensor operator/(const Tensor& x, double value);
// Comparisons with broadcasting, each a bool mask (the ops eq, ne, lt, le, gt, ge): as in
// libtorch, a == b is a tensor, not a bool; against a number, that number as a 0-d tensor.
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& x, double value);
Tensor operator!=(const Tensor& x, double value);
Tensor operator<(const Tensor& x, double value);
Tensor operator<=(const Tensor& x, double value);
Tensor operator>(const Tensor& x, double value);
Tensor operator>=(const Tensor& x, double value);

}  // namespace mg
