// cross_entropy on the CPU: check every target first (so a bad one throws before any work),
// then one loss per row, rows split across threads (each writes its own rows), then for mean
// and sum one serial sum of the row losses in row order, in double: the same bits for any
// thread count.
//   N rows, V classes; logits [N, V], targets [N] -> [] or [N]
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/ids.h"
#include "cross_entropy/cross_entropy.h"
#include "cross_entropy/cross_entropy_row.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T, typename Id>
void cross_entropy_rows(const Tensor& logits, const Tensor& targets,
                        const CrossEntropyOptions& options, Tensor& out) {
  const std::int64_t classes = logits.shape().back(), rows = targets.numel();
  const Id* target = targets.data<Id>();
  const std::int64_t counted = check_targets_in_range("cross_entropy", target, targets.shape(),
                                                      classes, options.ignore_index);
  const T* x = logits.data<T>();  // [N, V]
  const bool per_row = options.reduction == Reduction::none;
  // The row losses: straight into the output for none, else into a double scratch [N].
  Tensor losses = per_row ? Tensor() : Tensor::empty({rows}, DType::f64);
  double* loss = per_row ? nullptr : losses.data<double>();
  T* out_row = per_row ? out.data<T>() : nullptr;
  const int parts = threads_for(rows * classes);
  parallel_for(parts, [&](int part) {
    const Range r = part_range(rows, parts, part);
    for (std::int64_t i = r.begin; i < r.end; ++i) {
      const auto t = static_cast<std::int64_t>(target[i]);
      double value = 0;
      if (t != options.ignore_index) {
        const T* row = x + i * classes;  // (V,)
        value = row_loss(row, row_softmax(row, classes), t);
      }
      if (per_row)
        out_row[i] = static_cast<T>(value);
      else
        loss[i] = value;
    }
  });
  if (per_row) return;
  double total = 0;
  for (std::int64_t i = 0; i < rows; ++i) total += loss[i];
  if (options.reduction == Reduction::mean) {
    // PyTorch's mean over no counted row: 0 / 0, NaN.
    total = counted == 0 ? std::numeric_limits<double>::quiet_NaN()
                         : total / static_cast<double>(counted);
  }
  out.data<T>()[0] = static_cast<T>(total);
}

}  // namespace

void cross_entropy_cpu(const KernelContext& ctx) {
  const auto& options = ctx.attrs_as<CrossEntropyOptions>();
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(), [&]<typename Id>() {
      cross_entropy_rows<T, Id>(ctx.inputs[0], ctx.inputs[1], options, ctx.out);
    });
  });
}

// The naive reference, written apart from the kernel (no common/ids.h, no row helpers): every
// row's log-sum-exp from its max, in the inputs' dtype, then the plain mean or sum.
Tensor cross_entropy_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& logits = inputs[0];   // [..., V]
  const Tensor& targets = inputs[1];  // [...]
  const auto& options = attrs_as<CrossEntropyOptions>("cross_entropy_reference", attrs);
  const std::int64_t classes = logits.shape()[logits.shape().size() - 1];
  Shape shape;
  if (options.reduction == Reduction::none) {
    for (std::size_t axis = 0; axis + 1 < logits.shape().size(); ++axis)
      shape.push_back(logits.shape()[axis]);
  }
  Tensor out = Tensor::empty(shape, logits.dtype());
  dispatch_float(logits.dtype(), [&]<typename T>() {
    dispatch_ids(targets.dtype(), [&]<typename Id>() {
      const T* x = logits.data<T>();
      const Id* target = targets.data<Id>();
      T* dst = out.data<T>();
      T total = 0;
      std::int64_t counted = 0;
      for (std::int64_t i = 0; i < targets.numel(); ++i) {
        const auto t = static_cast<std::int64_t>(target[i]);
        T loss = 0;
        if (t != options.ignore_index) {
          MG_CHECK(t >= 0 && t < classes, "cross_entropy_reference", "targets",
                   fmt::format("targets in [0, {})", classes), "{} at flat position {}", t, i);
          T max = x[i * classes];
          for (std::int64_t v = 0; v < classes; ++v) max = std::max(max, x[i * classes + v]);
          T sum = 0;
          for (std::int64_t v = 0; v < classes; ++v) sum += std::exp(x[i * classes + v] - max);
          loss = max + std::log(sum) - x[i * classes + t];
          ++counted;
        }
        if (options.reduction == Reduction::none) dst[i] = loss;
        total += loss;
      }
      if (options.reduction == Reduction::sum) dst[0] = total;
      if (options.reduction == Reduction::mean) dst[0] = total / static_cast<T>(counted);
    });
  });
  return out;
}

}  // namespace mg
