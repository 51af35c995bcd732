// The CPU GEMM library's side of the thread setting (gemm.cpp); threads.cpp calls it.
#pragma once

namespace mg::detail {
// Sizes the GEMM library's pool (OpenBLAS once loaded, BLIS, Eigen's GEMM).
void set_gemm_threads(int threads);
}  // namespace mg::detail
