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
    progress.show(
        fmt::format("{}: {}, case {}/{} {} ...", step, op.name, i + 1, cases.size(), c.name));
    auto inputs = make_case_inputs(c.inputs, DType::f64);
    auto fn = [&](const std::vector<Tensor>& in) { return apply_op(op, in, c.attrs); };
    checks.push_back(
        {op.name, c.name, gradcheck(fn, inputs, op.inputs, options_for(dtype, c.max_checks))});
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

}  // namespace

void add_gradcheck_command(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("gradcheck", "check analytic gradients against finite differences");
  cmd->footer(std::string("Exit 1 when any check fails. On a terminal (not with --json) the case "
                          "being checked shows on stderr.\n") +
              kExitCodesHelp);
  auto op_name = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  auto dtype_name_opt = std::make_shared<std::string>("f64");
  auto json = std::make_shared<bool>(false);
  auto* op_opt = cmd->add_option(
      "--op", *op_name, "one op by name (see minigraph ops), or 'andrea' for the composed layer");
  cmd->add_flag("--all", *all, "every registered op and the composed layer (the default)")
      ->excludes(op_opt);
  cmd->add_option("--dtype", *dtype_name_opt, "dtype of the analytic gradient")
      ->check(one_of({"f64", "f32"}))
      ->capture_default_str();
  cmd->add_flag("--json", *json, "print JSON instead of a table (and no progress)");
  cmd->callback([=, &exit_code] {
    const DType dtype = *dtype_name_opt == "f32" ? DType::f32 : DType::f64;
    const bool everything = *all || op_name->empty();
    if (!everything && *op_name != "andrea" && OpRegistry::instance().find(*op_name) == nullptr) {
      std::vector<std::string> names;
      for (const OpDef* op : OpRegistry::instance().all()) names.push_back(op->name);
      throw UsageError(
          fmt::format("gradcheck --op: expected a registered op or 'andrea' ({}), got '{}'",
                      fmt::join(names, ", "), *op_name));
    }
    Progress progress(!*json);
    std::vector<Check> checks;
    if (everything) {
      const auto ops = OpRegistry::instance().all();
      const std::size_t steps = ops.size() + 1;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        auto more =
            check_op(*ops[i], dtype, progress, fmt::format("gradcheck {}/{}", i + 1, steps));
        checks.insert(checks.end(), more.begin(), more.end());
      }
      progress.show(fmt::format("gradcheck {}/{}: andrea, input layer + head ...", steps, steps));
      checks.push_back(check_andrea(dtype));
    } else if (*op_name == "andrea") {
      progress.show("gradcheck: andrea, input layer + head ...");
      checks.push_back(check_andrea(dtype));
    } else {
      checks = check_op(OpRegistry::instance().get(*op_name), dtype, progress, "gradcheck");
    }
    progress.clear();
    bool passed = true;
    nlohmann::json out = nlohmann::json::array();
    if (!*json) {
      fmt::print("{:<28} {:<24} {:<8} {:>8} {:>12} {:>12}  {}\n", "op", "case", "input", "checked",
                 "max abs err", "max rel err", "result");
    }
    for (const Check& c : checks) {
      for (const auto& r : c.report.inputs) {
        passed = passed && r.passed;
        if (*json) {
          out.push_back({{"op", c.op},
                         {"case", c.case_name},
                         {"input", r.name},
                         {"dtype", *dtype_name_opt},
                         {"checked", r.checked},
                         {"max_abs_error", r.max_abs_error},
                         {"max_rel_error", r.max_rel_error},
                         {"worst_index", r.worst_index},
                         {"passed", r.passed}});
        } else {
          fmt::print("{:<28} {:<24} {:<8} {:>8} {:>12.3e} {:>12.3e}  {}\n", c.op, c.case_name,
                     r.name, r.checked, r.max_abs_error, r.max_rel_error,
                     r.passed ? "pass" : "FAIL");
        }
      }
    }
    if (*json) {
      fmt::print("{}\n", out.dump(2));
    } else {
      fmt::print("{} checks: {}\n", checks.size(), passed ? "all passed" : "FAILED");
    }
    exit_code = passed ? kExitOk : kExitFailed;
  });
}

}  // namespace mg::cli
