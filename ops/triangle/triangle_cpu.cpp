// The triangle rows on the CPU: the M * R matrix rows split across threads, each row written
// in one pass that selects x or 0 per element (a select, not x * mask, so a NaN outside the
// triangle still gives 0; the loop vectorises).
//   x [M, R, C] -> out [M, R, C]
#include "common/cpu_isa.h"
#include "minigraph/threads.h"
#include "triangle/triangle_kernels.h"

namespace mg {

template <bool Upper>
void triangle_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const TriangleGeometry g = triangle_geometry(x.shape(), ctx.attrs);
  const std::int64_t rows = g.matrix_rows(x.numel());
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = ctx.out.data<T>();
    const int parts = threads_for(x.numel());
    parallel_for(parts, [&](int part) {
      const Range range = part_range(rows, parts, part);
      run_vectorized([&] {
        for (std::int64_t i = range.begin; i < range.end; ++i) {
          const std::int64_t r = i % g.rows;
          const T* in = px + i * g.cols;
          T* out = po + i * g.cols;
          for (std::int64_t c = 0; c < g.cols; ++c) {
            out[c] = triangle_keeps<Upper>(c - r, g.diagonal) ? in[c] : T(0);
          }
        }
      });
    });
  });
}

template void triangle_cpu<false>(const KernelContext&);
template void triangle_cpu<true>(const KernelContext&);

}  // namespace mg
