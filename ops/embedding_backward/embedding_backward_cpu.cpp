// embedding_backward on the CPU: check every id first, zero the gradient table, then add
// each upstream row into its id's row in position order (deterministic).
#include <Eigen/Core>

#include "common/ids.h"
#include "embedding_backward/embedding_backward.h"
#include "minigraph/backend.h"
#include "minigraph/op.h"

namespace mg {

namespace {

template <typename T, typename Id>
void scatter_add_rows(const Tensor& grad, const Tensor& ids, Tensor& out, bool vectorised) {
  const std::int64_t rows = out.size(0), width = out.size(1), n = ids.numel();
  const Id* id = ids.data<Id>();
  check_ids_in_range("embedding_backward", id, ids.shape(), rows);
  backend_for(out.device()).fill_zero(out.raw_data(), out.nbytes());
  const T* src = grad.data<T>();
  T* dst = out.data<T>();
  using Row = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstRow = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
  for (std::int64_t i = 0; i < n; ++i) {
    if (vectorised) {
      Row(dst + id[i] * width, width) += ConstRow(src + i * width, width);
    } else {
      for (std::int64_t d = 0; d < width; ++d) dst[id[i] * width + d] += src[i * width + d];
    }
  }
}

void run(const KernelContext& ctx, bool vectorised) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(), [&]<typename Id>() {
      scatter_add_rows<T, Id>(ctx.inputs[0], ctx.inputs[1], ctx.out, vectorised);
    });
  });
}

}  // namespace

void embedding_backward_cpu(const KernelContext& ctx) { run(ctx, true); }
void embedding_backward_reference(const KernelContext& ctx) { run(ctx, false); }

}  // namespace mg
