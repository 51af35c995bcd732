// layer_norm and its fused backward (layer_norm.h).
//   N rows of D; x [..., *S], weight [*S], bias [*S] -> y [..., *S]; saved mean, rstd [...]
// Derivative: layer_norm_backward, one pass giving dx, dweight and dbias; it reads x, weight
// and the saved statistics (no second pass for them).
#include "layer_norm/layer_norm.h"

#include <cmath>

#include "common/define_op.h"
#include "layer_norm/layer_norm_kernels.h"

namespace mg {

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  static const OpDef& op = builtin_op("layer_norm");
  return apply_op(op, {x, weight, bias}, LayerNormAttrs{normalized_shape, eps});
}

LayerNormGrads layer_norm_backward(const Tensor& grad_out, const Tensor& x, const Tensor& weight,
                                   const Tensor& mean, const Tensor& rstd,
                                   const Shape& normalized_shape) {
  static const OpDef& op = builtin_op("layer_norm_backward");
  const Tensor packed =
      apply_op(op, {grad_out, x, weight, mean, rstd}, LayerNormAttrs{normalized_shape, 1e-5});
  const std::int64_t d = weight.numel(), xs = x.numel();
  return {packed.narrow(0, 0, xs).view(x.shape()), packed.narrow(0, xs, d).view(weight.shape()),
          packed.narrow(0, xs + d, d).view(weight.shape())};
}

LayerNormRows layer_norm_rows(const Tensor& x, const std::any& attrs) {
  const Shape& s = attrs_as<LayerNormAttrs>("layer_norm", attrs).normalized_shape;
  LayerNormRows rows;
  rows.d = shape_numel(s);
  rows.n = rows.d == 0 ? 0 : x.numel() / rows.d;
  rows.leading.assign(x.shape().begin(), x.shape().end() - static_cast<std::ptrdiff_t>(s.size()));
  return rows;
}

namespace {

using Grads = std::vector<Tensor>;
using I = InputSpec;

// x's leading axes (the rows' shape), after checking that its trailing ones are S and that
// input `i` of the op has shape S.
Shape check_layer_norm(const OpDef& self, std::span<const Tensor> in, std::size_t x_at,
                       const LayerNormAttrs& a) {
  const Shape& s = a.normalized_shape;
  const Shape& x = in[x_at].shape();
  MG_CHECK(!s.empty(), self.name, "normalized_shape", "at least one axis", "[]");
  MG_CHECK(s.size() <= x.size() && std::equal(s.begin(), s.end(), x.end() - s.size()), self.name,
           "normalized_shape", fmt::format("x's trailing axes (x is {})", shape_str(x)), "{}",
           shape_str(s));
  MG_CHECK(std::isfinite(a.eps) && a.eps >= 0, self.name, "eps", "a finite eps >= 0", "{}", a.eps);
  for (std::size_t i = 0; i < in.size(); ++i) {
    check_floating(self, i, in[i]);
    if (i > 0) check_same_dtype(self, i, in[i], in[0].dtype());
  }
  return Shape(x.begin(), x.end() - static_cast<std::ptrdiff_t>(s.size()));
}

void check_shape(const OpDef& self, std::size_t i, const Tensor& t, const Shape& expected,
                 const char* what) {
  MG_CHECK(t.shape() == expected, self.name, self.inputs[i],
           fmt::format("shape {} ({})", shape_str(expected), what), "{}", shape_str(t.shape()));
}

OutputSpec layer_norm_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  const auto& a = attrs_as<LayerNormAttrs>(self.name, attrs);
  check_layer_norm(self, in, 0, a);
  check_shape(self, 1, in[1], a.normalized_shape, "normalized_shape");
  check_shape(self, 2, in[2], a.normalized_shape, "normalized_shape");
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

OutputSpec layer_norm_backward_infer(const OpDef& self, std::span<const Tensor> in,
                                     const std::any& attrs) {
  const auto& a = attrs_as<LayerNormAttrs>(self.name, attrs);
  const Shape rows = check_layer_norm(self, in, 1, a);
  check_shape(self, 0, in[0], in[1].shape(), "x's");
  check_shape(self, 2, in[2], a.normalized_shape, "normalized_shape");
  check_shape(self, 3, in[3], rows, "x's leading axes");
  check_shape(self, 4, in[4], rows, "x's leading axes");
  const std::int64_t d = shape_numel(a.normalized_shape);
  return OutputSpec{{in[1].numel() + 2 * d}, in[0].dtype()};
}

// The naive references: each row's statistics from scratch in f64, then plain loops.
struct RowStats {
  double mean, rstd;
};
RowStats layer_norm_row_stats(const Tensor& x, std::int64_t row, std::int64_t d, double eps) {
  double sum = 0, squares = 0;
  for (std::int64_t j = 0; j < d; ++j) sum += x.at_flat(row * d + j);
  const double mean = sum / static_cast<double>(d);
  for (std::int64_t j = 0; j < d; ++j) {
    const double c = x.at_flat(row * d + j) - mean;
    squares += c * c;
  }
  return {mean, 1 / std::sqrt(squares / static_cast<double>(d) + eps)};
}

Tensor layer_norm_reference(std::span<const Tensor> in, const std::any& attrs) {
  const auto& a = attrs_as<LayerNormAttrs>("layer_norm", attrs);
  const Tensor &x = in[0], &w = in[1], &b = in[2];
  const std::int64_t d = shape_numel(a.normalized_shape), n = d == 0 ? 0 : x.numel() / d;
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t row = 0; row < n; ++row) {
    const RowStats s = layer_norm_row_stats(x, row, d, a.eps);
    for (std::int64_t j = 0; j < d; ++j) {
      const double xhat = (x.at_flat(row * d + j) - s.mean) * s.rstd;
      y.set_flat(row * d + j, xhat * w.at_flat(j) + b.at_flat(j));
    }
  }
  return y;
}

Tensor layer_norm_backward_reference(std::span<const Tensor> in, const std::any& attrs) {
  const auto& a = attrs_as<LayerNormAttrs>("layer_norm_backward", attrs);
  const Tensor &g = in[0], &x = in[1], &w = in[2], &mean = in[3], &rstd = in[4];
  const std::int64_t d = shape_numel(a.normalized_shape), n = d == 0 ? 0 : x.numel() / d;
  Tensor out = Tensor::zeros({x.numel() + 2 * d}, x.dtype());
  std::vector<double> dw(static_cast<std::size_t>(d)), db(static_cast<std::size_t>(d));
  for (std::int64_t row = 0; row < n; ++row) {
    const double m = mean.at_flat(row), r = rstd.at_flat(row);
    double mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      const double xhat = (x.at_flat(row * d + j) - m) * r;
      const double dxhat = g.at_flat(row * d + j) * w.at_flat(j);
      mean_dxhat += dxhat / static_cast<double>(d);
      mean_dxhat_xhat += dxhat * xhat / static_cast<double>(d);
      dw[static_cast<std::size_t>(j)] += g.at_flat(row * d + j) * xhat;
      db[static_cast<std::size_t>(j)] += g.at_flat(row * d + j);
    }
    for (std::int64_t j = 0; j < d; ++j) {
      const double xhat = (x.at_flat(row * d + j) - m) * r;
      const double dxhat = g.at_flat(row * d + j) * w.at_flat(j);
      out.set_flat(row * d + j, r * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
    }
  }
  for (std::int64_t j = 0; j < d; ++j) {
    out.set_flat(x.numel() + j, dw[static_cast<std::size_t>(j)]);
    out.set_flat(x.numel() + d + j, db[static_cast<std::size_t>(j)]);
  }
  return out;
}

// x [..., *S] with weight and bias [*S] for each case's S.
std::vector<InputSpec> layer_norm_inputs(Shape x, const Shape& s) {
  return {I::real(x), I::real(s), I::real(s)};
}

std::vector<OpCase> layer_norm_cases() {
  using A = LayerNormAttrs;
  const double inf = INFINITY;
  // Rows far from 0 with a small spread: a one-pass variance (E[x^2] - mean^2) loses it in f32
  // (farther, and the f32 mean itself, rounded, is off by a part of the spread, as PyTorch's).
  std::vector<double> offset(12);
  for (std::size_t i = 0; i < offset.size(); ++i)
    offset[i] = 100 + 0.125 * static_cast<double>(i % 5);
  auto with_x = [](std::vector<InputSpec> in, std::vector<double> x) {
    in[0].with_values(std::move(x));
    return in;
  };
  OpCase nonfinite{
      "nan_and_inf_rows",
      with_x(layer_norm_inputs({3, 3}, {3}), {1, std::nan(""), 2, inf, 0, 1, -1.5, 0.5, 3}),
      A{{3}}};
  nonfinite.edge_values = true;
  return std::vector<OpCase>{
      {"rows", layer_norm_inputs({4, 8}, {8}), A{{8}}},
      {"batch_time", layer_norm_inputs({2, 3, 8}, {8}), A{{8}}},
      {"two_trailing_axes", layer_norm_inputs({2, 3, 4}, {3, 4}), A{{3, 4}, 1e-3}},
      {"whole_tensor", layer_norm_inputs({3, 4}, {3, 4}), A{{3, 4}}},
      {"one_feature", layer_norm_inputs({5, 1}, {1}), A{{1}}},  // var 0: y = bias, dx = 0
      {"large_eps", layer_norm_inputs({3, 6}, {6}), A{{6}, 1.0}},
      {"zero_eps", layer_norm_inputs({3, 6}, {6}), A{{6}, 0.0}},
      {"empty_rows", layer_norm_inputs({0, 8}, {8}), A{{8}}},
      {"offset_rows", with_x(layer_norm_inputs({2, 6}, {6}), offset), A{{6}}},
      {"constant_row", with_x(layer_norm_inputs({1, 4}, {4}), {2, 2, 2, 2}), A{{4}, 1e-5}},
      // 130 rows of ANDREA's width: several chunks of the weight gradient, several threads.
      {"andrea_rows", layer_norm_inputs({2, 65, 768}, {768}), A{{768}}, 16},
      nonfinite,
  };
}

std::vector<ErrorCase> layer_norm_error_cases() {
  using A = LayerNormAttrs;
  return std::vector<ErrorCase>{
      {"weight_width", layer_norm_inputs({2, 8}, {8}), A{{4}}, "normalized_shape"},
      {"bias_width", {I::real({2, 8}), I::real({8}), I::real({7})}, A{{8}}, "argument 'bias'"},
      {"weight_shape",
       {I::real({2, 8}), I::real({2, 4}), I::real({8})},
       A{{8}},
       "argument 'weight': expected shape [8]"},
      {"not_trailing", layer_norm_inputs({2, 3, 4}, {2, 3}), A{{2, 3}}, "x's trailing axes"},
      {"longer_than_x", layer_norm_inputs({4}, {3, 4}), A{{3, 4}}, "x's trailing axes (x is [4])"},
      {"no_axes", layer_norm_inputs({2, 3}, {}), A{{}}, "at least one axis"},
      {"negative_eps", layer_norm_inputs({2, 3}, {3}), A{{3}, -1e-5}, "a finite eps >= 0"},
      {"nan_eps", layer_norm_inputs({2, 3}, {3}), A{{3}, std::nan("")}, "argument 'eps'"},
  };
}

// grad_out and x [..., *S], weight [*S], and statistics [...] (rstd > 0), as the forward gives.
std::vector<InputSpec> layer_norm_backward_inputs(Shape x, const Shape& s) {
  const Shape rows(x.begin(), x.end() - static_cast<std::ptrdiff_t>(s.size()));
  std::vector<double> rstd(static_cast<std::size_t>(shape_numel(rows)));
  for (std::size_t i = 0; i < rstd.size(); ++i) rstd[i] = 0.5 + 0.1 * static_cast<double>(i % 7);
  return {I::real(x), I::real(x), I::real(s), I::real(rows), I::real(rows).with_values(rstd)};
}

std::vector<OpCase> layer_norm_backward_cases() {
  using A = LayerNormAttrs;
  return std::vector<OpCase>{
      {"rows", layer_norm_backward_inputs({4, 8}, {8}), A{{8}}},
      {"batch_time", layer_norm_backward_inputs({2, 3, 8}, {8}), A{{8}}},
      {"two_trailing_axes", layer_norm_backward_inputs({2, 3, 4}, {3, 4}), A{{3, 4}}},
      {"one_feature", layer_norm_backward_inputs({5, 1}, {1}), A{{1}}},
      {"empty_rows", layer_norm_backward_inputs({0, 8}, {8}), A{{8}}},
      {"andrea_rows", layer_norm_backward_inputs({2, 65, 768}, {768}), A{{768}}},
  };
}

std::vector<ErrorCase> layer_norm_backward_error_cases() {
  using A = LayerNormAttrs;
  auto with_rows = [](Shape rows) {
    auto in = layer_norm_backward_inputs({2, 8}, {8});
    in[3] = I::real(std::move(rows));
    return in;
  };
  return std::vector<ErrorCase>{
      {"mean_shape", with_rows({8}), A{{8}}, "argument 'mean': expected shape [2]"},
      {"grad_out_shape",
       {I::real({2, 4}), I::real({2, 8}), I::real({8}), I::real({2}), I::real({2})},
       A{{8}},
       "argument 'grad_out'"},
  };
}

std::string describe_layer_norm(const std::any& attrs) {
  const auto& a = attrs_as<LayerNormAttrs>("layer_norm", attrs);
  return fmt::format("normalized_shape={}, eps={}", shape_str(a.normalized_shape), a.eps);
}

Grads layer_norm_grads(const BackwardContext& ctx) {
  const auto& a = ctx.attrs_as<LayerNormAttrs>();
  MG_CHECK(ctx.saved.size() == 2, "layer_norm", "saved tensors", "mean and rstd", "{} tensors",
           ctx.saved.size());
  const LayerNormGrads g = layer_norm_backward(ctx.grad_out, ctx.input(0), ctx.input(1),
                                               ctx.saved[0], ctx.saved[1], a.normalized_shape);
  return Grads{ctx.needs_grad(0) ? g.x : Tensor(), ctx.needs_grad(1) ? g.weight : Tensor(),
               ctx.needs_grad(2) ? g.bias : Tensor()};
}

}  // namespace

void register_layer_norm(OpRegistry& registry) {
  OpDef op;
  op.name = "layer_norm";
  op.summary = "(x - mean) * rstd * weight + bias over the trailing axes normalized_shape";
  op.inputs = {"x", "weight", "bias"};
  op.infer = layer_norm_infer;
  op.backward_reads = {"x", "weight"};
  op.backward = layer_norm_grads;
  op.saves_for_backward = true;  // mean and rstd
  op.kernels = MG_KERNELS(layer_norm);
  op.reference = layer_norm_reference;
  op.cases = layer_norm_cases;
  op.error_cases = layer_norm_error_cases;
  op.describe_attrs = describe_layer_norm;
  registry.add(std::move(op));

  OpDef back;
  back.name = "layer_norm_backward";
  back.summary = "layer_norm's dx, dweight and dbias in one pass, packed [N * D + 2 * D]";
  back.inputs = {"grad_out", "x", "weight", "mean", "rstd"};
  back.infer = layer_norm_backward_infer;
  back.kernels = MG_KERNELS(layer_norm_backward);
  back.reference = layer_norm_backward_reference;
  back.cases = layer_norm_backward_cases;
  back.error_cases = layer_norm_backward_error_cases;
  back.describe_attrs = describe_layer_norm;
  registry.add(std::move(back));
}

}  // namespace mg
