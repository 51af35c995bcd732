// adamw_update's function, run by the update engines on the CPU and CUDA (common/update.h,
// common/update_cuda.cuh); C++17, as nvcc compiles it too. The numbers are already in the
// element type, as PyTorch converts its Python scalars to the tensor's dtype.
#pragma once

#include <cmath>
#include <type_traits>

#include "common/host_device.h"

namespace mg {

template <typename T>
struct AdamWUpdateFn {
  static constexpr int kArity = 3;
  T decay;     // 1 - lr * weight_decay
  T sqrt_c2;   // sqrt(1 - beta2^t)
  T eps;       //
  T neg_step;  // -lr / (1 - beta1^t)
  MG_HOST_DEVICE T operator()(T param, T m, T v) const {
    const T decayed = param * decay;          // param.mul_(1 - lr * wd)
    const T denom = root(v) / sqrt_c2 + eps;  // (v.sqrt() / sqrt(c2)).add_(eps)
    return decayed + neg_step * m / denom;    // addcdiv_: self + (value * m) / denom
  }
  MG_HOST_DEVICE static T root(T x) {
#ifdef __CUDA_ARCH__
    // Correctly rounded on the device too (nvcc's default -prec-sqrt=true), as std::sqrt.
    if constexpr (std::is_same_v<T, float>) {
      return ::sqrtf(x);
    } else {
      return ::sqrt(x);
    }
#else
    return std::sqrt(x);
#endif
  }
};

// From AdamWUpdateAttrs (a template parameter: the .cu sees no minigraph header but this one).
template <typename T, typename Attrs>
AdamWUpdateFn<T> make_adamw_update_fn(const Attrs& a) {
  return {static_cast<T>(1.0 - a.lr * a.weight_decay),
          static_cast<T>(std::sqrt(a.beta2_correction)), static_cast<T>(a.eps),
          static_cast<T>(-(a.lr / a.beta1_correction))};
}

}  // namespace mg
