// The shape rule and OpDef skeleton of the elementwise unary ops (see unary.h).
#include "common/unary.h"

#include <utility>

#include "common/broadcast_layout.h"

namespace mg {

OutputSpec unary_infer(const OpDef& self, std::span<const Tensor> in, const std::any&) {
  check_floating(self, 0, in[0]);
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

OpDef unary_op(std::string name, std::string summary) {
  OpDef op;
  op.name = std::move(name);
  op.summary = std::move(summary);
  op.inputs = {"x"};
  op.infer = unary_infer;
  op.out_may_alias_input = true;
  // Views on every device; on CUDA up to the rank its strided kernel carries.
  op.takes_layout = [](std::size_t, const Tensor& x) {
    return x.device().is_cpu() || x.dim() <= kMaxBroadcastGroups;
  };
  return op;
}

std::vector<OpCase> unary_cases(const std::function<InputSpec(Shape)>& input,
                                const std::any& attrs) {
  return std::vector<OpCase>{
      {"vector", {input({7})}, attrs},
      {"matrix", {input({3, 4})}, attrs},
      {"rank3", {input({2, 3, 4})}, attrs},
      {"size_one_dims", {input({1, 1})}, attrs},
      {"scalar", {input({})}, attrs},
      {"empty", {input({0, 3})}, attrs},
      {"andrea_activations", {input({2, 16, 8})}, attrs},
      // 76800 elements: past threads_for's 32K per thread, so several threads each take a part
      // (on a machine with more than one core); 16 sampled gradient elements.
      {"threaded", {input({256, 300})}, attrs, 16},
  };
}

}  // namespace mg
