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
          attrs_as<TokenPositionEmbeddingAttrs>(ctx.attrs).offset};
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

template <typename T, typename Id>
void embed_reference(const KernelContext& ctx) {
  const Problem p = checked_problem<Id>(ctx);
  const T* tok = ctx.inputs[0].data<T>();
  const T* pos = ctx.inputs[1].data<T>();
  const Id* id = ctx.inputs[2].data<Id>();
  T* out = ctx.out.data<T>();
  for (std::int64_t i = 0; i < p.positions; ++i) {
    const std::int64_t t = i % p.length;
    for (std::int64_t d = 0; d < p.width; ++d) {
      out[i * p.width + d] = tok[id[i] * p.width + d] + pos[(p.offset + t) * p.width + d];
    }
  }
}

}  // namespace

void token_position_embedding_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[2].dtype(), [&]<typename Id>() { embed<T, Id>(ctx); });
  });
}

void token_position_embedding_reference(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[2].dtype(), [&]<typename Id>() { embed_reference<T, Id>(ctx); });
  });
}

}  // namespace mg
