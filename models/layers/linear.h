// Linear layers and layer normalisation as modules, laid out as torch.nn's, so a torch.nn
// state dict loads into them as it is.
//   Linear:    x [..., in] -> x weightᵀ + bias [..., out]; weight [out, in], bias [out]
//   LayerNorm: x [..., D] -> layer_norm over the last axis; weight [D] (ones), bias [D] (zeros)
#pragma once

#include <cstdint>

#include "minigraph/module.h"

namespace mg {

struct LinearOptions {
  bool bias = true;
  double init_std = 0.02;  // weight ~ N(0, init_std) (GPT-2's); the bias starts at zeros
  std::uint64_t seed = 0;
  DType dtype = DType::f32;
};

class Linear : public Module {
 public:
  // Throws mg::Error unless both sizes are positive and init_std finite and >= 0.
  Linear(std::int64_t in_features, std::int64_t out_features, const LinearOptions& options = {});
  // One matmul against the transposed weight (a BLAS flag, no copy), then the bias.
  Tensor forward(const Tensor& x) const;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without a bias
  std::int64_t in_features() const { return weight_.shape()[1]; }
  std::int64_t out_features() const { return weight_.shape()[0]; }

 private:
  Tensor weight_;
  Tensor bias_;
};

class LayerNorm : public Module {
 public:
  // Throws mg::Error unless width > 0 and eps finite and >= 0.
  explicit LayerNorm(std::int64_t width, double eps = 1e-5, DType dtype = DType::f32);
  Tensor forward(const Tensor& x) const;  // the fused layer_norm op
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  double eps() const { return eps_; }

 private:
  Tensor weight_;
  Tensor bias_;
  double eps_;
};

}  // namespace mg
