// sum: out = x summed over the axes `dims` (all of them when empty), as torch.sum.
//   x [..X], dims D (axes of X, negative from the end) -> out [X without D], or [X with D as 1]
//   with keepdim; [] for every axis without keepdim (a scalar loss)
// out with or without keepdim has the same layout as sum_to(x, keep shape), so the kernels are
// sum_to's, run into a view of out. An axis of size 0 sums to 0.
// Backward: the upstream gradient viewed in the keep shape, expanded back to x without a copy
// (expand).
#include "sum/sum.h"

#include "common/define_op.h"
#include "expand/expand.h"
#include "sum/reduce_dims.h"

namespace mg {

MG_DECLARE_KERNELS(sum);
Tensor sum_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  static const OpDef& op = builtin_op("sum");
  return apply_op(op, {x}, SumAttrs{dims, keepdim});
}

namespace {

std::vector<OpCase> sum_cases() {
  using I = InputSpec;
  using A = SumAttrs;
  return std::vector<OpCase>{
      {"all", {I::real({3, 4})}, A{}},
      {"all_keepdim", {I::real({3, 4})}, A{{}, true}},
      {"rows", {I::real({3, 4})}, A{{0}}},
      {"rows_keepdim", {I::real({3, 4})}, A{{0}, true}},
      {"columns", {I::real({3, 4})}, A{{1}}},
      {"columns_keepdim", {I::real({3, 4})}, A{{1}, true}},
      {"last_negative", {I::real({3, 4})}, A{{-1}}},
      {"last_negative_keepdim", {I::real({3, 4})}, A{{-1}, true}},
      {"outer_and_inner", {I::real({2, 3, 4})}, A{{0, 2}}},
      {"outer_and_inner_keepdim", {I::real({2, 3, 4})}, A{{2, 0}, true}},
      {"middle", {I::real({2, 3, 4})}, A{{1}}},
      {"middle_keepdim", {I::real({2, 3, 4})}, A{{-2}, true}},
      {"every_axis_listed", {I::real({2, 3, 4})}, A{{0, -2, 2}}},
      {"every_axis_listed_keepdim", {I::real({2, 3, 4})}, A{{2, 1, 0}, true}},
      {"size_one_axes", {I::real({1, 3, 1})}, A{{0, 2}}},
      {"size_one_axis_kept", {I::real({3, 1, 4})}, A{{0}, true}},
      {"scalar_input", {I::real({})}, A{{-1}}},
      {"empty_summed_axis", {I::real({0, 3})}, A{{0}}},  // zeros, written by the kernel
      {"empty_kept_axis", {I::real({3, 0})}, A{{0}, true}},
      {"andrea_rows", {I::real({16, 8})}, A{{0}}},
      {"andrea_features", {I::real({16, 8})}, A{{-1}, true}},
  };
}

std::vector<ErrorCase> sum_error_cases() {
  using I = InputSpec;
  using A = SumAttrs;
  return std::vector<ErrorCase>{
      {"axis_past_end", {I::real({3, 4})}, A{{2}}, "axes in [-2, 2)"},
      {"axis_before_start", {I::real({2, 3, 4})}, A{{0, -4}}, "axes in [-3, 3)"},
      {"repeated_axis", {I::real({3, 4})}, A{{1, 1}}, "each axis at most once"},
      {"repeated_negative_axis", {I::real({2, 3, 4})}, A{{2, -1}}, "each axis at most once"},
      {"integer_input", {I::ids({2, 3}, 5)}, A{}, "floating-point"},
  };
}

}  // namespace

void register_sum(OpRegistry& registry) {
  OpDef op;
  op.name = "sum";
  op.summary = "x summed over chosen axes (all by default), optionally keeping them as size 1";
  op.inputs = {"x"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    check_floating(self, 0, in[0]);
    const auto& a = attrs_as<SumAttrs>("sum", attrs);
    return OutputSpec{reduce_shapes("sum", in[0].shape(), a.dims, a.keepdim).out, in[0].dtype()};
  };
  op.backward = [](const BackwardContext& ctx) {
    const auto& a = ctx.attrs_as<SumAttrs>();
    const Shape& x = ctx.input_shape(0);
    const Shape keep = reduce_shapes("sum", x, a.dims, a.keepdim).keep;
    return std::vector<Tensor>{expand(ctx.grad_out.view(keep), x)};
  };
  op.takes_layout = any_layout;  // sum_to_*_into reads x through its strides
  op.kernels = MG_KERNELS(sum);
  op.reference = sum_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<SumAttrs>("sum", attrs);
    return describe_reduce(a.dims, a.keepdim);
  };
  op.cases = sum_cases;
  op.error_cases = sum_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
