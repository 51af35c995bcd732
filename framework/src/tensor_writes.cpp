// Writes into existing tensors that the core can do with memory alone: copy_, fill_, zero_,
// and moving a tensor's data to another device in place. Arithmetic writes (add_, mul_) are
// ops (ops/tensor_methods.cpp). None is recorded; each bumps the storage's version.
#include <cmath>
#include <vector>

#include "minigraph/autograd.h"
#include "minigraph/backend.h"
#include "minigraph/op.h"
#include "minigraph/tensor.h"

namespace mg {

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

Tensor& Tensor::copy_(const Tensor& src) {
  MG_CHECK(src.defined(), "copy_", "src", "a defined tensor", "an undefined one");
  MG_CHECK(src.shape() == shape(), "copy_", "src", fmt::format("shape {}", shape_str(shape())),
           "{}", shape_str(src.shape()));
  MG_CHECK(src.dtype() == dtype(), "copy_", "src",
           fmt::format("dtype {} (convert with .to(dtype) first)", dtype_name(dtype())), "{}",
           dtype_name(src.dtype()));
  check_writable("copy_");
  if (src.raw_data() == raw_data() && src.device() == device()) return *this;  // itself
  const bool same_storage = src.impl()->storage == impl()->storage;
  MG_CHECK(!same_storage || nbytes() == 0 ||
               static_cast<const unsigned char*>(src.raw_data()) + nbytes() <=
                   static_cast<const unsigned char*>(raw_data()) ||
               static_cast<const unsigned char*>(raw_data()) + nbytes() <=
                   static_cast<const unsigned char*>(src.raw_data()),
           "copy_", "src", "memory apart from self's", "a part of self's own memory");
  impl()->storage->bump_version();
  if (nbytes() == 0) return *this;
  if (src.device() == device()) {
    backend_for(device()).copy(raw_data(), src.raw_data(), nbytes());
  } else if (src.device().is_cpu()) {
    backend_for(device()).copy_from_host(raw_data(), src.raw_data(), nbytes());
  } else if (device().is_cpu()) {
    backend_for(src.device()).copy_to_host(raw_data(), src.raw_data(), nbytes());
  } else {  // between two devices, through the host
    std::vector<unsigned char> host(nbytes());
    backend_for(src.device()).copy_to_host(host.data(), src.raw_data(), nbytes());
    backend_for(device()).copy_from_host(raw_data(), host.data(), nbytes());
  }
  return *this;
}

Tensor& Tensor::fill_(double value) {
  check_writable("fill_");
  MG_CHECK(holds_value(dtype(), value), "fill_", "value",
           fmt::format("a finite value inside {}'s range", dtype_name(dtype())), "{}", value);
  if (value == 0.0 && !std::signbit(value)) return zero_();
  return copy_(Tensor::full(shape(), value, dtype()));
}

Tensor& Tensor::zero_() {
  check_writable("zero_");
  impl()->storage->bump_version();
  backend_for(device()).fill_zero(raw_data(), nbytes());
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
  impl.storage->bump_version();  // a graph that saved it on the old device cannot run
  if (impl.grad) Tensor(impl.grad).to_(target);
}

}  // namespace mg
