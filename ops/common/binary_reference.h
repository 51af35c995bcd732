// The naive reference of the binary elementwise ops (sub, mul, div): NumPy's broadcasting
// rule spelled out, then one plain loop over every output element applying `fn`. Used by
// references only, never by kernels (nothing from common/broadcast.h or the engines), so an
// error in the kernels' helpers cannot hide in it.
//   a [..A], b [..B] -> out [broadcast(A, B)]
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "minigraph/op.h"

namespace mg {

template <typename Fn>
Tensor binary_reference(std::span<const Tensor> inputs, Fn fn) {
  const Shape& a = inputs[0].shape();
  const Shape& b = inputs[1].shape();
  // Pad both shapes with leading 1s to one rank; each output axis is the size that is not 1
  // (the shape rule has checked that they agree otherwise).
  const std::size_t rank = std::max(a.size(), b.size());
  Shape pad_a(rank - a.size(), 1), pad_b(rank - b.size(), 1);
  pad_a.insert(pad_a.end(), a.begin(), a.end());
  pad_b.insert(pad_b.end(), b.begin(), b.end());
  Shape shape(rank);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    shape[axis] = pad_a[axis] == 1 ? pad_b[axis] : pad_a[axis];
  }
  Tensor out = Tensor::empty(shape, inputs[0].dtype());
  dispatch_float(out.dtype(), [&]<typename T>() {
    const T* pa = inputs[0].data<T>();
    const T* pb = inputs[1].data<T>();
    T* po = out.data<T>();
    std::vector<std::int64_t> index(rank);
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      std::int64_t rest = flat;  // row-major: the last axis varies fastest
      for (std::size_t axis = rank; axis-- > 0;) {
        index[axis] = rest % shape[axis];
        rest /= shape[axis];
      }
      // On an axis of size 1 an input always reads index 0.
      std::int64_t ia = 0, ib = 0;
      for (std::size_t axis = 0; axis < rank; ++axis) {
        ia = ia * pad_a[axis] + (pad_a[axis] == 1 ? 0 : index[axis]);
        ib = ib * pad_b[axis] + (pad_b[axis] == 1 ? 0 : index[axis]);
      }
      po[flat] = fn(pa[ia], pb[ib]);
    }
  });
  return out;
}

}  // namespace mg
