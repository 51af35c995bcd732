// What the dropout kernels share: the draw of the attributes in the form both kernels use,
// and the one definition of a block of four elements, which the CPU kernel (dropout_cpu.cpp)
// and the CUDA one (dropout_cuda.cu) both run.
//   N elements, ceil(N / 4) Philox blocks; x [N] -> out [N]; block b covers x[4b .. 4b + 3]
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "dropout/philox.h"
#include "minigraph/op.h"

namespace mg {

// The attributes as integers: u = k * 2^-24 >= p exactly when k >= ceil(p * 2^24) (p * 2^24
// is exact in double), so no kernel rounds p into its own float type and every device and
// dtype keeps the same elements.
struct DropoutDraw {
  std::uint64_t seed = 0, counter = 0;
  std::uint32_t threshold = 0;  // ceil(p * 2^24), in [0, 2^24]
  double scale = 1;             // 1 / (1 - p)
};
// From the op's DropoutAttrs (p already checked by the shape rule).
DropoutDraw dropout_draw(const std::any& attrs);

// Elements 4 block .. min(4 block + 4, n) - 1 of out from x; `scale` is the draw's in T.
template <typename T>
MG_HOST_DEVICE inline void dropout_block(const DropoutDraw& draw, T scale, std::int64_t block,
                                         const T* x, T* out, std::int64_t n) {
  const PhiloxBlock bits =
      dropout_philox(draw.seed, draw.counter, static_cast<std::uint64_t>(block));
  const std::int64_t first = 4 * block;
  const std::int64_t count = n - first < 4 ? n - first : 4;
  for (std::int64_t lane = 0; lane < count; ++lane) {
    const bool keep = (bits.word[lane] >> 8) >= draw.threshold;
    // A product, not a select, as PyTorch's: NaN and inf stay visible where dropped.
    out[first + lane] = x[first + lane] * (keep ? scale : T(0));
  }
}

void dropout_cpu(const KernelContext& ctx);
void dropout_cuda(const KernelContext& ctx);  // CUDA builds only

}  // namespace mg
