// The max rows on the CPU: rows split across threads, each row walked once in order keeping
// the first extremum (max_replaces: a NaN ends the search). The backward checks every index
// first (nothing is written before an error), then writes each row of the gradient: zeros and
// grad_out at the row's index.
//   R rows of N; x [R rows of N] -> out [R]; backward: grad_out [R], indices [R] -> [R rows of N]
#include "max/max.h"
#include "max/max_kernels.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

// Calls row(r) for every row r in [0, count), rows split across threads by `work` elements.
template <typename RowFn>
void for_each_max_row(std::int64_t count, std::int64_t work, RowFn&& row) {
  const int parts = threads_for(work);
  parallel_for(parts, [&](int part) {
    const Range range = part_range(count, parts, part);
    for (std::int64_t r = range.begin; r < range.end; ++r) row(r);
  });
}

}  // namespace

template <bool Min, bool Indices>
void max_forward_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const auto& a = ctx.attrs_as<MaxAttrs>();
  const AxisRows rows = axis_rows(x.shape(), a.dim, ctx.op.name);
  Tensor saved;  // the values rows' indices, for a backward that can follow
  std::int64_t* indices = nullptr;
  if constexpr (Indices) {
    indices = ctx.out.data<std::int64_t>();
  } else if (ctx.saved != nullptr) {
    saved = Tensor::empty(ctx.out.shape(), DType::i64);
    indices = saved.data<std::int64_t>();
  }
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* values = nullptr;
    if constexpr (!Indices) values = ctx.out.data<T>();
    const std::int64_t s = rows.inner;
    for_each_max_row(rows.count(), x.numel(), [&](std::int64_t r) {
      const T* row = px + rows.start(r);
      T best = row[0];
      std::int64_t at = 0;
      for (std::int64_t j = 1; j < rows.n; ++j) {
        if (max_replaces<Min>(row[j * s], best)) {
          best = row[j * s];
          at = j;
        }
      }
      if (values != nullptr) values[r] = best;
      if (indices != nullptr) indices[r] = at;
    });
  });
  if (ctx.saved != nullptr && !Indices) ctx.saved->push_back(saved);
}

void max_backward_cpu(const KernelContext& ctx) {
  const Tensor& g = ctx.inputs[0];
  const Tensor& idx = ctx.inputs[1];
  const auto& a = ctx.attrs_as<MaxBackwardAttrs>();
  const AxisRows rows = axis_rows(a.x_shape, a.dim, ctx.op.name);
  dispatch_ids(idx.dtype(), [&]<typename Id>() {
    const Id* pi = idx.data<Id>();
    for (std::int64_t r = 0; r < rows.count(); ++r) {
      if (pi[r] < 0 || pi[r] >= rows.n) [[unlikely]]
        throw_bad_max_index(static_cast<std::int64_t>(pi[r]), r, idx.shape(), rows.n);
    }
    dispatch_float(g.dtype(), [&]<typename T>() {
      const T* pg = g.data<T>();
      T* po = ctx.out.data<T>();
      const std::int64_t s = rows.inner;
      for_each_max_row(rows.count(), ctx.out.numel(), [&](std::int64_t r) {
        T* row = po + rows.start(r);
        for (std::int64_t j = 0; j < rows.n; ++j) row[j * s] = T(0);
        row[static_cast<std::int64_t>(pi[r]) * s] = pg[r];
      });
    });
  });
}

template void max_forward_cpu<false, false>(const KernelContext&);
template void max_forward_cpu<true, false>(const KernelContext&);
template void max_forward_cpu<false, true>(const KernelContext&);
template void max_forward_cpu<true, true>(const KernelContext&);

}  // namespace mg
