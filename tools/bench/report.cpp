#include "report.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "minigraph/error.h"

namespace mg::bench {

namespace {

std::string optional_str(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "-";
}

}  // namespace

void print_header() {
  fmt::print("{:<40} {:>3} {:>2} {:>10} {:>10} {:>10} {:>9} {:<11} {:>7} {:>6}  {}\n", "name",
             "thr", "B", "median ms", "min ms", "max ms", "achieved", "unit", "% limit", "/ raw",
             "note");
}

void print_row(const Record& r) {
  // Times to 4 significant digits: from the 0.0002 ms of a tiny op to the seconds of a step.
  fmt::print("{:<40} {:>3} {:>2} {:>10.4g} {:>10.4g} {:>10.4g} {:>9.2f} {:<11} {:>7} {:>6}  {}\n",
             r.name, r.threads, r.batch ? std::to_string(*r.batch) : "-", r.median_ms, r.min_ms,
             r.max_ms, r.achieved, r.unit, optional_str(r.limit_pct, "{:.1f}"),
             optional_str(r.ratio_vs_raw, "{:.2f}"), r.note);
  std::fflush(stdout);
}

void write_json(const std::vector<Record>& records, const std::string& path,
                const std::string& machine, const std::string& gemm_library,
                double other_load_cores) {
  nlohmann::json out;
  out["machine"] = machine;
  out["gemm_library"] = gemm_library;
  out["other_load_cores"] = other_load_cores;  // other processes' CPU use during the run
  out["records"] = nlohmann::json::array();
  for (const Record& r : records) {
    nlohmann::json j{{"name", r.name},           {"backend", r.backend}, {"threads", r.threads},
                     {"median_ms", r.median_ms}, {"min_ms", r.min_ms},   {"max_ms", r.max_ms},
                     {"achieved", r.achieved},   {"unit", r.unit},       {"note", r.note}};
    j["batch"] = r.batch ? nlohmann::json(*r.batch) : nlohmann::json(nullptr);
    j["limit_pct"] = r.limit_pct ? nlohmann::json(*r.limit_pct) : nlohmann::json(nullptr);
    j["ratio_vs_raw"] = r.ratio_vs_raw ? nlohmann::json(*r.ratio_vs_raw) : nlohmann::json(nullptr);
    out["records"].push_back(j);
  }
  std::ofstream file(path);
  MG_CHECK(file.good(), "bench", "--json", "a writable file", "'{}'", path);
  file << out.dump(2) << "\n";
}

}  // namespace mg::bench
