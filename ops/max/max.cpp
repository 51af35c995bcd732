// max, min, argmax, argmin and max_backward: one table, reductions along one axis that select
// an element of each row (the first extremum, or the first NaN).
//   x [..., N, ...] along dim (R rows of N) -> out [..., ...] (keepdim: [..., 1, ...]): values
//   in x's dtype (max, min) or i64 indices (argmax, argmin); saved: indices (max, min)
//   max_backward: grad_out [R], indices [R] -> grad_x [x_shape]
// Derivative of max and min: max_backward from the indices their forward kernels saved (x need
// not be kept); argmax, argmin and max_backward are not differentiable.
#include "max/max.h"

#include <cmath>
#include <limits>

#include "common/define_op.h"
#include "max/max_kernels.h"
#include "minigraph/layout.h"

namespace mg {

Tensor max(const Tensor& x, std::int64_t dim, bool keepdim) {
  static const OpDef& op = builtin_op("max");
  return apply_op(op, {x}, MaxAttrs{dim, keepdim});
}
Tensor min(const Tensor& x, std::int64_t dim, bool keepdim) {
  static const OpDef& op = builtin_op("min");
  return apply_op(op, {x}, MaxAttrs{dim, keepdim});
}
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim) {
  static const OpDef& op = builtin_op("argmax");
  return apply_op(op, {x}, MaxAttrs{dim, keepdim});
}
Tensor argmin(const Tensor& x, std::int64_t dim, bool keepdim) {
  static const OpDef& op = builtin_op("argmin");
  return apply_op(op, {x}, MaxAttrs{dim, keepdim});
}
Tensor max_backward(const Tensor& grad_out, const Tensor& indices, std::int64_t dim, bool keepdim,
                    const Shape& x_shape) {
  static const OpDef& op = builtin_op("max_backward");
  return apply_op(op, {grad_out, indices}, MaxBackwardAttrs{dim, keepdim, x_shape});
}

void throw_bad_max_index(std::int64_t index, std::int64_t position, const Shape& shape,
                         std::int64_t n) {
  throw Error(
      "max_backward", "indices",
      fmt::format("indices in [0, {}) (the size of the reduced axis)", n),
      fmt::format("{} at flat position {} of indices {}", index, position, shape_str(shape)));
}

namespace {

// x of `shape` reduced along dim: the axis dropped, or kept as 1. Throws for a dim outside
// [-rank, rank) and for an axis of size 0 (`argument` names where the shape came from).
Shape max_reduced_shape(const OpDef& self, const Shape& shape, const char* argument,
                        std::int64_t dim, bool keepdim) {
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t axis = wrap_dim(dim, rank, self.name);
  if (rank == 0) return shape;  // a scalar is its own one-element row
  MG_CHECK(shape[axis] > 0, self.name, argument,
           "a non-empty axis dim (cannot reduce over an empty axis)", "axis {} of shape {}", axis,
           shape_str(shape));
  Shape out;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (k != axis) out.push_back(shape[k]);
    if (k == axis && keepdim) out.push_back(1);
  }
  return out;
}

template <bool Indices>
OutputSpec max_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  check_floating(self, 0, in[0]);
  const auto& a = attrs_as<MaxAttrs>(self.name, attrs);
  return OutputSpec{max_reduced_shape(self, in[0].shape(), "x", a.dim, a.keepdim),
                    Indices ? DType::i64 : in[0].dtype()};
}

// grad_out float and indices integer, both shaped as the forward's output for x_shape.
OutputSpec max_backward_infer(const OpDef& self, std::span<const Tensor> in,
                              const std::any& attrs) {
  check_floating(self, 0, in[0]);
  check_integer(self, 1, in[1]);
  const auto& a = attrs_as<MaxBackwardAttrs>(self.name, attrs);
  for (std::int64_t size : a.x_shape) {
    MG_CHECK(size >= 0, self.name, "x_shape", "sizes >= 0", "{}", shape_str(a.x_shape));
  }
  const Shape reduced = max_reduced_shape(self, a.x_shape, "x_shape", a.dim, a.keepdim);
  const std::string expected = fmt::format("shape {} (x_shape {} reduced along dim {})",
                                           shape_str(reduced), shape_str(a.x_shape), a.dim);
  MG_CHECK(in[0].shape() == reduced, self.name, self.inputs[0], expected, "{}",
           shape_str(in[0].shape()));
  MG_CHECK(in[1].shape() == reduced, self.name, self.inputs[1], expected, "{}",
           shape_str(in[1].shape()));
  return OutputSpec{a.x_shape, in[0].dtype()};
}

// The naive reference, in two passes over x in row-major order (each x element's output
// element and position along the axis by plain division): first each output's extreme value
// by std::max / std::min over the row and whether the row holds a NaN, then the first
// position holding that value (or the first NaN).
template <bool Min, bool Indices>
Tensor max_reference(std::span<const Tensor> in, const std::any& attrs) {
  const Tensor& x = in[0];
  const auto& a = attrs_as<MaxAttrs>("max", attrs);
  const std::int64_t rank = x.dim();
  const std::int64_t axis = rank == 0 ? 0 : (a.dim < 0 ? a.dim + rank : a.dim);
  Shape shape;
  std::int64_t n = 1, inner = 1;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (k == axis) n = x.shape()[k];
    if (k > axis) inner *= x.shape()[k];
    if (k != axis || a.keepdim) shape.push_back(k == axis ? 1 : x.shape()[k]);
  }
  const auto outs = static_cast<std::size_t>(shape_numel(shape));
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> extreme(outs, Min ? inf : -inf);
  std::vector<bool> has_nan(outs, false);
  std::vector<std::int64_t> found(outs, -1);
  auto out_of = [&](std::int64_t i) {
    return static_cast<std::size_t>(i / (n * inner) * inner + i % inner);
  };
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.at_flat(i);
    const std::size_t o = out_of(i);
    if (std::isnan(v)) {
      has_nan[o] = true;
    } else {
      extreme[o] = Min ? std::min(extreme[o], v) : std::max(extreme[o], v);
    }
  }
  Tensor out = Tensor::empty(shape, Indices ? DType::i64 : x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.at_flat(i);
    const std::size_t o = out_of(i);
    const bool hit = has_nan[o] ? std::isnan(v) : v == extreme[o];
    if (!hit || found[o] >= 0) continue;
    found[o] = i / inner % n;
    out.set_flat(static_cast<std::int64_t>(o), Indices ? static_cast<double>(found[o]) : v);
  }
  return out;
}

// grad_out's element r at x's element (o, index, i) of its row, zeros elsewhere.
Tensor max_backward_reference(std::span<const Tensor> in, const std::any& attrs) {
  const Tensor &g = in[0], &indices = in[1];
  const auto& a = attrs_as<MaxBackwardAttrs>("max_backward", attrs);
  const Shape& xs = a.x_shape;
  const auto rank = static_cast<std::int64_t>(xs.size());
  const std::int64_t axis = rank == 0 ? 0 : (a.dim < 0 ? a.dim + rank : a.dim);
  std::int64_t n = rank == 0 ? 1 : xs[axis], inner = 1;
  for (std::int64_t k = axis + 1; k < rank; ++k) inner *= xs[k];
  Tensor out = Tensor::zeros(xs, g.dtype());
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    const std::int64_t row = i / (n * inner) * inner + i % inner;
    if (static_cast<std::int64_t>(indices.at_flat(row)) == i / inner % n) {
      out.set_flat(i, g.at_flat(row));
    }
  }
  return out;
}

// The rows' cases; `indices` for argmax and argmin, whose i64 outputs take no forward-only
// (edge_values) check: the harness's finite sentinel is no i64, and no index is NaN.
std::vector<OpCase> max_cases(bool indices) {
  using I = InputSpec;
  using A = MaxAttrs;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::vector<OpCase> cases{
      {"last_axis", {I::real({4, 7})}, A{-1}},
      {"last_axis_keepdim", {I::real({4, 7})}, A{1, true}},
      {"first_axis", {I::real({5, 3})}, A{0}},
      {"first_axis_keepdim", {I::real({5, 3})}, A{-2, true}},
      {"middle_axis", {I::real({2, 6, 3})}, A{1}},
      {"middle_axis_keepdim", {I::real({2, 3, 4, 5})}, A{-3, true}},
      {"vector", {I::real({9})}, A{0}},
      {"scalar", {I::real({})}, A{-1}},
      {"scalar_axis_zero_keepdim", {I::real({})}, A{0, true}},
      {"one_element_axis", {I::real({6, 1})}, A{1}},
      {"one_element_axis_keepdim", {I::real({1, 5})}, A{0, true}},
      {"empty_rows", {I::real({0, 5})}, A{1}},
      {"empty_kept_axis", {I::real({3, 0})}, A{0, true}},
      // 2 x 40 x 1030: long contiguous rows, and enough elements for several CPU threads.
      {"wide_rows", {I::real({2, 40, 1030})}, A{-1}, 16},
      {"wide_first_axis", {I::real({300, 70})}, A{0}, 16},
  };
  std::vector<OpCase> edges{
      // Repeated extremes: the first wins (forward only: a finite difference would move it).
      {"ties", {I::real({3, 4}).with_values({1, 3, 3, 0, -2, -2, -2, -2, 5, 1, 5, 5})}, A{-1}},
      {"ties_first_axis",
       {I::real({4, 3}).with_values({2, 0, 1, 2, 0, 3, 1, 0, 3, 2, -1, 0})},
       A{0}},
      {"large_and_tiny",
       {I::real({2, 4}).with_values({1e30, -1e30, 3e38, 1e-30, 1e-38, -1e-38, 2e-38, 0})},
       A{-1}},
      {"nan_and_inf_rows",
       {I::real({4, 4}).with_values({1, nan, 2, nan,          //
                                     inf, 0, -inf, inf,       //
                                     -inf, -inf, -inf, -inf,  //
                                     nan, nan, -inf, 3})},
       A{-1}},
      {"nan_and_inf_first_axis",
       {I::real({3, 3}).with_values({1, nan, 2, nan, 0, inf, 3, nan, -inf})},
       A{0, true}},
  };
  for (OpCase& c : edges) {
    c.edge_values = !indices;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<ErrorCase> max_error_cases() {
  using I = InputSpec;
  using A = MaxAttrs;
  const char* empty = "cannot reduce over an empty axis";
  return std::vector<ErrorCase>{
      {"dim_too_large", {I::real({2, 3})}, A{2}, "argument 'dim'"},
      {"dim_too_negative", {I::real({2, 3})}, A{-3}, "an axis in [-2, 1] (rank 2)"},
      {"dim_int64_min", {I::real({2})}, A{std::numeric_limits<std::int64_t>::min()}, "got -9223"},
      {"scalar_dim_one", {I::real({})}, A{1}, "an axis in [-1, 0] (rank 0)"},
      {"empty_axis", {I::real({3, 0})}, A{1}, empty},
      {"empty_axis_keepdim", {I::real({0})}, A{0, true}, empty},
      {"empty_axis_negative", {I::real({0, 2})}, A{-2}, "axis 0 of shape [0, 2]"},
  };
}

// grad_out and indices (in [0, N)) shaped as the forward's output for x_shape along dim.
OpCase max_backward_case(std::string name, Shape x, std::int64_t dim, bool keepdim, Shape out,
                         std::int64_t max_checks = 4096) {
  const std::int64_t rank = static_cast<std::int64_t>(x.size());
  const std::int64_t n = rank == 0 ? 1 : x[dim < 0 ? dim + rank : dim];
  return OpCase{std::move(name),
                {InputSpec::real(out), InputSpec::ids(out, n)},
                MaxBackwardAttrs{dim, keepdim, std::move(x)},
                max_checks};
}

std::vector<OpCase> max_backward_cases() {
  return std::vector<OpCase>{
      max_backward_case("last_axis", {4, 7}, -1, false, {4}),
      max_backward_case("first_axis_keepdim", {5, 3}, 0, true, {1, 3}),
      max_backward_case("middle_axis", {2, 6, 3}, 1, false, {2, 3}),
      max_backward_case("middle_axis_keepdim", {2, 3, 4, 5}, -3, true, {2, 1, 4, 5}),
      max_backward_case("scalar", {}, 0, false, {}),
      max_backward_case("one_element_axis", {6, 1}, 1, false, {6}),
      max_backward_case("empty_rows", {0, 5}, 1, false, {0}),
      max_backward_case("wide_rows", {2, 40, 1030}, -1, false, {2, 40}, 16),
      max_backward_case("wide_first_axis", {300, 70}, 0, true, {1, 70}, 16),
  };
}

std::vector<ErrorCase> max_backward_error_cases() {
  using I = InputSpec;
  using A = MaxBackwardAttrs;
  auto with_indices = [](std::vector<double> values) {
    return std::vector<InputSpec>{I::real({2}), I::ids({2}, 7).with_values(std::move(values))};
  };
  const std::vector<InputSpec> good{I::real({2}), I::ids({2}, 7)};
  return std::vector<ErrorCase>{
      {"index_too_large", with_indices({0, 7}), A{1, false, {2, 7}}, "7 at flat position 1"},
      {"index_negative", with_indices({-1, 0}), A{1, false, {2, 7}}, "indices in [0, 7)"},
      {"grad_out_shape",
       {I::real({3}), I::ids({2}, 7)},
       A{1, false, {2, 7}},
       "argument 'grad_out': expected shape [2]"},
      {"indices_shape", {I::real({2}), I::ids({2, 1}, 7)}, A{1, false, {2, 7}}, "'indices'"},
      {"keepdim_shape", good, A{1, true, {2, 7}}, "expected shape [2, 1]"},
      {"dim_too_large", good, A{2, false, {2, 7}}, "argument 'dim'"},
      {"empty_axis", good, A{1, false, {2, 0}}, "cannot reduce over an empty axis"},
      {"negative_size", good, A{1, false, {2, -7}}, "argument 'x_shape'"},
  };
}

std::string describe_max(const std::any& attrs) {
  const auto& a = attrs_as<MaxAttrs>("max", attrs);
  return fmt::format("dim={}, keepdim={}", a.dim, a.keepdim);
}
std::string describe_max_backward(const std::any& attrs) {
  const auto& a = attrs_as<MaxBackwardAttrs>("max_backward", attrs);
  return fmt::format("dim={}, keepdim={}, x_shape={}", a.dim, a.keepdim, shape_str(a.x_shape));
}

// max and min: the upstream gradient to the indices the forward kernel saved.
std::vector<Tensor> max_grads(const BackwardContext& ctx) {
  MG_CHECK(ctx.saved.size() == 1, ctx.op.name, "saved tensors", "the indices of the forward",
           "{} tensors", ctx.saved.size());
  const auto& a = ctx.attrs_as<MaxAttrs>();
  return std::vector<Tensor>{
      max_backward(ctx.grad_out, ctx.saved[0], a.dim, a.keepdim, ctx.input_shape(0))};
}

template <bool Min, bool Indices>
OpDef max_op(const char* name, const char* summary) {
  OpDef op;
  op.name = name;
  op.summary = summary;
  op.inputs = {"x"};
  op.infer = max_infer<Indices>;
  if constexpr (!Indices) {
    op.backward = max_grads;
    op.saves_for_backward = true;  // the indices
  }
  op.kernels = device_kernels(max_forward_cpu<Min, Indices>,
                              MG_CUDA_KERNEL((max_forward_cuda<Min, Indices>)));
  op.reference = max_reference<Min, Indices>;
  op.cases = [] { return max_cases(Indices); };
  op.error_cases = max_error_cases;
  op.describe_attrs = describe_max;
  return op;
}

}  // namespace

void register_max(OpRegistry& registry) {
  registry.add(max_op<false, false>("max", "the largest x along dim (NaN if the row has one)"));
  registry.add(max_op<true, false>("min", "the smallest x along dim (NaN if the row has one)"));
  registry.add(max_op<false, true>(
      "argmax", "i64 index of the first largest x along dim (of the first NaN if any)"));
  registry.add(max_op<true, true>(
      "argmin", "i64 index of the first smallest x along dim (of the first NaN if any)"));
  OpDef back;
  back.name = "max_backward";
  back.summary = "grad_out placed at indices along dim of a zero tensor of x_shape";
  back.inputs = {"grad_out", "indices"};
  back.infer = max_backward_infer;
  back.kernels = MG_KERNELS(max_backward);
  back.reference = max_backward_reference;
  back.cases = max_backward_cases;
  back.error_cases = max_backward_error_cases;
  back.describe_attrs = describe_max_backward;
  registry.add(std::move(back));
}

}  // namespace mg
