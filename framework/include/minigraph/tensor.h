// Tensor: a shared handle to row-major contiguous storage on one device.
//
// Copying a Tensor shares its storage and its autograd state (like torch.Tensor or
// std::shared_ptr): `Tensor b = a;` makes b another name for a. `clone()` copies the data.
// `view()` and `detach()` share the data under another shape or without autograd history.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "minigraph/dtype.h"

namespace mg {

class Backend;
struct Node;

// Memory owned by one backend; freed through it when the last tensor using it goes.
class Storage {
 public:
  Storage(Device device, std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  Backend& backend() const { return *backend_; }

 private:
  Backend* backend_;
  Device device_;
  std::size_t bytes_;
  void* data_;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  std::int64_t numel = 0;
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
  // A tensor over existing storage (which may be larger, e.g. with guard bytes after it).
  static Tensor from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype);
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
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
  const Shape& shape() const;
  std::int64_t dim() const { return static_cast<std::int64_t>(shape().size()); }
  std::int64_t size(std::int64_t axis) const;  // negative counts from the end
  std::int64_t numel() const;
  DType dtype() const;
  Device device() const;
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype()); }

  // Raw device pointer; typed access checks the dtype.
  void* raw_data() const;
  template <typename T>
  T* data() const;

  // Host copies. to_vector<T> requires T to match the dtype exactly.
  template <typename T>
  std::vector<T> to_vector() const;
  std::vector<double> to_f64_vector() const;  // any dtype, widened
  double item() const;                        // a one-element tensor's value
  double at(std::initializer_list<std::int64_t> index) const;
  double at_flat(std::int64_t flat_index) const;
  void set_flat(std::int64_t flat_index, double value);  // for tests and gradcheck

  Tensor to(Device device) const;  // a copy on that device (or this tensor if already there)
  Tensor to(DType dtype) const;    // converted copy (CPU); not recorded by autograd
  Tensor clone() const;            // a copy of the data, without autograd history
  Tensor detach() const;           // shares data, without autograd history
  // Shares data under another shape with the same element count. Not recorded by autograd,
  // so it refuses tensors that require grad while grad mode is on.
  Tensor view(const Shape& shape) const;

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
  const TensorImpl& checked_impl() const;
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace mg
