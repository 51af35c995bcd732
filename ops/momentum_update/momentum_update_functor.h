// momentum_update's function, run by the update engines on the CPU and CUDA
// (common/update.h, common/update_cuda.cuh); C++17, as nvcc compiles it too. The numbers are
// already in the element type, as PyTorch converts its Python scalars to the tensor's dtype.
#pragma once

#include "common/host_device.h"

namespace mg {

template <typename T>
struct MomentumUpdateFn {
  static constexpr int kArity = 3;
  T momentum;
  T keep;  // 1 - dampening
  T weight_decay;
  bool decays;  // weight_decay != 0: PyTorch skips the add, so grad stays bit-exact (even -0)
  bool first_step;
  MG_HOST_DEVICE T operator()(T buf, T grad, T param) const {
    const T d = decays ? grad + weight_decay * param : grad;  // grad.add(param, alpha=wd)
    return first_step ? d : buf * momentum + keep * d;        // buf.mul_(m).add_(d, alpha=keep)
  }
};

// From MomentumUpdateAttrs (a template parameter: the .cu sees no minigraph header but this one).
template <typename T, typename Attrs>
MomentumUpdateFn<T> make_momentum_update_fn(const Attrs& a) {
  return {static_cast<T>(a.momentum), static_cast<T>(1.0 - a.dampening),
          static_cast<T>(a.weight_decay), a.weight_decay != 0, a.first_step};
}

}  // namespace mg
