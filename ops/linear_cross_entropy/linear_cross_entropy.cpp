// linear_cross_entropy: cross_entropy(x @ w, targets), fused and chunked.
//   N rows (x's leading axes flattened), D model width, V vocabulary;
//   x [..., D], w [D, V], targets [...] (i32, i64: ids in [0, V) or ignore_index) -> []
// The [N, V] logits never exist whole: the kernels walk chunks of rows (options.chunk_bytes).
// When a backward can follow (KernelContext::saved), the forward also computes dx [..., D]
// and dw [D, V] for an upstream gradient of 1 and saves them; the backward rule hands them on
// for an upstream 1 (a loss's backward()) and otherwise scales them (mul, out of place, so
// retain_graph can read them again). The backward's GEMMs stay in the forward for speed: in
// the backward they would need the logits' gradient, so either the [N, V] logits kept (what
// this op exists to avoid) or the logits computed a second time, a fourth GEMM as large as
// each of the three (x @ w, dlogits @ wᵀ, xᵀ @ dlogits): +1/3 of the head's FLOPs.
#include "linear_cross_entropy/linear_cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "binary/binary.h"
#include "common/define_op.h"
#include "linear_cross_entropy/linear_cross_entropy_common.h"

namespace mg {

MG_DECLARE_KERNELS(linear_cross_entropy);

namespace {
constexpr const char* kOp = "linear_cross_entropy";
using Options = LinearCrossEntropyOptions;
}  // namespace

Tensor linear_cross_entropy(const Tensor& x, const Tensor& w, const Tensor& targets,
                            LinearCrossEntropyOptions options) {
  static const OpDef& op = builtin_op(kOp);
  return apply_op(op, {x, w, targets}, options);
}

std::int64_t linear_cross_entropy_chunk_rows(std::int64_t chunk_bytes, std::int64_t vocab,
                                             std::int64_t element_size, std::int64_t rows) {
  if (rows == 0) return 0;
  // w [0, V] holds no element whatever V is, so V * element_size is checked, not assumed.
  const std::int64_t row_bytes = checked_mul(vocab, element_size, kOp, "V x element size");
  const std::int64_t fit = row_bytes > 0 ? chunk_bytes / row_bytes : rows;
  return std::clamp<std::int64_t>(fit, 1, rows);
}

namespace {

OutputSpec linear_cross_entropy_infer(const OpDef& self, std::span<const Tensor> in,
                                      const std::any& attrs) {
  const auto& o = attrs_as<Options>(kOp, attrs);
  const Tensor& x = in[0];
  const Tensor& w = in[1];
  const Tensor& targets = in[2];
  MG_CHECK(o.reduction != Reduction::none, kOp, "reduction",
           "mean or sum (for one loss per row, use matmul + cross_entropy with reduction none)",
           "none");
  MG_CHECK(o.chunk_bytes > 0, kOp, "chunk_bytes", "a positive byte budget", "{}", o.chunk_bytes);
  check_floating(self, 0, x);
  check_floating(self, 1, w);
  check_same_dtype(self, 1, w, x.dtype());
  check_integer(self, 2, targets);
  check_rank(self, 0, x, 1, 8);
  check_rank(self, 1, w, 2, 2);
  MG_CHECK(x.size(-1) == w.size(0), kOp, "w",
           fmt::format("{} rows (x's last axis D, x {})", x.size(-1), shape_str(x.shape())),
           "{} (w {})", w.size(0), shape_str(w.shape()));
  const Shape expected(x.shape().begin(), x.shape().end() - 1);
  MG_CHECK(targets.shape() == expected, kOp, "targets",
           fmt::format("shape {} (x's shape without its last axis)", shape_str(expected)), "{}",
           shape_str(targets.shape()));
  return {Shape{}, x.dtype()};
}

std::vector<Tensor> linear_cross_entropy_backward(const BackwardContext& ctx) {
  // The saved gradients are those of an upstream 1; grad_out is the loss's scalar upstream.
  MG_CHECK(ctx.saved.size() == 2, kOp, "saved tensors", "dx and dw saved by the forward",
           "{} tensors", ctx.saved.size());
  // The upstream 1 of a loss backward() starts from: the saved gradients are the answer, with
  // no full-size pass over dx [N, D] and dw [D, V] to multiply them by 1.
  const bool upstream_one = ctx.grad_out.item() == 1.0;
  std::vector<Tensor> grads(3);
  for (std::size_t i = 0; i < 2; ++i) {
    if (!ctx.needs_grad(i)) continue;
    MG_CHECK(ctx.saved[i].defined(), kOp, ctx.op.inputs[i],
             "a gradient saved by the forward (the input took no gradient then)", "none");
    grads[i] = upstream_one ? ctx.saved[i] : mul(ctx.saved[i], ctx.grad_out);
  }
  return grads;
}

// The naive reference: the whole [N, V] logits with plain loops, then a log-sum-exp per row.
Tensor linear_cross_entropy_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const auto& o = attrs_as<Options>(kOp, attrs);
  const Tensor& x = inputs[0];        // [..., D]
  const Tensor& w = inputs[1];        // [D, V]
  const Tensor& targets = inputs[2];  // [...]
  const std::int64_t width = w.shape()[0], vocab = w.shape()[1], rows = targets.numel();
  Tensor out = Tensor::empty({}, x.dtype());
  dispatch_float(x.dtype(), [&]<typename T>() {
    dispatch_ids(targets.dtype(), [&]<typename Id>() {
      const T* xs = x.data<T>();
      const T* ws = w.data<T>();
      const Id* ts = targets.data<Id>();
      std::vector<T> logits(static_cast<std::size_t>(rows * vocab));
      for (std::int64_t i = 0; i < rows; ++i) {
        for (std::int64_t v = 0; v < vocab; ++v) {
          T sum = 0;
          for (std::int64_t d = 0; d < width; ++d) sum += xs[i * width + d] * ws[d * vocab + v];
          logits[i * vocab + v] = sum;
        }
      }
      double loss = 0;
      std::int64_t counted = 0;
      for (std::int64_t i = 0; i < rows; ++i) {
        const auto t = static_cast<std::int64_t>(ts[i]);
        if (t == o.ignore_index) continue;
        MG_CHECK(t >= 0 && t < vocab, "linear_cross_entropy_reference", "targets",
                 fmt::format("targets in [0, {})", vocab), "target {} at flat position {}", t, i);
        const T* row = &logits[i * vocab];
        double top = row[0];
        for (std::int64_t v = 1; v < vocab; ++v) top = std::max(top, static_cast<double>(row[v]));
        double total = 0;
        for (std::int64_t v = 0; v < vocab; ++v) total += std::exp(row[v] - top);
        loss += top + std::log(total) - row[t];
        ++counted;
      }
      if (o.reduction == Reduction::mean) loss /= static_cast<double>(counted);
      out.data<T>()[0] = static_cast<T>(loss);
    });
  });
  return out;
}

std::vector<OpCase> linear_cross_entropy_cases() {
  using I = InputSpec;
  auto sum = [](std::int64_t chunk_bytes = Options{}.chunk_bytes) {
    return Options{Reduction::sum, kDefaultIgnoreIndex, chunk_bytes};
  };
  auto mean = [](std::int64_t chunk_bytes = Options{}.chunk_bytes) {
    return Options{Reduction::mean, kDefaultIgnoreIndex, chunk_bytes};
  };
  const std::vector<double> repeated = {2, 0, 2, 3, 2};
  // V = 4: a row of logits is 16 bytes in f32 and 32 in f64, so chunk_bytes 64 makes chunks
  // of 4 + 1 rows (f32) and 2 + 2 + 1 rows (f64): a last partial chunk either way.
  return {
      {"one_row", {I::real({1, 3}), I::real({3, 4}), I::ids({1}, 4)}, mean()},
      {"one_chunk",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_values(repeated)},
       mean()},
      {"chunks_of_one",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_values(repeated)},
       mean(1)},
      {"partial_last_chunk",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_values(repeated)},
       mean(64)},
      {"partial_last_chunk_sum",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_values(repeated)},
       sum(64)},
      {"btd_input", {I::real({2, 3, 4}), I::real({4, 5}), I::ids({2, 3}, 5)}, mean(48)},
      {"vocab_one", {I::real({3, 2}), I::real({2, 1}), I::ids({3}, 1)}, mean()},
      {"size_one_width", {I::real({4, 1}), I::real({1, 3}), I::ids({4}, 3)}, sum(24)},
      {"ignored_rows",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_values({-100, 1, -100, 1, 3})},
       mean(32)},
      {"ignored_rows_sum",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_values({-100, 1, -100, 1, 3})},
       sum()},
      // An ignore_index inside [0, V): those rows are ignored, as in PyTorch.
      {"ignore_index_in_range",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_values({1, 0, 1, 3, 2})},
       Options{Reduction::mean, 1, 1}},
      {"all_ignored_sum",
       {I::real({3, 2}), I::real({2, 4}), I::ids({3}, 4).with_values({-100, -100, -100})},
       sum()},
      {"all_targets_equal",
       {I::real({6, 3}), I::real({3, 5}), I::ids({6}, 5).with_values({4, 4, 4, 4, 4, 4})},
       mean(40)},
      {"i32_targets",
       {I::real({5, 3}), I::real({3, 4}), I::ids({5}, 4).with_dtype(DType::i32)},
       mean(64)},
      {"no_rows_sum", {I::real({0, 3}), I::real({3, 4}), I::ids({0}, 4)}, sum()},
      {"x_without_grad",
       {I::real({5, 3}).no_grad(), I::real({3, 4}), I::ids({5}, 4).with_values(repeated)},
       mean(64)},
      {"w_without_grad",
       {I::real({5, 3}), I::real({3, 4}).no_grad(), I::ids({5}, 4).with_values(repeated)},
       sum(64)},
      {"andrea_like", {I::real({2, 8, 16}), I::real({16, 40}), I::ids({2, 8}, 40)}, mean(1000), 64},
  };
}

std::vector<ErrorCase> linear_cross_entropy_error_cases() {
  using I = InputSpec;
  const Options sum{Reduction::sum};
  return {
      {"reduction_none",
       {I::real({3, 2}), I::real({2, 4}), I::ids({3}, 4)},
       Options{Reduction::none},
       "use matmul + cross_entropy"},
      {"w_rank",
       {I::real({3, 2}), I::real({2}), I::ids({3}, 4)},
       sum,
       "expected rank 2, got rank 1"},
      {"width_mismatch",
       {I::real({3, 2}), I::real({3, 4}), I::ids({3}, 4)},
       sum,
       "x's last axis D"},
      {"targets_shape",
       {I::real({3, 2}), I::real({2, 4}), I::ids({4}, 4)},
       sum,
       "x's shape without its last axis"},
      {"target_too_large",
       {I::real({2, 3, 2}), I::real({2, 4}), I::ids({2, 3}, 4).with_values({0, 1, 2, 3, 4, 0})},
       sum,
       "got 4 at position [1, 1]"},
      {"target_negative",
       {I::real({3, 2}), I::real({2, 4}), I::ids({3}, 4).with_values({0, -1, -100})},
       sum,
       "got -1 at position [1]"},
      {"chunk_bytes_zero",
       {I::real({3, 2}), I::real({2, 4}), I::ids({3}, 4)},
       Options{Reduction::mean, kDefaultIgnoreIndex, 0},
       "positive byte budget"},
  };
}

}  // namespace

void register_linear_cross_entropy(OpRegistry& registry) {
  OpDef op;
  op.name = kOp;
  op.summary = "cross_entropy(x @ w, targets) in chunks of rows, never the whole [N, V] logits";
  op.inputs = {"x", "w", "targets"};
  op.infer = linear_cross_entropy_infer;
  op.backward = linear_cross_entropy_backward;
  op.saves_for_backward = true;
  op.kernels = MG_KERNELS(linear_cross_entropy);
  op.reference = linear_cross_entropy_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& o = attrs_as<Options>(kOp, attrs);
    return fmt::format("reduction={}, ignore_index={}, chunk_bytes={}",
                       o.reduction == Reduction::mean  ? "mean"
                       : o.reduction == Reduction::sum ? "sum"
                                                       : "none",
                       o.ignore_index, o.chunk_bytes);
  };
  op.cases = linear_cross_entropy_cases;
  op.error_cases = linear_cross_entropy_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
