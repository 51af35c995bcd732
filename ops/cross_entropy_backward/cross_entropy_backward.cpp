// cross_entropy_backward: dlogits[i, v] = g_i · (softmax(logits_i)_v - [v == targets_i])
//   N rows, V classes; logits [..., V], targets [...], grad_out [] (mean, sum) or [...] (none)
//   -> dlogits [..., V]; g_i = grad_out / (rows not ignored) (mean), grad_out (sum),
//   grad_out[i] (none); rows whose target is ignore_index are exactly zero.
// It has no backward of its own (a second derivative of the loss is not needed yet).
#include "cross_entropy_backward/cross_entropy_backward.h"

#include "common/define_op.h"
#include "cross_entropy/cross_entropy_rule.h"

namespace mg {

MG_DECLARE_KERNELS(cross_entropy_backward);
Tensor cross_entropy_backward_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& grad_out,
                              CrossEntropyOptions options) {
  static const OpDef& op = builtin_op("cross_entropy_backward");
  return apply_op(op, {logits, targets, grad_out}, options);
}

namespace {

std::vector<OpCase> cross_entropy_backward_cases() {
  using I = InputSpec;
  using O = CrossEntropyOptions;
  constexpr auto mean = Reduction::mean, sum = Reduction::sum, none = Reduction::none;
  constexpr std::int64_t kIgnore = kDefaultIgnoreIndex;
  return std::vector<OpCase>{
      {"rows_mean", {I::real({6, 5}), I::ids({6}, 5), I::real({})}, O{mean}},
      {"rows_sum", {I::real({6, 5}), I::ids({6}, 5), I::real({})}, O{sum}},
      {"rows_none", {I::real({6, 5}), I::ids({6}, 5), I::real({6})}, O{none}},
      {"batch_time_none_i32",
       {I::real({2, 3, 7}), I::ids({2, 3}, 7).with_dtype(DType::i32), I::real({2, 3})},
       O{none}},
      {"one_class", {I::real({4, 1}), I::ids({4}, 1), I::real({})}, O{mean}},
      {"rank1_logits", {I::real({5}), I::ids({}, 5).with_values({4}), I::real({})}, O{sum}},
      {"ignored_rows_mean",
       {I::real({5, 4}), I::ids({5}, 4).with_values({1, kIgnore, 3, kIgnore, 1}), I::real({})},
       O{mean}},
      {"ignored_rows_none",
       {I::real({4, 3}), I::ids({4}, 3).with_values({kIgnore, 2, kIgnore, 2}), I::real({4})},
       O{none}},
      {"all_ignored_mean",  // no counted row: the gradient is zero, not NaN
       {I::real({2, 3}), I::ids({2}, 3).with_values({kIgnore, kIgnore}), I::real({})},
       O{mean}},
      {"ignore_index_3",
       {I::real({5, 4}), I::ids({5}, 4).with_values({0, 3, 1, 3, 2}), I::real({})},
       O{mean, 3}},
      {"large_logits",
       {I::real({2, 3}).with_values({1e4, 1e4 - 1, -1e4, -2e4, 2e4, 2e4 - 0.5}),
        I::ids({2}, 3).with_values({1, 0}), I::real({2})},
       O{none}},
      {"vocab_rows", {I::real({4, 8, 50}), I::ids({4, 8}, 50), I::real({})}, O{mean}},
      {"no_rows", {I::real({0, 5}), I::ids({0}, 5), I::real({})}, O{mean}},
  };
}

std::vector<ErrorCase> cross_entropy_backward_error_cases() {
  using I = InputSpec;
  using O = CrossEntropyOptions;
  return std::vector<ErrorCase>{
      {"target_too_large",
       {I::real({2, 3}), I::ids({2}, 3).with_values({0, 3}), I::real({})},
       O{},
       "expected ids in [0, 3) or ignore_index -100, got 3 at position [1]"},
      {"grad_out_shape",
       {I::real({2, 3}), I::ids({2}, 3), I::real({2})},
       O{},
       "shape [] (the loss's shape for reduction mean)"},
      {"grad_out_shape_none",
       {I::real({2, 3}), I::ids({2}, 3), I::real({})},
       O{Reduction::none},
       "shape [2] (the loss's shape for reduction none)"},
      {"targets_shape",
       {I::real({2, 3}), I::ids({3}, 3), I::real({})},
       O{},
       "logits' shape without its last axis"},
  };
}

}  // namespace

void register_cross_entropy_backward(OpRegistry& registry) {
  OpDef op;
  op.name = "cross_entropy_backward";
  op.summary = "the logits gradient of cross_entropy: g · (softmax(logits) - onehot(targets))";
  op.inputs = {"logits", "targets", "grad_out"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const auto& options = attrs_as<CrossEntropyOptions>("cross_entropy_backward", attrs);
    const Shape targets_shape = cross_entropy_check_inputs(self, in[0], in[1]);
    check_floating(self, 2, in[2]);
    check_same_dtype(self, 2, in[2], in[0].dtype());
    const Shape expected = options.reduction == Reduction::none ? targets_shape : Shape{};
    MG_CHECK(in[2].shape() == expected, self.name, "grad_out",
             fmt::format("shape {} (the loss's shape for reduction {})", shape_str(expected),
                         reduction_name(options.reduction)),
             "{}", shape_str(in[2].shape()));
    return OutputSpec{in[0].shape(), in[0].dtype()};
  };
  op.kernels = MG_KERNELS(cross_entropy_backward);
  op.reference = cross_entropy_backward_reference;
  op.describe_attrs = describe_cross_entropy_options;
  // No backward rule, so the harness checks forward values (and other devices against the
  // CPU); the gradients it computes are checked through cross_entropy's gradcheck.
  op.cases = cross_entropy_backward_cases;
  op.error_cases = cross_entropy_backward_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
