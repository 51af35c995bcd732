// dropout on the CPU: the Philox blocks split across threads in contiguous runs, each thread
// drawing its own blocks' words (element i: block i / 4, word i % 4), so the mask does not
// depend on how many threads ran, and matches the CUDA kernel's bit for bit.
//   N elements, B = ceil(N / 4) blocks; x [N] -> out [N]
#include "dropout/dropout_kernels.h"
#include "minigraph/threads.h"

namespace mg {

void dropout_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const DropoutDraw draw = dropout_draw(ctx.attrs);
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = ctx.out.data<T>();
    const T scale = static_cast<T>(draw.scale);
    const std::int64_t n = x.numel(), blocks = (n + 3) / 4;
    // Ten rounds of multiplies per four elements: worth threads sooner than a copy would be,
    // but threads_for's element count keeps small tensors on the calling thread.
    const int parts = threads_for(n);
    parallel_for(parts, [&](int part) {
      const Range r = part_range(blocks, parts, part);
      for (std::int64_t b = r.begin; b < r.end; ++b) dropout_block(draw, scale, b, px, po, n);
    });
  });
}

}  // namespace mg
