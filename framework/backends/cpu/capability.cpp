// mg::cpu::capability: which build of the twice-compiled loops (ops/common/cpu_isa.h) runs.
#include <atomic>

#include "minigraph/cpu.h"
#include "minigraph/error.h"

namespace mg::cpu {

namespace {

bool cpu_has_avx2() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
#else
  return false;
#endif
}

std::atomic<bool>& avx2_setting() {
  static std::atomic<bool> enabled{cpu_has_avx2()};
  return enabled;
}

}  // namespace

bool avx2_enabled() { return avx2_setting().load(std::memory_order_relaxed); }

std::string capability() { return avx2_enabled() ? "avx2" : "default"; }

void set_capability(std::string_view capability) {
  const bool avx2 = capability == "avx2";
  MG_CHECK(avx2 || capability == "default", "set_capability", "capability",
           "\"default\" or \"avx2\"", "\"{}\"", capability);
  MG_CHECK(!avx2 || cpu_has_avx2(), "set_capability", "capability",
           "\"default\" on this CPU (it has no AVX2)", "\"avx2\"");
  avx2_setting().store(avx2, std::memory_order_relaxed);
}

}  // namespace mg::cpu
