// broadcast_to: out = x repeated along the axes on which x broadcasts to `shape`.
//   x [..X], shape S (X broadcasts to S) -> out [S]
// Backward: the upstream gradient summed back to x's shape (sum_to). It is sum_to's backward,
// so the gradient of sum(logits) costs one write of the logits' size and no zero tensor.
#include "broadcast_to/broadcast_to.h"

#include <algorithm>

#include "common/broadcast.h"
#include "common/define_op.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(broadcast_to);
Tensor broadcast_to_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  static const OpDef& op = builtin_op("broadcast_to");
  if (x.defined() && x.shape() == shape) return x;
  return apply_op(op, {x}, BroadcastToAttrs{shape});
}

namespace {

std::vector<OpCase> broadcast_to_cases() {
  using I = InputSpec;
  using A = BroadcastToAttrs;
  return std::vector<OpCase>{
      {"leading_axis", {I::real({3, 4})}, A{{2, 3, 4}}},
      {"from_scalar", {I::real({})}, A{{2, 3}}},
      {"inner_axis", {I::real({2, 1, 4})}, A{{2, 3, 4}}},
      {"leading_and_last_axes", {I::real({3, 1})}, A{{2, 3, 4}}},
      {"outer_and_inner_axes", {I::real({1, 3, 1, 5})}, A{{2, 3, 4, 5}}},
      {"size_one_dims", {I::real({1})}, A{{5, 1}}},
      {"andrea_pos_grad", {I::real({16, 8})}, A{{3, 16, 8}}},
  };
}

std::vector<ErrorCase> broadcast_to_error_cases() {
  using I = InputSpec;
  using A = BroadcastToAttrs;
  return std::vector<ErrorCase>{
      {"not_broadcastable", {I::real({2, 3})}, A{{4, 3}}, "x's [2, 3] broadcasts to"},
      {"smaller_target", {I::real({2, 3})}, A{{3}}, "x's [2, 3] broadcasts to"},
      {"negative_size",
       {I::real({1})},
       A{{-5}},
       "broadcast_to: argument 'shape': expected non-negative sizes, got [-5]"},
      {"too_many_bytes",
       {I::real({1})},
       A{{std::int64_t{1} << 62}},
       "broadcast_to: argument 'output': expected a shape of non-negative sizes and at most 2^63 "
       "- 1 bytes"},
  };
}

}  // namespace

void register_broadcast_to(OpRegistry& registry) {
  OpDef op;
  op.name = "broadcast_to";
  op.summary = "x repeated to a shape it broadcasts to (the gradient of sum_to)";
  op.inputs = {"x"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    check_floating(self, 0, in[0]);
    const Shape& target = attrs_as<BroadcastToAttrs>("broadcast_to", attrs).shape;
    MG_CHECK(std::all_of(target.begin(), target.end(), [](std::int64_t s) { return s >= 0; }),
             "broadcast_to", "shape", "non-negative sizes", "{}", shape_str(target));
    Shape joint;
    MG_CHECK(broadcast_shapes(in[0].shape(), target, joint) && joint == target, "broadcast_to",
             "shape", fmt::format("a shape x's {} broadcasts to", shape_str(in[0].shape())), "{}",
             shape_str(target));
    return OutputSpec{target, in[0].dtype()};
  };
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{sum_to(ctx.grad_out, ctx.input_shape(0))};
  };
  op.kernels = MG_KERNELS(broadcast_to);
  op.reference = broadcast_to_reference;
  op.describe_attrs = [](const std::any& attrs) {
    return "shape=" + shape_str(attrs_as<BroadcastToAttrs>("broadcast_to", attrs).shape);
  };
  op.cases = broadcast_to_cases;
  op.error_cases = broadcast_to_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
