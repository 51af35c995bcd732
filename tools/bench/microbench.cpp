// Google Benchmark microbenchmarks of minigraph's fixed costs: an op call on tiny tensors
// (recorded or not), a one-op forward + backward, and a tensor allocation from the caching
// allocator. Run build/tools/bench/minigraph_microbench; `minigraph bench` reports the same
// overheads beside PyTorch's.
#include <benchmark/benchmark.h>

#include "minigraph/minigraph.h"

namespace {

mg::Tensor tiny(bool requires_grad) {
  mg::Tensor t = mg::Tensor::normal({4}, 0, 1, 1);
  if (requires_grad) t.set_requires_grad(true);
  return t;
}

void BM_AddNotRecorded(benchmark::State& state) {
  mg::Tensor a = tiny(false), b = tiny(false);
  for (auto _ : state) benchmark::DoNotOptimize(mg::add(a, b));
}
BENCHMARK(BM_AddNotRecorded);

void BM_AddRecorded(benchmark::State& state) {
  mg::Tensor a = tiny(true), b = tiny(true);
  for (auto _ : state) benchmark::DoNotOptimize(mg::add(a, b));
}
BENCHMARK(BM_AddRecorded);

void BM_OneOpForwardBackward(benchmark::State& state) {
  mg::Tensor a = tiny(true), b = tiny(true), g = tiny(false);
  for (auto _ : state) {
    a.zero_grad();
    b.zero_grad();
    mg::add(a, b).backward(g);
  }
}
BENCHMARK(BM_OneOpForwardBackward);

void BM_EmptyTensor(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(mg::Tensor::empty({state.range(0)}, mg::DType::f32));
}
BENCHMARK(BM_EmptyTensor)->Arg(4)->Arg(1 << 20);

}  // namespace
