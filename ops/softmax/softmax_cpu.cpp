// The softmax rows on the CPU: rows split across threads, each row walked in a few passes
// (max; exps and their sum; scale). The backward's sum is in double, in eight lanes
// (common/lanes.h): a row's gradient is a difference (g - sum(g * y)) that an f32 sum of 1,000
// terms would leave a digit short; the forward's exps, all in [0, 1], are summed in 32 lanes
// of T added in double (sum_mapped). Contiguous rows (dim the last axis) take loops with a
// unit stride that vectorise, each row's max found during the exps of the row before; others
// walk their stride.
//   R rows of N; x or (grad_out, result) [R rows of N] -> out [R rows of N]
#include <cmath>
#include <limits>
#include <vector>

#include "common/cpu_isa.h"
#include "common/fast_math.h"
#include "common/lanes.h"
#include "common/streaming.h"
#include "minigraph/threads.h"
#include "softmax/softmax_kernels.h"

namespace mg {

namespace {

// One row of n elements at `stride`; a unit stride is a compile-time 1.
template <typename T, bool Unit>
struct RowRef {
  T* base;
  std::int64_t stride;
  T& operator[](std::int64_t j) const { return base[Unit ? j : j * stride]; }
};

// dst[j] = value(j) for j in [0, n): unit rows of a large output streamed (common/streaming.h).
template <typename T, bool Unit, typename Value>
void write_row(RowRef<T, Unit> dst, std::int64_t n, bool stream, Value&& value) {
  if constexpr (Unit) {
    write_elements(dst.base, 0, n, stream, value);
  } else {
    for (std::int64_t j = 0; j < n; ++j) dst[j] = value(j);
  }
}

// y from the row's exps (in `exps`) and max.
template <bool Log, typename T, bool Unit>
void softmax_row_from_exps(RowRef<const T, Unit> x, RowRef<T, Unit> y, std::int64_t n, T max,
                           const T* exps, bool stream) {
  const double sum = sum_mapped(exps, n, [](auto&) {});
  if constexpr (Log) {
    const T log_sum = static_cast<T>(std::log(sum));  // NaN when the row held a NaN
    write_row(y, n, stream, [&](std::int64_t j) { return (x[j] - max) - log_sum; });
  } else {
    const T inv = static_cast<T>(1 / sum);
    write_row(y, n, stream, [&](std::int64_t j) { return exps[j] * inv; });
  }
}

// max; then exp(x - max) into `exps` (a row of n, in L1) and their sum; then y, scaled
// (softmax) or shifted (log_softmax). A row of -inf only (max -inf, where x - max would be
// NaN) is zeros, or -inf for Log. The exps are stored and summed after: two loops that
// vectorise, where one would not.
template <bool Log, typename T, bool Unit>
void softmax_forward_row(RowRef<const T, Unit> x, RowRef<T, Unit> y, std::int64_t n, T* exps,
                         bool stream) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  const T max = max_lanes(x.base, n, Unit ? 1 : x.stride, -kInf);  // NaN is skipped
  if (max == -kInf) {
    write_row(y, n, stream, [](std::int64_t) { return Log ? -kInf : T(0); });
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) exps[j] = exp_vectorizable(x[j] - max);
  softmax_row_from_exps<Log>(x, y, n, max, exps, stream);
}

// exps[j] = exp(x[j] - max) for a row in cache, while the next row (`next`, from memory) is
// loaded for its max, returned: blocks of the two loops in turn, so that the next row's loads
// overlap this row's exps rather than stall a pass of their own.
template <typename T>
T exps_and_next_max(const T* x, T max, const T* next, std::int64_t n, T* exps) {
  using V = Vector<T>;
  constexpr int kWidth = kVectorLanes<T>;
  constexpr std::int64_t kBlock = 8 * kWidth;
  V acc = V{} - std::numeric_limits<T>::infinity();
  std::int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    for (std::int64_t k = j; k < j + kBlock; k += kWidth) {
      V v;
      load_vector(v, next + k);
      acc = v > acc ? v : acc;
    }
    for (std::int64_t k = j; k < j + kBlock; ++k) exps[k] = exp_vectorizable(x[k] - max);
  }
  for (std::int64_t k = j; k < n; ++k) exps[k] = exp_vectorizable(x[k] - max);
  T next_max = acc[0];
  for (int k = 1; k < kWidth; ++k) next_max = acc[k] > next_max ? acc[k] : next_max;
  return max_lanes(next + j, n - j, 1, next_max);
}

// Contiguous rows [r.begin, r.end) starting at x and y, a row's max found while the row before
// it takes its exps.
template <bool Log, typename T>
void softmax_forward_unit_rows(const AxisRows& rows, const Range& r, const T* x, T* y, T* exps,
                               bool stream) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  const std::int64_t n = rows.n;
  T max = r.begin < r.end ? max_lanes(x + rows.start(r.begin), n, 1, -kInf) : T(0);
  for (std::int64_t i = r.begin; i < r.end; ++i) {
    const RowRef<const T, true> row{x + rows.start(i), 1};
    const RowRef<T, true> out{y + rows.start(i), 1};
    const T* next = i + 1 < r.end ? x + rows.start(i + 1) : nullptr;
    if (max == -kInf) {  // a row of -inf only (where x - max would be NaN)
      write_row(out, n, stream, [](std::int64_t) { return Log ? -kInf : T(0); });
      if (next != nullptr) max = max_lanes(next, n, 1, -kInf);
      continue;
    }
    const T row_max = max;
    if (next != nullptr) {
      max = exps_and_next_max(row.base, row_max, next, n, exps);
    } else {
      for (std::int64_t j = 0; j < n; ++j) exps[j] = exp_vectorizable(row[j] - row_max);
    }
    softmax_row_from_exps<Log>(row, out, n, row_max, exps, stream);
  }
}

// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
template <bool Log, typename T, bool Unit>
void softmax_backward_row(RowRef<const T, Unit> g, RowRef<const T, Unit> y, RowRef<T, Unit> dx,
                          std::int64_t n, bool stream) {
  const double sum = sum_lanes(n, [&](std::int64_t j) {
    return Log ? static_cast<double>(g[j]) : static_cast<double>(g[j]) * y[j];
  });
  const auto total = static_cast<T>(sum);
  write_row(dx, n, stream, [&](std::int64_t j) {
    return Log ? g[j] - exp_vectorizable(y[j]) * total : y[j] * (g[j] - total);
  });
}

// Calls part(range of rows, scratch) for the rows split across threads; scratch is a row of n
// elements of the thread's own.
template <typename T, typename PartFn>
void for_each_softmax_part(const AxisRows& rows, PartFn&& part_fn) {
  const std::int64_t count = rows.count();
  const int parts = threads_for(count * rows.n);
  parallel_for(parts, [&](int part) {
    const Range r = part_range(count, parts, part);
    std::vector<T> scratch(static_cast<std::size_t>(rows.n));
    run_vectorized([&] { part_fn(r, scratch.data()); });
  });
}

// Calls row(first element, scratch) for every row.
template <typename T, typename RowFn>
void for_each_softmax_row(const AxisRows& rows, RowFn&& row) {
  for_each_softmax_part<T>(rows, [&](const Range& r, T* scratch) {
    for (std::int64_t i = r.begin; i < r.end; ++i) row(rows.start(i), scratch);
  });
}

}  // namespace

template <bool Log>
void softmax_forward_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const AxisRows rows = softmax_rows(x.shape(), ctx.attrs);
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* py = ctx.out.data<T>();
    const bool stream = streams(x.numel(), sizeof(T));
    if (rows.inner == 1) {
      for_each_softmax_part<T>(rows, [&](const Range& r, T* exps) {
        softmax_forward_unit_rows<Log>(rows, r, px, py, exps, stream);
      });
      return;
    }
    for_each_softmax_row<T>(rows, [&](std::int64_t at, T* exps) {
      softmax_forward_row<Log>(RowRef<const T, false>{px + at, rows.inner},
                               RowRef<T, false>{py + at, rows.inner}, rows.n, exps, stream);
    });
  });
}

template <bool Log>
void softmax_backward_cpu(const KernelContext& ctx) {
  const Tensor& g = ctx.inputs[0];
  const AxisRows rows = softmax_rows(g.shape(), ctx.attrs);
  dispatch_float(g.dtype(), [&]<typename T>() {
    const T* pg = g.data<T>();
    const T* py = ctx.inputs[1].data<T>();
    T* pdx = ctx.out.data<T>();
    const bool stream = streams(g.numel(), sizeof(T));
    for_each_softmax_row<T>(rows, [&](std::int64_t at, T*) {
      if (rows.inner == 1) {
        softmax_backward_row<Log>(RowRef<const T, true>{pg + at, 1},
                                  RowRef<const T, true>{py + at, 1}, RowRef<T, true>{pdx + at, 1},
                                  rows.n, stream);
      } else {
        const std::int64_t s = rows.inner;
        softmax_backward_row<Log>(RowRef<const T, false>{pg + at, s},
                                  RowRef<const T, false>{py + at, s}, RowRef<T, false>{pdx + at, s},
                                  rows.n, stream);
      }
    });
  });
}

template void softmax_forward_cpu<false>(const KernelContext&);
template void softmax_forward_cpu<true>(const KernelContext&);
template void softmax_backward_cpu<false>(const KernelContext&);
template void softmax_backward_cpu<true>(const KernelContext&);

}  // namespace mg
