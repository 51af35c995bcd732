// An op library defined outside minigraph: scaled GELU, y = scale * gelu(x), and the helper
// op its backward is written in. Built by one line in examples/custom_op/CMakeLists.txt:
// minigraph_add_op_library(scaled_gelu), which also runs the op harness over its cases.
#pragma once

#include "minigraph/op.h"
#include "minigraph/plugin.h"

namespace mg {

struct ScaledGeluAttrs {
  double scale = 1.0;
};

// scale * x * Phi(x), Phi the standard normal CDF (exact GELU, not the tanh approximation).
// x [...] f32 or f64 -> [...].
Tensor scaled_gelu(const Tensor& x, double scale = 1.0);

// The gradient of scaled_gelu: grad * scale * (Phi(x) + x * phi(x)), phi the normal density.
// grad [...], x [...] (the same shape and dtype) -> [...].
Tensor scaled_gelu_backward(const Tensor& grad, const Tensor& x, double scale);

// Adds scaled_gelu and scaled_gelu_backward to `registry`. The library's extern "C"
// minigraph_register_ops (plugin.h) calls this.
void register_scaled_gelu(OpRegistry& registry);

}  // namespace mg
