// token_position_embedding: out[..., t, d] = tok[ids[..., t], d] + pos[offset + t, d]
//   V vocabulary rows, T_max position rows, T positions, D width;
//   tok [V, D], pos [T_max, D], ids [..., T] (i32 or i64) -> out [..., T, D]
// Backward, in other ops: tok gets the scatter-add of the upstream rows by id
// (embedding_backward); pos gets the upstream rows summed over the batch axes (sum_to) and
// placed at rows offset..offset+T-1 (position_embedding_backward); ids get none.
#include "token_position_embedding/token_position_embedding.h"

#include "common/define_op.h"
#include "embedding_backward/embedding_backward.h"
#include "position_embedding/position_rows.h"
#include "position_embedding_backward/position_embedding_backward.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(token_position_embedding);
Tensor token_position_embedding_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor token_position_embedding(const Tensor& tok_table, const Tensor& pos_table, const Tensor& ids,
                                std::int64_t offset) {
  static const OpDef& op = builtin_op("token_position_embedding");
  return apply_op(op, {tok_table, pos_table, ids}, TokenPositionEmbeddingAttrs{offset});
}

namespace {

OutputSpec token_position_embedding_infer(const OpDef& self, std::span<const Tensor> in,
                                          const std::any& attrs) {
  const std::int64_t offset =
      attrs_as<TokenPositionEmbeddingAttrs>("token_position_embedding", attrs).offset;
  const Tensor& tok = in[0];
  const Tensor& pos = in[1];
  const Tensor& ids = in[2];
  check_floating(self, 0, tok);
  check_rank(self, 0, tok, 2, 2);
  check_floating(self, 1, pos);
  check_same_dtype(self, 1, pos, tok.dtype());
  check_rank(self, 1, pos, 2, 2);
  MG_CHECK(pos.size(1) == tok.size(1), self.name, "pos_table",
           fmt::format("width {} (as tok_table)", tok.size(1)), "shape {}", shape_str(pos.shape()));
  check_integer(self, 2, ids);
  check_rank(self, 2, ids, 1, 8);
  const std::int64_t length = ids.size(-1);
  MG_CHECK(offset >= 0, self.name, "offset", "a non-negative offset", "{}", offset);
  check_rows_within(length, offset, pos.size(0), self.name, "T + offset",
                    fmt::format("at most T_max = {} (pos_table's rows)", pos.size(0)));
  Shape out = ids.shape();
  out.push_back(tok.size(1));
  return {out, tok.dtype()};
}

std::vector<Tensor> token_position_embedding_backward(const BackwardContext& ctx) {
  const std::int64_t offset = ctx.attrs_as<TokenPositionEmbeddingAttrs>().offset;
  const Tensor& ids = ctx.input(2);
  std::vector<Tensor> grads(3);
  if (ctx.needs_grad(0)) grads[0] = embedding_backward(ctx.grad_out, ids, ctx.input_shape(0)[0]);
  if (ctx.needs_grad(1)) {
    const std::int64_t length = ids.size(-1);
    const Shape& pos = ctx.input_shape(1);                         // [T_max, D]
    Tensor per_position = sum_to(ctx.grad_out, {length, pos[1]});  // [T, D]
    grads[1] = position_embedding_backward(per_position, pos[0], offset);
  }
  return grads;
}

std::vector<OpCase> token_position_embedding_cases() {
  using I = InputSpec;
  using A = TokenPositionEmbeddingAttrs;
  return std::vector<OpCase>{
      // 12 ids drawn from 6 of 10 rows: rows hit zero, one and many times.
      {"repeated_ids", {I::real({10, 4}), I::real({6, 4}), I::ids({3, 4}, 6)}, A{}},
      {"with_offset", {I::real({7, 3}), I::real({8, 3}), I::ids({2, 5}, 7)}, A{3}},
      {"one_sequence", {I::real({7, 3}), I::real({5, 3}), I::ids({5}, 7)}, A{}},
      {"i32_ids",
       {I::real({7, 3}), I::real({5, 3}), I::ids({2, 5}, 7).with_dtype(DType::i32)},
       A{}},
      {"all_ids_equal",
       {I::real({5, 3}), I::real({3, 3}), I::ids({2, 3}, 5).with_values({2, 2, 2, 2, 2, 2})},
       A{}},
      {"size_one_dims", {I::real({1, 1}), I::real({1, 1}), I::ids({1, 1}, 1)}, A{}},
      {"andrea_shapes",
       {I::real({8449, 768}), I::real({1024, 768}), I::ids({2, 8}, 8449)},
       A{},
       256},
  };
}

std::vector<ErrorCase> token_position_embedding_error_cases() {
  using I = InputSpec;
  using A = TokenPositionEmbeddingAttrs;
  return std::vector<ErrorCase>{
      {"id_too_large",
       {I::real({5, 3}), I::real({4, 3}), I::ids({2, 2}, 5).with_values({0, 1, 5, 2})},
       A{},
       "id 5 at position [1, 0]"},
      {"id_negative",
       {I::real({5, 3}), I::real({4, 3}), I::ids({3}, 5).with_values({0, -1, 2})},
       A{},
       "id -1 at position [1]"},
      {"past_table_end",
       {I::real({5, 3}), I::real({4, 3}), I::ids({1, 3}, 5)},
       A{2},
       "T + offset = 3 + 2 = 5"},
      {"negative_offset",
       {I::real({5, 3}), I::real({4, 3}), I::ids({1, 3}, 5)},
       A{-1},
       "non-negative offset"},
      {"offset_int64_max",
       {I::real({5, 3}), I::real({4, 3}), I::ids({1, 3}, 5)},
       A{kInt64Max},
       "T + offset = 3 + 9223372036854775807 (past 2^63 - 1)"},
      {"width_mismatch", {I::real({5, 3}), I::real({4, 2}), I::ids({1, 3}, 5)}, A{}, "width 3"},
      {"scalar_ids",
       {I::real({5, 3}), I::real({4, 3}), I::ids({}, 5).with_values({1})},
       A{},
       "rank 1 to 8"},
  };
}

}  // namespace

void register_token_position_embedding(OpRegistry& registry) {
  OpDef op;
  op.name = "token_position_embedding";
  op.summary =
      "fused tok[ids] + pos[offset..offset+T): [V, D], [T_max, D], ids [..., T] -> [..., T, D]";
  op.inputs = {"tok_table", "pos_table", "ids"};
  op.infer = token_position_embedding_infer;
  op.backward = token_position_embedding_backward;
  op.backward_reads = {"ids"};
  op.kernels = MG_KERNELS(token_position_embedding);
  op.reference = token_position_embedding_reference;
  op.describe_attrs = [](const std::any& attrs) {
    return fmt::format(
        "offset={}",
        attrs_as<TokenPositionEmbeddingAttrs>("token_position_embedding", attrs).offset);
  };
  op.cases = token_position_embedding_cases;
  op.error_cases = token_position_embedding_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
