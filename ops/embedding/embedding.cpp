// embedding: out[..., d] = table[ids[...], d]
//   V vocabulary rows, D model width; table [V, D], ids [...] (i32 or i64) -> out [..., D]
// Backward: a scatter-add of the upstream rows into a zero [V, D] gradient
// (embedding_backward), correct for repeated ids; ids get no gradient.
#include "embedding/embedding.h"

#include "common/define_op.h"
#include "embedding_backward/embedding_backward.h"

namespace mg {

MG_DECLARE_KERNELS(embedding);
Tensor embedding_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor embedding(const Tensor& table, const Tensor& ids) {
  static const OpDef& op = builtin_op("embedding");
  return apply_op(op, {table, ids});
}

namespace {

std::vector<OpCase> embedding_cases() {
  using I = InputSpec;
  return std::vector<OpCase>{
      // 12 ids drawn from 6 of 10 rows: rows hit zero, one and many times.
      {"repeated_ids", {I::real({10, 4}), I::ids({3, 4}, 6)}},
      {"i32_ids", {I::real({7, 3}), I::ids({5}, 7).with_dtype(DType::i32)}},
      {"all_ids_equal", {I::real({5, 3}), I::ids({2, 3}, 5).with_values({2, 2, 2, 2, 2, 2})}},
      {"single_row", {I::real({1, 1}), I::ids({1}, 1)}},
      {"scalar_id", {I::real({4, 3}), I::ids({}, 4).with_values({3})}},
      {"andrea_shapes", {I::real({8449, 768}), I::ids({2, 8}, 8449)}, {}, 256},
  };
}

std::vector<ErrorCase> embedding_error_cases() {
  using I = InputSpec;
  return std::vector<ErrorCase>{
      {"id_too_large",
       {I::real({5, 3}), I::ids({2, 2}, 5).with_values({0, 1, 5, 2})},
       {},
       "id 5 at position [1, 0]"},
      {"id_negative",
       {I::real({5, 3}), I::ids({3}, 5).with_values({0, -1, 2})},
       {},
       "id -1 at position [1]"},
      {"table_rank", {I::real({5, 3, 2}), I::ids({2}, 5)}, {}, "rank 2"},
  };
}

}  // namespace

void register_embedding(OpRegistry& registry) {
  OpDef op;
  op.name = "embedding";
  op.summary = "row lookup table[ids]: [V, D] x ids [...] -> [..., D]";
  op.inputs = {"table", "ids"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any&) {
    check_floating(self, 0, in[0]);
    check_rank(self, 0, in[0], 2, 2);
    check_integer(self, 1, in[1]);
    Shape out = in[1].shape();
    out.push_back(in[0].size(1));
    return OutputSpec{out, in[0].dtype()};
  };
  op.backward_reads = {"ids"};
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{
        embedding_backward(ctx.grad_out, ctx.input(1), ctx.input_shape(0)[0]), Tensor()};
  };
  op.kernels = MG_KERNELS(embedding);
  op.reference = embedding_reference;
  op.cases = embedding_cases;
  op.error_cases = embedding_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
