// minigraph bench: the machine's limits, every op, the ANDREA input layer and head, whole
// steps, page faults, peak memory and per-op overhead, at each thread count and batch, as a
// table and (--json) one record per measurement. The suites live in tools/bench/. The --json
// file is checked writable and the largest batch's memory checked before the run (minutes).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "commands.h"
#include "machine.h"
#include "measure.h"
#include "minigraph/minigraph.h"
#include "suite_common.h"
#include "suites.h"

namespace mg::cli {

namespace {

constexpr std::int64_t kMaxThreads = 256, kMaxReps = 1000;

// The bytes the suites hold at once for batch B, roughly (legend: n = B*T positions): the
// model's tables and gradients, the raw GEMMs' own operands (n x V three times), the logits,
// their gradient and a given upstream gradient (n x V), x-sized buffers, and the 2 x 256 MiB
// of the copy-bandwidth limit (the autograd chain's 16 MB tensors fit in that space after it)
// plus 256 MiB for the process.
std::int64_t bench_bytes(std::int64_t batch) {
  const std::int64_t f = 4, V = bench::kVocab, D = bench::kWidth, T = bench::kContext;
  const std::string what = "memory of --batch";
  const std::int64_t fixed = f * (8 * V * D + 4 * T * D) + (std::int64_t{768} << 20);
  const std::int64_t per_batch = f * T * (7 * V + 10 * D);
  return checked_add(fixed, checked_mul(per_batch, batch, "bench", what), "bench", what);
}

struct BenchOptions {
  std::vector<int> threads;  // default: 1 and every core
  std::vector<int> batches{1, 8};
  int reps = 5;
  std::string filter;  // run only measurements whose name contains this
  std::string json;
  std::string capability;  // the vector loops' ISA; empty: the widest the CPU has
};

void add_bench_options(CLI::App& cmd, BenchOptions& options) {
  cmd.add_option("--threads", options.threads,
                 "thread counts, comma-separated (default: 1 and all cores)")
      ->delimiter(',')
      ->check(whole_number(1, kMaxThreads));
  cmd.add_option("--batch", options.batches, "batch sizes B, comma-separated (T = 1,024)")
      ->delimiter(',')
      ->check(whole_number(1, kMaxBatch))
      ->capture_default_str();
  cmd.add_option("--reps", options.reps, "timed repetitions after one warm-up")
      ->check(whole_number(1, kMaxReps))
      ->capture_default_str();
  cmd.add_option("--filter", options.filter, "only measurements whose name contains this");
  cmd.add_option("--json", options.json,
                 "also write one JSON record per measurement here (checked writable first)")
      ->check(a_path());
  cmd.add_option("--capability", options.capability,
                 "the ISA of the elementwise, softmax and layer_norm loops (default: the widest "
                 "this CPU has), to measure a narrower one")
      ->check(one_of({"default", "avx2", "avx512"}));
}

// The run takes minutes: a batch too large for the memory, or a --json that cannot be written,
// is refused before it starts.
void refuse_before_running(const BenchOptions& options) {
  if (options.batches.empty()) throw UsageError("bench --batch: expected at least one batch size");
  const int largest = *std::max_element(options.batches.begin(), options.batches.end());
  require_memory(fmt::format("bench --batch {}", largest), bench_bytes(largest),
                 [](std::int64_t available) {
                   std::int64_t fits = 0;
                   while (fits < kMaxBatch && bench_bytes(fits + 1) <= available) ++fits;
                   return fits >= 1 ? fmt::format("at most --batch {} fits", fits)
                                    : std::string("not even --batch 1 fits");
                 });
  if (!options.json.empty()) check_writable("bench --json", options.json);
  if (!options.capability.empty()) cpu::set_capability(options.capability);
}

// Each record is printed as a table row when it is made, and kept for --json.
bench::SuiteOptions suite_options(const BenchOptions& options,
                                  std::vector<bench::Record>& records) {
  bench::SuiteOptions suite;
  suite.reps = options.reps;
  suite.wanted = [filter = options.filter](const std::string& name) {
    return name.find(filter) != std::string::npos;
  };
  suite.emit = [&records](const bench::Record& r) {
    bench::print_row(r);
    records.push_back(r);
  };
  return suite;
}

// Every suite at each thread count, and the batch-dependent ones at each batch.
void run_suites(const BenchOptions& options, const bench::SuiteOptions& suite) {
  for (int threads : options.threads) {
    set_num_threads(threads);
    const bench::Limits limits = bench::measure_limits(suite);
    bench::run_overhead_suite(suite);
    bench::run_autograd_suite(suite);
    for (int batch : options.batches) {
      bench::run_op_suite(batch, limits, suite);
      bench::run_attention_suite(batch, limits, suite);
      bench::run_model_suite(batch, limits, suite);
      bench::run_train_suite(batch, limits, suite);
      cpu::empty_cache();
    }
    bench::run_gpt_suite(limits, suite);
    cpu::empty_cache();
  }
}

void run_bench(BenchOptions& options, int& exit_code) {
  refuse_before_running(options);
  const std::string machine = fmt::format("{}, {} cores", bench::cpu_model(), bench::cpu_cores());
  if (options.threads.empty()) {
    const std::set<int> defaults{1, bench::cpu_cores()};
    options.threads.assign(defaults.begin(), defaults.end());
  }
  fmt::print("minigraph bench on {}\n{}\n{}; {} vector loops; the runs use {} thread(s)\n\n",
             machine, gemm_line(), threads_line(), cpu::capability(),
             fmt::join(options.threads, ", "));

  std::vector<bench::Record> records;
  const bench::SuiteOptions suite = suite_options(options, records);
  bench::print_header();
  // Counts what other processes ran while the suites did: busy cores make the figures read low.
  const bench::OtherLoad other_load;
  run_suites(options, suite);
  const double load = other_load.cores();
  fmt::print("\nother processes kept {:.2f} of {} cores busy during the run{}\n", load,
             bench::cpu_cores(), load > 0.05 ? ": the figures read low" : "");
  if (!options.json.empty()) {
    bench::write_json(records, options.json, machine, gemm_library(), load);
    fmt::print("\nwrote {} records to {}\n", records.size(), options.json);
  }
  exit_code = kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "bench", "measure the machine's limits, every op, the ANDREA layers and whole steps");
  cmd->footer(std::string("Refused up front (exit 3) when the largest --batch needs more memory "
                          "than is available, or --json cannot be written.\n") +
              kExitCodesHelp);
  // Owned by the callback, which outlives the parse that writes the options into it.
  auto options = std::make_shared<BenchOptions>();
  add_bench_options(*cmd, *options);
  cmd->callback([options, &exit_code] { run_bench(*options, exit_code); });
}

}  // namespace mg::cli
