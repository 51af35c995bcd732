// Fused attention on the CPU, in the FlashAttention way: per (batch, head), one thread's,
// tiles of scores from the GEMM library (cpu::gemm, single-threaded inside the parallel loop),
// the causal and the user's mask applied before the running max, tiles wholly above the
// diagonal skipped. The forward keeps, per query row, a running max and sum (online softmax)
// and adds each tile's P v into the output rows, rescaled when the max moves; it saves the
// rows' logsumexp. The backward walks tiles of keys, and under each the query rows at or past
// the diagonal in chunks, recomputing P from the logsumexp. f32 inputs compute in f32 (the
// tile sums in double lanes); heads whose rows are not adjacent are copied once per head.
//   B batch, H heads, T positions, hd head size; see attention_kernels.h
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention/attention_kernels.h"
#include "common/cpu_isa.h"
#include "common/fast_math.h"
#include "common/lanes.h"
#include "minigraph/cpu.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T>
constexpr T kNegInf = -std::numeric_limits<T>::infinity();

struct AttentionSizes {
  std::int64_t batch, heads, length, head_dim;
};
AttentionSizes attention_sizes(const Tensor& query) {
  return {query.size(0), query.size(1), query.size(2), query.size(3)};
}

// One (batch, head) of a [B, H, T, hd] input as a contiguous [T, hd] block: the input's own
// memory where its rows are adjacent, else a copy in `buffer`.
template <typename T>
const T* head_rows(const Tensor& t, std::int64_t b, std::int64_t h, std::vector<T>& buffer) {
  const HeadStrides s = head_strides(t);
  const std::int64_t length = t.size(2), d = t.size(3);
  const T* first = t.data_ptr<T>() + b * s.batch + h * s.head;
  if (s.row == d || length <= 1) return first;
  buffer.resize(static_cast<std::size_t>(length * d));
  for (std::int64_t r = 0; r < length; ++r)
    std::copy(first + r * s.row, first + r * s.row + d, buffer.data() + r * d);
  return buffer.data();
}

// A tile of scores [rows, cols] (query rows from r0, keys from c0) scaled and masked: a key
// past its query (causal) or hidden by the mask becomes -inf; an additive mask is added.
template <typename T>
void mask_scores(T* s, std::int64_t rows, std::int64_t cols, std::int64_t r0, std::int64_t c0,
                 T scale, bool causal, const MaskLayout& m, std::int64_t b, std::int64_t h) {
  const std::int64_t mask_first = m.data == nullptr ? 0 : b * m.batch + h * m.head + c0 * m.col;
  for (std::int64_t i = 0; i < rows; ++i) {
    T* row = s + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) row[j] *= scale;
    if (m.data != nullptr) {
      const std::int64_t at = mask_first + (r0 + i) * m.row;
      if (m.boolean) {
        const bool* keep = static_cast<const bool*>(m.data) + at;
        for (std::int64_t j = 0; j < cols; ++j) row[j] = keep[j * m.col] ? row[j] : kNegInf<T>;
      } else {
        const T* add = static_cast<const T*>(m.data) + at;
        for (std::int64_t j = 0; j < cols; ++j) row[j] += add[j * m.col];
      }
    }
    if (causal) {
      for (std::int64_t j = std::max<std::int64_t>(0, r0 + i + 1 - c0); j < cols; ++j)
        row[j] = kNegInf<T>;
    }
  }
}

// One row of a tile of scores becomes exp(s - the running max) in place; the running max
// and sum move on. Returns the factor for the row's output so far (exp(old max - new max)).
// While the row has seen no key (max -inf) the shift is 0, so exp gives 0 for -inf and NaN
// for NaN: a NaN score makes the row NaN, a hidden one adds nothing.
template <typename T>
T online_softmax_row(T* s, std::int64_t n, T& running_max, T& running_sum) {
  const T tile_max = max_lanes(s, n, 1, kNegInf<T>);
  const T new_max = tile_max > running_max ? tile_max : running_max;
  const T shift = new_max == kNegInf<T> ? T(0) : new_max;
  const T rescale = exp_vectorizable(running_max - shift);
  for (std::int64_t j = 0; j < n; ++j) s[j] = exp_vectorizable(s[j] - shift);
  const double tile_sum = sum_lanes(n, [&](std::int64_t j) { return s[j]; });
  running_sum = running_sum * rescale + static_cast<T>(tile_sum);
  running_max = new_max;
  return rescale;
}

template <typename T>
struct ForwardScratch {
  std::vector<T> q, k, v;           // copies of heads whose rows are not adjacent
  std::vector<T> scores;            // [query tile, key tile]
  std::vector<T> row_max, row_sum;  // [query tile]
};

template <typename T>
void attention_forward_head(const KernelContext& ctx, std::int64_t b, std::int64_t h, T* lse_out,
                            ForwardScratch<T>& w) {
  const auto& a = ctx.attrs_as<AttentionAttrs>();
  const AttentionSizes n = attention_sizes(ctx.inputs[0]);
  const std::int64_t t = n.length, d = n.head_dim, bh = b * n.heads + h;
  const MaskLayout mask =
      ctx.inputs.size() > 3 ? mask_layout(ctx.inputs[3], n.batch, n.heads, t) : MaskLayout{};
  const T* q = head_rows(ctx.inputs[0], b, h, w.q);
  const T* k = head_rows(ctx.inputs[1], b, h, w.k);
  const T* v = head_rows(ctx.inputs[2], b, h, w.v);
  T* out = ctx.out.data<T>() + bh * t * d;  // [T, hd]
  const auto scale = static_cast<T>(a.scale);
  for (std::int64_t r0 = 0; r0 < t; r0 += kAttentionQueryTile) {
    const std::int64_t rows = std::min(kAttentionQueryTile, t - r0);
    std::fill(out + r0 * d, out + (r0 + rows) * d, T(0));
    std::fill(w.row_max.begin(), w.row_max.end(), kNegInf<T>);
    std::fill(w.row_sum.begin(), w.row_sum.end(), T(0));
    // Causal: keys past the tile's last query are hidden from all of its rows.
    const std::int64_t keys = a.is_causal ? r0 + rows : t;
    for (std::int64_t c0 = 0; c0 < keys; c0 += kAttentionKeyTile) {
      const std::int64_t cols = std::min(kAttentionKeyTile, keys - c0);
      T* s = w.scores.data();
      cpu::gemm<T>(q + r0 * d, k + c0 * d, s, rows, cols, d, false, true);
      run_vectorized([&] {
        mask_scores(s, rows, cols, r0, c0, scale, a.is_causal, mask, b, h);
        for (std::int64_t i = 0; i < rows; ++i) {
          const T rescale = online_softmax_row(s + i * cols, cols, w.row_max[i], w.row_sum[i]);
          T* o = out + (r0 + i) * d;
          if (rescale != T(1))
            for (std::int64_t j = 0; j < d; ++j) o[j] *= rescale;
        }
      });
      cpu::gemm_accumulate<T>(s, v + c0 * d, out + r0 * d, rows, d, cols, false, false);
    }
    // A row that saw no key: zeros, logsumexp -inf.
    for (std::int64_t i = 0; i < rows; ++i) {
      const T sum = w.row_sum[i];
      const T inv = sum == T(0) ? T(0) : T(1) / sum;
      T* o = out + (r0 + i) * d;
      for (std::int64_t j = 0; j < d; ++j) o[j] *= inv;
      if (lse_out != nullptr)
        lse_out[r0 + i] = sum == T(0) ? kNegInf<T> : w.row_max[i] + std::log(sum);
    }
  }
}

// Calls head(b, h, scratch) for every (batch, head), split across threads; each head is one
// thread's, in one order, so the bits do not depend on the threads.
template <typename Scratch, typename Head>
void for_each_head(const AttentionSizes& n, Scratch make_scratch, Head&& head) {
  const std::int64_t heads = n.batch * n.heads;
  if (heads == 0) return;  // part_range needs at least one part
  const int parts = static_cast<int>(std::min<std::int64_t>(
      threads_for(heads * n.length * std::max<std::int64_t>(n.length, n.head_dim)), heads));
  parallel_for(parts, [&](int part) {
    auto scratch = make_scratch();
    const Range r = part_range(heads, parts, part);
    for (std::int64_t i = r.begin; i < r.end; ++i) head(i / n.heads, i % n.heads, scratch);
  });
}

}  // namespace

void scaled_dot_product_attention_cpu(const KernelContext& ctx) {
  const AttentionSizes n = attention_sizes(ctx.inputs[0]);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    Tensor lse;
    if (ctx.saved != nullptr) lse = Tensor::empty({n.batch, n.heads, n.length}, ctx.out.dtype());
    T* plse = ctx.saved != nullptr ? lse.data<T>() : nullptr;
    auto make_scratch = [] {
      ForwardScratch<T> w;
      w.scores.resize(static_cast<std::size_t>(kAttentionQueryTile * kAttentionKeyTile));
      w.row_max.resize(static_cast<std::size_t>(kAttentionQueryTile));
      w.row_sum.resize(static_cast<std::size_t>(kAttentionQueryTile));
      return w;
    };
    for_each_head(n, make_scratch, [&](std::int64_t b, std::int64_t h, ForwardScratch<T>& w) {
      T* head_lse = plse == nullptr ? nullptr : plse + (b * n.heads + h) * n.length;
      attention_forward_head<T>(ctx, b, h, head_lse, w);
    });
    if (ctx.saved != nullptr) ctx.saved->push_back(lse);
  });
}

namespace {

template <typename T>
struct BackwardScratch {
  std::vector<T> q, k, v, g;  // copies of heads whose rows are not adjacent
  std::vector<T> p, dp;       // [backward rows, key tile]
  std::vector<T> row_dot;     // [T]: D = rowsum(grad_out * out)
};

// The probabilities of a tile of scores from the rows' logsumexp (a row that saw no key: 0).
template <typename T>
void probabilities(T* s, std::int64_t rows, std::int64_t cols, const T* lse) {
  for (std::int64_t i = 0; i < rows; ++i) {
    T* row = s + i * cols;
    const T shift = lse[i];
    if (shift == kNegInf<T>) {
      std::fill(row, row + cols, T(0));
      continue;
    }
    for (std::int64_t j = 0; j < cols; ++j) row[j] = exp_vectorizable(row[j] - shift);
  }
}

template <typename T>
void attention_backward_head(const KernelContext& ctx, std::int64_t b, std::int64_t h,
                             BackwardScratch<T>& w) {
  const auto& a = ctx.attrs_as<AttentionAttrs>();
  const AttentionSizes n = attention_sizes(ctx.inputs[1]);
  const std::int64_t t = n.length, d = n.head_dim, bh = b * n.heads + h;
  const std::int64_t head_size = t * d, all = n.batch * n.heads * head_size;
  const MaskLayout mask =
      ctx.inputs.size() > 6 ? mask_layout(ctx.inputs[6], n.batch, n.heads, t) : MaskLayout{};
  const T* g = head_rows(ctx.inputs[0], b, h, w.g);
  const T* q = head_rows(ctx.inputs[1], b, h, w.q);
  const T* k = head_rows(ctx.inputs[2], b, h, w.k);
  const T* v = head_rows(ctx.inputs[3], b, h, w.v);
  const T* out = ctx.inputs[4].data<T>() + bh * head_size;
  const T* lse = ctx.inputs[5].data<T>() + bh * t;
  T* dq = ctx.out.data<T>() + bh * head_size;  // [T, hd] each
  T* dk = dq + all;
  T* dv = dk + all;
  const auto scale = static_cast<T>(a.scale);
  std::fill(dq, dq + head_size, T(0));
  std::fill(dk, dk + head_size, T(0));
  std::fill(dv, dv + head_size, T(0));
  for (std::int64_t r = 0; r < t; ++r) {
    w.row_dot[r] =
        static_cast<T>(sum_lanes(d, [&](std::int64_t j) { return g[r * d + j] * out[r * d + j]; }));
  }
  for (std::int64_t c0 = 0; c0 < t; c0 += kAttentionKeyTile) {
    const std::int64_t cols = std::min(kAttentionKeyTile, t - c0);
    // Causal: query rows before the tile's first key see none of it.
    for (std::int64_t r0 = a.is_causal ? c0 : 0; r0 < t; r0 += kAttentionBackwardRows) {
      const std::int64_t rows = std::min(kAttentionBackwardRows, t - r0);
      T *p = w.p.data(), *dp = w.dp.data();
      cpu::gemm<T>(q + r0 * d, k + c0 * d, p, rows, cols, d, false, true);
      run_vectorized([&] {
        mask_scores(p, rows, cols, r0, c0, scale, a.is_causal, mask, b, h);
        probabilities(p, rows, cols, lse + r0);
      });
      cpu::gemm_accumulate<T>(p, g + r0 * d, dv + c0 * d, cols, d, rows, true, false);
      cpu::gemm<T>(g + r0 * d, v + c0 * d, dp, rows, cols, d, false, true);
      run_vectorized([&] {
        for (std::int64_t i = 0; i < rows; ++i) {
          const T dot = w.row_dot[r0 + i];
          T *pr = p + i * cols, *dr = dp + i * cols;
          for (std::int64_t j = 0; j < cols; ++j) dr[j] = pr[j] * (dr[j] - dot) * scale;
        }
      });
      cpu::gemm_accumulate<T>(dp, k + c0 * d, dq + r0 * d, rows, d, cols, false, false);
      cpu::gemm_accumulate<T>(dp, q + r0 * d, dk + c0 * d, cols, d, rows, true, false);
    }
  }
}

}  // namespace

void scaled_dot_product_attention_backward_cpu(const KernelContext& ctx) {
  const AttentionSizes n = attention_sizes(ctx.inputs[1]);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    auto make_scratch = [&] {
      BackwardScratch<T> w;
      const auto tile = static_cast<std::size_t>(kAttentionBackwardRows * kAttentionKeyTile);
      w.p.resize(tile);
      w.dp.resize(tile);
      w.row_dot.resize(static_cast<std::size_t>(n.length));
      return w;
    };
    for_each_head(n, make_scratch, [&](std::int64_t b, std::int64_t h, BackwardScratch<T>& w) {
      attention_backward_head<T>(ctx, b, h, w);
    });
  });
}

}  // namespace mg
