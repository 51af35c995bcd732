// One thread setting for all of minigraph's CPU work: its own parallel loops (OpenMP), Eigen,
// and the BLAS library's pool. One setting, because two pools each sized to the machine
// compete for the same cores (oversubscription) and both run slower.
#pragma once

#include <cstdint>
#include <string>

namespace mg {

// Threads for CPU kernels from now on; throws mg::Error below 1. The default is the number of
// cores this process may run on. Set it between op calls, not while kernels run elsewhere.
void set_num_threads(int threads);
int num_threads();

// How many threads a kernel should use for `work` elements: 1 for small tensors (where waking
// threads costs more than it saves), at most num_threads().
int threads_for(std::int64_t work);

// The library behind matmul on the CPU, chosen at configure time, with its version and, for
// OpenBLAS, the kernels it picked for this CPU: "OpenBLAS 0.3.21 (Cooperlake kernels)",
// "BLIS 0.9.0", or "Eigen 3.4.0 (no BLAS)".
std::string gemm_library();

}  // namespace mg
