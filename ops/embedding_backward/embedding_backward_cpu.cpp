// embedding_backward on the CPU: check every id first, then sum each table row's upstream rows
// in position order. Legend: n positions, V rows, D width.
//
// Deterministic and parallel by row ownership (as PyTorch's CPU kernel): the positions are
// grouped by id with a stable counting sort, and each thread computes whole rows of the
// gradient, row v = 0 + grad[p0] + grad[p1] + ... over its positions p0 < p1 < ... The sum
// of every row runs in the same order whatever the thread count, so the bits match the
// sequential reference for any number of threads. Rows no id names are zeroed, and only those.
#include <algorithm>
#include <cstring>

#include "common/ids.h"
#include "embedding_backward/embedding_backward.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

// Positions grouped by id, each group in position order: the positions of id v are
// order[first[v] .. first[v + 1]). The arrays live in one scratch tensor from the caching
// allocator, so a training step in steady state takes no fresh memory here either.
struct PositionsById {
  Tensor scratch;             // i64 [(V + 1) + n + V]
  std::int64_t rows;          // V
  const std::int64_t* first;  // [V + 1]
  const std::int64_t* order;  // [n]
};

template <typename Id>
PositionsById group_by_id(const Id* id, std::int64_t n, std::int64_t rows) {
  Tensor scratch = Tensor::empty({(rows + 1) + n + rows}, DType::i64);
  std::int64_t* first = scratch.data<std::int64_t>();
  std::int64_t* order = first + rows + 1;
  std::int64_t* next = order + n;  // the next free slot of each id's group
  std::fill(first, first + rows + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) ++first[id[i] + 1];
  for (std::int64_t v = 0; v < rows; ++v) first[v + 1] += first[v];
  std::copy(first, first + rows, next);
  for (std::int64_t i = 0; i < n; ++i) order[next[id[i]]++] = i;
  return {std::move(scratch), rows, first, order};
}

// The first row of part t when rows are split so that every part reads and writes about as
// many rows: a row costs one write plus one read per position naming it.
std::int64_t first_row_of(int t, int threads, const PositionsById& g) {
  const std::int64_t rows = g.rows;
  const std::int64_t* first = g.first;
  const std::int64_t total = first[rows] + rows;
  const std::int64_t target = total * t / threads;
  std::int64_t lo = 0, hi = rows;  // the first row r with first[r] + r >= target
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (first[mid] + mid < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <typename T>
void prefetch_row(const T* row, std::int64_t width) {
  constexpr std::int64_t kLine = 64;
  const char* bytes = reinterpret_cast<const char*>(row);
  const std::int64_t length = width * static_cast<std::int64_t>(sizeof(T));
  for (std::int64_t b = 0; b < length; b += kLine) __builtin_prefetch(bytes + b);
}

template <typename T, typename Id>
void scatter_add_rows(const Tensor& grad, const Tensor& ids, Tensor& out) {
  const std::int64_t rows = out.size(0), width = out.size(1), n = ids.numel();
  const Id* id = ids.data<Id>();
  check_ids_in_range("embedding_backward", id, ids.shape(), rows);
  const T* src = grad.data<T>();  // [n, D]
  T* dst = out.data<T>();         // [V, D]
  const PositionsById g = group_by_id(id, n, rows);
  const int parts = threads_for((n + rows) * width);
  parallel_for(parts, [&](int part) {
    const std::int64_t begin = first_row_of(part, parts, g);
    const std::int64_t end = first_row_of(part + 1, parts, g);
    const std::int64_t last_position = g.first[end];
    // The upstream rows are read in id order, i.e. at random positions, which the hardware
    // prefetchers cannot guess: ask for the row kAhead reads ahead.
    constexpr std::int64_t kAhead = 2;
    auto upstream_row = [&](std::int64_t p) {
      if (p + kAhead < last_position) prefetch_row(src + g.order[p + kAhead] * width, width);
      return src + g.order[p] * width;
    };
    for (std::int64_t v = begin; v < end; ++v) {
      T* row = dst + v * width;
      const std::int64_t p_begin = g.first[v], p_end = g.first[v + 1];
      if (p_begin == p_end) {
        std::memset(row, 0, width * sizeof(T));
        continue;
      }
      // 0 + x rather than x: the reference starts from zero, and 0 + (-0) is +0.
      const T* first_row = upstream_row(p_begin);
      for (std::int64_t d = 0; d < width; ++d) row[d] = T(0) + first_row[d];
      for (std::int64_t p = p_begin + 1; p < p_end; ++p) {
        const T* add = upstream_row(p);
        for (std::int64_t d = 0; d < width; ++d) row[d] += add[d];
      }
    }
  });
}

}  // namespace

void embedding_backward_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(), [&]<typename Id>() {
      scatter_add_rows<T, Id>(ctx.inputs[0], ctx.inputs[1], ctx.out);
    });
  });
}

// The naive reference, written apart from the kernel (no common/ids.h, no grouping): the
// output is [rows, D]; row v is 0 plus the upstream rows of the positions naming v, added in
// position order (so its bits are those the kernel promises for any thread count).
Tensor embedding_backward_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& grad = inputs[0];  // [..., D]
  const Tensor& ids = inputs[1];   // [...]
  const std::int64_t rows = attrs_as<EmbeddingBackwardAttrs>("embedding_backward", attrs).rows;
  const std::int64_t width = grad.shape().back(), positions = ids.numel();
  Tensor out = Tensor::empty({rows, width}, grad.dtype());
  dispatch_float(grad.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      const T* src = grad.data<T>();
      const Id* id = ids.data<Id>();
      T* dst = out.data<T>();
      for (std::int64_t p = 0; p < positions; ++p) {
        MG_CHECK(id[p] >= 0 && id[p] < rows, "embedding_backward_reference", "ids",
                 fmt::format("ids in [0, {})", rows), "id {} at flat position {}",
                 static_cast<std::int64_t>(id[p]), p);
      }
      for (std::int64_t v = 0; v < rows; ++v) {
        for (std::int64_t d = 0; d < width; ++d) dst[v * width + d] = T(0);
        for (std::int64_t p = 0; p < positions; ++p) {
          if (id[p] != v) continue;
          for (std::int64_t d = 0; d < width; ++d) dst[v * width + d] += src[p * width + d];
        }
      }
    });
  });
  return out;
}

}  // namespace mg
