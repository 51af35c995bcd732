// arange, as torch.arange: a factory of evenly spaced values (ops/arange, not a registered op).
//   (start, end, step) -> out [N], N = ceil((end - start) / step), out_i = start + i * step
// CPU only; move the result with Tensor::to.
#pragma once

#include "minigraph/tensor.h"

namespace mg {

// A 1-D CPU tensor [N] of the values start, start + step, start + 2 step, ... stopping before
// end, as torch.arange: N = ceil((end - start) / step), computed in double as PyTorch does for
// floats (so arange(1, 1.3, 0.1) has 4 elements, as there). A factory: no inputs, not an op
// in the registry, not recorded by autograd (the result is a leaf that requires no grad).
//
// dtype: i32 or i64 (values exact, in 64-bit integers; start and step must then be whole
// numbers, so nothing is truncated silently), or f32 or f64 (element i is start + i * step in
// double, then rounded to the dtype). Each of these is an mg::Error naming "arange" and the
// argument: a bool dtype; a NaN or infinite start, end or step; step 0; a step whose sign
// leads away from end (end == start gives an empty tensor); more than 2^40 elements; a value
// the dtype cannot hold (past i32's range, or f32's 3.4e38).
Tensor arange(double start, double end, double step, DType dtype);
// arange(0, end, 1, dtype): the integers 0 .. ceil(end) - 1 by default.
Tensor arange(double end, DType dtype = DType::i64);

}  // namespace mg
