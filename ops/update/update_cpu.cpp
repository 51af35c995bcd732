// The optimizer update engine on the CPU: contiguous ranges across threads; each element is
// computed alone, so the bits do not depend on the thread count.
//   N elements; in0 [N], in1 [N] (, in2 [N]) -> out [N]
#include "minigraph/threads.h"
#include "update/update_kernels.h"

namespace mg {

template <template <typename> class Fn>
void update_cpu(const KernelContext& ctx) {
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const Fn<T> fn = Fn<T>::from(ctx.attrs);
    const T* a = ctx.inputs[0].data<T>();
    const T* b = ctx.inputs[1].data<T>();
    T* po = out.data<T>();
    const std::int64_t n = out.numel();
    const int parts = threads_for(n);
    parallel_for(parts, [&](int part) {
      const Range r = part_range(n, parts, part);
      if constexpr (Fn<T>::kArity == 3) {
        const T* c = ctx.inputs[2].data<T>();
        for (std::int64_t i = r.begin; i < r.end; ++i) po[i] = fn(a[i], b[i], c[i]);
      } else {
        for (std::int64_t i = r.begin; i < r.end; ++i) po[i] = fn(a[i], b[i]);
      }
    });
  });
}

#define MG_INSTANTIATE(Fn) template void update_cpu<Fn>(const KernelContext&);
MG_UPDATE_FUNCTORS(MG_INSTANTIATE)
#undef MG_INSTANTIATE

}  // namespace mg
