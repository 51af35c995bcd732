// moving_average's function, run by the update engines on the CPU and CUDA (common/update.h,
// common/update_cuda.cuh); C++17, as nvcc compiles it too. The numbers are already in the
// element type, as PyTorch converts its scalars to the tensor's dtype.
#pragma once

#include "common/host_device.h"

namespace mg {

template <typename T>
struct MovingAverageFn {
  static constexpr int kArity = 2;
  T decay;            // the weight of the old average
  T weight;           // 1 - decay, the weight of the new value
  bool squared;       // average x * x
  bool small_weight;  // |weight| < 0.5: torch.lerp's first form, exact at weight 0
  MG_HOST_DEVICE T operator()(T avg, T x) const {
    // addcmul_ computes self + (value * t1) * t2; lerp picks the form that is exact at the
    // end its weight is closer to.
    if (squared) return avg * decay + weight * x * x;
    return small_weight ? avg + weight * (x - avg) : x - (x - avg) * (T(1) - weight);
  }
};

template <typename T>
MovingAverageFn<T> make_moving_average_fn(double decay, bool squared) {
  const T weight = static_cast<T>(1.0 - decay);
  return {static_cast<T>(decay), weight, squared, weight < T(0.5) && weight > T(-0.5)};
}

}  // namespace mg
