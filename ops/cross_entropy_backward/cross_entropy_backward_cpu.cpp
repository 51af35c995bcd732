// cross_entropy_backward on the CPU: check every target first (and count the rows a mean
// divides by), then each row's softmax minus its one-hot target, scaled by its upstream
// gradient; rows split across threads, each writing its own rows (no reduction across rows).
//   N rows, V classes; logits [N, V], targets [N], grad_out [] or [N] -> dlogits [N, V]
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/ids.h"
#include "cross_entropy/cross_entropy.h"
#include "cross_entropy/cross_entropy_row.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T, typename Id>
void cross_entropy_backward_rows(const Tensor& logits, const Tensor& targets,
                                 const Tensor& grad_out, const CrossEntropyOptions& options,
                                 Tensor& out) {
  const std::int64_t classes = logits.shape().back(), rows = targets.numel();
  const Id* target = targets.data<Id>();
  const std::int64_t counted = check_targets_in_range(
      "cross_entropy_backward", target, targets.shape(), classes, options.ignore_index);
  const T* x = logits.data<T>();    // [N, V]
  const T* g = grad_out.data<T>();  // [] or [N]
  T* dx = out.data<T>();            // [N, V]
  const bool per_row = options.reduction == Reduction::none;
  // The one upstream gradient of every row for mean and sum (unused when no row counts).
  double shared = 0;
  if (!per_row) {
    shared = static_cast<double>(g[0]);
    if (options.reduction == Reduction::mean && counted > 0) shared /= static_cast<double>(counted);
  }
  const int parts = threads_for(rows * classes);
  parallel_for(parts, [&](int part) {
    const Range r = part_range(rows, parts, part);
    for (std::int64_t i = r.begin; i < r.end; ++i) {
      const auto t = static_cast<std::int64_t>(target[i]);
      T* d = dx + i * classes;  // (V,)
      if (t == options.ignore_index) {
        std::fill(d, d + classes, T(0));
        continue;
      }
      const T* row = x + i * classes;  // (V,)
      const RowSoftmax<T> s = row_softmax(row, classes);
      const T scale = static_cast<T>(per_row ? static_cast<double>(g[i]) : shared);
      const T inv_sum = static_cast<T>(1.0 / s.sum_exp);
      for (std::int64_t v = 0; v < classes; ++v)
        d[v] = scale * (std::exp(row[v] - s.max) * inv_sum);
      d[t] = scale * (std::exp(row[t] - s.max) * inv_sum - T(1));
    }
  });
}

}  // namespace

void cross_entropy_backward_cpu(const KernelContext& ctx) {
  const auto& options = ctx.attrs_as<CrossEntropyOptions>();
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(), [&]<typename Id>() {
      cross_entropy_backward_rows<T, Id>(ctx.inputs[0], ctx.inputs[1], ctx.inputs[2], options,
                                         ctx.out);
    });
  });
}

// The naive reference, written apart from the kernel (no common/ids.h, no row helpers):
// element (i, v) is g_i (softmax(x_i)_v - [v == t_i]), the softmax from the row's max.
Tensor cross_entropy_backward_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& logits = inputs[0];    // [..., V]
  const Tensor& targets = inputs[1];   // [...]
  const Tensor& grad_out = inputs[2];  // [] or [...]
  const auto& options = attrs_as<CrossEntropyOptions>("cross_entropy_backward_reference", attrs);
  const std::int64_t classes = logits.shape()[logits.shape().size() - 1];
  Tensor out = Tensor::empty(logits.shape(), logits.dtype());
  dispatch_float(logits.dtype(), [&]<typename T>() {
    dispatch_ids(targets.dtype(), [&]<typename Id>() {
      const T* x = logits.data<T>();
      const Id* target = targets.data<Id>();
      const T* g = grad_out.data<T>();
      T* dst = out.data<T>();
      const std::int64_t rows = targets.numel();
      std::int64_t counted = 0;
      for (std::int64_t i = 0; i < rows; ++i) {
        const auto t = static_cast<std::int64_t>(target[i]);
        if (t == options.ignore_index) continue;
        MG_CHECK(t >= 0 && t < classes, "cross_entropy_backward_reference", "targets",
                 fmt::format("targets in [0, {})", classes), "{} at flat position {}", t, i);
        ++counted;
      }
      for (std::int64_t i = 0; i < rows; ++i) {
        const auto t = static_cast<std::int64_t>(target[i]);
        T scale = options.reduction == Reduction::none ? g[i] : g[0];
        if (options.reduction == Reduction::mean) scale /= static_cast<T>(counted);
        T max = 0, sum = 0;
        if (t != options.ignore_index) {
          max = x[i * classes];
          for (std::int64_t v = 0; v < classes; ++v) max = std::max(max, x[i * classes + v]);
          for (std::int64_t v = 0; v < classes; ++v) sum += std::exp(x[i * classes + v] - max);
        }
        for (std::int64_t v = 0; v < classes; ++v) {
          if (t == options.ignore_index) {
            dst[i * classes + v] = 0;
            continue;
          }
          const T p = std::exp(x[i * classes + v] - max) / sum;
          dst[i * classes + v] = scale * (p - (v == t ? T(1) : T(0)));
        }
      }
    });
  });
  return out;
}

}  // namespace mg
