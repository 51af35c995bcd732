// Causal attention at ANDREA's sizes (B, H = 12 heads, T = 1,024, hd = 64), q, k, v the heads
// of one [B, T, 3D] projection: the fused op and the same attention composed of separate ops,
// forward and forward + backward (upstream gradient given), and the memory each holds above
// its inputs. Raw work: the same GEMMs, bare, one head at a time, halved for the causal mask.
#include <algorithm>

#include "machine.h"
#include "minigraph/cpu.h"
#include "suite_common.h"

namespace mg::bench {

namespace {

constexpr std::int64_t kHeads = 12, kHeadSize = kWidth / kHeads;

using AttentionFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&,
                               const AttentionOptions&);

struct AttentionPath {
  std::string name;  // "fused", "composed"
  AttentionFn fn;
  std::string note;
};

// One GEMM over half of a head's [T, T] (the causal part), in flops.
double causal_gemm_flops(std::int64_t batch) {
  const double T = kContext;
  return static_cast<double>(batch * kHeads) * T * T * kHeadSize;
}

// The forward's two GEMMs (S = q kᵀ, out = P v) and the backward's five (S again, dv = Pᵀ dout,
// dP = dout vᵀ, dq = dS k, dk = dSᵀ q), bare, for one head, times the heads, halved.
struct RawAttention {
  RawGemm scores{kContext, kContext, kHeadSize, false, true};
  RawGemm weighted{kContext, kHeadSize, kContext, false, false};
  RawGemm transposed{kContext, kHeadSize, kContext, true, false};
  double forward_ms = 0, fwd_bwd_ms = 0;
  RawAttention(std::int64_t batch, int reps) {
    const double heads_halved = static_cast<double>(batch * kHeads) / 2;
    const double s = time_reps([&] { scores.run(); }, reps).median_ms;
    const double w = time_reps([&] { weighted.run(); }, reps).median_ms;
    const double t = time_reps([&] { transposed.run(); }, reps).median_ms;
    forward_ms = heads_halved * (s + w);
    fwd_bwd_ms = forward_ms + heads_halved * (2 * s + w + 2 * t);
  }
};

// One run of `work`, its time and the growth of the memory held from the system meanwhile.
struct PeakRun {
  Timing timing;
  double growth_bytes = 0;
};
PeakRun peak_run(const std::function<void()>& work) {
  cpu::empty_cache();
  cpu::reset_peak_memory_stats();
  const std::size_t before = cpu::memory_stats().reserved_bytes;
  PeakRun run;
  run.timing = time_reps(work, 1, 0);
  run.growth_bytes = static_cast<double>(cpu::memory_stats().peak_reserved_bytes - before);
  return run;
}

void bench_path(const AttentionPath& path, int batch, const RawAttention& raw, const Limits& limits,
                const SuiteOptions& options) {
  const std::string prefix = "attention." + path.name;
  Tensor qkv = random_tensor({batch, kContext, 3 * kWidth}, true);
  const Tensor grad_out = random_tensor({batch, kHeads, kContext, kHeadSize}, false, 13);
  // The heads are split inside each run: a backward releases the views' nodes with the rest.
  auto forward = [&] {
    const Tensor split = qkv.view({batch, kContext, 3, kHeads, kHeadSize});
    auto head = [&](std::int64_t i) { return split.select(2, i).permute({0, 2, 1, 3}); };
    return path.fn(head(0), head(1), head(2), {.is_causal = true});
  };
  auto fwd_bwd = [&] {
    qkv.zero_grad();
    forward().backward(grad_out);
  };
  const double flops = causal_gemm_flops(batch);
  if (options.wanted(prefix + ".forward")) {
    options.emit(rate_record(prefix + ".forward", batch, time_reps(forward, options.reps),
                             Work::flops, 2 * flops, limits, raw.forward_ms, path.note));
  }
  if (options.wanted(prefix + ".fwd_bwd")) {
    const Timing t = time_reps(fwd_bwd, options.reps);
    options.emit(rate_record(prefix + ".fwd_bwd", batch, t, Work::flops, 7 * flops, limits,
                             raw.fwd_bwd_ms, path.note + "; upstream grad given"));
  }
  if (options.wanted(prefix + ".peak_memory")) {
    const double scores = static_cast<double>(batch * kHeads) * kContext * kContext * kFloatBytes;
    const PeakRun run = peak_run(fwd_bwd);
    Record memory{.name = prefix + ".peak_memory", .threads = num_threads(), .batch = batch};
    memory.median_ms = memory.min_ms = memory.max_ms = run.timing.median_ms;
    memory.achieved = run.growth_bytes / kMiB;
    memory.unit = "MiB";
    memory.note = fmt::format("forward + backward, held from the system; one [B,H,T,T]: {:.0f} MiB",
                              scores / kMiB);
    options.emit(memory);
  }
}

}  // namespace

void run_attention_suite(int batch, const Limits& limits, const SuiteOptions& options) {
  const std::vector<AttentionPath> paths{
      {"fused", scaled_dot_product_attention, "tiles, online softmax, logsumexp saved"},
      {"composed", scaled_dot_product_attention_composed, "matmul, mask, softmax, matmul"}};
  auto wanted = [&](const AttentionPath& path) {
    const std::string prefix = "attention." + path.name;
    return options.wanted(prefix + ".forward") || options.wanted(prefix + ".fwd_bwd") ||
           options.wanted(prefix + ".peak_memory");
  };
  if (std::none_of(paths.begin(), paths.end(), wanted)) return;
  const RawAttention raw(batch, options.reps);
  for (const auto& path : paths) {
    if (wanted(path)) bench_path(path, batch, raw, limits, options);
  }
}

}  // namespace mg::bench
