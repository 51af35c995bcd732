// What the attention kernels share: the ops' attributes, the sizes and layouts they read, the
// tile sizes and the kernels' declarations.
//   B batch, H heads, T positions, hd head size
//   forward:  query, key, value [B, H, T, hd] (+ mask, broadcast to [B, H, T, T])
//             -> out [B, H, T, hd]; saved: logsumexp [B, H, T]
//   backward: grad_out, query, key, value, out [B, H, T, hd], logsumexp [B, H, T] (+ mask)
//             -> [3 * B * H * T * hd]: dq, then dk, then dv, each [B, H, T, hd]
#pragma once

#include <cstdint>

#include "attention/attention.h"
#include "minigraph/op.h"

namespace mg {

struct AttentionAttrs {
  bool is_causal = false;
  double scale = 1;             // resolved: 1 / sqrt(hd) unless given
  std::int64_t max_length = 0;  // 0: no limit
};

// Element strides of a [B, H, T, hd] input whose rows have unit stride (takes_layout).
struct HeadStrides {
  std::int64_t batch, head, row;
};
inline HeadStrides head_strides(const Tensor& t) { return {t.stride(0), t.stride(1), t.stride(2)}; }

// A mask read through the strides of its view broadcast to [B, H, T, T] (stride 0 on the
// broadcast axes); boolean: true keeps the key, else the value is added to the score.
struct MaskLayout {
  const void* data = nullptr;  // null: no mask
  bool boolean = false;
  std::int64_t batch = 0, head = 0, row = 0, col = 0;
};
MaskLayout mask_layout(const Tensor& mask, std::int64_t b, std::int64_t h, std::int64_t t);

// Query rows per tile of the forward, keys per tile of both passes, query rows per chunk of
// the backward (the rows under one tile of keys). Measured at B = 8, H = 12, T = 1,024,
// hd = 64 (docs/performance.md).
inline constexpr std::int64_t kAttentionQueryTile = 64;
inline constexpr std::int64_t kAttentionKeyTile = 128;
inline constexpr std::int64_t kAttentionBackwardRows = 256;

void scaled_dot_product_attention_cpu(const KernelContext& ctx);
void scaled_dot_product_attention_backward_cpu(const KernelContext& ctx);
void scaled_dot_product_attention_cuda(const KernelContext& ctx);
void scaled_dot_product_attention_backward_cuda(const KernelContext& ctx);

}  // namespace mg
