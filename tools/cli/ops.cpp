// minigraph ops: every registered op (built-in, linked in, or loaded with --plugin) with its
// inputs, the devices it has kernels for, its dtypes, whether it has a backward rule, the
// sizes of its case tables and where it came from; --json for scripts.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

namespace {

std::vector<std::string> kernel_devices(const OpDef& op) {
  std::vector<std::string> devices;
  for (int kind = 0; kind < kNumDeviceKinds; ++kind) {
    if (op.kernel(static_cast<DeviceKind>(kind)) != nullptr)
      devices.emplace_back(device_kind_name(static_cast<DeviceKind>(kind)));
  }
  return devices;
}

std::vector<std::string> dtype_names(const OpDef& op) {
  std::vector<std::string> names;
  for (DType dtype : op.dtypes) names.emplace_back(dtype_name(dtype));
  return names;
}

// Left-aligned columns as wide as their widest cell, two spaces apart.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c + 1 < row.size(); ++c)
      line += fmt::format("{:<{}}  ", row[c], widths[c]);
    fmt::print("{}{}\n", line, row.back());
  }
}

std::size_t case_count(const OpDef& op) { return op.cases ? op.cases().size() : 0; }
std::size_t error_case_count(const OpDef& op) { return all_error_cases(op).size(); }

}  // namespace

void add_ops_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("ops", "list the registered ops, their kernels, dtypes and cases");
  cmd->footer(kExitCodesHelp);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON instead of a table");
  cmd->callback([json, &exit_code] {
    const auto ops = OpRegistry::instance().all();
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const OpDef* op : ops) {
        out.push_back({{"name", op->name},
                       {"summary", op->summary},
                       {"inputs", op->inputs},
                       {"kernels", kernel_devices(*op)},
                       {"dtypes", dtype_names(*op)},
                       {"backward", static_cast<bool>(op->backward)},
                       {"cases", case_count(*op)},
                       {"error_cases", error_case_count(*op)},
                       {"origin", op->origin}});
      }
      fmt::print("{}\n", out.dump(2));
    } else {
      std::vector<std::vector<std::string>> rows{
          {"op", "inputs", "kernels", "dtypes", "backward", "cases", "errors", "origin"}};
      for (const OpDef* op : ops) {
        rows.push_back({op->name, fmt::format("{}", fmt::join(op->inputs, ",")),
                        fmt::format("{}", fmt::join(kernel_devices(*op), ",")),
                        fmt::format("{}", fmt::join(dtype_names(*op), ",")),
                        op->backward ? "yes" : "no", std::to_string(case_count(*op)),
                        std::to_string(error_case_count(*op)), op->origin});
      }
      print_table(rows);
      const int gpus = device_count(DeviceKind::cuda);
      fmt::print("{} ops; devices here: cpu{}\n", ops.size(),
                 gpus > 0 ? fmt::format(", cuda x {}", gpus) : " (no cuda device)");
    }
    exit_code = kExitOk;
  });
}

}  // namespace mg::cli
