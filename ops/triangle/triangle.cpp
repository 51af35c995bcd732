// tril and triu: one table of two rows, the triangle of each matrix of x kept, the rest zeroed.
//   x [..., R, C] -> out [..., R, C]; kept: (r, c) with c - r <= diagonal (tril), >= (triu)
// Derivative: the same triangle of grad_out (the op is linear and a mask); it reads nothing.
#include "triangle/triangle.h"

#include <cmath>
#include <limits>

#include "common/define_op.h"
#include "triangle/triangle_kernels.h"

namespace mg {

Tensor tril(const Tensor& x, std::int64_t diagonal) {
  static const OpDef& op = builtin_op("tril");
  return apply_op(op, {x}, TriangleAttrs{diagonal});
}
Tensor triu(const Tensor& x, std::int64_t diagonal) {
  static const OpDef& op = builtin_op("triu");
  return apply_op(op, {x}, TriangleAttrs{diagonal});
}

TriangleGeometry triangle_geometry(const Shape& shape, const std::any& attrs) {
  const std::size_t rank = shape.size();
  return TriangleGeometry{shape[rank - 2], shape[rank - 1],
                          attrs_as<TriangleAttrs>("tril", attrs).diagonal};
}

namespace {

// x a float tensor of rank >= 2 (a matrix, or a batch of them); out as x.
OutputSpec triangle_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  check_floating(self, 0, in[0]);
  MG_CHECK(in[0].dim() >= 2, self.name, self.inputs[0], "a tensor of rank >= 2 ([..., R, C])",
           "rank {} (shape {})", in[0].dim(), shape_str(in[0].shape()));
  attrs_as<TriangleAttrs>(self.name, attrs);  // the attributes are the op's own type
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

// The naive reference: each flat index's row and column by plain division, the rule written
// as the difference's sign against the diagonal, in f64 through the flat accessors.
template <bool Upper>
Tensor triangle_reference(std::span<const Tensor> in, const std::any& attrs) {
  const Tensor& x = in[0];
  const std::int64_t d = attrs_as<TriangleAttrs>("tril", attrs).diagonal;
  const std::int64_t rows = x.shape()[x.dim() - 2], cols = x.shape()[x.dim() - 1];
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t flat = 0; flat < x.numel(); ++flat) {
    const std::int64_t col = flat % cols;
    const std::int64_t row = flat / cols % rows;
    const bool lower_keeps = col - row <= d;
    const bool upper_keeps = col - row >= d;
    out.set_flat(flat, (Upper ? upper_keeps : lower_keeps) ? x.at_flat(flat) : 0.0);
  }
  return out;
}

std::vector<OpCase> triangle_cases() {
  using I = InputSpec;
  using A = TriangleAttrs;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  OpCase nonfinite{"nan_and_inf",
                   {I::real({3, 4}).with_values({nan, inf, -inf, nan,  //
                                                 1, nan, 2, -inf,      //
                                                 inf, -inf, nan, 3})},
                   A{0}};
  nonfinite.edge_values = true;
  return std::vector<OpCase>{
      {"square", {I::real({4, 4})}, A{0}},
      {"wide", {I::real({3, 6})}, A{0}},
      {"tall", {I::real({6, 3})}, A{0}},
      {"batched", {I::real({2, 3, 4, 5})}, A{0}},
      {"diagonal_above", {I::real({4, 5})}, A{2}},
      {"diagonal_below", {I::real({5, 4})}, A{-1}},
      {"diagonal_below_wide", {I::real({3, 7})}, A{-2}},
      {"diagonal_far_above", {I::real({3, 4})}, A{100}},  // tril keeps all, triu zeroes all
      {"diagonal_far_below", {I::real({3, 4})}, A{-100}},
      {"diagonal_int64_max", {I::real({2, 3})}, A{big}},
      {"diagonal_int64_min", {I::real({2, 3})}, A{std::numeric_limits<std::int64_t>::min()}},
      {"one_row", {I::real({1, 5})}, A{1}},
      {"one_column", {I::real({5, 1})}, A{-1}},
      {"empty_batch", {I::real({0, 3, 3})}, A{0}},
      {"empty_rows", {I::real({0, 4})}, A{0}},
      {"empty_columns", {I::real({3, 0})}, A{0}},
      // 2 x 40 x 1030: enough matrix rows for several CPU threads, rows wider than a block.
      {"wide_batch", {I::real({2, 40, 1030})}, A{3}, 16},
      nonfinite,
  };
}

std::vector<ErrorCase> triangle_error_cases() {
  using I = InputSpec;
  using A = TriangleAttrs;
  return std::vector<ErrorCase>{
      {"rank_one", {I::real({4})}, A{0}, "argument 'x': expected a tensor of rank >= 2"},
      {"rank_zero", {I::real({})}, A{0}, "rank 0 (shape [])"},
  };
}

std::string describe_triangle(const std::any& attrs) {
  return fmt::format("diagonal={}", attrs_as<TriangleAttrs>("tril", attrs).diagonal);
}

template <bool Upper>
std::vector<Tensor> triangle_backward(const BackwardContext& ctx) {
  const std::int64_t d = ctx.attrs_as<TriangleAttrs>().diagonal;
  return std::vector<Tensor>{Upper ? triu(ctx.grad_out, d) : tril(ctx.grad_out, d)};
}

template <bool Upper>
OpDef triangle_op(const char* name, const char* summary) {
  OpDef op;
  op.name = name;
  op.summary = summary;
  op.inputs = {"x"};
  op.infer = triangle_infer;
  op.backward = triangle_backward<Upper>;
  op.kernels = device_kernels(triangle_cpu<Upper>, MG_CUDA_KERNEL(triangle_cuda<Upper>));
  op.reference = triangle_reference<Upper>;
  op.cases = triangle_cases;
  op.error_cases = triangle_error_cases;
  op.describe_attrs = describe_triangle;
  return op;
}

}  // namespace

void register_triangle(OpRegistry& registry) {
  registry.add(triangle_op<false>(
      "tril", "x's lower triangle (col - row <= diagonal) of each matrix, zeros above"));
  registry.add(triangle_op<true>(
      "triu", "x's upper triangle (col - row >= diagonal) of each matrix, zeros below"));
}

}  // namespace mg
