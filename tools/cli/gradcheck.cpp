// minigraph gradcheck: finite-difference checks of every registered op's cases, and of the
// composed ANDREA input layer + head ("andrea"), printed as a table; exit 1 on a failure.
#include "minigraph/gradcheck.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "add/add.h"
#include "commands.h"
#include "embedding/embedding.h"
#include "matmul/matmul.h"
#include "minigraph/op.h"
#include "position_embedding/position_embedding.h"

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

std::vector<Check> check_op(const OpDef& op, DType dtype) {
  std::vector<Check> checks;
  if (!op.backward || !op.cases) return checks;
  for (const OpCase& c : op.cases()) {
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
  auto op_name = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  auto dtype_name_opt = std::make_shared<std::string>("f64");
  auto json = std::make_shared<bool>(false);
  auto* op_opt =
      cmd->add_option("--op", *op_name, "one op by name, or 'andrea' for the composed layer");
  cmd->add_flag("--all", *all, "every registered op and the composed layer")->excludes(op_opt);
  cmd->add_option("--dtype", *dtype_name_opt, "dtype of the analytic gradient")
      ->check(CLI::IsMember({"f64", "f32"}))
      ->capture_default_str();
  cmd->add_flag("--json", *json, "print JSON instead of a table");
  cmd->callback([=, &exit_code] {
    const DType dtype = *dtype_name_opt == "f32" ? DType::f32 : DType::f64;
    std::vector<Check> checks;
    if (*all || op_name->empty()) {
      for (const OpDef* op : OpRegistry::instance().all()) {
        auto more = check_op(*op, dtype);
        checks.insert(checks.end(), more.begin(), more.end());
      }
      checks.push_back(check_andrea(dtype));
    } else if (*op_name == "andrea") {
      checks.push_back(check_andrea(dtype));
    } else {
      checks = check_op(OpRegistry::instance().get(*op_name), dtype);
    }
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
    exit_code = passed ? 0 : 1;
  });
}

}  // namespace mg::cli
