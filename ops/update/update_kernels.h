// The optimizer update family's functors and its engine's kernels. A functor is the one
// definition of an op's step: the CPU engine (update_cpu.cpp), the CUDA one (update_cuda.cu)
// and the naive reference (update.cpp) all run it. It builds itself from the op's attributes
// (`from`), converting the numbers to the element type T once, and takes kArity elements (2 or
// 3, one from each input). A new op: its functor here, its name in MG_UPDATE_FUNCTORS (each
// engine instantiates its kernel for every functor listed), and its row in update.cpp.
//   N elements; in0 [N], in1 [N] (, in2 [N]) -> out [N]
#pragma once

#include <cmath>

#include "common/host_device.h"
#include "minigraph/op.h"
#include "update/update.h"

namespace mg {

template <typename T>
struct MovingAverageFn {
  static constexpr int kArity = 2;
  T decay;            // the weight of the old average
  T weight;           // 1 - decay, the weight of the new value
  bool squared;       // average x * x
  bool small_weight;  // |weight| < 0.5: torch.lerp's first form, exact at weight 0
  static MovingAverageFn from(const std::any& attrs) {
    const auto& a = attrs_as<MovingAverageAttrs>("moving_average", attrs);
    const T weight = static_cast<T>(1.0 - a.decay);
    return {static_cast<T>(a.decay), weight, a.squared, weight < T(0.5) && weight > T(-0.5)};
  }
  MG_HOST_DEVICE T operator()(T avg, T x) const {
    // addcmul_ computes self + (value * t1) * t2; lerp picks the form that is exact at the
    // end its weight is closer to.
    if (squared) return avg * decay + weight * x * x;
    return small_weight ? avg + weight * (x - avg) : x - (x - avg) * (T(1) - weight);
  }
};

template <typename T>
struct AdamWUpdateFn {
  static constexpr int kArity = 3;
  T decay;     // 1 - lr * weight_decay
  T sqrt_c2;   // sqrt(1 - beta2^t)
  T eps;       //
  T neg_step;  // -lr / (1 - beta1^t)
  static AdamWUpdateFn from(const std::any& attrs) {
    const auto& a = attrs_as<AdamWUpdateAttrs>("adamw_update", attrs);
    return {static_cast<T>(1.0 - a.lr * a.weight_decay),
            static_cast<T>(std::sqrt(a.beta2_correction)), static_cast<T>(a.eps),
            static_cast<T>(-(a.lr / a.beta1_correction))};
  }
  MG_HOST_DEVICE T operator()(T param, T m, T v) const {
    const T decayed = param * decay;  // param.mul_(1 - lr * wd)
    // std::sqrt is correctly rounded on the device too (sqrt.rn, nvcc's -prec-sqrt=true).
    const T denom = std::sqrt(v) / sqrt_c2 + eps;  // (v.sqrt() / sqrt(c2)).add_(eps)
    return decayed + neg_step * m / denom;         // addcdiv_: self + (value * m) / denom
  }
};

template <typename T>
struct MomentumUpdateFn {
  static constexpr int kArity = 3;
  T momentum;
  T keep;  // 1 - dampening
  T weight_decay;
  bool decays;  // weight_decay != 0: PyTorch skips the add, so grad stays bit-exact (even -0)
  bool first_step;
  static MomentumUpdateFn from(const std::any& attrs) {
    const auto& a = attrs_as<MomentumUpdateAttrs>("momentum_update", attrs);
    return {static_cast<T>(a.momentum), static_cast<T>(1.0 - a.dampening),
            static_cast<T>(a.weight_decay), a.weight_decay != 0, a.first_step};
  }
  MG_HOST_DEVICE T operator()(T buf, T grad, T param) const {
    const T d = decays ? grad + weight_decay * param : grad;  // grad.add(param, alpha=wd)
    return first_step ? d : buf * momentum + keep * d;        // buf.mul_(m).add_(d, alpha=keep)
  }
};

template <typename T>
struct SgdUpdateFn {
  static constexpr int kArity = 3;
  T neg_lr;  // -lr
  T weight_decay;
  T momentum;
  bool decays;        // weight_decay != 0: PyTorch skips the add
  bool has_momentum;  // momentum != 0: buf is read
  bool nesterov;
  static SgdUpdateFn from(const std::any& attrs) {
    const auto& a = attrs_as<SgdUpdateAttrs>("sgd_update", attrs);
    return {static_cast<T>(-a.lr),
            static_cast<T>(a.weight_decay),
            static_cast<T>(a.momentum),
            a.weight_decay != 0,
            a.momentum != 0,
            a.nesterov};
  }
  MG_HOST_DEVICE T operator()(T param, T grad, T buf) const {
    T d = decays ? grad + weight_decay * param : grad;  // grad.add(param, alpha=wd)
    if (has_momentum) d = nesterov ? d + momentum * buf : buf;
    return param + neg_lr * d;  // param.add_(d, alpha=-lr)
  }
};

#define MG_UPDATE_FUNCTORS(X) X(MovingAverageFn) X(AdamWUpdateFn) X(MomentumUpdateFn) X(SgdUpdateFn)

// out[i] = Fn(in0[i], in1[i] (, in2[i])); out may be the same memory as any input (each
// element is read, in every input, before the same index of out is written). update_cuda
// exists in CUDA builds only.
template <template <typename> class Fn>
void update_cpu(const KernelContext& ctx);
template <template <typename> class Fn>
void update_cuda(const KernelContext& ctx);

}  // namespace mg
