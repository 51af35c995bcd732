// The records of `minigraph bench`: one per measurement, printed as a table and written as
// JSON (the fields tools/bench/compare_torch.py reads).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mg::bench {

struct Record {
  std::string name;  // "head.fwd_bwd", "op.matmul.forward", "limit.copy_bandwidth", ...
  std::string backend = "cpu";
  int threads = 1;
  std::optional<int> batch;  // B, where the work has one
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double achieved = 0;                 // in `unit`
  std::string unit;                    // "GB/s", "GFLOP/s", "us", "faults/step", "MB"
  std::optional<double> limit_pct;     // achieved against the measured machine limit, in %
  std::optional<double> ratio_vs_raw;  // time against the same work done by raw library calls
  std::string note;                    // what the limit or the raw work is
};

// The table, a row at a time (a full run takes minutes).
void print_header();
void print_row(const Record& record);
void write_json(const std::vector<Record>& records, const std::string& path,
                const std::string& machine, const std::string& gemm_library,
                double other_load_cores);

}  // namespace mg::bench
