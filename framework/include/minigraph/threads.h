// One thread setting for all of minigraph's CPU work: its own parallel loops (OpenMP), Eigen,
// and the BLAS library's pool. One setting, because two pools each sized to the machine
// compete for the same cores (oversubscription) and both run slower.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace mg {

// Threads for CPU kernels from now on; throws mg::Error below 1. The default is
// OMP_NUM_THREADS when it holds a count (its first entry), else the number of cores this
// process may run on. Set it between op calls, not while kernels run elsewhere;
// OpenMP keeps the setting per calling thread, so set it on the thread that runs the model.
void set_num_threads(int threads);
int num_threads();
// Which setting gave num_threads(), for reports: "set_num_threads(4)", "OMP_NUM_THREADS=4" or
// "the 2 cores this process may run on" (naming an OMP_NUM_THREADS that was set but unusable).
std::string num_threads_origin();

// How many threads a kernel should use for `work` elements: 1 for small tensors (where waking
// threads costs more than it saves), at most num_threads().
int threads_for(std::int64_t work);

// Calls body(part) for every part in [0, parts) at once, one part per thread of the pool; on
// the calling thread alone when parts == 1, so small tensors pay nothing for threads. Parts
// must touch disjoint outputs. Kernels take parts = threads_for(work) and cut their work with
// part_range, so each part's result does not depend on how many threads ran the others.
template <typename Body>
void parallel_for(int parts, Body&& body);

// [begin, end) of part `part` when [0, n) is cut into `parts` contiguous, near-equal parts.
struct Range {
  std::int64_t begin, end;
};
inline Range part_range(std::int64_t n, int parts, int part) {
  return {n * part / parts, n * (part + 1) / parts};
}

namespace detail {
void run_parts_in_parallel(int parts, void (*body)(void* context, int part), void* context);
}  // namespace detail

template <typename Body>
void parallel_for(int parts, Body&& body) {
  if (parts <= 1) {
    body(0);
    return;
  }
  using BodyType = std::remove_reference_t<Body>;
  detail::run_parts_in_parallel(
      parts, [](void* context, int part) { (*static_cast<BodyType*>(context))(part); },
      static_cast<void*>(&body));
}

}  // namespace mg
