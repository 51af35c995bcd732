// The one thread setting: it sizes minigraph's parallel loops (parallel_for, on OpenMP) and
// the GEMM library's pool (backends/cpu/gemm.cpp).
#include "minigraph/threads.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "../backends/cpu/gemm.h"
#include "minigraph/error.h"

namespace mg {

namespace {

// Below this many elements per thread a kernel stays on one thread: waking a second thread
// costs microseconds, about what one thread needs to stream 32 K floats.
constexpr std::int64_t kMinWorkPerThread = 32 * 1024;

int cores_available() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void apply(int threads) {
  omp_set_num_threads(threads);
  detail::set_gemm_threads(threads);
}

// More than this many threads from the environment is taken for a typo, not a wish: OpenMP
// would try to start them all.
constexpr long kMaxThreadsFromEnvironment = 1024;

std::mutex origin_mutex;
std::string& origin() {
  static std::string text;
  return text;
}

// The default: OMP_NUM_THREADS when it holds a usable count (its first entry, as OpenMP reads
// "4,2"), else the cores this process may run on. Never throws: it runs on first use.
int default_threads() {
  const int cores = cores_available();
  const char* env = std::getenv("OMP_NUM_THREADS");
  std::string why_not;
  if (env != nullptr && *env != '\0') {
    errno = 0;
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    const bool whole = end != env && (*end == '\0' || *end == ',');
    if (whole && errno == 0 && n >= 1 && n <= kMaxThreadsFromEnvironment) {
      origin() = fmt::format("OMP_NUM_THREADS={}", n);
      return static_cast<int>(n);
    }
    why_not = fmt::format("; OMP_NUM_THREADS='{}' ignored: not a count in [1, {}]", env,
                          kMaxThreadsFromEnvironment);
  }
  origin() =
      fmt::format("the {} core{} this process may run on{}", cores, cores == 1 ? "" : "s", why_not);
  return cores;
}

// The setting, applied to every pool on first use so that a program that never calls
// set_num_threads still gets one consistent size (the BLAS reads its own default from the
// environment otherwise).
std::atomic<int>& setting() {
  static std::atomic<int> threads = [] {
    std::lock_guard lock(origin_mutex);
    const int n = default_threads();
    apply(n);
    return n;
  }();
  return threads;
}

}  // namespace

void set_num_threads(int threads) {
  MG_CHECK(threads >= 1, "set_num_threads", "threads", "at least 1", "{}", threads);
  setting().store(threads);
  apply(threads);
  std::lock_guard lock(origin_mutex);
  origin() = fmt::format("set_num_threads({})", threads);
}

std::string num_threads_origin() {
  setting();
  std::lock_guard lock(origin_mutex);
  return origin();
}

int num_threads() { return setting().load(std::memory_order_relaxed); }

int threads_for(std::int64_t work) {
  const std::int64_t useful = work / kMinWorkPerThread;
  return static_cast<int>(std::clamp<std::int64_t>(useful, 1, num_threads()));
}

namespace detail {
void run_parts_in_parallel(int parts, void (*body)(void* context, int part), void* context) {
  // A worksharing loop, not one part per thread id: every part runs even when the team is
  // smaller than asked (inside another parallel region).
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int part = 0; part < parts; ++part) body(context, part);
}
}  // namespace detail

}  // namespace mg
