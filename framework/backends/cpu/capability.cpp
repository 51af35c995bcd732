// mg::cpu::capability: which build of the loops compiled once per ISA (ops/common/cpu_isa.h)
// runs.
#include <array>
#include <atomic>
#include <string_view>

#include "minigraph/cpu.h"
#include "minigraph/error.h"

namespace mg::cpu {

namespace {

constexpr std::array<std::string_view, 3> kNames{"default", "avx2", "avx512"};

VectorIsa widest_on_this_cpu() {
#if defined(__x86_64__)
  static const VectorIsa widest = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
      return VectorIsa::avx512;
    }
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? VectorIsa::avx2
                                                                           : VectorIsa::baseline;
  }();
  return widest;
#else
  return VectorIsa::baseline;
#endif
}

std::atomic<VectorIsa>& isa_setting() {
  static std::atomic<VectorIsa> isa{widest_on_this_cpu()};
  return isa;
}

}  // namespace

VectorIsa vector_isa() { return isa_setting().load(std::memory_order_relaxed); }

std::string capability() { return std::string(kNames[static_cast<std::size_t>(vector_isa())]); }

void set_capability(std::string_view capability) {
  std::size_t chosen = 0;
  while (chosen < kNames.size() && kNames[chosen] != capability) ++chosen;
  MG_CHECK(chosen < kNames.size(), "set_capability", "capability",
           "\"default\", \"avx2\" or \"avx512\"", "\"{}\"", capability);
  const auto isa = static_cast<VectorIsa>(chosen);
  MG_CHECK(isa <= widest_on_this_cpu(), "set_capability", "capability",
           fmt::format("one this CPU has (its widest is \"{}\")",
                       kNames[static_cast<std::size_t>(widest_on_this_cpu())]),
           "\"{}\"", capability);
  isa_setting().store(isa, std::memory_order_relaxed);
}

}  // namespace mg::cpu
