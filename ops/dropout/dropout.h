// The public face of dropout (ops/dropout): the function and its attributes.
//   x [..X] -> out [..X]; out_i = x_i * keep_i / (1 - p), keep_i from Philox(seed, counter, i)
// How the mask is drawn is part of the contract (below): runs repeat and resume exactly.
#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// Inverted dropout, as torch.nn.functional.dropout: x [..X] of a float dtype (f32, f64) gives
// out [..X] in x's dtype, each element kept and scaled by 1 / (1 - p), or zeroed, with
// probability p. As PyTorch's, out is x * mask / (1 - p): a dropped inf or NaN gives NaN, and a
// dropped -x gives -0.
//
// The mask is a pure function of (seed, counter, flat element index): Philox4x32-10 with key
// `seed` and counter (`counter`, index / 4) gives four 32-bit words per four elements; element
// i takes word i % 4, u = (word >> 8) * 2^-24 in [0, 1), and the element is kept iff u >= p.
// So a run repeats bit for bit, resumes from its (seed, counter), does not depend on the
// thread count, and the CPU and CUDA give the same mask. Give every call its own counter (a
// step and layer number, say): two calls with the same seed and counter drop the same
// elements.
struct DropoutAttrs {
  double p = 0.5;
  std::uint64_t seed = 0;
  std::uint64_t counter = 0;
};

// Dropout of x with probability p in [0, 1) (NaN, a negative p or one >= 1 is an mg::Error, in
// either mode). Training with p > 0 runs the op "dropout", whose gradient is the same mask
// applied to grad_out (recomputed from the attributes, never stored). Otherwise (evaluation, or
// p == 0) it returns x itself and records nothing, as PyTorch's eval mode.
Tensor dropout(const Tensor& x, double p, bool training, std::uint64_t seed, std::uint64_t counter);

}  // namespace mg
