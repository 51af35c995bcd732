// layer_norm on the CPU: rows split across threads. A row's statistics take two passes over
// it in L1 (common/lanes.h's sum_mapped: 32 lanes summed in T, added in double): the mean, as
// the first element plus the mean of the deviations from it, then the squares about the mean;
// deviations keep the small spread of a row far from 0 (a case), and summing in T, not
// widening every element to double, took the forward from 2.22 to 2.02 ms (B = 8, T = 1,024,
// D = 768, 2-core Zen 3). The backward computes dx row by row and the weight and bias
// gradients as partial sums per chunk of kLayerNormRowsPerChunk rows, added in chunk order.
// Large outputs (y, dx) are streamed (common/streaming.h): 2.02 -> 1.8 ms for the forward's
// on Zen 3 (on a Sapphire Rapids Xeon, before the T lanes, it measured slower: 1.63 against
// 1.42 ms); the forward prefetches the next row (-> 1.48 ms; the backward, which reads two
// rows, measured slower with it: 3.05 -> 3.3 ms).
//   N rows of D; see layer_norm_kernels.h
#include <cmath>
#include <vector>

#include "common/cpu_isa.h"
#include "common/lanes.h"
#include "common/streaming.h"
#include "layer_norm/layer_norm_kernels.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T>
void layer_norm_normalize_row(const T* x, const T* w, const T* b, T* y, std::int64_t d, double eps,
                              bool stream, T* mean_out, T* rstd_out) {
  const T first = x[0];
  const double shift = sum_mapped(x, d, [&](auto& v) { v -= first; });
  const auto m = static_cast<T>(first + shift / static_cast<double>(d));
  const double squares = sum_mapped(x, d, [&](auto& v) {
    v -= m;
    v *= v;
  });
  const auto r = static_cast<T>(1 / std::sqrt(squares / static_cast<double>(d) + eps));
  write_elements(y, 0, d, stream, [&](std::int64_t j) { return (x[j] - m) * r * w[j] + b[j]; });
  if (mean_out != nullptr) *mean_out = m, *rstd_out = r;
}

// One row's dx, in one pass for the row's sums of g w and g w xhat (a Vector of lanes in T
// each, as PyTorch's, added in double: 3.1 -> 2.6 ms against widening every term) and its
// terms of dw and db (added to the chunk's partial sums, in T), and one for dx.
template <typename T>
void layer_norm_backward_row(const T* g, const T* x, const T* w, T mean, T rstd, T* dx,
                             std::int64_t d, bool stream, T* dw, T* db) {
  using V = Vector<T>;
  constexpr int kLanes = kVectorLanes<T>;
  const V mean_v = V{} + mean, rstd_v = V{} + rstd;
  V sum_gw_f = {}, sum_gw_xhat_f = {};
  std::int64_t j = 0;
  for (; j + kLanes <= d; j += kLanes) {
    V gj, xj, wj, dwj, dbj;
    load_vector(gj, g + j), load_vector(xj, x + j), load_vector(wj, w + j);
    load_vector(dwj, dw + j), load_vector(dbj, db + j);
    const V gw = gj * wj, xhat = (xj - mean_v) * rstd_v, gw_xhat = gw * xhat;
    sum_gw_f += gw;
    sum_gw_xhat_f += gw_xhat;
    dwj += gj * xhat;
    dbj += gj;
    store_vector(dw + j, dwj), store_vector(db + j, dbj);
  }
  Vector<double> sum_gw_v = {}, sum_gw_xhat_v = {};
  add_widened(sum_gw_v, sum_gw_f);
  add_widened(sum_gw_xhat_v, sum_gw_xhat_f);
  double sum_gw = sum_of_lanes(sum_gw_v), sum_gw_xhat = sum_of_lanes(sum_gw_xhat_v);
  for (; j < d; ++j) {
    const T gw = g[j] * w[j], xhat = (x[j] - mean) * rstd;
    sum_gw += gw;
    sum_gw_xhat += gw * xhat;
    dw[j] += g[j] * xhat;
    db[j] += g[j];
  }
  const auto a = static_cast<T>(sum_gw / static_cast<double>(d));
  const auto b = static_cast<T>(sum_gw_xhat / static_cast<double>(d));
  write_elements(dx, 0, d, stream, [&](std::int64_t k) {
    return rstd * (g[k] * w[k] - a - (x[k] - mean) * rstd * b);
  });
}

}  // namespace

void layer_norm_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const LayerNormRows rows = layer_norm_rows(x, ctx.attrs);
  const double eps = ctx.attrs_as<LayerNormAttrs>().eps;
  dispatch_float(x.dtype(), [&]<typename T>() {
    Tensor mean, rstd;
    if (ctx.saved != nullptr) {
      mean = Tensor::empty(rows.leading, x.dtype());
      rstd = Tensor::empty(rows.leading, x.dtype());
    }
    const T *px = x.data<T>(), *pw = ctx.inputs[1].data<T>(), *pb = ctx.inputs[2].data<T>();
    T* py = ctx.out.data<T>();
    T* pm = mean.defined() ? mean.data<T>() : nullptr;
    T* pr = rstd.defined() ? rstd.data<T>() : nullptr;
    const int parts = threads_for(x.numel());
    const bool stream = streams(x.numel(), sizeof(T));
    parallel_for(parts, [&](int part) {
      const Range r = part_range(rows.n, parts, part);
      run_vectorized([&] {
        for (std::int64_t i = r.begin; i < r.end; ++i) {
          if (i + 1 < r.end) prefetch(px + (i + 1) * rows.d, rows.d);
          layer_norm_normalize_row(px + i * rows.d, pw, pb, py + i * rows.d, rows.d, eps, stream,
                                   pm == nullptr ? nullptr : pm + i,
                                   pr == nullptr ? nullptr : pr + i);
        }
      });
    });
    if (ctx.saved != nullptr) {
      ctx.saved->push_back(mean);
      ctx.saved->push_back(rstd);
    }
  });
}

void layer_norm_backward_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[1];
  const LayerNormRows rows = layer_norm_rows(x, ctx.attrs);
  const std::int64_t d = rows.d;
  const std::int64_t chunks = (rows.n + kLayerNormRowsPerChunk - 1) / kLayerNormRowsPerChunk;
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T *pg = ctx.inputs[0].data<T>(), *px = x.data<T>(), *pw = ctx.inputs[2].data<T>();
    const T *pm = ctx.inputs[3].data<T>(), *pr = ctx.inputs[4].data<T>();
    T* out = ctx.out.data<T>();  // dx [N, D], dweight [D], dbias [D]
    // Per chunk: dw [D] then db [D], summed in T (as PyTorch's); the chunks in double.
    std::vector<T> partial(static_cast<std::size_t>(chunks * 2 * d), T(0));
    const int parts = threads_for(x.numel());
    const bool stream = streams(x.numel(), sizeof(T));
    parallel_for(parts, [&](int part) {
      const Range r = part_range(chunks, parts, part);
      run_vectorized([&] {
        for (std::int64_t c = r.begin; c < r.end; ++c) {
          T* dw = partial.data() + c * 2 * d;
          const std::int64_t end = std::min(rows.n, (c + 1) * kLayerNormRowsPerChunk);
          for (std::int64_t i = c * kLayerNormRowsPerChunk; i < end; ++i) {
            layer_norm_backward_row(pg + i * d, px + i * d, pw, pm[i], pr[i], out + i * d, d,
                                    stream, dw, dw + d);
          }
        }
      });
    });
    T* sums = out + rows.n * d;
    for (std::int64_t j = 0; j < 2 * d; ++j) {
      double total = 0;
      for (std::int64_t c = 0; c < chunks; ++c)
        total += partial[static_cast<std::size_t>(c * 2 * d + j)];
      sums[j] = static_cast<T>(total);
    }
  });
}

}  // namespace mg
