// The machine's limits, and the framework's own cost per op on tiny tensors (4 floats), where
// the kernel is nothing and dispatch, allocation and recording are everything.
#include "machine.h"
#include "suite_common.h"

namespace mg::bench {

namespace {

constexpr int kCallsPerRep = 2000;  // tiny calls are timed in batches

Record overhead_record(const std::string& name, const Timing& t, double raw_us, std::string note) {
  Record r{.name = name, .threads = num_threads()};
  r.median_ms = t.median_ms / kCallsPerRep;
  r.min_ms = t.min_ms / kCallsPerRep;
  r.max_ms = t.max_ms / kCallsPerRep;
  r.achieved = r.median_ms * 1e3;
  r.unit = "us";
  r.ratio_vs_raw = r.achieved / raw_us;
  r.note = std::move(note);
  return r;
}

}  // namespace

Limits measure_limits(const SuiteOptions& options) {
  const int threads = num_threads();
  auto limit_record = [&](const std::string& name, const Limit& limit, std::string unit,
                          std::string note) {
    Record r{.name = name, .threads = threads};
    r.median_ms = limit.timing.median_ms;
    r.min_ms = limit.timing.min_ms;
    r.max_ms = limit.timing.max_ms;
    r.achieved = limit.rate;
    r.unit = std::move(unit);
    r.note = std::move(note);
    options.emit(r);
  };
  const Limit copy = copy_bandwidth_gbs(threads, options.reps * 2);
  limit_record("limit.copy_bandwidth", copy, "GB/s",
               "memcpy of 256 MiB, bytes read + written; best repetition");
  const Limit fma = fma_peak_gflops(threads, options.reps);
  limit_record("limit.fma_peak", fma, "GFLOP/s",
               "f32 FMAs in registers, widest vectors; best repetition");
  return {.copy_gbs = copy.rate, .fma_gflops = fma.rate};
}

void run_overhead_suite(const SuiteOptions& options) {
  Tensor a = random_tensor({4}, true, 21), b = random_tensor({4}, true, 22);
  Tensor g = random_tensor({4}, false, 23);
  const OpDef& add_op = OpRegistry::instance().get("add");

  // Raw: the add kernel itself on an output made once, and the two gradient copies a one-op
  // backward amounts to.
  Tensor out = Tensor::empty({4}, DType::f32), grad_a = Tensor::empty({4}, DType::f32);
  Tensor grad_b = Tensor::empty({4}, DType::f32);
  std::vector<Tensor> inputs{a, b};
  const std::any no_attrs;
  auto kernel = add_op.kernel(DeviceKind::cpu);
  auto raw_add = [&] {
    for (int i = 0; i < kCallsPerRep; ++i) kernel(KernelContext{add_op, inputs, no_attrs, out});
  };
  const double raw_add_us = time_reps(raw_add, options.reps).median_ms * 1e3 / kCallsPerRep;
  auto raw_fwd_bwd = [&] {
    for (int i = 0; i < kCallsPerRep; ++i) {
      kernel(KernelContext{add_op, inputs, no_attrs, out});
      std::memcpy(grad_a.raw_data(), g.raw_data(), g.nbytes());
      std::memcpy(grad_b.raw_data(), g.raw_data(), g.nbytes());
    }
  };
  const double raw_fwd_bwd_us = time_reps(raw_fwd_bwd, options.reps).median_ms * 1e3 / kCallsPerRep;

  if (options.wanted("overhead.recorded_op")) {
    Timing t = time_reps(
        [&] {
          for (int i = 0; i < kCallsPerRep; ++i) add(a, b);
        },
        options.reps);
    options.emit(overhead_record("overhead.recorded_op", t, raw_add_us,
                                 "add of [4] + [4] that require grad; raw: the kernel"));
  }
  if (options.wanted("overhead.one_op_fwd_bwd")) {
    Timing t = time_reps(
        [&] {
          for (int i = 0; i < kCallsPerRep; ++i) {
            a.zero_grad();
            b.zero_grad();
            add(a, b).backward(g);
          }
        },
        options.reps);
    options.emit(overhead_record("overhead.one_op_fwd_bwd", t, raw_fwd_bwd_us,
                                 "add, then backward(g); raw: kernel + 2 copies"));
  }
}

}  // namespace mg::bench
