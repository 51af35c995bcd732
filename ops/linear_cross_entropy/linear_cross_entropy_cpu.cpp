// linear_cross_entropy on the CPU. Legend: N rows, D width, V vocabulary, R rows per chunk.
//   x [N, D], w [D, V], targets [N] -> loss []; saved (when a backward can come): dx [N, D],
//   dw [D, V], the gradients for an upstream 1.
// 1. Check every target and count the rows not ignored (the mean's divisor) before any work.
// 2. Per chunk of R rows, in one [R, V] buffer from the caching allocator, allocated once:
//      logits = x_c @ w                       (GEMM, BLAS threads)
//      per row: max, sum of exp, loss = lse - logit[target]; in place, when saving,
//      dlogits = (softmax - onehot) * scale   (rows in parallel, OpenMP)
//      dx_c = dlogits @ wᵀ                    (GEMM, straight into dx)
//      dw  += x_cᵀ @ dlogits                  (GEMM with beta = 1, in T: f32 or wider)
// 3. The loss: the rows' losses summed in double in row order, whatever R and the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/ids.h"
#include "linear_cross_entropy/linear_cross_entropy.h"
#include "linear_cross_entropy/linear_cross_entropy_common.h"
#include "minigraph/cpu.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

// C = op(A) op(B), or += when accumulate; an empty inner size K writes zeros (or nothing),
// which BLAS is not asked to do.
template <typename T>
void product(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k,
             bool transpose_a, bool transpose_b, bool accumulate) {
  if (k == 0) {
    if (!accumulate) std::fill(c, c + m * n, T(0));
  } else if (accumulate) {
    cpu::gemm_accumulate(a, b, c, m, n, k, transpose_a, transpose_b);
  } else {
    cpu::gemm(a, b, c, m, n, k, transpose_a, transpose_b);
  }
}

// One chunk's rows: each row's loss into row_loss (0 for an ignored row) and, when
// `gradients`, the row's logits replaced by (softmax - onehot) * scale (zeros when ignored).
// One thread owns each row, so the bits do not depend on the thread count.
template <typename T, typename Id>
void softmax_rows(T* logits, const Id* targets, std::int64_t rows, std::int64_t vocab,
                  std::int64_t ignore_index, bool gradients, double scale, double* row_loss) {
  const int parts = threads_for(rows * vocab);
  parallel_for(parts, [&](int part) {
    const Range range = part_range(rows, parts, part);
    for (std::int64_t r = range.begin; r < range.end; ++r) {
      T* row = logits + r * vocab;  // (V,)
      const auto target = static_cast<std::int64_t>(targets[r]);
      if (target == ignore_index) {
        row_loss[r] = 0;
        if (gradients) std::fill(row, row + vocab, T(0));
        continue;
      }
      T top = row[0];
      for (std::int64_t v = 1; v < vocab; ++v) top = row[v] > top ? row[v] : top;
      const T target_logit = row[target];
      double total = 0;  // the sum of exponentials, in double for f32 too
      if (gradients) {
        for (std::int64_t v = 0; v < vocab; ++v) {
          const T e = std::exp(row[v] - top);
          row[v] = e;
          total += e;
        }
      } else {
        for (std::int64_t v = 0; v < vocab; ++v) total += std::exp(row[v] - top);
      }
      row_loss[r] = static_cast<double>(top) + std::log(total) - static_cast<double>(target_logit);
      if (gradients) {
        const T factor = static_cast<T>(scale / total);
        for (std::int64_t v = 0; v < vocab; ++v) row[v] *= factor;
        row[target] -= static_cast<T>(scale);
      }
    }
  });
}

template <typename T, typename Id>
void linear_cross_entropy_run(const KernelContext& ctx) {
  const auto& o = ctx.attrs_as<LinearCrossEntropyOptions>();
  const Tensor& x = ctx.inputs[0];        // [N, D] (any leading axes)
  const Tensor& w = ctx.inputs[1];        // [D, V]
  const Tensor& targets = ctx.inputs[2];  // [N]
  const std::int64_t width = w.size(0), vocab = w.size(1), rows = targets.numel();
  const std::int64_t counted = check_targets_in_range(ctx.op.name, targets.data<Id>(),
                                                      targets.shape(), vocab, o.ignore_index);

  const bool want_dx = ctx.saved != nullptr && x.requires_grad();
  const bool want_dw = ctx.saved != nullptr && w.requires_grad();
  const bool gradients = want_dx || want_dw;
  Tensor dx, dw;
  if (want_dx) dx = Tensor::empty(x.shape(), x.dtype());       // [N, D]
  if (want_dw) dw = Tensor::empty({width, vocab}, w.dtype());  // [D, V]
  // The mean's 1 / count (no row counted: no gradient flows, the loss is NaN as in PyTorch).
  const double scale = o.reduction == Reduction::mean
                           ? (counted > 0 ? 1.0 / static_cast<double>(counted) : 0.0)
                           : 1.0;

  const std::int64_t chunk = linear_cross_entropy_chunk_rows(
      o.chunk_bytes, vocab, static_cast<std::int64_t>(sizeof(T)), rows);
  Tensor buffer = Tensor::empty({chunk, vocab}, x.dtype());  // [R, V]: logits, then dlogits
  Tensor losses = Tensor::empty({chunk}, DType::f64);        // [R]
  T* logits = buffer.data<T>();
  double* row_loss = losses.data<double>();
  const T* xs = x.data<T>();
  const T* ws = w.data<T>();
  const Id* ts = targets.data<Id>();
  double loss = 0;
  for (std::int64_t begin = 0; begin < rows; begin += chunk) {
    const std::int64_t r = std::min(chunk, rows - begin);
    const T* x_chunk = xs + begin * width;  // [r, D]
    product(x_chunk, ws, logits, r, vocab, width, false, false, false);
    softmax_rows(logits, ts + begin, r, vocab, o.ignore_index, gradients, scale, row_loss);
    for (std::int64_t i = 0; i < r; ++i) loss += row_loss[i];
    if (want_dx)
      product(logits, ws, dx.data<T>() + begin * width, r, width, vocab, false, true, false);
    if (want_dw) product(x_chunk, logits, dw.data<T>(), width, vocab, r, true, false, begin > 0);
  }
  if (want_dw && rows == 0) std::memset(dw.raw_data(), 0, dw.nbytes());
  if (o.reduction == Reduction::mean) loss /= static_cast<double>(counted);
  ctx.out.data<T>()[0] = static_cast<T>(loss);
  if (ctx.saved != nullptr) {
    ctx.saved->push_back(dx);
    ctx.saved->push_back(dw);
  }
}

}  // namespace

void linear_cross_entropy_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[2].dtype(),
                 [&]<typename Id>() { linear_cross_entropy_run<T, Id>(ctx); });
  });
}

}  // namespace mg
