// position_embedding_backward: out[offset + t, d] = grad[t, d], every other row zero.
//   grad [T, D] -> out [T_max, D]
// Backward (with respect to grad): the same rows read back, i.e. position_embedding.
#include "position_embedding_backward/position_embedding_backward.h"

#include <limits>

#include "common/define_op.h"
#include "position_embedding/position_embedding.h"
#include "position_embedding/position_rows.h"

namespace mg {

MG_DECLARE_KERNELS(position_embedding_backward);
Tensor position_embedding_backward_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor position_embedding_backward(const Tensor& grad, std::int64_t rows, std::int64_t offset) {
  static const OpDef& op = builtin_op("position_embedding_backward");
  return apply_op(op, {grad}, PositionEmbeddingBackwardAttrs{rows, offset});
}

namespace {

std::vector<OpCase> position_embedding_backward_cases() {
  using I = InputSpec;
  using A = PositionEmbeddingBackwardAttrs;
  return std::vector<OpCase>{
      {"from_start", {I::real({5, 3})}, A{8, 0}},
      {"with_offset", {I::real({4, 3})}, A{8, 3}},
      {"whole_table", {I::real({6, 2})}, A{6, 0}},
  };
}

std::vector<ErrorCase> position_embedding_backward_error_cases() {
  using I = InputSpec;
  using A = PositionEmbeddingBackwardAttrs;
  return std::vector<ErrorCase>{
      {"past_table_end", {I::real({6, 3})}, A{8, 3}, "T + offset = 6 + 3 = 9"},
      {"offset_int64_max",
       {I::real({6, 3})},
       A{8, kInt64Max},
       "T + offset = 6 + 9223372036854775807 (past 2^63 - 1)"},
      {"negative_offset", {I::real({2, 3})}, A{8, -1}, "T + offset = 2 + -1 = 1"},
      {"rows_int64_min",
       {I::real({4, 3})},
       A{std::numeric_limits<std::int64_t>::min(), 0},
       "T + offset = 4 + 0 = 4"},
  };
}

}  // namespace

void register_position_embedding_backward(OpRegistry& registry) {
  OpDef op;
  op.name = "position_embedding_backward";
  op.summary =
      "[T, D] rows placed at offset.. of a zero [T_max, D] (position_embedding's gradient)";
  op.inputs = {"grad"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const auto& a = attrs_as<PositionEmbeddingBackwardAttrs>("position_embedding_backward", attrs);
    check_floating(self, 0, in[0]);
    check_rank(self, 0, in[0], 2, 2);
    check_rows_within(in[0].size(0), a.offset, a.rows, "position_embedding_backward", "T + offset",
                      fmt::format("0 <= offset and T + offset <= rows = {}", a.rows));
    return OutputSpec{{a.rows, in[0].size(1)}, in[0].dtype()};
  };
  op.backward = [](const BackwardContext& ctx) {
    const auto& a = ctx.attrs_as<PositionEmbeddingBackwardAttrs>();
    return std::vector<Tensor>{position_embedding(ctx.grad_out, ctx.input_shape(0)[0], a.offset)};
  };
  op.kernels = MG_KERNELS(position_embedding_backward);
  op.reference = position_embedding_backward_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<PositionEmbeddingBackwardAttrs>("position_embedding_backward", attrs);
    return fmt::format("rows={}, offset={}", a.rows, a.offset);
  };
  op.cases = position_embedding_backward_cases;
  op.error_cases = position_embedding_backward_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
