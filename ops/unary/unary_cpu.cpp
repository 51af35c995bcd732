// The unary elementwise engine on the CPU: contiguous ranges across threads, the loop body
// the functor alone, so the compiler vectorises it where the function allows (for AVX2 too:
// common/cpu_isa.h); a view (the CPU
// takes any layout) is read through its strides.
//   N elements; x [..X] -> out [..X]
#include "common/broadcast.h"
#include "common/cpu_isa.h"
#include "common/streaming.h"
#include "minigraph/threads.h"
#include "unary/unary_kernels.h"

namespace mg {

template <template <typename> class Fn>
void unary_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const Fn<T> fn = make_unary_fn<Fn, T>(ctx.attrs);
    T* po = out.data<T>();
    const std::int64_t n = out.numel();
    if (!x.is_contiguous()) {
      const T* px = x.data_ptr<T>();
      for_each_broadcast(
          x.shape(), x.strides(), std::vector<std::int64_t>(x.shape().size(), 0),
          [&](std::int64_t i, std::int64_t at, std::int64_t) { po[i] = fn(px[at]); });
      return;
    }
    const T* px = x.data<T>();
    const int parts = threads_for(n);
    const bool stream = streams(n, sizeof(T));
    parallel_for(parts, [&](int part) {
      const Range r = part_range(n, parts, part);
      run_vectorized([&] {
        write_elements(po, r.begin, r.end, stream, [&](std::int64_t i) { return fn(px[i]); });
      });
    });
  });
}

#define MG_INSTANTIATE(Fn) template void unary_cpu<Fn>(const KernelContext&);
MG_UNARY_FUNCTORS(MG_INSTANTIATE)
#undef MG_INSTANTIATE

}  // namespace mg
