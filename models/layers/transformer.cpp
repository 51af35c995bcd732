#include "layers/transformer.h"

#include <fmt/format.h>

#include <cmath>

#include "minigraph/error.h"
#include "minigraph/ops/attention/attention.h"
#include "minigraph/ops/unary/unary.h"

namespace mg {
namespace {

constexpr double kInitStd = 0.02;

// Seeds of a block's four Linears, apart from each other and from the next block's.
enum SeedOffset : std::uint64_t {
  kAttnQkv,
  kAttnProj,
  kMlpFc,
  kMlpProj,
  kAttnDropout,
  kMlpDropout,
  kSeedOffsets
};
static_assert(kSeedOffsets == BlockOptions::kSeedsPerBlock);

LinearOptions linear_options(const BlockOptions& options, SeedOffset part, bool residual) {
  options.validate();
  const double std =
      residual ? kInitStd / std::sqrt(2.0 * static_cast<double>(options.depth)) : kInitStd;
  return {.bias = true, .init_std = std, .seed = options.seed + part, .dtype = options.dtype};
}

}  // namespace

std::int64_t BlockOptions::hidden() const {
  // 0 for a ratio validate() refuses: members' initialisers may read it before validate() runs.
  const double f = mlp_ratio * static_cast<double>(width);
  return std::isfinite(f) && f >= 0.5 && f < 0x1p62 ? std::llround(f) : 0;
}

void BlockOptions::validate() const {
  MG_CHECK(width > 0, "Block", "width", "a positive size", "{}", width);
  MG_CHECK(heads > 0 && width % heads == 0, "Block", "heads",
           fmt::format("a positive divisor of width {}", width), "{}", heads);
  MG_CHECK(std::isfinite(mlp_ratio) && mlp_ratio > 0 && mlp_ratio <= 1024 && hidden() > 0, "Block",
           "mlp_ratio", "a ratio in (0, 1024] giving a hidden width >= 1", "{}", mlp_ratio);
  MG_CHECK(context > 0, "Block", "context", "a positive length", "{}", context);
  MG_CHECK(depth > 0, "Block", "depth", "a positive number of blocks", "{}", depth);
  MG_CHECK(std::isfinite(dropout) && dropout >= 0 && dropout < 1, "Block", "dropout",
           "a probability in [0, 1)", "{}", dropout);
}

MLP::MLP(const BlockOptions& options)
    : c_fc(options.width, options.hidden(), linear_options(options, kMlpFc, false)),
      c_proj(options.hidden(), options.width, linear_options(options, kMlpProj, true)),
      dropout(options.dropout, options.seed + kMlpDropout) {
  register_module("c_fc", c_fc);
  register_module("c_proj", c_proj);
  register_module("dropout", dropout);
}

Tensor MLP::forward(const Tensor& x) const {
  return record_output(dropout.forward(c_proj.forward(gelu(c_fc.forward(x), "tanh"))));
}

CausalSelfAttention::CausalSelfAttention(const BlockOptions& options)
    : c_attn(options.width, 3 * options.width, linear_options(options, kAttnQkv, false)),
      c_proj(options.width, options.width, linear_options(options, kAttnProj, true)),
      resid_dropout(options.dropout, options.seed + kAttnDropout),
      heads_(options.heads),
      context_(options.context) {
  register_module("c_attn", c_attn);
  register_module("c_proj", c_proj);
  register_module("resid_dropout", resid_dropout);
}

Tensor CausalSelfAttention::forward(const Tensor& x) const {
  const std::int64_t width = c_proj.in_features();
  MG_CHECK(x.dim() == 3 && x.shape()[2] == width, "CausalSelfAttention", "x",
           fmt::format("[B, T, {}]", width), "{}", shape_str(x.shape()));
  const std::int64_t batch = x.shape()[0], length = x.shape()[1];
  // [B, T, 3D] as [B, T, 3, H, hd]: q, k and v are views of it, permuted to [B, H, T, hd].
  const Tensor qkv = c_attn.forward(x).view({batch, length, 3, heads_, width / heads_});
  auto part = [&](std::int64_t i) { return qkv.select(2, i).permute({0, 2, 1, 3}); };
  const Tensor y = scaled_dot_product_attention(part(0), part(1), part(2),
                                                {.is_causal = true, .max_length = context_});
  const Tensor merged = y.permute({0, 2, 1, 3}).reshape({batch, length, width});
  return record_output(resid_dropout.forward(c_proj.forward(merged)));
}

Block::Block(const BlockOptions& options)
    : ln_1(options.width, 1e-5, options.dtype),
      attn(options),
      ln_2(options.width, 1e-5, options.dtype),
      mlp(options) {
  register_module("ln_1", ln_1);
  register_module("attn", attn);
  register_module("ln_2", ln_2);
  register_module("mlp", mlp);
}

Tensor Block::forward(const Tensor& x) const {
  const Tensor h = x + attn.forward(ln_1.forward(x));
  return record_output(h + mlp.forward(ln_2.forward(h)));
}

}  // namespace mg
