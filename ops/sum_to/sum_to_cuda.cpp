// sum_to on CUDA, the host side: describe x's axes as kept (in out) or reduced (summed away),
// then run the deterministic reduction (sum_to_cuda.cu).
#include "sum_to/sum_to_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "minigraph/op.h"
#include "sum_to/sum_to_kernels.h"

namespace mg {

namespace {

// Size-1 axes of x are dropped; neighbouring axes of the same kind merge into one (x is
// contiguous, so they always can), which leaves alternating groups: [R, K] for the position
// gradient, [R] for a total.
cuda::ReduceLayout reduce_layout(const Shape& x, const Shape& target) {
  const std::size_t lead = x.size() - target.size();
  struct Group {
    bool kept;
    std::int64_t size, stride;
  };
  std::vector<Group> groups;
  std::int64_t stride = 1;
  for (std::size_t axis = x.size(); axis-- > 0;) {  // innermost first, to know the strides
    if (x[axis] != 1) {
      const bool kept = axis >= lead && target[axis - lead] == x[axis];
      if (!groups.empty() && groups.back().kept == kept) {
        groups.back().size *= x[axis];
      } else {
        groups.push_back({kept, x[axis], stride});
      }
    }
    stride *= x[axis];
  }
  cuda::ReduceLayout layout;
  for (bool kept : {true, false}) {
    cuda::AxisGroup& out = kept ? layout.kept : layout.reduced;
    int rank = 0;
    for (auto it = groups.rbegin(); it != groups.rend(); ++it) {  // outermost first
      if (it->kept != kept) continue;
      MG_CHECK(rank < cuda::kMaxAxisGroups, "sum_to", "shape",
               fmt::format("at most {} alternating groups of kept and summed axes on CUDA",
                           cuda::kMaxAxisGroups),
               "x {} summed to {}", shape_str(x), shape_str(target));
      out.size[rank] = it->size;
      out.stride[rank] = it->stride;
      out.count *= it->size;
      ++rank;
    }
    out.rank = std::max(rank, 1);  // none: one index, offset 0 (the defaults)
  }
  return layout;
}

}  // namespace

void sum_to_cuda_into(const Tensor& x, const Tensor& out) {
  CudaBackend& backend = cuda::activate(out.device());
  if (x.numel() == 0) {
    backend.fill_zero(out.raw_data(), out.nbytes());
    return;
  }
  const cuda::ReduceLayout layout = reduce_layout(x.shape(), out.shape());
  cuda::DeviceBuffer scratch(backend, cuda::sum_to_scratch_bytes(layout, dtype_size(out.dtype())));
  dispatch_float(out.dtype(), [&]<typename T>() {
    cuda::sum_to_launch(x.data<T>(), out.data<T>(), layout, scratch.data(), backend.stream());
  });
}

void sum_to_cuda(const KernelContext& ctx) { sum_to_cuda_into(ctx.inputs[0], ctx.out); }

}  // namespace mg
