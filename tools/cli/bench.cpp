// minigraph bench: the machine's limits, every op, the ANDREA input layer and head, whole
// steps, page faults, peak memory and per-op overhead, at each thread count and batch, as a
// table and (--json) one record per measurement. The suites live in tools/bench/.
#include <fmt/format.h>

#include <set>

#include "commands.h"
#include "machine.h"
#include "measure.h"
#include "minigraph/cpu.h"
#include "minigraph/threads.h"
#include "suites.h"

namespace mg::cli {

namespace {

struct BenchOptions {
  std::vector<int> threads;  // default: 1 and every core
  std::vector<int> batches{1, 8};
  int reps = 5;
  std::string filter;  // run only measurements whose name contains this
  std::string json;
};

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "bench", "measure the machine's limits, every op, the ANDREA layers and whole steps");
  auto options = std::make_shared<BenchOptions>();
  cmd->add_option("--threads", options->threads, "thread counts (default: 1 and all cores)")
      ->delimiter(',');
  cmd->add_option("--batch", options->batches, "batch sizes B (T = 1,024)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--reps", options->reps, "timed repetitions after one warm-up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--filter", options->filter, "only measurements whose name contains this");
  cmd->add_option("--json", options->json, "also write one JSON record per measurement here");
  cmd->callback([options, &exit_code] {
    const std::string machine = fmt::format("{}, {} cores", bench::cpu_model(), bench::cpu_cores());
    if (options->threads.empty()) {
      const std::set<int> defaults{1, bench::cpu_cores()};
      options->threads.assign(defaults.begin(), defaults.end());
    }
    fmt::print("minigraph bench on {}\nGEMM: {}\n\n", machine, gemm_library());

    std::vector<bench::Record> records;
    bench::SuiteOptions suite;
    suite.reps = options->reps;
    suite.wanted = [filter = options->filter](const std::string& name) {
      return name.find(filter) != std::string::npos;
    };
    suite.emit = [&](const bench::Record& r) {
      bench::print_row(r);
      records.push_back(r);
    };
    bench::print_header();
    const bench::OtherLoad other_load;
    for (int threads : options->threads) {
      set_num_threads(threads);
      const bench::Limits limits = bench::measure_limits(suite);
      bench::run_overhead_suite(suite);
      for (int batch : options->batches) {
        bench::run_op_suite(batch, limits, suite);
        bench::run_model_suite(batch, limits, suite);
        cpu::empty_cache();
      }
    }
    const double load = other_load.cores();
    fmt::print("\nother processes kept {:.2f} of {} cores busy during the run{}\n", load,
               bench::cpu_cores(), load > 0.05 ? ": the figures read low" : "");
    if (!options->json.empty()) {
      bench::write_json(records, options->json, machine, gemm_library(), load);
      fmt::print("\nwrote {} records to {}\n", records.size(), options->json);
    }
    exit_code = 0;
  });
}

}  // namespace mg::cli
