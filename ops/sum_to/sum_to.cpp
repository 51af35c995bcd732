// sum_to: out = x summed over the axes on which `shape` was broadcast to x's shape.
//   x [..X], shape S (broadcastable to X) -> out [S]
// Backward: the upstream gradient expanded back to x's shape without a copy (expand).
#include "sum_to/sum_to.h"

#include "common/broadcast.h"
#include "common/define_op.h"
#include "expand/expand.h"

namespace mg {

MG_DECLARE_KERNELS(sum_to);
Tensor sum_to_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor sum_to(const Tensor& x, const Shape& shape) {
  static const OpDef& op = builtin_op("sum_to");
  if (x.defined() && x.shape() == shape) return x;
  return apply_op(op, {x}, SumToAttrs{shape});
}

namespace {

std::vector<OpCase> sum_to_cases() {
  using I = InputSpec;
  return std::vector<OpCase>{
      {"leading_axis", {I::real({2, 3, 4})}, SumToAttrs{{3, 4}}},
      {"keep_rank", {I::real({2, 3, 4})}, SumToAttrs{{1, 3, 4}}},
      {"inner_axis", {I::real({2, 3, 4})}, SumToAttrs{{2, 1, 4}}},
      {"leading_and_last_axes", {I::real({2, 3, 4})}, SumToAttrs{{3, 1}}},
      {"outer_and_inner_axes", {I::real({2, 3, 4, 5})}, SumToAttrs{{1, 3, 1, 5}}},
      {"to_scalar_like", {I::real({5, 3})}, SumToAttrs{{1}}},
      {"to_scalar", {I::real({2, 3, 4})}, SumToAttrs{{}}},
      {"empty_rows", {I::real({0, 3})}, SumToAttrs{{3}}},  // zeros, written by the kernel
      {"andrea_pos_grad", {I::real({3, 16, 8})}, SumToAttrs{{16, 8}}},
  };
}

std::vector<ErrorCase> sum_to_error_cases() {
  using I = InputSpec;
  return std::vector<ErrorCase>{
      {"not_broadcastable", {I::real({2, 3})}, SumToAttrs{{4}}, "broadcasts to x"},
      {"larger_target", {I::real({3})}, SumToAttrs{{2, 3}}, "broadcasts to x"},
  };
}

}  // namespace

void register_sum_to(OpRegistry& registry) {
  OpDef op;
  op.name = "sum_to";
  op.summary = "sum x down to a shape that broadcasts to it (the reduction of add's backward)";
  op.inputs = {"x"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    check_floating(self, 0, in[0]);
    const Shape& target = attrs_as<SumToAttrs>("sum_to", attrs).shape;
    Shape joint;
    MG_CHECK(broadcast_shapes(target, in[0].shape(), joint) && joint == in[0].shape(), "sum_to",
             "shape", fmt::format("a shape that broadcasts to x's {}", shape_str(in[0].shape())),
             "{}", shape_str(target));
    return OutputSpec{target, in[0].dtype()};
  };
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{expand(ctx.grad_out, ctx.input_shape(0))};
  };
  op.takes_layout = any_layout;  // sum_to_*_into reads x through its strides
  op.kernels = MG_KERNELS(sum_to);
  op.reference = sum_to_reference;
  op.describe_attrs = [](const std::any& attrs) {
    return "shape=" + shape_str(attrs_as<SumToAttrs>("sum_to", attrs).shape);
  };
  op.cases = sum_to_cases;
  op.error_cases = sum_to_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
