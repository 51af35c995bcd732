// cross_entropy: loss_i = logsumexp(logits_i) - logits_i[targets_i], then mean, sum or none
//   N rows (the product of the leading axes, B·T for a [B, T, V] batch), V classes;
//   logits [..., V], targets [...] (i32 or i64, each in [0, V) or ignore_index)
//   -> [] (mean over the rows not ignored, sum) or [...] (none; ignored rows give 0)
// Backward: cross_entropy_backward, g_i · (softmax(logits_i) - onehot(targets_i)) per row,
// recomputing the softmax from the logits; targets get no gradient.
#include "cross_entropy/cross_entropy.h"

#include "common/define_op.h"
#include "cross_entropy/cross_entropy_rule.h"
#include "cross_entropy_backward/cross_entropy_backward.h"

namespace mg {

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::mean:
      return "mean";
    case Reduction::sum:
      return "sum";
    case Reduction::none:
      return "none";
  }
  return "?";
}

Shape cross_entropy_check_inputs(const OpDef& op, const Tensor& logits, const Tensor& targets) {
  check_floating(op, 0, logits);
  MG_CHECK(logits.dim() >= 1, op.name, "logits", "rank >= 1 (the last axis holds the classes)",
           "rank 0 (shape {})", shape_str(logits.shape()));
  check_integer(op, 1, targets);
  const Shape expected(logits.shape().begin(), logits.shape().end() - 1);
  MG_CHECK(targets.shape() == expected, op.name, "targets",
           fmt::format("shape {} (logits' shape without its last axis)", shape_str(expected)), "{}",
           shape_str(targets.shape()));
  return expected;
}

std::string describe_cross_entropy_options(const std::any& attrs) {
  const auto& options = attrs_as<CrossEntropyOptions>("cross_entropy", attrs);
  return fmt::format("reduction={}, ignore_index={}", reduction_name(options.reduction),
                     options.ignore_index);
}

MG_DECLARE_KERNELS(cross_entropy);
Tensor cross_entropy_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, CrossEntropyOptions options) {
  static const OpDef& op = builtin_op("cross_entropy");
  return apply_op(op, {logits, targets}, options);
}

namespace {

std::vector<OpCase> cross_entropy_cases() {
  using I = InputSpec;
  using O = CrossEntropyOptions;
  constexpr auto mean = Reduction::mean, sum = Reduction::sum, none = Reduction::none;
  constexpr std::int64_t kIgnore = kDefaultIgnoreIndex;
  // Logits of magnitude 1e4: exp(x) overflows even in f64, exp(x - max) does not.
  const std::vector<double> large = {1e4,       1e4 - 1, -1e4, 9999.5,   -2e4, 2e4,
                                     2e4 - 0.5, 0,       -3e3, -3e3 + 2, 5e3,  -1e4};
  return std::vector<OpCase>{
      {"rows_mean", {I::real({6, 5}), I::ids({6}, 5)}, O{mean}},
      {"rows_sum", {I::real({6, 5}), I::ids({6}, 5)}, O{sum}},
      {"rows_none", {I::real({6, 5}), I::ids({6}, 5)}, O{none}},
      {"batch_time_mean", {I::real({2, 3, 7}), I::ids({2, 3}, 7)}, O{mean}},
      {"batch_time_none", {I::real({2, 3, 7}), I::ids({2, 3}, 7)}, O{none}},
      {"batch_time_sum_i32",
       {I::real({3, 2, 4}), I::ids({3, 2}, 4).with_dtype(DType::i32)},
       O{sum}},
      {"one_class", {I::real({4, 1}), I::ids({4}, 1)}, O{mean}},  // loss 0, gradient 0
      {"one_class_none", {I::real({3, 1}), I::ids({3}, 1)}, O{none}},
      {"one_row", {I::real({1, 6}), I::ids({1}, 6)}, O{mean}},
      {"one_row_none", {I::real({1, 6}), I::ids({1}, 6)}, O{none}},
      {"rank1_logits", {I::real({5}), I::ids({}, 5).with_values({3})}, O{mean}},
      {"rank1_logits_none", {I::real({5}), I::ids({}, 5).with_values({1})}, O{none}},
      {"repeated_targets",
       {I::real({6, 4}), I::ids({6}, 4).with_values({2, 2, 2, 2, 0, 2})},
       O{mean}},
      {"ignored_rows_mean",
       {I::real({5, 4}), I::ids({5}, 4).with_values({1, kIgnore, 3, kIgnore, 0})},
       O{mean}},
      {"ignored_rows_sum",
       {I::real({5, 4}), I::ids({5}, 4).with_values({kIgnore, 2, 2, 0, kIgnore})},
       O{sum}},
      {"ignored_rows_none",
       {I::real({2, 3, 4}), I::ids({2, 3}, 4).with_values({3, kIgnore, 0, kIgnore, kIgnore, 1})},
       O{none}},
      {"all_ignored_sum",  // 0, and an all-zero gradient (the mean would be NaN)
       {I::real({3, 4}), I::ids({3}, 4).with_values({kIgnore, kIgnore, kIgnore})},
       O{sum}},
      {"ignore_index_3",  // ignore_index inside [0, V): those rows are skipped all the same
       {I::real({5, 4}), I::ids({5}, 4).with_values({0, 3, 1, 3, 2})},
       O{mean, 3}},
      {"ignore_index_0_none",
       {I::real({4, 3}), I::ids({4}, 3).with_values({0, 2, 0, 1}).with_dtype(DType::i32)},
       O{none, 0}},
      {"large_logits_mean",
       {I::real({3, 4}).with_values(large), I::ids({3}, 4).with_values({2, 1, 0})},
       O{mean}},
      {"large_logits_none",
       {I::real({3, 4}).with_values(large), I::ids({3}, 4).with_values({0, 3, 1})},
       O{none}},
      {"vocab_rows", {I::real({4, 8, 50}), I::ids({4, 8}, 50)}, O{mean}, 512},
      {"no_rows_sum", {I::real({0, 5}), I::ids({0}, 5)}, O{sum}},  // 0
  };
}

std::vector<ErrorCase> cross_entropy_error_cases() {
  using I = InputSpec;
  using O = CrossEntropyOptions;
  return std::vector<ErrorCase>{
      {"target_too_large",
       {I::real({2, 3, 5}), I::ids({2, 3}, 5).with_values({0, 1, 2, 3, 4, 9})},
       O{},
       "expected ids in [0, 5) or ignore_index -100, got 9 at position [1, 2]"},
      {"target_negative",
       {I::real({3, 4}), I::ids({3}, 4).with_values({0, -1, 2})},
       O{},
       "got -1 at position [1]"},
      {"default_ignore_with_other_index",
       {I::real({3, 4}), I::ids({3}, 4).with_values({0, -100, 2}).with_dtype(DType::i32)},
       O{Reduction::sum, 3},
       "ignore_index 3, got -100 at position [1]"},
      {"targets_shape",
       {I::real({3, 4}), I::ids({4}, 4)},
       O{},
       "shape [3] (logits' shape without its last axis)"},
      {"rank0_logits", {I::real({}), I::ids({}, 1)}, O{}, "rank >= 1"},
  };
}

}  // namespace

void register_cross_entropy(OpRegistry& registry) {
  OpDef op;
  op.name = "cross_entropy";
  op.summary = "softmax cross-entropy: logits [..., V] x targets [...] -> [] (mean, sum) or [...]";
  op.inputs = {"logits", "targets"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const auto& options = attrs_as<CrossEntropyOptions>("cross_entropy", attrs);
    const Shape targets_shape = cross_entropy_check_inputs(self, in[0], in[1]);
    Shape out = options.reduction == Reduction::none ? targets_shape : Shape{};
    return OutputSpec{out, in[0].dtype()};
  };
  op.backward_reads = {"logits", "targets"};
  op.backward = [](const BackwardContext& ctx) {
    const auto& options = ctx.attrs_as<CrossEntropyOptions>();
    return std::vector<Tensor>{
        cross_entropy_backward(ctx.input(0), ctx.input(1), ctx.grad_out, options), Tensor()};
  };
  op.kernels = MG_KERNELS(cross_entropy);
  op.reference = cross_entropy_reference;
  op.describe_attrs = describe_cross_entropy_options;
  op.cases = cross_entropy_cases;
  op.error_cases = cross_entropy_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
