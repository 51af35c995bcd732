// Writes into existing tensors that the core can do with memory alone: copy_, fill_, zero_
// (through any view without overlap), and moving a tensor's data to another device in place.
// Arithmetic writes (add_, mul_) are ops (ops/tensor_methods.cpp). None is recorded; each
// bumps the storage's version.
#include <cmath>
#include <vector>

#include "minigraph/autograd.h"
#include "minigraph/backend.h"
#include "minigraph/layout.h"
#include "minigraph/op.h"
#include "minigraph/tensor.h"
#include "strided_copy.h"

namespace mg {

namespace {

// dst = src for two contiguous tensors on different devices, through the host where neither is it.
void copy_across_devices(const Tensor& dst, const Tensor& src) {
  const std::size_t bytes = dst.nbytes();
  if (src.device().is_cpu()) {
    backend_for(dst.device()).copy_from_host(dst.raw_data(), src.raw_data(), bytes);
  } else if (dst.device().is_cpu()) {
    backend_for(src.device()).copy_to_host(dst.raw_data(), src.raw_data(), bytes);
  } else {
    std::vector<unsigned char> host(bytes);
    backend_for(src.device()).copy_to_host(host.data(), src.raw_data(), bytes);
    backend_for(dst.device()).copy_from_host(dst.raw_data(), host.data(), bytes);
  }
}

}  // namespace

void Tensor::check_writable(std::string_view op) const {
  const TensorImpl& impl = checked_impl();
  if (!grad_enabled()) return;
  MG_CHECK(impl.grad_fn == nullptr, std::string(op), "self",
           "a tensor outside a recorded graph (in-place writes are not recorded)",
           "the output of recorded op '{}' (write under mg::NoGradGuard, or into a detach())",
           impl.grad_fn->op->name);
  MG_CHECK(!impl.requires_grad, std::string(op), "self",
           "a tensor that does not require grad, or grad mode off (mg::NoGradGuard)",
           "a leaf that requires grad, with grad mode on");
}

void Tensor::check_no_overlap(std::string_view op) const {
  if (is_contiguous()) return;
  MG_CHECK(!has_internal_overlap(shape(), strides()), std::string(op), "self",
           "a tensor whose indices reach distinct elements (not an expanded view)",
           "a view of shape {} with strides {}, where several indices reach one element",
           shape_str(shape()), shape_str(strides()));
}

bool same_elements(const Tensor& a, const Tensor& b) {
  return a.impl()->storage == b.impl()->storage && a.storage_offset() == b.storage_offset() &&
         a.shape() == b.shape() && a.strides() == b.strides();
}

bool spans_meet(const Tensor& a, const Tensor& b) {
  if (a.impl()->storage != b.impl()->storage || a.numel() == 0 || b.numel() == 0) return false;
  const std::int64_t a_end = a.storage_offset() + layout_extent(a.shape(), a.strides());
  const std::int64_t b_end = b.storage_offset() + layout_extent(b.shape(), b.strides());
  return a.storage_offset() < b_end && b.storage_offset() < a_end;
}

namespace {

// src laid out as `like`'s shape with every stride 0: one element read at every index.
Tensor repeated(const Tensor& element, const Tensor& like) {
  return Tensor::from_storage(element.impl()->storage, like.shape(), Shape(like.dim(), 0),
                              like.dtype(), element.storage_offset());
}

}  // namespace

void copy_elements(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  StridedCopy copy{dst.raw_data(), src.raw_data(), dtype_size(dst.dtype()), {}, {}, {}};
  const Shape dst_strides = dst.strides(), src_strides = src.strides();
  for (std::int64_t axis = 0; axis < dst.dim(); ++axis) {
    const std::int64_t size = dst.shape()[axis], d = dst_strides[axis], s = src_strides[axis];
    if (size == 1) continue;
    if (!copy.shape.empty() && copy.dst_strides.back() == d * size &&
        copy.src_strides.back() == s * size) {
      copy.shape.back() *= size;  // the outer axis steps exactly over this one: one axis
      copy.dst_strides.back() = d;
      copy.src_strides.back() = s;
      continue;
    }
    copy.shape.push_back(size);
    copy.dst_strides.push_back(d);
    copy.src_strides.push_back(s);
  }
  backend_for(dst.device()).copy_strided(copy);
}

Tensor& Tensor::copy_(const Tensor& src) {
  MG_CHECK(src.defined(), "copy_", "src", "a defined tensor", "an undefined one");
  MG_CHECK(src.shape() == shape(), "copy_", "src", fmt::format("shape {}", shape_str(shape())),
           "{}", shape_str(src.shape()));
  MG_CHECK(src.dtype() == dtype(), "copy_", "src",
           fmt::format("dtype {} (convert with .to(dtype) first)", dtype_name(dtype())), "{}",
           dtype_name(src.dtype()));
  check_writable("copy_");
  check_no_overlap("copy_");
  if (same_elements(src, *this)) return *this;
  // Memory shared with src in another layout: read src whole first, as the copy means.
  const Tensor from = spans_meet(src, *this) ? src.clone() : src;
  impl()->storage->bump_version();
  if (nbytes() == 0) return *this;
  if (from.device() == device()) {
    if (is_contiguous() && from.is_contiguous()) {
      backend_for(device()).copy(raw_data(), from.raw_data(), nbytes());
    } else {
      copy_elements(*this, from);
    }
  } else if (!is_contiguous()) {
    copy_elements(*this, from.to(device()));
  } else {
    copy_across_devices(*this, from.is_contiguous() ? from : from.clone());
  }
  return *this;
}

Tensor& Tensor::fill_(double value) {
  check_writable("fill_");
  MG_CHECK(holds_value(dtype(), value), "fill_", "value",
           fmt::format("a finite value inside {}'s range", dtype_name(dtype())), "{}", value);
  if (value == 0.0 && !std::signbit(value)) return zero_();
  check_no_overlap("fill_");
  const Tensor element = Tensor::full({}, value, dtype(), device());
  impl()->storage->bump_version();
  copy_elements(*this, repeated(element, *this));
  return *this;
}

Tensor& Tensor::zero_() {
  check_writable("zero_");
  check_no_overlap("zero_");
  impl()->storage->bump_version();
  if (is_contiguous()) {
    backend_for(device()).fill_zero(raw_data(), nbytes());
  } else {
    copy_elements(*this, repeated(Tensor::zeros({}, dtype(), device()), *this));
  }
  return *this;
}

void Tensor::to_(Device target) {
  TensorImpl& impl = const_cast<TensorImpl&>(checked_impl());
  if (impl.storage->device() == target) return;
  MG_CHECK(impl.grad_fn == nullptr, "to_", "self", "a leaf tensor", "the output of a recorded op");
  MG_CHECK(impl.storage.use_count() == 1, "to_", "self", "a tensor that owns its storage alone",
           "one sharing it with {} other tensors (views or detach()), which would be left on {}",
           impl.storage.use_count() - 1, impl.storage->device().str());
  Tensor moved = detach().to(target);
  impl.storage = moved.impl()->storage;
  impl.offset = moved.storage_offset();
  impl.strides.clear();  // moved contiguous
  impl.contiguous = true;
  impl.storage->bump_version();  // a graph that saved it on the old device cannot run
  if (impl.grad) Tensor(impl.grad).to_(target);
}

}  // namespace mg
