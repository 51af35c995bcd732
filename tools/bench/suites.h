// What `minigraph bench` measures, suite by suite, at ANDREA's shapes (V = 8,449, D = 768,
// T = 1,024, batch B): the machine's limits, every op's forward and backward, the input
// layer, the head, a whole step with its page faults and peak memory, and the per-op overhead
// on tiny tensors, and what autograd keeps for a backward. Each suite runs at the current
// mg::num_threads() and emits Records.
#pragma once

#include <functional>

#include "report.h"

namespace mg::bench {

struct Limits {
  double copy_gbs = 0;    // large-array memcpy, bytes read + written per second
  double fma_gflops = 0;  // f32 FMA peak
};

struct SuiteOptions {
  int reps = 5;  // timed repetitions (after one warm-up)
  std::function<bool(const std::string&)> wanted = [](const std::string&) { return true; };
  std::function<void(const Record&)> emit;  // called with each record as it is made
};

Limits measure_limits(const SuiteOptions& options);
void run_op_suite(int batch, const Limits& limits, const SuiteOptions& options);
// Causal attention, fused and composed (attention_suite.cpp).
void run_attention_suite(int batch, const Limits& limits, const SuiteOptions& options);
void run_model_suite(int batch, const Limits& limits, const SuiteOptions& options);
void run_train_suite(int batch, const Limits& limits, const SuiteOptions& options);
// ANDREA-120M's training step at B = 4, T = 64 and B = 1, T = 1024, whatever --batch says.
void run_gpt_suite(const Limits& limits, const SuiteOptions& options);
void run_overhead_suite(const SuiteOptions& options);
void run_autograd_suite(const SuiteOptions& options);

}  // namespace mg::bench
