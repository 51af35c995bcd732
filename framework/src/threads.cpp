// The one thread setting: it sizes minigraph's parallel loops (parallel_for, on OpenMP) and
// the GEMM library's pool (backends/cpu/gemm.cpp).
#include "minigraph/threads.h"

#include <omp.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "../backends/cpu/gemm.h"
#include "minigraph/cpu.h"
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
  // The team is started now, while the room for its stacks was just checked, not at the first
  // kernel after the tensors took it (libgomp keeps its threads for later regions).
  // (An empty region would be compiled away.)
  std::atomic<int> started{0};
#pragma omp parallel num_threads(threads)
  started.fetch_add(1, std::memory_order_relaxed);
  detail::set_gemm_threads(threads);
}

// Each thread beyond the first takes address space that ulimit -v counts: its stack
// (RLIMIT_STACK; glibc takes 32 MiB when that is unlimited) and a malloc arena (64 MiB
// reserved). libgomp ends the process (exit 1) when it cannot start a thread, so no count is
// set that the room left cannot hold.
std::int64_t bytes_per_extra_thread() {
  rlimit stack{};
  const bool limited = getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY;
  const std::int64_t stack_bytes =
      limited ? static_cast<std::int64_t>(stack.rlim_cur) : std::int64_t{32} << 20;
  return stack_bytes + (std::int64_t{64} << 20);
}

// The most threads, up to `wanted`, whose stacks fit in the memory available now.
int threads_that_fit(int wanted) {
  const cpu::AvailableMemory available = cpu::available_memory();
  if (!available.known || wanted <= 1) return wanted;
  const std::int64_t extra = available.bytes / bytes_per_extra_thread();
  return static_cast<int>(std::clamp<std::int64_t>(extra + 1, 1, wanted));
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
// "4,2"), else the cores this process may run on; fewer when the memory left cannot hold their
// stacks. Never throws: it runs on first use.
int chosen_threads();
int default_threads() {
  const int wanted = chosen_threads();
  const int fits = threads_that_fit(wanted);
  if (fits < wanted) {
    origin() +=
        fmt::format("; {} of them, as the memory available ({}) holds no more thread stacks", fits,
                    cpu::available_memory().source);
  }
  return fits;
}

int chosen_threads() {
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
  const int fits = threads_that_fit(threads);
  MG_CHECK(fits == threads, "set_num_threads", "threads",
           fmt::format("at most {} (each thread past the first takes {} MiB of address space for "
                       "its stack and heap, and that is what the memory available holds)",
                       fits, bytes_per_extra_thread() >> 20),
           "{}", threads);
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
  // smaller than asked (inside another parallel region). An exception may not leave an OpenMP
  // region (that is std::terminate): the first one is kept and thrown again on the calling
  // thread once every part has run.
  std::exception_ptr failure;
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int part = 0; part < parts; ++part) {
    try {
      body(context, part);
    } catch (...) {
#pragma omp critical(mg_parallel_for_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}
}  // namespace detail

}  // namespace mg
