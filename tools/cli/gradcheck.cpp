// minigraph gradcheck: finite-difference checks of every registered op's cases, and of the
// composed ANDREA input layer + head ("andrea"), printed as a table; exit 1 on a failure.
// On a terminal (and without --json) the case being checked shows on stderr while it runs.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

namespace {

struct Check {
  std::string op, case_name;
  GradcheckReport report;
};

GradcheckOptions options_for(DType dtype, std::int64_t max_checks) {
  GradcheckOptions o;
  o.analytic_dtype = dtype;
  o.max_checks_per_input = max_checks;
  if (dtype == DType::f32) {
    o.atol = 1e-4;
    o.rtol = 1e-3;
  } else {
    o.atol = 1e-6;
  }
  return o;
}

// `step` is shown as the progress prefix, e.g. "gradcheck 3/12".
std::vector<Check> check_op(const OpDef& op, DType dtype, Progress& progress,
                            const std::string& step) {
  std::vector<Check> checks;
  if (!op.backward || !op.cases) return checks;
  const auto cases = op.cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const OpCase& c = cases[i];
    if (c.edge_values) continue;  // inf, NaN, kinks: finite differences mean nothing there
    progress.show(
        fmt::format("{}: {}, case {}/{} {} ...", step, op.name, i + 1, cases.size(), c.name));
    auto inputs = make_case_inputs(c.inputs, DType::f64);
    auto fn = [&](const std::vector<Tensor>& in) { return apply_op(op, in, c.attrs); };
    checks.push_back(
        {op.name, c.name,
         gradcheck(fn, inputs, op.input_names(inputs.size()), options_for(dtype, c.max_checks))});
  }
  return checks;
}

// The input layer + untied head written functionally, so gradcheck can feed it f32 copies.
Check check_andrea(DType dtype) {
  const std::int64_t vocab = 11, width = 4, context = 6;
  std::vector<Tensor> params{Tensor::normal({vocab, width}, 0, 0.5, 1, DType::f64),
                             Tensor::normal({context, width}, 0, 0.5, 2, DType::f64),
                             Tensor::normal({width, vocab}, 0, 0.5, 3, DType::f64)};
  for (auto& p : params) p.set_requires_grad(true);
  Tensor ids = Tensor::from_vector<std::int64_t>({3, 3, 10, 0, 3, 1, 1, 7, 3, 2}, {2, 5});
  auto fn = [&](const std::vector<Tensor>& p) {
    return matmul(add(embedding(p[0], ids), position_embedding(p[1], 5, 1)), p[2]);
  };
  return {"andrea", "input_layer_plus_head",
          gradcheck(fn, params, {"tok_emb", "pos_emb", "head"}, options_for(dtype, 4096))};
}

// The command line (not mg::GradcheckOptions, the tolerances of one check).
struct GradcheckCommandOptions {
  std::string op_name;
  bool all = false;
  std::string dtype_name = "f64";
  bool json = false;
};

// The registry lists the names to choose from when --op names none of them.
void refuse_unknown_op(const std::string& op_name) {
  if (op_name != "andrea" && OpRegistry::instance().find(op_name) == nullptr) {
    std::vector<std::string> names;
    for (const OpDef* op : OpRegistry::instance().all()) names.push_back(op->name);
    throw UsageError(
        fmt::format("gradcheck --op: expected a registered op or 'andrea' ({}), got '{}'",
                    fmt::join(names, ", "), op_name));
  }
}

// Every op's cases, then the composed layer, numbered as one run.
std::vector<Check> check_everything(DType dtype, Progress& progress) {
  std::vector<Check> checks;
  const auto ops = OpRegistry::instance().all();
  const std::size_t steps = ops.size() + 1;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto more = check_op(*ops[i], dtype, progress, fmt::format("gradcheck {}/{}", i + 1, steps));
    checks.insert(checks.end(), more.begin(), more.end());
  }
  progress.show(fmt::format("gradcheck {}/{}: andrea, input layer + head ...", steps, steps));
  checks.push_back(check_andrea(dtype));
  return checks;
}

std::vector<Check> run_checks(const GradcheckCommandOptions& o, DType dtype, bool everything,
                              Progress& progress) {
  std::vector<Check> checks;
  if (everything) {
    checks = check_everything(dtype, progress);
  } else if (o.op_name == "andrea") {
    progress.show("gradcheck: andrea, input layer + head ...");
    checks.push_back(check_andrea(dtype));
  } else {
    checks = check_op(OpRegistry::instance().get(o.op_name), dtype, progress, "gradcheck");
  }
  progress.clear();
  return checks;
}

bool all_passed(const std::vector<Check>& checks) {
  bool passed = true;
  for (const Check& c : checks) {
    for (const auto& r : c.report.inputs) passed = passed && r.passed;
  }
  return passed;
}

void print_check_table(const std::vector<Check>& checks, bool passed) {
  fmt::print("{:<28} {:<24} {:<8} {:>8} {:>12} {:>12}  {}\n", "op", "case", "input", "checked",
             "max abs err", "max rel err", "result");
  for (const Check& c : checks) {
    for (const auto& r : c.report.inputs) {
      fmt::print("{:<28} {:<24} {:<8} {:>8} {:>12.3e} {:>12.3e}  {}\n", c.op, c.case_name, r.name,
                 r.checked, r.max_abs_error, r.max_rel_error, r.passed ? "pass" : "FAIL");
    }
  }
  fmt::print("{} checks: {}\n", checks.size(), passed ? "all passed" : "FAILED");
}

void print_check_json(const std::vector<Check>& checks, const std::string& dtype_name) {
  nlohmann::json out = nlohmann::json::array();
  for (const Check& c : checks) {
    for (const auto& r : c.report.inputs) {
      out.push_back({{"op", c.op},
                     {"case", c.case_name},
                     {"input", r.name},
                     {"dtype", dtype_name},
                     {"checked", r.checked},
                     {"max_abs_error", r.max_abs_error},
                     {"max_rel_error", r.max_rel_error},
                     {"worst_index", r.worst_index},
                     {"passed", r.passed}});
    }
  }
  fmt::print("{}\n", out.dump(2));
}

void run_gradcheck(const GradcheckCommandOptions& o, int& exit_code) {
  const DType dtype = o.dtype_name == "f32" ? DType::f32 : DType::f64;
  const bool everything = o.all || o.op_name.empty();
  if (!everything) refuse_unknown_op(o.op_name);
  Progress progress(!o.json);
  const std::vector<Check> checks = run_checks(o, dtype, everything, progress);
  const bool passed = all_passed(checks);
  if (o.json) {
    print_check_json(checks, o.dtype_name);
  } else {
    print_check_table(checks, passed);
  }
  exit_code = passed ? kExitOk : kExitFailed;
}

void add_gradcheck_options(CLI::App& cmd, GradcheckCommandOptions& o) {
  auto* op_opt = cmd.add_option(
      "--op", o.op_name, "one op by name (see minigraph ops), or 'andrea' for the composed layer");
  cmd.add_flag("--all", o.all, "every registered op and the composed layer (the default)")
      ->excludes(op_opt);
  cmd.add_option("--dtype", o.dtype_name, "dtype of the analytic gradient")
      ->check(one_of({"f64", "f32"}))
      ->capture_default_str();
  cmd.add_flag("--json", o.json, "print JSON instead of a table (and no progress)");
}

}  // namespace

void add_gradcheck_command(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("gradcheck", "check analytic gradients against finite differences");
  cmd->footer(std::string("Exit 1 when any check fails. On a terminal (not with --json) the case "
                          "being checked shows on stderr.\n") +
              kExitCodesHelp);
  // Owned by the callback, which outlives the parse that writes the options into it.
  auto o = std::make_shared<GradcheckCommandOptions>();
  add_gradcheck_options(*cmd, *o);
  cmd->callback([o, &exit_code] { run_gradcheck(*o, exit_code); });
}

}  // namespace mg::cli
