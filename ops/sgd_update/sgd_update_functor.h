// sgd_update's function, run by the update engines on the CPU and CUDA (common/update.h,
// common/update_cuda.cuh); C++17, as nvcc compiles it too. The numbers are already in the
// element type, as PyTorch converts its Python scalars to the tensor's dtype.
#pragma once

#include "common/host_device.h"

namespace mg {

template <typename T>
struct SgdUpdateFn {
  static constexpr int kArity = 3;
  T neg_lr;  // -lr
  T weight_decay;
  T momentum;
  bool decays;        // weight_decay != 0: PyTorch skips the add
  bool has_momentum;  // momentum != 0: buf is read
  bool nesterov;
  MG_HOST_DEVICE T operator()(T param, T grad, T buf) const {
    T d = decays ? grad + weight_decay * param : grad;  // grad.add(param, alpha=wd)
    if (has_momentum) d = nesterov ? d + momentum * buf : buf;
    return param + neg_lr * d;  // param.add_(d, alpha=-lr)
  }
};

// From SgdUpdateAttrs (a template parameter: the .cu sees no minigraph header but this one).
template <typename T, typename Attrs>
SgdUpdateFn<T> make_sgd_update_fn(const Attrs& a) {
  return {static_cast<T>(-a.lr),
          static_cast<T>(a.weight_decay),
          static_cast<T>(a.momentum),
          a.weight_decay != 0,
          a.momentum != 0,
          a.nesterov};
}

}  // namespace mg
