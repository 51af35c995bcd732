// embedding_backward: out[v, d] = sum over positions p with ids[p] == v of grad[p, d]
//   grad [..., D], ids [...] -> out [V, D]; rows no id names stay exactly zero.
// Backward (with respect to grad): a gather of the upstream rows, i.e. embedding itself.
#include "embedding_backward/embedding_backward.h"

#include "common/define_op.h"
#include "embedding/embedding.h"

namespace mg {

MG_DECLARE_KERNELS(embedding_backward);
Tensor embedding_backward_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor embedding_backward(const Tensor& grad, const Tensor& ids, std::int64_t rows) {
  static const OpDef& op = builtin_op("embedding_backward");
  return apply_op(op, {grad, ids}, EmbeddingBackwardAttrs{rows});
}

namespace {

std::vector<OpCase> embedding_backward_cases() {
  using I = InputSpec;
  using A = EmbeddingBackwardAttrs;
  return std::vector<OpCase>{
      {"repeated_ids", {I::real({3, 4, 4}), I::ids({3, 4}, 6)}, A{10}},
      {"i32_ids", {I::real({5, 3}), I::ids({5}, 7).with_dtype(DType::i32)}, A{7}},
      {"all_ids_equal",
       {I::real({2, 3, 3}), I::ids({2, 3}, 5).with_values({4, 4, 4, 4, 4, 4})},
       A{5}},
      {"andrea_shapes", {I::real({2, 8, 768}), I::ids({2, 8}, 8449)}, A{8449}, 32},
      {"no_positions", {I::real({0, 3}), I::ids({0}, 5)}, A{5}},  // all rows zero
  };
}

std::vector<ErrorCase> embedding_backward_error_cases() {
  using I = InputSpec;
  using A = EmbeddingBackwardAttrs;
  return std::vector<ErrorCase>{
      {"id_too_large",
       {I::real({3, 2}), I::ids({3}, 4).with_values({0, 4, 1})},
       A{4},
       "id 4 at position [1]"},
      {"grad_shape", {I::real({3, 2}), I::ids({4}, 4)}, A{4}, "ids' shape plus D"},
  };
}

}  // namespace

void register_embedding_backward(OpRegistry& registry) {
  OpDef op;
  op.name = "embedding_backward";
  op.summary = "scatter-add of rows by ids into a zero [V, D] table (embedding's gradient)";
  op.inputs = {"grad", "ids"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const std::int64_t rows = attrs_as<EmbeddingBackwardAttrs>("embedding_backward", attrs).rows;
    check_floating(self, 0, in[0]);
    check_integer(self, 1, in[1]);
    MG_CHECK(rows >= 0, "embedding_backward", "rows", "a non-negative row count", "{}", rows);
    Shape expected = in[1].shape();
    expected.push_back(in[0].dim() > 0 ? in[0].size(-1) : 0);
    MG_CHECK(in[0].shape() == expected, "embedding_backward", "grad",
             fmt::format("shape {} (ids' shape plus D)", shape_str(expected)), "{}",
             shape_str(in[0].shape()));
    return OutputSpec{{rows, expected.back()}, in[0].dtype()};
  };
  op.backward_reads = {"ids"};
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{embedding(ctx.grad_out, ctx.input(1)), Tensor()};
  };
  op.kernels = MG_KERNELS(embedding_backward);
  op.reference = embedding_backward_reference;
  op.describe_attrs = [](const std::any& attrs) {
    return fmt::format("rows={}",
                       attrs_as<EmbeddingBackwardAttrs>("embedding_backward", attrs).rows);
  };
  op.cases = embedding_backward_cases;
  op.error_cases = embedding_backward_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
