// What autograd keeps: a chain of 16 elementwise ops on 16 MB tensors (4 Mi f32 each),
// mul, add, exp, log four times over, then a sum, and its backward: the time of forward +
// backward, and the allocator's peak of tensor memory above that held before the forward
// (what the graph keeps for its backward rules, then the gradients the pass makes).
#include "minigraph/cpu.h"
#include "suite_common.h"

namespace mg::bench {

namespace {

constexpr std::int64_t kChainElements = std::int64_t{4} << 20;  // 16 MB of f32
constexpr int kChainOps = 16;

// sum(log(exp(add(mul(y, w), w)))) four times over: mul reads both inputs, add none, exp its
// result and log its input (exp's result), as their backward rules do.
Tensor chain_loss(const Tensor& x, const Tensor& w) {
  Tensor y = x;
  for (int i = 0; i < kChainOps; i += 4) y = log(exp(add(mul(y, w), w)));
  return sum(y);
}

Record bytes_record(const std::string& name, double bytes, double median_ms, std::string note) {
  Record r{.name = name, .threads = num_threads()};
  r.median_ms = r.min_ms = r.max_ms = median_ms;
  r.achieved = bytes / kMiB;
  r.unit = "MiB";
  r.note = std::move(note);
  return r;
}

}  // namespace

void run_autograd_suite(const SuiteOptions& options) {
  const std::string name = "autograd.chain16";
  if (!options.wanted(name) && !options.wanted(name + ".peak_memory")) return;
  Tensor x = random_tensor({kChainElements}, true, 31);
  Tensor w = random_tensor({kChainElements}, true, 32);
  auto step = [&] {
    x.zero_grad();
    w.zero_grad();
    chain_loss(x, w).backward();
  };
  step();  // the leaves' gradients exist from here on, as in training
  Timing t = time_reps(step, options.reps);
  Record time{.name = name, .threads = num_threads()};
  time.median_ms = t.median_ms;
  time.min_ms = t.min_ms;
  time.max_ms = t.max_ms;
  time.achieved = t.median_ms;
  time.unit = "ms";
  time.note = "16 elementwise ops on [4Mi] f32 (16 MB) + sum, forward and backward";
  options.emit(time);

  const auto in_use = [] { return static_cast<double>(cpu::memory_stats().in_use_bytes); };
  x.zero_grad();
  w.zero_grad();
  const double before = in_use();
  cpu::reset_peak_memory_stats();
  Tensor loss = chain_loss(x, w);
  const double kept = in_use() - before;
  const double forward_peak = static_cast<double>(cpu::memory_stats().peak_in_use_bytes) - before;
  cpu::reset_peak_memory_stats();
  loss.backward();
  const double backward_peak = static_cast<double>(cpu::memory_stats().peak_in_use_bytes) - before;
  options.emit(bytes_record(
      name + ".peak_memory", std::max(forward_peak, backward_peak), t.median_ms,
      fmt::format("tensor bytes above those before the forward (allocator); kept by the graph "
                  "after the forward {:.0f} MiB, peak in the backward {:.0f} MiB",
                  kept / kMiB, backward_peak / kMiB)));
}

}  // namespace mg::bench
