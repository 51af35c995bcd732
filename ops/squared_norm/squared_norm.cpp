// squared_norm: the sum of the squares of every element, a scalar.
//   x [..X] -> out []; out = sum_i x_i^2, accumulated in double, in a fixed order.
// For global gradient-norm clipping (optim/clip.h). Not differentiable.
#include "squared_norm/squared_norm.h"

#include "common/define_op.h"

namespace mg {

MG_DECLARE_KERNELS(squared_norm);
Tensor squared_norm_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor squared_norm(const Tensor& x) {
  static const OpDef& op = builtin_op("squared_norm");
  return apply_op(op, {x}, {});
}

namespace {

std::vector<OpCase> squared_norm_cases() {
  using I = InputSpec;
  // Chunks of 4096 (squared_norm_chunks.h): one partial chunk, several, and many across
  // threads.
  std::vector<OpCase> cases = {
      {"vector", {I::real({7})}, {}},
      {"matrix", {I::real({3, 5})}, {}},
      {"rank3", {I::real({2, 3, 4})}, {}},
      {"size1", {I::real({1, 1})}, {}},
      {"scalar", {I::real({})}, {}},
      {"empty", {I::real({0, 3})}, {}},  // 0
      {"chunk_edge", {I::real({4097})}, {}},
      {"threaded", {I::real({300, 1000})}, {}},
      {"zeros", {I::real({5}).with_values({0, -0.0, 0, 0, 0})}, {}},
  };
  // 2^20 equal squares: summed in f32 one by one they would stall far below the total
  // (each 1.21 is under half an ulp of 2^20 * 1.21 in f32), in double they do not.
  cases.push_back(
      {"many_equal", {I::real({1024, 1024}).with_values(std::vector<double>(1 << 20, 1.1))}, {}});
  for (OpCase& c : cases) c.inputs[0].no_grad();
  return cases;
}

}  // namespace

void register_squared_norm(OpRegistry& registry) {
  OpDef op;
  op.name = "squared_norm";
  op.summary = "sum of squares of every element, accumulated in double (for gradient clipping)";
  op.inputs = {"x"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any&) {
    check_floating(self, 0, in[0]);
    return OutputSpec{{}, in[0].dtype()};
  };
  op.kernels = MG_KERNELS(squared_norm);
  op.reference = squared_norm_reference;
  op.cases = squared_norm_cases;
  registry.add(std::move(op));
}

}  // namespace mg
