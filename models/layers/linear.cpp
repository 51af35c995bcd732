#include "layers/linear.h"

#include <fmt/format.h>

#include <cmath>

#include "minigraph/error.h"
#include "minigraph/ops/layer_norm/layer_norm.h"
#include "minigraph/ops/matmul/matmul.h"

namespace mg {
namespace {

std::int64_t positive_width(std::int64_t width) {
  MG_CHECK(width > 0, "LayerNorm", "width", "a positive size", "{}", width);
  return width;
}

}  // namespace

Linear::Linear(std::int64_t in_features, std::int64_t out_features, const LinearOptions& options) {
  MG_CHECK(in_features > 0 && out_features > 0, "Linear", "in_features, out_features",
           "positive sizes", "{}, {}", in_features, out_features);
  MG_CHECK(std::isfinite(options.init_std) && options.init_std >= 0, "Linear", "init_std",
           "a finite value >= 0", "{}", options.init_std);
  weight_ = Tensor::normal({out_features, in_features}, 0.0, options.init_std, options.seed,
                           options.dtype);
  register_parameter("weight", weight_);
  if (options.bias) {
    bias_ = Tensor::zeros({out_features}, options.dtype);
    register_parameter("bias", bias_);
  }
}

Tensor Linear::forward(const Tensor& x) const {
  MG_CHECK(x.dim() >= 1 && x.shape().back() == in_features(), "Linear", "x",
           fmt::format("a last axis of in_features = {}", in_features()), "{}",
           shape_str(x.shape()));
  Tensor y = matmul(x, weight_, {.transpose_b = true});
  return record_output(bias_.defined() ? y + bias_ : y);
}

LayerNorm::LayerNorm(std::int64_t width, double eps, DType dtype)
    : weight_(Tensor::ones({positive_width(width)}, dtype)),
      bias_(Tensor::zeros({width}, dtype)),
      eps_(eps) {
  MG_CHECK(std::isfinite(eps) && eps >= 0, "LayerNorm", "eps", "a finite value >= 0", "{}", eps);
  register_parameter("weight", weight_);
  register_parameter("bias", bias_);
}

Tensor LayerNorm::forward(const Tensor& x) const {
  return record_output(layer_norm(x, weight_.shape(), weight_, bias_, eps_));
}

}  // namespace mg
