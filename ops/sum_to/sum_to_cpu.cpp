// sum_to on the CPU. When the target repeats over leading axes (the [B, T, D] -> [T, D] of
// the position gradient, or the whole tensor to a scalar loss) x is read as [rows, inner] and
// summed over rows, split across threads so that the bits do not depend on the thread count:
// by columns when there are many (each column summed in row order), else by fixed chunks of
// rows whose partial sums are added in chunk order. A strided loop for every other target and
// for a view (x read through its strides).
#include <algorithm>
#include <vector>

#include "common/broadcast.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"
#include "sum_to/sum_to.h"
#include "sum_to/sum_to_kernels.h"

namespace mg {

namespace {

// x read through its strides (a view or not), in its row-major order.
template <typename T>
void sum_to_loop(const Tensor& x, const Tensor& out) {
  const T* px = x.data_ptr<T>();
  T* po = out.data<T>();
  std::fill(po, po + out.numel(), T(0));
  // Iterate over x; the "b" strides map each element of x to its slot in out.
  const auto strides_out = broadcast_strides(out.shape(), x.shape());
  for_each_broadcast(x.shape(), x.strides(), strides_out,
                     [&](std::int64_t, std::int64_t ix, std::int64_t io) { po[io] += px[ix]; });
}

// out [inner] = sum over r of x [rows, inner]; threads take ranges of columns.
template <typename T>
void sum_rows_by_columns(const T* x, std::int64_t rows, std::int64_t inner, T* out) {
  constexpr std::int64_t kMinColumnsPerThread = 64;
  if (rows == 0) {
    std::fill(out, out + inner, T(0));
    return;
  }
  const int parts = static_cast<int>(
      std::clamp<std::int64_t>(inner / kMinColumnsPerThread, 1, threads_for(rows * inner)));
  // Columns in blocks that stay in the L1 cache while every row is added into them.
  constexpr std::int64_t kBlock = 2048;
  parallel_for(parts, [&](int part) {
    const Range c = part_range(inner, parts, part);
    for (std::int64_t block = c.begin; block < c.end; block += kBlock) {
      const std::int64_t end = std::min(c.end, block + kBlock);
      for (std::int64_t j = block; j < end; ++j) out[j] = x[j];
      for (std::int64_t r = 1; r < rows; ++r) {
        const T* row = x + r * inner;
        for (std::int64_t j = block; j < end; ++j) out[j] += row[j];
      }
    }
  });
}

// The sum of x [n] (a scalar loss): fixed chunks summed in kLanes independent lanes (which
// the compiler vectorises), then the chunks' sums added in order.
template <typename T>
T sum_all(const T* x, std::int64_t n) {
  constexpr std::int64_t kChunk = 1 << 16, kLanes = 16;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<T> partial(chunks);
  const int parts = threads_for(n);
  parallel_for(parts, [&](int part) {
    const Range r = part_range(chunks, parts, part);
    for (std::int64_t k = r.begin; k < r.end; ++k) {
      const std::int64_t begin = k * kChunk, end = std::min(n, begin + kChunk);
      T lanes[kLanes] = {};
      std::int64_t i = begin;
      for (; i + kLanes <= end; i += kLanes) {
        for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] += x[i + l];
      }
      T sum = 0;
      for (; i < end; ++i) sum += x[i];
      for (std::int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
      partial[k] = sum;
    }
  });
  T total = 0;
  for (T p : partial) total += p;
  return total;
}

}  // namespace

void sum_to_cpu_into(const Tensor& x, const Tensor& out) {
  dispatch_float(out.dtype(), [&]<typename T>() {
    const std::int64_t inner = out.numel();
    if (inner > 0 && x.is_contiguous() && is_leading_broadcast(out.shape(), x.shape())) {
      if (inner == 1) {
        out.data<T>()[0] = sum_all<T>(x.data<T>(), x.numel());
      } else {
        sum_rows_by_columns<T>(x.data<T>(), x.numel() / inner, inner, out.data<T>());
      }
      return;
    }
    sum_to_loop<T>(x, out);
  });
}

void sum_to_cpu(const KernelContext& ctx) { sum_to_cpu_into(ctx.inputs[0], ctx.out); }

// The naive reference, written apart from the kernels above (no helper of theirs, nothing
// from common/broadcast.h). The output has the target shape; each of its elements is the sum,
// in x's row-major order, of the elements of x that NumPy's rule maps onto it: x's last axes
// line up with the target's, and a target axis of size 1 (or a missing one) takes every index.
Tensor sum_to_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& x = inputs[0];
  const Shape& shape = attrs_as<SumToAttrs>("sum_to", attrs).shape;
  const Shape& x_shape = x.shape();
  Tensor out = Tensor::empty(shape, x.dtype());
  const std::size_t lead = x_shape.size() - shape.size();  // x's axes the target lacks
  // The flat index in `out` that x's element `flat` is summed into.
  auto target_of = [&](std::int64_t flat) {
    std::vector<std::int64_t> index(x_shape.size());
    for (std::size_t axis = x_shape.size(); axis-- > 0;) {
      index[axis] = flat % x_shape[axis];
      flat /= x_shape[axis];
    }
    std::int64_t target = 0;
    for (std::size_t k = 0; k < shape.size(); ++k) {
      target = target * shape[k] + (shape[k] == 1 ? 0 : index[lead + k]);
    }
    return target;
  };
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for (std::int64_t j = 0; j < out.numel(); ++j) {
      double sum = 0;
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        if (target_of(i) == j) sum += px[i];
      }
      po[j] = static_cast<T>(sum);
    }
  });
  return out;
}

}  // namespace mg
