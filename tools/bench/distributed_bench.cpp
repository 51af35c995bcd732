// The communicator's cost on this machine, for docs/distributed.md: run as the ranks of an MPI
// job (`mpirun -np 2 build/tools/distributed_bench`), it times the all-reduce (mean, f32) of 1 KB
// to ANDREA's 55 MB of gradients, as one tensor and as the gradient reducer's buckets, and prints
// the median of the repetitions with the bus bandwidth it means (2 (N-1)/N bytes / time, NCCL's
// definition). Rank 0 prints; not a test.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "minigraph/minigraph.h"

namespace {

using namespace mg;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Fn>
double time_ms(distributed::Communicator& comm, int reps, Fn&& fn) {
  std::vector<double> ms;
  for (int i = 0; i < reps + 1; ++i) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    fn();
    const auto end = std::chrono::steady_clock::now();
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  // Every rank's median, the slowest rank's: what the step waits for.
  Tensor t = Tensor::full({1}, median(ms), DType::f64);
  comm.all_reduce(t);
  return t.item() / comm.world_size();
}

}  // namespace

int main() {
  auto comm = distributed::in_mpi_job() ? distributed::mpi_communicator()
                                        : distributed::local_communicator();
  const int n = comm->world_size();
  const bool leader = comm->rank() == 0;
  if (leader) {
    fmt::print("{} ranks, {}; all_reduce(mean) of f32, median of 10\n", n,
               distributed::mpi_built() ? distributed::mpi_library_version() : "no MPI");
    fmt::print("{:>12} {:>10} {:>12}\n", "bytes", "ms", "bus GB/s");
  }
  for (std::int64_t bytes :
       {std::int64_t{1} << 10, std::int64_t{1} << 16, std::int64_t{1} << 20, std::int64_t{8} << 20,
        std::int64_t{26'000'000}, std::int64_t{55'056'384}}) {
    Tensor t = Tensor::ones({bytes / 4}, DType::f32);
    const double ms = time_ms(*comm, 10, [&] { comm->all_reduce(t, distributed::ReduceOp::mean); });
    if (leader) {
      fmt::print("{:>12} {:>10.3f} {:>12.2f}\n", bytes, ms,
                 2.0 * (n - 1) / n * static_cast<double>(bytes) / (ms * 1e6));
    }
  }
  // ANDREA's three gradients through the reducer, as a training step hands them over.
  andrea::Andrea model(andrea::AndreaConfig::lesson());
  for (std::int64_t mib : {1, 25, 1024}) {
    distributed::GradientReducer reducer(*comm, model.named_parameters(), mib << 20);
    const double ms = time_ms(*comm, 5, [&] {
      for (auto& [name, p] : model.named_parameters()) p.zero_grad();
      Tensor loss;
      for (auto& [name, p] : model.named_parameters()) {
        Tensor s = p.sum();
        loss = loss.defined() ? add(loss, s) : s;
      }
      backward(loss, Tensor(), false, reducer.hook());
      reducer.finish();
    });
    if (leader) {
      fmt::print(
          "reducer, buckets of {} MiB ({} buckets): backward of sum(params) + reduce "
          "{:.1f} ms\n",
          mib, reducer.buckets().size(), ms);
    }
  }
  return 0;
}
