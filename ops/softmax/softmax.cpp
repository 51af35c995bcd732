// softmax, log_softmax and their backward rows: one table, rows along an axis.
//   x [..., N, ...] along dim (R rows of N) -> out [..., N, ...]
//   backward: grad_out [..., N, ...], result [..., N, ...] -> grad_x [..., N, ...]
// Derivatives: softmax_backward and log_softmax_backward, from the result alone (no exp of x
// again, and x need not be kept).
#include "softmax/softmax.h"

#include <cmath>
#include <limits>

#include "common/define_op.h"
#include "minigraph/layout.h"
#include "softmax/softmax_kernels.h"

namespace mg {

Tensor softmax(const Tensor& x, std::int64_t dim) {
  static const OpDef& op = builtin_op("softmax");
  return apply_op(op, {x}, SoftmaxAttrs{dim});
}
Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  static const OpDef& op = builtin_op("log_softmax");
  return apply_op(op, {x}, SoftmaxAttrs{dim});
}
Tensor softmax_backward(const Tensor& grad_out, const Tensor& result, std::int64_t dim) {
  static const OpDef& op = builtin_op("softmax_backward");
  return apply_op(op, {grad_out, result}, SoftmaxAttrs{dim});
}
Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& result, std::int64_t dim) {
  static const OpDef& op = builtin_op("log_softmax_backward");
  return apply_op(op, {grad_out, result}, SoftmaxAttrs{dim});
}

AxisRows softmax_rows(const Shape& shape, const std::any& attrs) {
  return axis_rows(shape, attrs_as<SoftmaxAttrs>("softmax", attrs).dim, "softmax");
}

namespace {

using Grads = std::vector<Tensor>;
using I = InputSpec;

// Every input of one float dtype and x's shape; dim an axis of it.
OutputSpec softmax_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    check_floating(self, i, in[i]);
    if (i > 0) check_same_dtype(self, i, in[i], in[0].dtype());
  }
  for (std::size_t i = 1; i < in.size(); ++i) {
    MG_CHECK(in[i].shape() == in[0].shape(), self.name, self.inputs[i],
             fmt::format("{}'s shape {}", self.inputs[0], shape_str(in[0].shape())), "{}",
             shape_str(in[i].shape()));
  }
  wrap_dim(attrs_as<SoftmaxAttrs>(self.name, attrs).dim, in[0].dim(), self.name);
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

// The naive reference: for each output element, its row's sums from scratch, in f64 through
// the flat accessors; the row of a flat index found by plain division.
template <bool Backward, bool Log>
Tensor softmax_reference(std::span<const Tensor> in, const std::any& attrs) {
  const Tensor& a = in[0];  // x, or grad_out
  const auto rank = static_cast<std::int64_t>(a.dim());
  std::int64_t dim = attrs_as<SoftmaxAttrs>("softmax", attrs).dim;
  if (dim < 0) dim += std::max<std::int64_t>(rank, 1);
  std::int64_t n = rank == 0 ? 1 : a.shape()[static_cast<std::size_t>(dim)], inner = 1;
  for (std::int64_t axis = dim + 1; axis < rank; ++axis) inner *= a.shape()[axis];
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t flat = 0; flat < a.numel(); ++flat) {
    const std::int64_t first = flat / (n * inner) * n * inner + flat % inner;
    auto at = [&](const Tensor& t, std::int64_t j) { return t.at_flat(first + j * inner); };
    double result;
    if (Backward) {
      const Tensor& y = in[1];
      double total = 0;  // sum(g * y), or sum(g)
      for (std::int64_t j = 0; j < n; ++j) total += Log ? at(a, j) : at(a, j) * at(y, j);
      result = Log ? a.at_flat(flat) - std::exp(y.at_flat(flat)) * total
                   : y.at_flat(flat) * (a.at_flat(flat) - total);
    } else {
      double max = -inf;
      for (std::int64_t j = 0; j < n; ++j) max = std::max(max, at(a, j));
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j) sum += std::exp(at(a, j) - max);
      const double shifted = a.at_flat(flat) - max;
      if (max == -inf) {
        result = Log ? -inf : 0.0;
      } else {
        result = Log ? shifted - std::log(sum) : std::exp(shifted) / sum;
      }
    }
    out.set_flat(flat, result);
  }
  return out;
}

// The shapes every row is tested on, with the axis: the last (contiguous rows), the first and
// a middle one (strided rows), negative dims, a scalar, empty tensors, and the attention
// scores of a small model.
std::vector<OpCase> softmax_row_cases(std::vector<InputSpec> (*inputs)(Shape)) {
  using A = SoftmaxAttrs;
  return std::vector<OpCase>{
      {"last_axis", inputs({4, 7}), A{-1}},
      {"first_axis", inputs({5, 3}), A{0}},
      {"middle_axis", inputs({2, 6, 3}), A{1}},
      {"negative_middle", inputs({2, 3, 4, 5}), A{-3}},
      {"one_element_rows", inputs({6, 1}), A{1}},  // softmax 1, log_softmax 0, gradient 0
      {"vector", inputs({9}), A{0}},
      {"scalar", inputs({}), A{-1}},
      {"empty_rows", inputs({0, 5}), A{1}},
      {"empty_axis", inputs({3, 0}), A{1}},
      {"attention_scores", inputs({2, 2, 8, 8}), A{-1}},
      // 2 x 40 x 1030: rows wider than a CUDA block, and enough rows for several CPU threads.
      {"wide_rows", inputs({2, 40, 1030}), A{-1}, 16},
  };
}
std::vector<InputSpec> x_only(Shape shape) { return {I::real(std::move(shape))}; }

// Masks and magnitudes: -inf entries, a fully masked row, logits of 1e4 whose exp would
// overflow even in f64 without the max, and NaN and +inf rows (forward only).
std::vector<OpCase> softmax_forward_cases() {
  using A = SoftmaxAttrs;
  const double inf = std::numeric_limits<double>::infinity();
  auto cases = softmax_row_cases(x_only);
  cases.push_back({"large_logits",
                   {I::real({2, 4}).with_values({1e4, 1e4 - 1, -1e4, 9999.5, -2e4, 2e4, 0, 5})},
                   A{-1}});
  // Strided rows longer than a vector, of opposite magnitudes: a row read at the wrong stride
  // takes the other's max, and its exps underflow to a sum of 0.
  std::vector<double> columns;
  for (int i = 0; i < 17; ++i) columns.insert(columns.end(), {1e4 + i, -1e4 - i});
  cases.push_back({"large_logits_first_axis", {I::real({17, 2}).with_values(columns)}, A{0}});
  OpCase masked{"masked",
                {I::real({3, 4}).with_values({0.5, -inf, 1, -inf,      //
                                              -inf, -inf, -inf, -inf,  //
                                              -inf, 2, -inf, -inf})},
                A{-1}};
  masked.edge_values = true;
  cases.push_back(masked);
  // Rows of 130, past a block of the CPU's pipelined rows (a row's max found during the exps
  // of the one before): fully masked rows before, between and after others, a NaN inside a
  // block, and rows whose max (1e4: the others' exps overflow from any lower one) sits in the
  // tail past the blocks, or in a block.
  std::vector<double> wide(7 * 130);
  for (std::size_t i = 0; i < wide.size(); ++i) {
    const auto row = i / 130, j = i % 130;
    wide[i] = row == 1 || row == 2 ? -inf : static_cast<double>((j * 7 + row) % 11) - 5;
  }
  wide[3 * 130 + 5] = -inf, wide[4 * 130 + 100] = std::nan(""), wide[5 * 130 + 129] = 1e4;
  wide[6 * 130 + 50] = 1e4;
  OpCase masked_wide{"masked_wide_rows", {I::real({7, 130}).with_values(wide)}, A{-1}};
  masked_wide.edge_values = true;
  cases.push_back(masked_wide);
  OpCase nonfinite{"nan_and_inf_rows",
                   {I::real({3, 3}).with_values({1, std::nan(""), 2, inf, 0, 1, -1e30, 1e30, 0})},
                   A{-1}};
  nonfinite.edge_values = true;
  cases.push_back(nonfinite);
  return cases;
}

// grad_out (any values) and a result in the range the forward gives, (0, 1) for softmax and
// (-6, 0) for log_softmax, so that f32's sums stay as accurate as in training: the formula is
// checked, not where the result came from.
template <bool Log>
std::vector<InputSpec> softmax_grad_and_result(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double unit = static_cast<double>((i * 37 + 11) % 97 + 1) / 98.0;  // in (0, 1)
    values[i] = Log ? -6.0 * unit : unit;
  }
  return {I::real(shape), I::real(shape).with_values(std::move(values))};
}
template <bool Log>
std::vector<OpCase> softmax_backward_cases() {
  return softmax_row_cases(softmax_grad_and_result<Log>);
}

std::vector<ErrorCase> softmax_forward_error_cases() {
  using A = SoftmaxAttrs;
  return std::vector<ErrorCase>{
      {"dim_too_large", {I::real({2, 3})}, A{2}, "argument 'dim'"},
      {"dim_too_negative", {I::real({2, 3})}, A{-3}, "an axis in [-2, 1] (rank 2)"},
      {"dim_int64_min", {I::real({2})}, A{std::numeric_limits<std::int64_t>::min()}, "got -9223"},
  };
}
std::vector<ErrorCase> softmax_backward_error_cases() {
  using A = SoftmaxAttrs;
  return std::vector<ErrorCase>{
      {"result_shape", {I::real({2, 3}), I::real({3, 2})}, A{1}, "grad_out's shape [2, 3]"},
      {"dim_too_large", {I::real({2, 3}), I::real({2, 3})}, A{5}, "argument 'dim'"},
  };
}

std::string describe_softmax_dim(const std::any& attrs) {
  return fmt::format("dim={}", attrs_as<SoftmaxAttrs>("softmax", attrs).dim);
}

struct SoftmaxRow {
  const char* name;
  const char* summary;
  std::vector<std::string> inputs;
  std::vector<std::string> backward_reads;
  Grads (*backward)(const BackwardContext&);
};

template <bool Backward, bool Log>
OpDef softmax_op(SoftmaxRow row) {
  OpDef op;
  op.name = row.name;
  op.summary = row.summary;
  op.inputs = std::move(row.inputs);
  op.infer = softmax_infer;
  op.backward_reads = std::move(row.backward_reads);
  op.backward = row.backward;
  if constexpr (Backward) {
    op.kernels =
        device_kernels(softmax_backward_cpu<Log>, MG_CUDA_KERNEL(softmax_backward_cuda<Log>));
    op.cases = softmax_backward_cases<Log>;
    op.error_cases = softmax_backward_error_cases;
  } else {
    op.kernels =
        device_kernels(softmax_forward_cpu<Log>, MG_CUDA_KERNEL(softmax_forward_cuda<Log>));
    op.cases = softmax_forward_cases;
    op.error_cases = softmax_forward_error_cases;
  }
  op.reference = softmax_reference<Backward, Log>;
  op.describe_attrs = describe_softmax_dim;
  return op;
}

}  // namespace

void register_softmax(OpRegistry& registry) {
  registry.add(softmax_op<false, false>({"softmax",
                                         "exp(x - max) / sum(exp(x - max)) along dim",
                                         {"x"},
                                         {"result"},
                                         [](const BackwardContext& ctx) {
                                           return Grads{
                                               softmax_backward(ctx.grad_out, ctx.result(),
                                                                ctx.attrs_as<SoftmaxAttrs>().dim)};
                                         }}));
  registry.add(
      softmax_op<false, true>({"log_softmax",
                               "x - max - log(sum(exp(x - max))) along dim",
                               {"x"},
                               {"result"},
                               [](const BackwardContext& ctx) {
                                 return Grads{log_softmax_backward(
                                     ctx.grad_out, ctx.result(), ctx.attrs_as<SoftmaxAttrs>().dim)};
                               }}));
  registry.add(softmax_op<true, false>({"softmax_backward",
                                        "result * (grad_out - sum(grad_out * result)) along dim",
                                        {"grad_out", "result"},
                                        {},
                                        nullptr}));
  registry.add(softmax_op<true, true>({"log_softmax_backward",
                                       "grad_out - exp(result) * sum(grad_out) along dim",
                                       {"grad_out", "result"},
                                       {},
                                       nullptr}));
}

}  // namespace mg
