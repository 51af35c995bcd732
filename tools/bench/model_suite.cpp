// ANDREA-120M's input layer and head, and whole training steps (input layer + head + backward
// from a scalar loss): times, minor page faults per steady-state step, and peak memory
// against the least a step can hold. Legend: n = B*T positions, D width, V vocabulary.
#include "machine.h"
#include "minigraph/cpu.h"
#include "suite_common.h"

namespace mg::bench {

namespace {

// Bytes the input layer must move: the gather (read + write n·D, the position rows once), and
// its backward: the scatter-add (read n·D, write V·D), the batch sum of the position
// gradient (read n·D, write T·D) and its placement in the table (T·D each way).
double input_layer_bytes(double n) {
  const double D = kWidth, V = kVocab, T = kContext;
  return (2 * n * D + T * D + 2 * n * D + V * D + 3 * T * D) * kFloatBytes;
}

// The least memory a step holds at once: parameters and their gradients, the activations x
// and logits, the gradient of the logits (a general loss needs it materialised) and that of x,
// which is made while the logits' gradient is read.
double minimum_step_bytes(const andrea::Andrea& model, double n) {
  const double parameters = static_cast<double>(model.num_parameters()) * kFloatBytes;
  const double x = n * kWidth * kFloatBytes, logits = n * kVocab * kFloatBytes;
  return 2 * parameters + 2 * x + 2 * logits;
}

struct RawHead {
  RawGemm forward, grad_x, grad_w;
  explicit RawHead(std::int64_t n)
      : forward(n, kVocab, kWidth, false, false),
        grad_x(n, kWidth, kVocab, false, true),
        grad_w(kWidth, kVocab, n, true, false) {}
  void run() { forward.run(), grad_x.run(), grad_w.run(); }
};

// What every measurement of the suite shares: the model, its ids, and the raw baselines.
struct ModelBench {
  int batch;
  double n;  // rows: B·T
  int reps;
  const Limits& limits;
  const SuiteOptions& options;
  andrea::Andrea model;
  Tensor ids;
  double raw_head_ms = 0, raw_input_ms = 0;
};

void bench_input_layer(ModelBench& b) {
  Tensor grad_x = random_tensor({b.batch, kContext, kWidth}, false, 14);
  Timing t = time_reps(
      [&] {
        b.model.zero_grad();
        b.model.input.forward(b.ids).backward(grad_x);
      },
      b.reps);
  b.options.emit(rate_record("input_layer.fwd_bwd", b.batch, t, Work::bytes, input_layer_bytes(b.n),
                             b.limits, b.raw_input_ms, "upstream grad given; raw: memcpy"));
}

void bench_head(ModelBench& b) {
  Tensor x = random_tensor({b.batch, kContext, kWidth}, true, 15);
  if (b.options.wanted("head.fwd_bwd")) {
    Timing t = time_reps(
        [&] {
          b.model.zero_grad();
          x.zero_grad();
          sum(b.model.head.forward(x)).backward();
        },
        b.reps);
    b.options.emit(rate_record("head.fwd_bwd", b.batch, t, Work::flops, head_flops(b.n), b.limits,
                               b.raw_head_ms, "backward from sum(logits); raw: 3 GEMMs"));
  }
  if (b.options.wanted("head.fwd_bwd_given_grad")) {
    Tensor grad_logits = random_tensor({b.batch, kContext, kVocab}, false, 16);
    Timing t = time_reps(
        [&] {
          b.model.zero_grad();
          x.zero_grad();
          b.model.head.forward(x).backward(grad_logits);
        },
        b.reps);
    b.options.emit(rate_record("head.fwd_bwd_given_grad", b.batch, t, Work::flops, head_flops(b.n),
                               b.limits, b.raw_head_ms, "upstream grad given; raw: 3 GEMMs"));
  }
}

// The whole step's time, its page faults and its peak memory.
void bench_step(ModelBench& b) {
  auto step = [&] {
    b.model.zero_grad();
    sum(b.model.forward(b.ids)).backward();
  };
  cpu::empty_cache();  // the step's own memory only, not blocks cached by earlier suites
  Timing t = time_reps(step, b.reps, 2);
  b.options.emit(rate_record("step", b.batch, t, Work::flops, head_flops(b.n), b.limits,
                             b.raw_head_ms + b.raw_input_ms,
                             "input layer + head + backward from sum; raw: 3 GEMMs + memcpy"));

  Record faults{.name = "step.page_faults", .threads = num_threads(), .batch = b.batch};
  faults.median_ms = faults.min_ms = faults.max_ms = t.median_ms;
  faults.achieved = t.faults_per_rep;
  faults.unit = "faults/step";
  faults.note = "minor page faults per steady-state step";
  b.options.emit(faults);

  cpu::reset_peak_memory_stats();
  step();
  const cpu::MemoryStats stats = cpu::memory_stats();
  const double minimum = minimum_step_bytes(b.model, b.n);
  Record memory{.name = "step.peak_memory", .threads = num_threads(), .batch = b.batch};
  memory.median_ms = memory.min_ms = memory.max_ms = t.median_ms;
  memory.achieved = static_cast<double>(stats.peak_reserved_bytes) / kMiB;
  memory.unit = "MiB";
  memory.limit_pct = 100 * static_cast<double>(stats.peak_reserved_bytes) / minimum;
  memory.note = fmt::format("held from the system; minimum {:.0f} MiB; peak in use {:.0f} MiB",
                            minimum / kMiB, static_cast<double>(stats.peak_in_use_bytes) / kMiB);
  b.options.emit(memory);
}

}  // namespace

void run_model_suite(int batch, const Limits& limits, const SuiteOptions& options) {
  auto wanted = options.wanted;
  if (!wanted("input_layer.fwd_bwd") && !wanted("head.fwd_bwd") &&
      !wanted("head.fwd_bwd_given_grad") && !wanted("step")) {
    return;  // nothing here is asked for: skip the model and the raw GEMMs
  }
  ModelBench b{.batch = batch,
               .n = static_cast<double>(batch) * kContext,
               .reps = options.reps,
               .limits = limits,
               .options = options,
               .model = andrea::Andrea(andrea::AndreaConfig::lesson()),
               .ids = random_ids(batch)};
  RawHead raw_head(batch * kContext);
  b.raw_head_ms = time_reps([&] { raw_head.run(); }, b.reps).median_ms;
  const RawCopy raw_input(static_cast<std::size_t>(input_layer_bytes(b.n) / 2), num_threads());
  b.raw_input_ms = time_reps([&] { raw_input.run(); }, b.reps).median_ms;

  if (wanted("input_layer.fwd_bwd")) bench_input_layer(b);
  bench_head(b);
  if (wanted("step")) bench_step(b);
}

}  // namespace mg::bench
