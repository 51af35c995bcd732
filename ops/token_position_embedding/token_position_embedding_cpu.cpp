// token_position_embedding on the CPU: check every id first (so a bad id throws before any
// work), then one pass over the output, x[i] = tok[id[i]] + pos[offset + i % T], positions
// split across threads (each writes its own output rows). Legend: n = B*T positions, D width.
#include "common/ids.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"
#include "token_position_embedding/token_position_embedding.h"

namespace mg {

namespace {

struct Problem {
  std::int64_t positions, length, width, offset;  // n, T, D, offset
};

template <typename Id>
Problem checked_problem(const KernelContext& ctx) {
  const Tensor& tok = ctx.inputs[0];
  const Tensor& ids = ctx.inputs[2];
  check_ids_in_range("token_position_embedding", ids.data<Id>(), ids.shape(), tok.size(0));
  return {ids.numel(), ids.size(-1), tok.size(1),
          ctx.attrs_as<TokenPositionEmbeddingAttrs>().offset};
}

template <typename T, typename Id>
void embed(const KernelContext& ctx) {
  const Problem p = checked_problem<Id>(ctx);
  const T* tok = ctx.inputs[0].data<T>();                       // [V, D]
  const T* pos = ctx.inputs[1].data<T>() + p.offset * p.width;  // [T, D] from offset
  const Id* id = ctx.inputs[2].data<Id>();                      // [n]
  T* out = ctx.out.data<T>();                                   // [n, D]
  const int parts = threads_for(p.positions * p.width);
  parallel_for(parts, [&](int part) {
    const Range r = part_range(p.positions, parts, part);
    for (std::int64_t i = r.begin; i < r.end; ++i) {
      const T* token_row = tok + id[i] * p.width;
      const T* position_row = pos + (i % p.length) * p.width;
      T* row = out + i * p.width;
      for (std::int64_t d = 0; d < p.width; ++d) row[d] = token_row[d] + position_row[d];
    }
  });
}

}  // namespace

void token_position_embedding_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[2].dtype(), [&]<typename Id>() { embed<T, Id>(ctx); });
  });
}

// The naive reference, written apart from the kernel (no Problem, no common/ids.h): the
// output is ids' shape plus D; element (p, d), at position t = p mod T of its sequence, is
// tok[ids[p], d] + pos[offset + t, d].
Tensor token_position_embedding_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const std::int64_t offset =
      attrs_as<TokenPositionEmbeddingAttrs>("token_position_embedding", attrs).offset;
  const Tensor& tok = inputs[0];  // [V, D]
  const Tensor& pos = inputs[1];  // [T_max, D]
  const Tensor& ids = inputs[2];  // [..., T]
  const std::int64_t rows = tok.shape()[0], width = tok.shape()[1];
  const std::int64_t length = ids.shape().back();
  Shape shape = ids.shape();
  shape.push_back(width);
  Tensor out = Tensor::empty(shape, tok.dtype());
  dispatch_float(tok.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      const T* pt = tok.data<T>();
      const T* pp = pos.data<T>();
      const Id* id = ids.data<Id>();
      T* dst = out.data<T>();
      for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
        const std::int64_t p = flat / width, d = flat % width, t = p % length;
        const std::int64_t row = static_cast<std::int64_t>(id[p]);
        MG_CHECK(row >= 0 && row < rows, "token_position_embedding_reference", "ids",
                 fmt::format("ids in [0, {})", rows), "id {} at flat position {}", row, p);
        dst[flat] = pt[row * width + d] + pp[(offset + t) * width + d];
      }
    });
  });
  return out;
}

}  // namespace mg
