// layer_norm on the CPU: rows split across threads, each row's statistics summed in double in
// eight lanes (common/lanes.h; two passes: the mean, then the squares about it, which keeps
// the spread of rows far from 0). The backward computes dx row by row and the weight and bias
// gradients as partial sums per chunk of kLayerNormRowsPerChunk rows, added in chunk order.
//   N rows of D; see layer_norm_kernels.h
#include <cmath>
#include <vector>

#include "common/cpu_isa.h"
#include "common/lanes.h"
#include "layer_norm/layer_norm_kernels.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T>
void layer_norm_normalize_row(const T* x, const T* w, const T* b, T* y, std::int64_t d, double eps,
                              T* mean_out, T* rstd_out) {
  const double mean = sum_lanes(d, [&](std::int64_t j) { return x[j]; }) / static_cast<double>(d);
  const double squares = sum_lanes(d, [&](std::int64_t j) {
    const double c = x[j] - mean;
    return c * c;
  });
  const double rstd = 1 / std::sqrt(squares / static_cast<double>(d) + eps);
  const auto m = static_cast<T>(mean), r = static_cast<T>(rstd);
  for (std::int64_t j = 0; j < d; ++j) y[j] = (x[j] - m) * r * w[j] + b[j];
  if (mean_out != nullptr) *mean_out = m, *rstd_out = r;
}

// One row's dx; adds the row's grad_out * xhat and grad_out into dw and db.
template <typename T>
void layer_norm_backward_row(const T* g, const T* x, const T* w, T mean, T rstd, T* dx,
                             std::int64_t d, double* dw, double* db) {
  auto xhat = [&](std::int64_t j) { return (x[j] - mean) * rstd; };
  const double sum_dxhat = sum_lanes(d, [&](std::int64_t j) { return g[j] * w[j]; });
  const double sum_dxhat_xhat =
      sum_lanes(d, [&](std::int64_t j) { return static_cast<double>(g[j] * w[j]) * xhat(j); });
  for (std::int64_t j = 0; j < d; ++j) {
    dw[j] += static_cast<double>(g[j]) * xhat(j);
    db[j] += g[j];
  }
  const auto a = static_cast<T>(sum_dxhat / static_cast<double>(d));
  const auto b = static_cast<T>(sum_dxhat_xhat / static_cast<double>(d));
  for (std::int64_t j = 0; j < d; ++j) dx[j] = rstd * (g[j] * w[j] - a - xhat(j) * b);
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
    parallel_for(parts, [&](int part) {
      const Range r = part_range(rows.n, parts, part);
      run_vectorized([&] {
        for (std::int64_t i = r.begin; i < r.end; ++i) {
          layer_norm_normalize_row(px + i * rows.d, pw, pb, py + i * rows.d, rows.d, eps,
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
    // Per chunk: dw [D] then db [D].
    std::vector<double> partial(static_cast<std::size_t>(chunks * 2 * d), 0.0);
    const int parts = threads_for(x.numel());
    parallel_for(parts, [&](int part) {
      const Range r = part_range(chunks, parts, part);
      run_vectorized([&] {
        for (std::int64_t c = r.begin; c < r.end; ++c) {
          double* dw = partial.data() + c * 2 * d;
          const std::int64_t end = std::min(rows.n, (c + 1) * kLayerNormRowsPerChunk);
          for (std::int64_t i = c * kLayerNormRowsPerChunk; i < end; ++i) {
            layer_norm_backward_row(pg + i * d, px + i * d, pw, pm[i], pr[i], out + i * d, d, dw,
                                    dw + d);
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
