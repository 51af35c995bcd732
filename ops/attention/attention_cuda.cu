// Fused attention in CUDA, the CPU kernels' design on a GPU's terms: a block per (batch,
// head) and kRowsPerBlock query rows, a warp per row; tiles of keys (at most 32, as many as
// shared memory holds at this head size) loaded by the block, each lane holding one key's
// score of the tile; the causal and the user's mask applied before the running max, tiles
// wholly above the diagonal never loaded; the rows' logsumexp saved. The backward recomputes P
// tile by tile in two kernels without atomics: dq (a warp per query row, tiles of keys, also
// writing D = rowsum(grad_out * out)) and dk, dv (a warp per key row, tiles of queries). Dot
// products are warp sums (a butterfly: every lane holds the same bits). Head sizes up to
// kMaxHeadSize (registers per lane).
//   B batch, H heads, T positions, hd head size; see attention_kernels.h
#include <cmath>

#include "attention/attention_kernels.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/fast_math.h"

namespace mg {

namespace {

constexpr int kRowsPerBlock = 8;  // warps per block
constexpr int kPerLane = 8;
constexpr std::int64_t kMaxHeadSize = 32 * kPerLane;
constexpr std::int64_t kSharedBytes = 48 * 1024;

template <typename T>
struct HeadInput {
  const T* data;
  std::int64_t batch, head, row;
  __device__ const T* at(std::int64_t b, std::int64_t h, std::int64_t t) const {
    return data + b * batch + h * head + t * row;
  }
};
template <typename T>
HeadInput<T> head_input(const Tensor& t) {
  const HeadStrides s = head_strides(t);
  return {t.data_ptr<T>(), s.batch, s.head, s.row};
}

struct Sizes {
  std::int64_t heads, t, d, tile;
  bool causal;
};

// -inf (std::numeric_limits is host-only to nvcc).
template <typename T>
__device__ T neg_inf() {
  return static_cast<T>(-INFINITY);
}

template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
// NaN is skipped, as on the CPU (max_lanes): a NaN score reaches the row through its exp.
template <typename T>
__device__ T warp_max(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const T other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = other > v ? other : v;
  }
  return v;
}
__device__ inline float device_exp(float x) { return exp_vectorizable(x); }
__device__ inline double device_exp(double x) { return exp(x); }
__device__ inline float device_log(float x) { return logf(x); }
__device__ inline double device_log(double x) { return log(x); }

// The scaled score of (query i, key j) after the causal and the user's mask.
template <typename T>
__device__ T masked_score(T dot, T scale, const Sizes& n, const MaskLayout& m, std::int64_t b,
                          std::int64_t h, std::int64_t i, std::int64_t j) {
  const T kNegInf = neg_inf<T>();
  T s = dot * scale;
  if (m.data != nullptr) {
    const std::int64_t at = b * m.batch + h * m.head + i * m.row + j * m.col;
    if (m.boolean) {
      s = static_cast<const bool*>(m.data)[at] ? s : kNegInf;
    } else {
      s += static_cast<const T*>(m.data)[at];
    }
  }
  return n.causal && j > i ? kNegInf : s;
}

// Rows [first, first + count) of a head into shared memory as [count, d].
template <typename T>
__device__ void load_tile(T* dst, const HeadInput<T>& src, std::int64_t b, std::int64_t h,
                          std::int64_t first, std::int64_t count, std::int64_t d) {
  for (std::int64_t k = threadIdx.x; k < count * d; k += blockDim.x)
    dst[k] = src.at(b, h, first + k / d)[k % d];
}

template <typename T>
__device__ void load_row(T (&r)[kPerLane], const T* src, std::int64_t d, int lane) {
  for (int e = 0; e < kPerLane; ++e) {
    const std::int64_t c = lane + 32 * e;
    r[e] = c < d ? src[c] : T(0);
  }
}
// The lane's elements of a row of hd, times `factor`, into dst.
template <typename T>
__device__ void store_row(T* dst, const T (&r)[kPerLane], std::int64_t d, int lane, T factor) {
  for (int e = 0; e < kPerLane; ++e) {
    const std::int64_t c = lane + 32 * e;
    if (c < d) dst[c] = r[e] * factor;
  }
}
template <typename T>
__device__ T dot_row(const T (&r)[kPerLane], const T* other, std::int64_t d, int lane) {
  T part = 0;
  for (int e = 0; e < kPerLane; ++e) {
    const std::int64_t c = lane + 32 * e;
    if (c < d) part += r[e] * other[c];
  }
  return warp_sum(part);
}

template <typename T>
struct ForwardArgs {
  HeadInput<T> q, k, v;
  MaskLayout mask;
  T* out;  // [B, H, T, hd]
  T* lse;  // [B, H, T] or null
  T scale;
  Sizes n;
};

template <typename T>
__global__ void forward_kernel(ForwardArgs<T> a) {
  extern __shared__ double shared_words[];
  const T kNegInf = neg_inf<T>();
  const Sizes& n = a.n;
  T* ks = reinterpret_cast<T*>(shared_words);
  T* vs = ks + n.tile * n.d;
  const int lane = threadIdx.x % 32;
  const std::int64_t bh = blockIdx.y, b = bh / n.heads, h = bh % n.heads;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock;
  const std::int64_t row = r0 + threadIdx.x / 32;
  const bool active = row < n.t;
  T q[kPerLane], o[kPerLane] = {};
  if (active) load_row(q, a.q.at(b, h, row), n.d, lane);
  T running_max = kNegInf, running_sum = 0;
  const std::int64_t keys = n.causal ? min(n.t, r0 + kRowsPerBlock) : n.t;
  for (std::int64_t c0 = 0; c0 < keys; c0 += n.tile) {
    const std::int64_t cols = min(n.tile, keys - c0);
    __syncthreads();
    load_tile(ks, a.k, b, h, c0, cols, n.d);
    load_tile(vs, a.v, b, h, c0, cols, n.d);
    __syncthreads();
    if (!active) continue;
    T mine = kNegInf;  // lane j: key c0 + j's score
    for (std::int64_t j = 0; j < cols; ++j) {
      const T s =
          masked_score(dot_row(q, ks + j * n.d, n.d, lane), a.scale, n, a.mask, b, h, row, c0 + j);
      if (lane == j) mine = s;
    }
    const T tile_max = warp_max(mine);
    const T new_max = tile_max > running_max ? tile_max : running_max;
    const T shift = new_max == kNegInf ? T(0) : new_max;
    const T rescale = device_exp(running_max - shift);
    const T p = lane < cols ? device_exp(mine - shift) : T(0);
    running_sum = running_sum * rescale + warp_sum(p);
    running_max = new_max;
    for (int e = 0; e < kPerLane; ++e) o[e] *= rescale;
    for (std::int64_t j = 0; j < cols; ++j) {
      const T pj = __shfl_sync(0xffffffffu, p, static_cast<int>(j));
      for (int e = 0; e < kPerLane; ++e) {
        const std::int64_t c = lane + 32 * e;
        if (c < n.d) o[e] += pj * vs[j * n.d + c];
      }
    }
  }
  if (!active) return;
  const T inv = running_sum == T(0) ? T(0) : T(1) / running_sum;
  store_row(a.out + (bh * n.t + row) * n.d, o, n.d, lane, inv);
  if (lane == 0 && a.lse != nullptr) {
    a.lse[bh * n.t + row] = running_sum == T(0) ? kNegInf : running_max + device_log(running_sum);
  }
}

template <typename T>
struct BackwardArgs {
  HeadInput<T> g, q, k, v;
  MaskLayout mask;
  const T* out;  // [B, H, T, hd]
  const T* lse;  // [B, H, T]
  T* row_dot;    // [B, H, T]: D, written by dq_kernel for dkv_kernel
  T *dq, *dk, *dv;
  T scale;
  Sizes n;
};

template <typename T>
__device__ T probability(T s, T lse) {
  return lse == neg_inf<T>() ? T(0) : device_exp(s - lse);
}

// A warp per query row: dq = scale sum_j dS_ij k_j over tiles of keys.
template <typename T>
__global__ void dq_kernel(BackwardArgs<T> a) {
  extern __shared__ double shared_words[];
  const Sizes& n = a.n;
  T* ks = reinterpret_cast<T*>(shared_words);
  T* vs = ks + n.tile * n.d;
  const int lane = threadIdx.x % 32;
  const std::int64_t bh = blockIdx.y, b = bh / n.heads, h = bh % n.heads;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock;
  const std::int64_t row = r0 + threadIdx.x / 32;
  const bool active = row < n.t;
  T q[kPerLane], g[kPerLane], dq[kPerLane] = {};
  T dot = 0, lse = 0;
  if (active) {
    load_row(q, a.q.at(b, h, row), n.d, lane);
    load_row(g, a.g.at(b, h, row), n.d, lane);
    dot = dot_row(g, a.out + (bh * n.t + row) * n.d, n.d, lane);
    lse = a.lse[bh * n.t + row];
    if (lane == 0) a.row_dot[bh * n.t + row] = dot;
  }
  const std::int64_t keys = n.causal ? min(n.t, r0 + kRowsPerBlock) : n.t;
  for (std::int64_t c0 = 0; c0 < keys; c0 += n.tile) {
    const std::int64_t cols = min(n.tile, keys - c0);
    __syncthreads();
    load_tile(ks, a.k, b, h, c0, cols, n.d);
    load_tile(vs, a.v, b, h, c0, cols, n.d);
    __syncthreads();
    if (!active) continue;
    for (std::int64_t j = 0; j < cols; ++j) {
      const T s =
          masked_score(dot_row(q, ks + j * n.d, n.d, lane), a.scale, n, a.mask, b, h, row, c0 + j);
      const T ds = probability(s, lse) * (dot_row(g, vs + j * n.d, n.d, lane) - dot) * a.scale;
      for (int e = 0; e < kPerLane; ++e) {
        const std::int64_t c = lane + 32 * e;
        if (c < n.d) dq[e] += ds * ks[j * n.d + c];
      }
    }
  }
  if (!active) return;
  store_row(a.dq + (bh * n.t + row) * n.d, dq, n.d, lane, T(1));
}

// A warp per key row: dv = sum_i P_ij g_i, dk = scale sum_i dS_ij q_i over tiles of queries.
template <typename T>
__global__ void dkv_kernel(BackwardArgs<T> a) {
  extern __shared__ double shared_words[];
  const Sizes& n = a.n;
  T* qs = reinterpret_cast<T*>(shared_words);
  T* gs = qs + n.tile * n.d;
  const int lane = threadIdx.x % 32;
  const std::int64_t bh = blockIdx.y, b = bh / n.heads, h = bh % n.heads;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock;
  const std::int64_t col = c0 + threadIdx.x / 32;
  const bool active = col < n.t;
  T k[kPerLane], v[kPerLane], dk[kPerLane] = {}, dv[kPerLane] = {};
  if (active) {
    load_row(k, a.k.at(b, h, col), n.d, lane);
    load_row(v, a.v.at(b, h, col), n.d, lane);
  }
  // Causal: queries before the block's first key see none of its keys.
  for (std::int64_t r0 = n.causal ? c0 : 0; r0 < n.t; r0 += n.tile) {
    const std::int64_t rows = min(n.tile, n.t - r0);
    __syncthreads();
    load_tile(qs, a.q, b, h, r0, rows, n.d);
    load_tile(gs, a.g, b, h, r0, rows, n.d);
    __syncthreads();
    if (!active) continue;
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t row = r0 + i;
      const T s =
          masked_score(dot_row(k, qs + i * n.d, n.d, lane), a.scale, n, a.mask, b, h, row, col);
      const T p = probability(s, a.lse[bh * n.t + row]);
      const T ds = p * (dot_row(v, gs + i * n.d, n.d, lane) - a.row_dot[bh * n.t + row]) * a.scale;
      for (int e = 0; e < kPerLane; ++e) {
        const std::int64_t c = lane + 32 * e;
        if (c < n.d) {
          dv[e] += p * gs[i * n.d + c];
          dk[e] += ds * qs[i * n.d + c];
        }
      }
    }
  }
  if (!active) return;
  store_row(a.dk + (bh * n.t + col) * n.d, dk, n.d, lane, T(1));
  store_row(a.dv + (bh * n.t + col) * n.d, dv, n.d, lane, T(1));
}

// Sizes for query (or key) rows of one [B, H, T, hd] input; a tile of as many rows (at most
// 32, one a lane) as two [tile, hd] blocks of shared memory hold.
template <typename T>
Sizes sizes_for(const Tensor& query, const AttentionAttrs& a, const char* op) {
  const std::int64_t d = query.size(3);
  MG_CHECK(d <= kMaxHeadSize, op, "query",
           fmt::format("a head size of at most {} on CUDA", kMaxHeadSize), "{}", d);
  MG_CHECK(query.size(0) * query.size(1) <= 65535, op, "query",
           "at most 65,535 batch entries x heads on CUDA", "{}", query.size(0) * query.size(1));
  const std::int64_t tile =
      std::min<std::int64_t>(32, kSharedBytes / (2 * d * static_cast<std::int64_t>(sizeof(T))));
  return {query.size(1), query.size(2), d, tile, a.is_causal};
}

dim3 grid_for(const Sizes& n, std::int64_t bh) {
  return dim3(static_cast<unsigned int>((n.t + kRowsPerBlock - 1) / kRowsPerBlock),
              static_cast<unsigned int>(bh));
}

}  // namespace

void scaled_dot_product_attention_cuda(const KernelContext& ctx) {
  const Tensor& query = ctx.inputs[0];
  const auto& attrs = ctx.attrs_as<AttentionAttrs>();
  Tensor lse;
  if (ctx.saved != nullptr) {
    lse =
        Tensor::empty({query.size(0), query.size(1), query.size(2)}, query.dtype(), query.device());
    ctx.saved->push_back(lse);
  }
  const std::int64_t bh = query.size(0) * query.size(1);
  if (ctx.out.numel() == 0) return;
  cudaStream_t stream = cuda::activate(query.device()).stream();
  dispatch_float(query.dtype(), [&]<typename T>() {
    const Sizes n = sizes_for<T>(query, attrs, ctx.op.name.c_str());
    const MaskLayout mask = ctx.inputs.size() > 3
                                ? mask_layout(ctx.inputs[3], query.size(0), n.heads, n.t)
                                : MaskLayout{};
    ForwardArgs<T> a{head_input<T>(ctx.inputs[0]),
                     head_input<T>(ctx.inputs[1]),
                     head_input<T>(ctx.inputs[2]),
                     mask,
                     ctx.out.data<T>(),
                     lse.defined() ? lse.data<T>() : nullptr,
                     static_cast<T>(attrs.scale),
                     n};
    const auto shared = static_cast<std::size_t>(2 * n.tile * n.d) * sizeof(T);
    forward_kernel<T><<<grid_for(n, bh), 32 * kRowsPerBlock, shared, stream>>>(a);
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

void scaled_dot_product_attention_backward_cuda(const KernelContext& ctx) {
  const Tensor& query = ctx.inputs[1];
  const auto& attrs = ctx.attrs_as<AttentionAttrs>();
  const std::int64_t bh = query.size(0) * query.size(1), all = query.numel();
  if (all == 0) return;
  cudaStream_t stream = cuda::activate(query.device()).stream();
  dispatch_float(query.dtype(), [&]<typename T>() {
    const Sizes n = sizes_for<T>(query, attrs, ctx.op.name.c_str());
    const MaskLayout mask = ctx.inputs.size() > 6
                                ? mask_layout(ctx.inputs[6], query.size(0), n.heads, n.t)
                                : MaskLayout{};
    Tensor row_dot = Tensor::empty({bh, n.t}, query.dtype(), query.device());
    T* dq = ctx.out.data<T>();
    BackwardArgs<T> a{head_input<T>(ctx.inputs[0]),
                      head_input<T>(ctx.inputs[1]),
                      head_input<T>(ctx.inputs[2]),
                      head_input<T>(ctx.inputs[3]),
                      mask,
                      ctx.inputs[4].data<T>(),
                      ctx.inputs[5].data<T>(),
                      row_dot.data<T>(),
                      dq,
                      dq + all,
                      dq + 2 * all,
                      static_cast<T>(attrs.scale),
                      n};
    const auto shared = static_cast<std::size_t>(2 * n.tile * n.d) * sizeof(T);
    dq_kernel<T><<<grid_for(n, bh), 32 * kRowsPerBlock, shared, stream>>>(a);
    dkv_kernel<T><<<grid_for(n, bh), 32 * kRowsPerBlock, shared, stream>>>(a);
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace mg
