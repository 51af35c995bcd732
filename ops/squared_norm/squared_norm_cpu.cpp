// squared_norm on the CPU: chunk sums in double (squared_norm_chunks.h), chunks spread over
// threads, then the chunk sums added in chunk order: the bits do not depend on the thread count.
//   N elements, C = ceil(N / 4096) chunks; x [N] -> partial [C] (double) -> out []
#include <algorithm>
#include <vector>

#include "minigraph/op.h"
#include "minigraph/threads.h"
#include "squared_norm/squared_norm.h"
#include "squared_norm/squared_norm_chunks.h"

namespace mg {

void squared_norm_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    const std::int64_t n = x.numel(), chunks = squared_norm_chunks(n);
    std::vector<double> partial(static_cast<std::size_t>(chunks));  // host memory, no tensor
    const int parts = threads_for(n);
    parallel_for(parts, [&](int part) {
      const Range r = part_range(chunks, parts, part);
      for (std::int64_t c = r.begin; c < r.end; ++c) {
        const std::int64_t begin = c * kSquaredNormChunk;
        const std::int64_t end = std::min(n, begin + kSquaredNormChunk);
        double sum = 0;
        for (std::int64_t i = begin; i < end; ++i) {
          const double v = static_cast<double>(px[i]);
          sum += v * v;
        }
        partial[static_cast<std::size_t>(c)] = sum;
      }
    });
    double total = 0;
    for (double s : partial) total += s;
    *ctx.out.data<T>() = static_cast<T>(total);
  });
}

// The naive reference: one plain loop in element order through the f64 accessors.
Tensor squared_norm_reference(std::span<const Tensor> inputs, const std::any&) {
  const Tensor& x = inputs[0];
  double sum = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) sum += x.at_flat(i) * x.at_flat(i);
  Tensor out = Tensor::empty({}, x.dtype());
  out.set_flat(0, sum);
  return out;
}

}  // namespace mg
