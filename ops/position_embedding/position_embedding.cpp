// position_embedding: out[t, d] = table[offset + t, d]
//   T_max table rows, T positions, D width; table [T_max, D] -> out [T, D]
// Backward: the upstream rows written into a zero [T_max, D] at rows offset..offset+T-1
// (position_embedding_backward). Batches share one position table: the add that combines
// tokens and positions sums the batch before this backward sees it.
#include "position_embedding/position_embedding.h"

#include "common/define_op.h"
#include "position_embedding/position_rows.h"
#include "position_embedding_backward/position_embedding_backward.h"

namespace mg {

MG_DECLARE_KERNELS(position_embedding);
Tensor position_embedding_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor position_embedding(const Tensor& table, std::int64_t length, std::int64_t offset) {
  static const OpDef& op = builtin_op("position_embedding");
  return apply_op(op, {table}, PositionEmbeddingAttrs{length, offset});
}

namespace {

std::vector<OpCase> position_embedding_cases() {
  using I = InputSpec;
  using A = PositionEmbeddingAttrs;
  return std::vector<OpCase>{
      {"from_start", {I::real({8, 3})}, A{5, 0}},
      {"with_offset", {I::real({8, 3})}, A{4, 3}},
      {"whole_table", {I::real({6, 2})}, A{6, 0}},
      {"one_position", {I::real({1, 1})}, A{1, 0}},
      {"andrea_shapes", {I::real({1024, 768})}, A{1024, 0}, 256},
  };
}

std::vector<ErrorCase> position_embedding_error_cases() {
  using I = InputSpec;
  using A = PositionEmbeddingAttrs;
  return std::vector<ErrorCase>{
      {"past_table_end", {I::real({8, 3})}, A{6, 3}, "T + offset = 6 + 3 = 9"},
      {"negative_offset", {I::real({8, 3})}, A{2, -1}, "non-negative offset"},
      {"offset_int64_max",
       {I::real({8, 3})},
       A{2, kInt64Max},
       "T + offset = 2 + 9223372036854775807 (past 2^63 - 1)"},
      {"length_int64_max",
       {I::real({8, 3})},
       A{kInt64Max, 1},
       "T + offset = 9223372036854775807 + 1 (past 2^63 - 1)"},
      {"zero_length", {I::real({8, 3})}, A{0, 0}, "at least one position"},
      {"integer_table", {I::ids({8, 3}, 3)}, A{2, 0}, "floating-point"},
  };
}

}  // namespace

void register_position_embedding(OpRegistry& registry) {
  OpDef op;
  op.name = "position_embedding";
  op.summary = "rows offset..offset+T-1 of a [T_max, D] position table -> [T, D]";
  op.inputs = {"table"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const auto& a = attrs_as<PositionEmbeddingAttrs>("position_embedding", attrs);
    check_floating(self, 0, in[0]);
    check_rank(self, 0, in[0], 2, 2);
    MG_CHECK(a.length >= 1, "position_embedding", "T", "at least one position", "{}", a.length);
    MG_CHECK(a.offset >= 0, "position_embedding", "offset", "a non-negative offset", "{}",
             a.offset);
    check_rows_within(a.length, a.offset, in[0].size(0), "position_embedding", "T + offset",
                      fmt::format("at most T_max = {} (the table's rows)", in[0].size(0)));
    return OutputSpec{{a.length, in[0].size(1)}, in[0].dtype()};
  };
  op.backward = [](const BackwardContext& ctx) {
    const auto& a = ctx.attrs_as<PositionEmbeddingAttrs>();
    return std::vector<Tensor>{
        position_embedding_backward(ctx.grad_out, ctx.inputs[0].size(0), a.offset)};
  };
  op.kernels = MG_KERNELS(position_embedding);
  op.reference = position_embedding_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<PositionEmbeddingAttrs>("position_embedding", attrs);
    return fmt::format("T={}, offset={}", a.length, a.offset);
  };
  op.cases = position_embedding_cases;
  op.error_cases = position_embedding_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
