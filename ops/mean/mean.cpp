// mean: out = x averaged over the axes `dims` (all of them when empty), as torch.mean.
//   x [..X], dims D (axes of X, negative from the end) -> out [X without D], or [X with D as 1]
//   with keepdim; [] for every axis without keepdim
//   n = the product of X's sizes over D: out = sum(x, D) / n; n = 0 gives NaN (0 / 0), as PyTorch
// Backward: the upstream gradient times 1/n (scale), viewed in the keep shape and broadcast back
// to x without a copy (expand).
#include "mean/mean.h"

#include <limits>

#include "common/define_op.h"
#include "expand/expand.h"
#include "mean/mean_kernel.h"
#include "scale/scale.h"
#include "sum/reduce_dims.h"

namespace mg {

MG_DECLARE_KERNELS(mean);
Tensor mean_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  static const OpDef& op = builtin_op("mean");
  return apply_op(op, {x}, MeanAttrs{dims, keepdim});
}

// out viewed in the keep shape has out's elements in out's order: sum_to into it is the sum over
// dims; then out *= 1/n in place.
void mean_with(const KernelContext& ctx, SumToInto sum_to_into) {
  static const OpDef& scale_op = builtin_op("scale");
  const Tensor& x = ctx.inputs[0];
  const auto& a = ctx.attrs_as<MeanAttrs>();
  const ReduceShapes shapes = reduce_shapes("mean", x.shape(), a.dims, a.keepdim);
  if (shapes.count == 0) {  // every output averages no element: NaN, as PyTorch's 0 / 0
    if (ctx.out.numel() > 0) ctx.out.fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  sum_to_into(x, ctx.out.view(shapes.keep));
  if (shapes.count > 1) {
    apply_op_into(scale_op, {ctx.out}, ctx.out,
                  ScaleAttrs{1.0 / static_cast<double>(shapes.count)});
  }
}

namespace {

// No case reduces over a size-0 axis: its NaN output is right, but the harness fails any NaN.
std::vector<OpCase> mean_cases() {
  using I = InputSpec;
  using A = MeanAttrs;
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
      {"leading_pair", {I::real({2, 3, 4})}, A{{0}}},  // n = 2
      {"every_axis_listed", {I::real({2, 3, 4})}, A{{0, -2, 2}}},
      {"every_axis_listed_keepdim", {I::real({2, 3, 4})}, A{{2, 1, 0}, true}},
      {"size_one_axes", {I::real({1, 3, 1})}, A{{0, 2}}},  // n = 1: the sum itself
      {"size_one_axis_kept", {I::real({3, 1, 4})}, A{{0}, true}},
      {"scalar_input", {I::real({})}, A{{0}}},
      {"empty_kept_axis", {I::real({3, 0})}, A{{0}}},  // n = 3 for each of no outputs
      {"andrea_rows", {I::real({16, 8})}, A{{0}}},
      {"andrea_features", {I::real({16, 8})}, A{{-1}, true}},
  };
}

std::vector<ErrorCase> mean_error_cases() {
  using I = InputSpec;
  using A = MeanAttrs;
  return std::vector<ErrorCase>{
      {"axis_past_end", {I::real({3, 4})}, A{{2}}, "axes in [-2, 2)"},
      {"axis_before_start", {I::real({2, 3, 4})}, A{{-4}, true}, "axes in [-3, 3)"},
      {"repeated_axis", {I::real({3, 4})}, A{{0, 0}}, "each axis at most once"},
      {"repeated_negative_axis", {I::real({3, 4})}, A{{-2, 0}}, "each axis at most once"},
      {"integer_input", {I::ids({2, 3}, 5)}, A{}, "floating-point"},
  };
}

}  // namespace

void register_mean(OpRegistry& registry) {
  OpDef op;
  op.name = "mean";
  op.summary = "x averaged over chosen axes (all by default), optionally keeping them as size 1";
  op.inputs = {"x"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    check_floating(self, 0, in[0]);
    const auto& a = attrs_as<MeanAttrs>("mean", attrs);
    return OutputSpec{reduce_shapes("mean", in[0].shape(), a.dims, a.keepdim).out, in[0].dtype()};
  };
  op.backward = [](const BackwardContext& ctx) {
    const auto& a = ctx.attrs_as<MeanAttrs>();
    const Shape& x = ctx.input_shape(0);
    const ReduceShapes shapes = reduce_shapes("mean", x, a.dims, a.keepdim);
    // n = 0: x has no element, so its gradient is empty whatever g holds (and 1/0 is no factor).
    const Tensor g = shapes.count == 0
                         ? ctx.grad_out
                         : scale(ctx.grad_out, 1.0 / static_cast<double>(shapes.count));
    return std::vector<Tensor>{expand(g.view(shapes.keep), x)};
  };
  op.takes_layout = any_layout;  // sum_to_*_into reads x through its strides
  op.kernels = MG_KERNELS(mean);
  op.reference = mean_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<MeanAttrs>("mean", attrs);
    return describe_reduce(a.dims, a.keepdim);
  };
  op.cases = mean_cases;
  op.error_cases = mean_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
