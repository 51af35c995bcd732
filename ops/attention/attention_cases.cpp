// The attention ops' references and cases. The references share nothing with the kernels:
// no tiles, no online softmax, every score from its own dot product in double.
//   B batch, H heads, T positions, hd head size; see attention_kernels.h
#include "attention/attention_cases.h"

#include <cmath>
#include <limits>

#include "attention/attention_kernels.h"

namespace mg {

namespace {

using I = InputSpec;
using A = AttentionAttrs;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A [B, H, T, hd] input's values in row-major order, and one element of it.
struct Head4 {
  std::vector<double> v;
  std::int64_t h, t, d;
  explicit Head4(const Tensor& x)
      : v(x.contiguous().to_f64_vector()), h(x.size(1)), t(x.size(2)), d(x.size(3)) {}
  double at(std::int64_t b, std::int64_t hh, std::int64_t i, std::int64_t c) const {
    return v[static_cast<std::size_t>(((b * h + hh) * t + i) * d + c)];
  }
};

// The mask's value for (b, h, query i, key j), its axes aligned to the right of [B, H, T, T].
struct MaskValues {
  std::vector<double> v;
  Shape shape;
  bool boolean = false;
  double at(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    const std::int64_t index[4] = {b, h, i, j};
    const std::size_t lead = 4 - shape.size();
    std::int64_t flat = 0;
    for (std::size_t a = 0; a < shape.size(); ++a)
      flat = flat * shape[a] + (shape[a] == 1 ? 0 : index[lead + a]);
    return v[static_cast<std::size_t>(flat)];
  }
};
std::optional<MaskValues> mask_values(std::span<const Tensor> in, std::size_t at) {
  if (in.size() <= at) return std::nullopt;
  return MaskValues{in[at].contiguous().to_f64_vector(), in[at].shape(),
                    in[at].dtype() == DType::boolean};
}

// Row i's scaled, masked scores over every key j, and whether each key takes part.
struct ScoreRow {
  std::vector<double> score;
  std::vector<bool> seen;
};
ScoreRow score_row(const Head4& q, const Head4& k, const std::optional<MaskValues>& mask,
                   const A& a, std::int64_t b, std::int64_t h, std::int64_t i) {
  ScoreRow row{std::vector<double>(static_cast<std::size_t>(q.t)),
               std::vector<bool>(static_cast<std::size_t>(q.t))};
  for (std::int64_t j = 0; j < q.t; ++j) {
    double dot = 0;
    for (std::int64_t c = 0; c < q.d; ++c) dot += q.at(b, h, i, c) * k.at(b, h, j, c);
    double s = a.scale * dot;
    bool seen = !a.is_causal || j <= i;
    if (mask && mask->boolean) seen = seen && mask->at(b, h, i, j) != 0;
    if (mask && !mask->boolean) s += mask->at(b, h, i, j);
    row.score[static_cast<std::size_t>(j)] = s;
    row.seen[static_cast<std::size_t>(j)] = seen;
  }
  return row;
}

}  // namespace

Tensor attention_reference(std::span<const Tensor> in, const std::any& attrs) {
  const auto& a = attrs_as<A>("scaled_dot_product_attention", attrs);
  const Head4 q(in[0]), k(in[1]), v(in[2]);
  const auto mask = mask_values(in, 3);
  const std::int64_t batch = in[0].size(0);
  Tensor out = Tensor::empty(in[0].shape(), in[0].dtype());
  std::int64_t flat = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t h = 0; h < q.h; ++h) {
      for (std::int64_t i = 0; i < q.t; ++i) {
        const ScoreRow row = score_row(q, k, mask, a, b, h, i);
        double top = -kInf;
        bool nan = false;
        for (std::int64_t j = 0; j < q.t; ++j) {
          const double s = row.score[static_cast<std::size_t>(j)];
          if (!row.seen[static_cast<std::size_t>(j)]) continue;
          nan = nan || std::isnan(s);
          top = std::max(top, s);
        }
        std::vector<double> p(static_cast<std::size_t>(q.t), 0.0);
        double sum = 0;
        for (std::int64_t j = 0; j < q.t && top > -kInf; ++j) {
          if (row.seen[static_cast<std::size_t>(j)])
            p[static_cast<std::size_t>(j)] = std::exp(row.score[static_cast<std::size_t>(j)] - top);
          sum += p[static_cast<std::size_t>(j)];
        }
        for (std::int64_t c = 0; c < q.d; ++c, ++flat) {
          double o = 0;
          for (std::int64_t j = 0; j < q.t && sum > 0; ++j)
            o += p[static_cast<std::size_t>(j)] / sum * v.at(b, h, j, c);
          out.set_flat(flat, nan ? std::nan("") : o);
        }
      }
    }
  }
  return out;
}

Tensor attention_backward_reference(std::span<const Tensor> in, const std::any& attrs) {
  const auto& a = attrs_as<A>("scaled_dot_product_attention_backward", attrs);
  const Head4 g(in[0]), q(in[1]), k(in[2]), v(in[3]), out(in[4]);
  const std::vector<double> lse = in[5].contiguous().to_f64_vector();
  const auto mask = mask_values(in, 6);
  const std::int64_t batch = in[1].size(0), n = in[1].numel();
  std::vector<double> grads(static_cast<std::size_t>(3 * n), 0.0);  // dq, dk, dv
  auto grad = [&](int which, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t c) {
    return &grads[static_cast<std::size_t>(which * n + ((b * q.h + h) * q.t + i) * q.d + c)];
  };
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t h = 0; h < q.h; ++h) {
      for (std::int64_t i = 0; i < q.t; ++i) {
        const ScoreRow row = score_row(q, k, mask, a, b, h, i);
        const double shift = lse[static_cast<std::size_t>((b * q.h + h) * q.t + i)];
        double dot = 0;  // D = grad_out . out
        for (std::int64_t c = 0; c < q.d; ++c) dot += g.at(b, h, i, c) * out.at(b, h, i, c);
        for (std::int64_t j = 0; j < q.t; ++j) {
          const bool seen = row.seen[static_cast<std::size_t>(j)] && shift > -kInf;
          const double p = seen ? std::exp(row.score[static_cast<std::size_t>(j)] - shift) : 0;
          double dp = 0;
          for (std::int64_t c = 0; c < q.d; ++c) dp += g.at(b, h, i, c) * v.at(b, h, j, c);
          const double ds = p * (dp - dot);
          for (std::int64_t c = 0; c < q.d; ++c) {
            *grad(0, b, h, i, c) += a.scale * ds * k.at(b, h, j, c);
            *grad(1, b, h, j, c) += a.scale * ds * q.at(b, h, i, c);
            *grad(2, b, h, j, c) += p * g.at(b, h, i, c);
          }
        }
      }
    }
  }
  Tensor result = Tensor::empty({3 * n}, in[1].dtype());
  for (std::int64_t i = 0; i < 3 * n; ++i) result.set_flat(i, grads[static_cast<std::size_t>(i)]);
  return result;
}

namespace {

std::vector<InputSpec> qkv(const Shape& s) { return {I::real(s), I::real(s), I::real(s)}; }
double default_scale(const Shape& s) { return 1 / std::sqrt(static_cast<double>(s[3])); }
A causal(const Shape& s) { return A{true, default_scale(s), 0}; }
A full(const Shape& s) { return A{false, default_scale(s), 0}; }

// Deterministic values for an input of shape s, times `size` (sin keeps them spread out).
std::vector<double> sine_values(const Shape& s, double size) {
  std::vector<double> v(static_cast<std::size_t>(shape_numel(s)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = size * std::sin(0.7 * static_cast<double>(i) + 1);
  return v;
}

// A bool mask [..., T, T] keeping about two keys in three and the diagonal; `hidden_row`
// (if >= 0) hides every key from that query row.
InputSpec bool_mask(const Shape& shape, std::int64_t hidden_row = -1) {
  const std::int64_t t = shape.back();
  std::vector<double> keep(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t f = 0; f < keep.size(); ++f) {
    const auto idx = static_cast<std::int64_t>(f);
    const std::int64_t i = (idx / t) % t, j = idx % t, m = idx / (t * t);
    keep[f] = (i == j || (i + 2 * j + m) % 3 != 0) && i != hidden_row ? 1 : 0;
  }
  return I::real(shape).with_values(std::move(keep)).with_dtype(DType::boolean);
}

std::vector<InputSpec> with_mask(const Shape& s, InputSpec mask) {
  auto in = qkv(s);
  in.push_back(std::move(mask));
  return in;
}

}  // namespace

namespace {

OpCase large_scores_case() {
  auto in = qkv({1, 2, 9, 4});
  in[0].with_values(sine_values({1, 2, 9, 4}, 40));  // scores up to ~1e4: one-hot rows
  OpCase c{"large_scores", in, causal({1, 2, 9, 4})};
  c.edge_values = true;
  return c;
}

OpCase nan_scores_case() {
  auto in = qkv({1, 1, 6, 3});
  std::vector<double> qv = sine_values({1, 1, 6, 3}, 1), kv = sine_values({1, 1, 6, 3}, 1);
  qv[7] = std::nan("");   // query row 2: its row is NaN
  kv[16] = std::nan("");  // key 5: NaN for the one query that sees it (causal)
  in[0].with_values(qv);
  in[1].with_values(kv);
  OpCase c{"nan_scores", in, causal({1, 1, 6, 3})};
  c.edge_values = true;
  return c;
}

// Scores near +50 in the first tile of keys and -50 after it: a running max that followed
// the falling tile max would rescale by exp(100), past f32's range.
OpCase falling_scores_case() {
  const Shape s{1, 1, 200, 2};
  std::vector<double> q(400), k(400);
  for (std::size_t r = 0; r < 200; ++r) {
    const double wobble = 0.3 * std::sin(static_cast<double>(r));
    q[2 * r] = 10, q[2 * r + 1] = wobble;
    k[2 * r] = static_cast<std::int64_t>(r) < kAttentionKeyTile ? 7 : -7, k[2 * r + 1] = wobble;
  }
  auto in = qkv(s);
  in[0].with_values(q);
  in[1].with_values(k);
  return {"falling_scores_tiles", in, full(s)};
}

}  // namespace

std::vector<OpCase> attention_cases() {
  const Shape small{2, 3, 7, 5}, tiles{1, 2, 150, 3}, wide{1, 2, 40, 64};
  return std::vector<OpCase>{
      {"causal", qkv(small), causal(small)},
      {"full", qkv(small), full(small)},
      // More queries and keys than one tile: tiles skipped above the diagonal, the running
      // max moving between tiles, a partial last tile.
      {"causal_tiles", qkv(tiles), causal(tiles)},
      {"full_tiles", qkv(tiles), full(tiles)},
      {"head_size_one", qkv({2, 2, 9, 1}), causal({2, 2, 9, 1})},
      {"one_position", qkv({2, 2, 1, 4}), causal({2, 2, 1, 4})},
      {"no_positions", qkv({1, 2, 0, 4}), causal({1, 2, 0, 4})},
      {"no_batch", qkv({0, 2, 3, 4}), causal({0, 2, 3, 4})},
      {"given_scale", qkv({1, 2, 5, 4}), A{true, 0.3, 8}},
      {"gpt2_head_size", qkv(wide), causal(wide), 64},
      large_scores_case(),
      nan_scores_case(),
      falling_scores_case(),
  };
}

std::vector<OpCase> masked_attention_cases() {
  const Shape s{2, 2, 6, 4};
  auto additive = I::real({2, 2, 6, 6}).no_grad();
  std::vector<double> hidden = sine_values({1, 6}, 1);
  hidden[2] = -kInf;  // key 2 hidden from every query
  auto neg_inf = I::real({1, 6}).with_values(hidden).no_grad();
  std::vector<double> none(36, -kInf);
  for (std::size_t f = 0; f < none.size(); ++f) none[f] = f / 6 == 4 ? -kInf : 0.25 * (f % 5);
  return std::vector<OpCase>{
      {"bool_mask", with_mask(s, bool_mask({6, 6})), full(s)},
      {"bool_mask_per_batch", with_mask(s, bool_mask({2, 1, 6, 6})), full(s)},
      {"bool_mask_per_head", with_mask(s, bool_mask({2, 2, 6, 6})), full(s)},
      // Query row 3 sees no key: zeros, and no gradient through it.
      {"fully_masked_row", with_mask(s, bool_mask({6, 6}, 3)), full(s)},
      {"additive_mask", with_mask(s, additive), full(s)},
      {"additive_neg_inf_column", with_mask(s, neg_inf), full(s)},
      {"additive_masked_row", with_mask(s, I::real({6, 6}).with_values(none).no_grad()), full(s)},
      {"mask_tiles", with_mask({1, 1, 150, 3}, bool_mask({150, 150})), full({1, 1, 150, 3})},
  };
}

namespace {

// grad_out, q, k, v, out [B, H, T, hd] and logsumexp [B, H, T] near what the forward gives
// (log T and a little more: rows of P that sum to about one, as they do in training).
std::vector<InputSpec> backward_inputs(const Shape& s) {
  const Shape rows{s[0], s[1], s[2]};
  std::vector<double> lse = sine_values(rows, 0.5);
  for (double& x : lse) x += std::log(static_cast<double>(std::max<std::int64_t>(s[2], 1))) + 1;
  return {I::real(s), I::real(s), I::real(s),
          I::real(s), I::real(s), I::real(rows).with_values(std::move(lse))};
}

}  // namespace

std::vector<OpCase> attention_backward_cases() {
  const Shape small{2, 2, 7, 5}, rows{1, 1, 300, 3};
  return std::vector<OpCase>{
      {"causal", backward_inputs(small), causal(small)},
      {"full", backward_inputs(small), full(small)},
      // More than one chunk of query rows under a tile of keys.
      {"causal_chunks", backward_inputs(rows), causal(rows)},
      {"full_chunks", backward_inputs(rows), full(rows)},
      {"no_positions", backward_inputs({1, 1, 0, 2}), causal({1, 1, 0, 2})},
  };
}

std::vector<OpCase> masked_attention_backward_cases() {
  const Shape s{2, 2, 6, 4};
  auto masked = [&](InputSpec mask) {
    auto in = backward_inputs(s);
    in.push_back(std::move(mask));
    return in;
  };
  return std::vector<OpCase>{
      {"bool_mask", masked(bool_mask({6, 6})), full(s)},
      {"additive_mask", masked(I::real({2, 1, 6, 6}).no_grad()), full(s)},
  };
}

namespace {
// The inputs with input `input` replaced by a real tensor of another shape.
std::vector<InputSpec> with_input_shape(std::vector<InputSpec> in, std::size_t input, Shape other) {
  in[input] = InputSpec::real(std::move(other));
  return in;
}
}  // namespace

std::vector<ErrorCase> attention_error_cases() {
  const Shape s{1, 2, 5, 4};
  auto differing = [&](std::size_t input, Shape other) {
    return with_input_shape(qkv(s), input, std::move(other));
  };
  return std::vector<ErrorCase>{
      {"heads_differ", differing(1, {1, 3, 5, 4}), full(s), "argument 'key': expected 2 heads"},
      {"lengths_differ", differing(2, {1, 2, 6, 4}), full(s),
       "argument 'value': expected 5 positions"},
      {"head_sizes_differ", differing(1, {1, 2, 5, 3}), full(s),
       "argument 'key': expected 4 head size"},
      {"batches_differ", differing(2, {2, 2, 5, 4}), full(s),
       "argument 'value': expected 1 batch entries"},
      {"not_four_axes", differing(0, {2, 5, 4}), full(s), "argument 'query': expected rank 4"},
      {"head_size_zero", qkv({1, 2, 5, 0}), A{false, 1, 0}, "a head size of at least 1"},
      {"past_the_context", qkv(s), A{true, 0.5, 4},
       "expected at most 4 positions (the model's context, max_length), got 5"},
      {"negative_max_length", qkv(s), A{true, 0.5, -1}, "argument 'max_length'"},
      {"nan_scale", qkv(s), A{true, std::nan(""), 0}, "argument 'scale': expected a finite scale"},
      {"infinite_scale", qkv(s), A{true, kInf, 0}, "argument 'scale'"},
  };
}

std::vector<ErrorCase> masked_attention_error_cases() {
  const Shape s{1, 2, 5, 4};
  return std::vector<ErrorCase>{
      {"mask_shape", with_mask(s, bool_mask({5, 4})), full(s),
       "argument 'mask': expected a shape that broadcasts to [B, H, T, T] = [1, 2, 5, 5]"},
      {"mask_batch", with_mask(s, bool_mask({3, 1, 5, 5})), full(s), "argument 'mask'"},
      {"mask_rank", with_mask(s, bool_mask({1, 1, 1, 5, 5})), full(s), "argument 'mask'"},
      {"mask_with_causal", with_mask(s, bool_mask({5, 5})), causal(s),
       "expected no mask with is_causal"},
      {"mask_requires_grad", with_mask(s, I::real({5, 5})), full(s),
       "expected a mask that does not require grad"},
      {"mask_ids", with_mask(s, I::ids({5, 5}, 2)), full(s),
       "argument 'mask': expected a bool mask or an additive one"},
  };
}

std::vector<ErrorCase> attention_backward_error_cases() {
  const Shape s{1, 2, 5, 4};
  auto changed = [&](std::size_t input, Shape other) {
    return with_input_shape(backward_inputs(s), input, std::move(other));
  };
  return std::vector<ErrorCase>{
      {"grad_out_shape", changed(0, {1, 2, 5, 3}), full(s), "argument 'grad_out'"},
      {"out_shape", changed(4, {1, 2, 4, 4}), full(s), "argument 'out'"},
      {"logsumexp_shape", changed(5, {1, 2, 5, 1}), full(s),
       "argument 'logsumexp': expected shape [1, 2, 5]"},
      {"key_heads", changed(2, {1, 1, 5, 4}), full(s), "argument 'key': expected 2 heads"},
  };
}

std::vector<ErrorCase> masked_attention_backward_error_cases() {
  const Shape s{1, 2, 5, 4};
  auto in = backward_inputs(s);
  in.push_back(bool_mask({3, 5, 5}));
  return std::vector<ErrorCase>{
      {"mask_heads", in, full(s), "argument 'mask': expected a shape that broadcasts"},
  };
}

}  // namespace mg
