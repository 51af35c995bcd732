// The CPU GEMM: one place that knows which library runs matmul (chosen at configure time,
// cmake/MinigraphBlas.cmake) and which of its kernels run on this CPU.
//
// OpenBLAS is loaded at run time, not linked: Debian's OpenBLAS picks its kernels once, in its
// library constructor, from the CPU's family and model, and on a CPU newer than itself (0.3.21
// on a 2023 Xeon) it falls back to its generic SSE3 "Prescott" kernels, 4-5x slower. Its
// constructor reads OPENBLAS_CORETYPE first, so minigraph sets that from the CPU's features
// (AVX-512 with BF16, AVX-512, AVX2 + FMA) just before dlopen, and puts the environment back
// after. A user-set OPENBLAS_CORETYPE wins. BLIS picks its kernels by features itself and is
// linked; without a BLAS, Eigen's GEMM runs.
#include "gemm.h"

#include <dlfcn.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "minigraph/cpu.h"
#include "minigraph/error.h"
#include "minigraph/threads.h"

#if defined(MG_GEMM_OPENBLAS) || defined(MG_GEMM_BLIS)
#include <cblas.h>
#endif
#if defined(MG_GEMM_BLIS)
#include <blis.h>
#endif

namespace mg {

#if defined(MG_GEMM_OPENBLAS)
namespace {

// The OpenBLAS kernel family ("core type", as its constructor spells it) that the CPU's
// features allow, best first; nullptr leaves the choice to OpenBLAS (no AVX2: nothing newer
// than what it knows by model).
struct CoreChoice {
  const char* core;
  const char* features;
};
CoreChoice core_for_this_cpu() {
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (avx512 && __builtin_cpu_supports("avx512bf16")) return {"cooperlake", "AVX-512 with BF16"};
  if (avx512) return {"skylakex", "AVX-512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return __builtin_cpu_is("amd") ? CoreChoice{"zen", "AVX2 + FMA (AMD)"}
                                   : CoreChoice{"haswell", "AVX2 + FMA"};
  }
  return {nullptr, "no AVX2"};
}

using SgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         float, const float*, blasint, const float*, blasint, float, float*,
                         blasint);
using DgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         double, const double*, blasint, const double*, blasint, double, double*,
                         blasint);

struct OpenBlas {
  std::string error;  // why it could not be loaded; empty when it was
  std::string expected =
      fmt::format("OpenBLAS loadable from {} (Debian: libopenblas0-openmp)", MG_OPENBLAS_PATH);
  mutable std::atomic<int> mapped_threads{0};  // threads whose buffers OpenBLAS has mapped
  std::string chosen_by;
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
  char* (*get_config)() = nullptr;
  char* (*get_corename)() = nullptr;
  int (*get_parallel)() = nullptr;
};

// OpenBLAS maps a buffer of 128 MiB (its BUFFER_SIZE) for each thread when it loads (one per
// processor, whatever OPENBLAS_NUM_THREADS says) or gains threads, and one more at the first
// GEMM, and when the address space has no room it retries the mapping forever
// (blas_memory_alloc's loop): under too small a ulimit -v the process would hang. Measured with
// Debian's 0.3.21 on 2 cores: 302 MB of address space at the load, 140 MB more at the first
// GEMM. So the room is checked first, and an mg::Error says what is missing.
constexpr std::int64_t kOpenBlasBufferBytes = std::int64_t{128} << 20;
constexpr std::int64_t kOpenBlasLibraryBytes = std::int64_t{64} << 20;  // code, its threads

// What is missing for OpenBLAS to map its buffers for `threads` threads (`mapped` of them
// already there, 0 before the load), as an error's expected and actual texts; nothing when it
// fits.
struct MissingRoom {
  std::string expected, actual;
};
std::optional<MissingRoom> openblas_missing_room(int threads, int mapped) {
  const cpu::AvailableMemory available = cpu::available_memory();
  const std::int64_t needed = mapped == 0
                                  ? (threads + 1) * kOpenBlasBufferBytes + kOpenBlasLibraryBytes
                                  : (threads - mapped) * kOpenBlasBufferBytes;
  if (!available.known || available.bytes >= needed) return std::nullopt;
  return MissingRoom{
      fmt::format("{} MiB for OpenBLAS's buffers (128 MiB for each of {} threads{}; without it "
                  "OpenBLAS would wait forever)",
                  needed >> 20, threads - mapped, mapped == 0 ? ", one more and the library" : ""),
      fmt::format("{} MiB available ({})", available.bytes >> 20, available.source)};
}

template <typename Fn>
void bind(void* handle, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr && error.empty()) error = fmt::format("no symbol {} in it", name);
}

void load_openblas(OpenBlas& lib) {
  const int threads =
      std::max(num_threads(), static_cast<int>(std::thread::hardware_concurrency()));
  if (const auto missing = openblas_missing_room(threads, 0)) {
    lib.expected = missing->expected;
    lib.error = missing->actual;
    return;
  }
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  const CoreChoice choice = core_for_this_cpu();
  const bool choose = (user == nullptr || *user == '\0') && choice.core != nullptr;
  if (user != nullptr && *user != '\0') {
    lib.chosen_by = fmt::format("OPENBLAS_CORETYPE={} set by the user", user);
  } else if (choose) {
    lib.chosen_by = fmt::format("chosen from the CPU's features: {}", choice.features);
    setenv("OPENBLAS_CORETYPE", choice.core, 1);
  } else {
    lib.chosen_by = fmt::format("chosen by OpenBLAS: {}", choice.features);
  }
  // RTLD_GLOBAL: a program or op library may call cblas too and must get this same copy.
  void* handle = dlopen(MG_OPENBLAS_PATH, RTLD_NOW | RTLD_GLOBAL);
  if (choose) unsetenv("OPENBLAS_CORETYPE");
  if (handle == nullptr) {
    lib.error = dlerror();
    return;
  }
  lib.mapped_threads = threads;
  bind(handle, "cblas_sgemm", lib.sgemm, lib.error);
  bind(handle, "cblas_dgemm", lib.dgemm, lib.error);
  bind(handle, "openblas_set_num_threads", lib.set_num_threads, lib.error);
  bind(handle, "openblas_get_config", lib.get_config, lib.error);
  bind(handle, "openblas_get_corename", lib.get_corename, lib.error);
  bind(handle, "openblas_get_parallel", lib.get_parallel, lib.error);
  if (!lib.error.empty()) return;
  lib.set_num_threads(num_threads());
  // OpenBLAS maps a call's buffer (and its threads' ones) at the first GEMM: that happens now,
  // while the room for them was just checked, not at a first matmul after the tensors took it.
  constexpr int kWarm = 256;  // past OpenBLAS's small-matrix path and its threading threshold
  std::vector<float> warm(3 * kWarm * kWarm, 0.0f);
  lib.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kWarm, kWarm, kWarm, 1.0f, warm.data(),
            kWarm, warm.data() + kWarm * kWarm, kWarm, 0.0f, warm.data() + 2 * kWarm * kWarm,
            kWarm);
}

std::atomic<const OpenBlas*> loaded{nullptr};

// Loaded once, on first use (the first matmul, or a report of the library).
const OpenBlas& openblas() {
  static OpenBlas lib;
  static const bool published =
      (load_openblas(lib), loaded.store(&lib, std::memory_order_release), true);
  (void)published;
  return lib;
}

const OpenBlas& usable_openblas() {
  const OpenBlas& lib = openblas();
  MG_CHECK(lib.error.empty(), "matmul", "GEMM library", lib.expected, "{}", lib.error);
  return lib;
}

}  // namespace
#endif

namespace detail {
void set_gemm_threads(int threads) {
#if defined(MG_GEMM_OPENBLAS)
  // Before OpenBLAS is loaded there is nothing to set: loading applies num_threads().
  const OpenBlas* lib = loaded.load(std::memory_order_acquire);
  if (lib != nullptr && lib->error.empty()) {
    const int mapped = lib->mapped_threads.load();
    if (threads > mapped) {
      const auto missing = openblas_missing_room(threads, mapped);
      MG_CHECK(!missing, "set_num_threads", "threads", missing->expected, "{} threads: {}", threads,
               missing->actual);
      lib->mapped_threads = threads;
    }
    lib->set_num_threads(threads);
  }
#elif defined(MG_GEMM_BLIS)
  bli_thread_set_num_threads(threads);
#endif
  Eigen::setNbThreads(threads);  // Eigen's GEMM, the fallback; harmless beside a BLAS
}
}  // namespace detail

namespace cpu {

namespace {

// C = op(A) op(B), or C += op(A) op(B) when accumulate (BLAS beta 0 or 1).
template <typename T>
void gemm_beta(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k,
               bool transpose_a, bool transpose_b, bool accumulate) {
  if (m == 0 || n == 0) return;
#if defined(MG_GEMM_OPENBLAS) || defined(MG_GEMM_BLIS)
  MG_CHECK(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX, "matmul", "a",
           "GEMM sizes below 2^31 (cblas takes int)", "m {}, n {}, k {}", m, n, k);
  const auto ta = transpose_a ? CblasTrans : CblasNoTrans;
  const auto tb = transpose_b ? CblasTrans : CblasNoTrans;
  const int lda = static_cast<int>(std::max<std::int64_t>(1, transpose_a ? m : k));
  const int ldb = static_cast<int>(std::max<std::int64_t>(1, transpose_b ? k : n));
#if defined(MG_GEMM_OPENBLAS)
  const auto sgemm = usable_openblas().sgemm;
  const auto dgemm = usable_openblas().dgemm;
#else
  const auto sgemm = cblas_sgemm;
  const auto dgemm = cblas_dgemm;
#endif
  if constexpr (std::is_same_v<T, float>) {
    sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
          1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, static_cast<int>(n));
  } else {
    dgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0,
          a, lda, b, ldb, accumulate ? 1.0 : 0.0, c, static_cast<int>(n));
  }
#else
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> A(a, transpose_a ? k : m, transpose_a ? m : k);
  Eigen::Map<const Matrix> B(b, transpose_b ? n : k, transpose_b ? k : n);
  Eigen::Map<Matrix> C(c, m, n);
  auto store = [&](const auto& product) {
    if (accumulate) {
      C.noalias() += product;
    } else {
      C.noalias() = product;
    }
  };
  if (k == 0) {
    if (!accumulate) C.setZero();
  } else if (!transpose_a && !transpose_b) {
    store(A * B);
  } else if (transpose_a && !transpose_b) {
    store(A.transpose() * B);
  } else if (!transpose_a) {
    store(A * B.transpose());
  } else {
    store(A.transpose() * B.transpose());
  }
#endif
}

}  // namespace

template <typename T>
void gemm(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k,
          bool transpose_a, bool transpose_b) {
  gemm_beta(a, b, c, m, n, k, transpose_a, transpose_b, false);
}

template <typename T>
void gemm_accumulate(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k,
                     bool transpose_a, bool transpose_b) {
  gemm_beta(a, b, c, m, n, k, transpose_a, transpose_b, true);
}

template void gemm<float>(const float*, const float*, float*, std::int64_t, std::int64_t,
                          std::int64_t, bool, bool);
template void gemm<double>(const double*, const double*, double*, std::int64_t, std::int64_t,
                           std::int64_t, bool, bool);
template void gemm_accumulate<float>(const float*, const float*, float*, std::int64_t, std::int64_t,
                                     std::int64_t, bool, bool);
template void gemm_accumulate<double>(const double*, const double*, double*, std::int64_t,
                                      std::int64_t, std::int64_t, bool, bool);

}  // namespace cpu

std::string gemm_kernels() {
#if defined(MG_GEMM_OPENBLAS)
  const OpenBlas& lib = openblas();
  return lib.error.empty() ? lib.get_corename() : "none (OpenBLAS not loadable)";
#elif defined(MG_GEMM_BLIS)
  return bli_arch_string(bli_arch_query_id());
#else
  return "Eigen";
#endif
}

std::string gemm_library() {
#if defined(MG_GEMM_OPENBLAS)
  const OpenBlas& lib = openblas();
  if (!lib.error.empty()) {
    return fmt::format("OpenBLAS, not loadable from {}: {}", MG_OPENBLAS_PATH, lib.error);
  }
  // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64"
  const std::string config = lib.get_config();
  const std::string version = config.substr(0, config.find(' ', config.find(' ') + 1));
  const int threading = lib.get_parallel();  // 0 none, 1 its own pthreads, 2 OpenMP
  return fmt::format("{} ({} kernels, {}; {})", version, lib.get_corename(), lib.chosen_by,
                     threading == 2   ? "OpenMP threads"
                     : threading == 1 ? "pthreads"
                                      : "serial");
#elif defined(MG_GEMM_BLIS)
  return fmt::format("BLIS {} ({} kernels, chosen by BLIS)", bli_info_get_version_str(),
                     gemm_kernels());
#else
  return fmt::format("Eigen {}.{}.{} (no BLAS)", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                     EIGEN_MINOR_VERSION);
#endif
}

}  // namespace mg
