// Finite-difference gradient checks (see gradcheck.h).
#include "minigraph/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "minigraph/autograd.h"
#include "minigraph/error.h"

namespace mg {

namespace {

double weighted_sum(const Tensor& out, const std::vector<double>& weights) {
  auto values = out.to_f64_vector();
  double sum = 0;
  for (std::size_t i = 0; i < values.size(); ++i) sum += values[i] * weights[i];
  return sum;
}

// Every element when small; otherwise one random element of each row, then random extras.
std::vector<std::int64_t> elements_to_check(const Tensor& t, std::int64_t budget,
                                            std::mt19937_64& rng) {
  std::int64_t n = t.numel();
  std::vector<std::int64_t> all;
  if (n <= budget) {
    for (std::int64_t i = 0; i < n; ++i) all.push_back(i);
    return all;
  }
  std::int64_t rows = t.dim() >= 2 ? t.size(0) : n;
  std::int64_t cols = n / std::max<std::int64_t>(rows, 1);
  std::set<std::int64_t> chosen;
  if (rows <= budget) {
    for (std::int64_t r = 0; r < rows; ++r)
      chosen.insert(r * cols + static_cast<std::int64_t>(rng() % cols));
  }
  while (static_cast<std::int64_t>(chosen.size()) < budget)
    chosen.insert(static_cast<std::int64_t>(rng() % n));
  return {chosen.begin(), chosen.end()};
}

// Every input that requires grad must be an f64 leaf, and at least one must require grad.
void check_arguments(const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  bool any = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    any = true;
    MG_CHECK(inputs[i].dtype() == DType::f64, "gradcheck", fmt::format("input {}", i),
             "f64 (finite differences in f32 mislead)", "{}", dtype_name(inputs[i].dtype()));
    MG_CHECK(inputs[i].is_leaf(), "gradcheck", fmt::format("input {}", i), "a leaf tensor",
             "the output of a recorded op");
  }
  MG_CHECK(any, "gradcheck", "inputs", "at least one input that requires grad", "none");

  MG_CHECK(is_floating(options.analytic_dtype), "gradcheck", "analytic_dtype", "f32 or f64", "{}",
           dtype_name(options.analytic_dtype));
}

// Returns each input's gradient and clears it, so the analytic pass starts from none.
std::vector<Tensor> take_grads(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> saved;
  for (auto t : inputs) {
    saved.push_back(t.grad());
    t.zero_grad();
  }
  return saved;
}

// Puts back what take_grads returned (`saved`: one per input).
void restore_grads(const std::vector<Tensor>& inputs, const std::vector<Tensor>& saved) {
  for (std::size_t i = 0; i < saved.size(); ++i) {
    Tensor t = inputs[i];
    t.zero_grad();
    if (saved[i].defined()) t.impl()->grad = saved[i].impl_ptr();
  }
}

// The analytic pass runs on the inputs themselves (f64) or on detached f32 copies.
std::vector<Tensor> analytic_pass_inputs(const std::vector<Tensor>& inputs,
                                         const GradcheckOptions& options) {
  std::vector<Tensor> analytic_inputs = inputs;
  if (options.analytic_dtype != DType::f64) {
    for (auto& t : analytic_inputs) {
      if (!is_floating(t.dtype())) continue;
      bool grad = t.requires_grad();
      t = t.detach().to(options.analytic_dtype);
      if (grad) t.set_requires_grad(true);
    }
  }
  return analytic_inputs;
}

// Runs backward from fn(analytic_inputs) with a random upstream gradient R and returns R: the
// analytic gradients are then those of L = sum(out * R).
std::vector<double> run_analytic_pass(const GradcheckFn& fn,
                                      const std::vector<Tensor>& analytic_inputs,
                                      const GradcheckOptions& options) {
  Tensor out = fn(analytic_inputs);
  MG_CHECK(out.dtype() == options.analytic_dtype, "gradcheck", "output",
           std::string(dtype_name(options.analytic_dtype)), "{}", dtype_name(out.dtype()));
  Tensor weights = Tensor::normal(out.shape(), 0, 1, options.seed, DType::f64);
  auto weight_values = weights.to_vector<double>();
  out.backward(weights.to(out.dtype()).to(out.device()));
  return weight_values;
}

// Adds the comparison of one element's analytic and numeric derivative to `r`.
void record_element(GradcheckInputReport& r, std::int64_t index, double a, double numeric,
                    const GradcheckOptions& options) {
  double abs_err = std::abs(a - numeric);
  double rel_err = abs_err / std::max(std::abs(numeric), 1e-12);
  ++r.checked;
  // Written so that a NaN (analytic or numeric) fails: every comparison with NaN is false.
  if (!(abs_err <= options.atol + options.rtol * std::abs(numeric))) r.passed = false;
  if (std::isnan(abs_err)) abs_err = rel_err = INFINITY;
  if (abs_err >= r.max_abs_error) {
    r.max_abs_error = abs_err;
    r.worst_index = index;
    r.worst_analytic = a;
    r.worst_numeric = numeric;
  }
  r.max_rel_error = std::max(r.max_rel_error, abs_err == 0 ? 0.0 : rel_err);
}

// The loss L = sum(fn(inputs) * R) whose finite differences the analytic gradients are
// checked against.
struct WeightedLoss {
  const GradcheckFn& fn;
  const std::vector<Tensor>& inputs;
  const std::vector<double>& weight_values;  // R
  const GradcheckOptions& options;

  // dL/d(input's element `index`), by central differences; the element is put back after.
  double numeric_derivative(Tensor& input, std::int64_t index) const {
    double original = input.at_flat(index);
    NoGradGuard no_grad;
    input.set_flat(index, original + options.eps);
    double plus = weighted_sum(fn(inputs), weight_values);
    input.set_flat(index, original - options.eps);
    double minus = weighted_sum(fn(inputs), weight_values);
    input.set_flat(index, original);
    double numeric = (plus - minus) / (2 * options.eps);
    return numeric;
  }

  // Compares `analytic` (undefined: all zeros), the gradient of `input`, with the numeric one.
  GradcheckInputReport check_input(Tensor input, std::string name, const Tensor& analytic,
                                   std::mt19937_64& rng) const {
    GradcheckInputReport r;
    r.name = std::move(name);
    auto analytic_values =
        analytic.defined() ? analytic.to_f64_vector() : std::vector<double>(input.numel(), 0.0);
    for (std::int64_t index : elements_to_check(input, options.max_checks_per_input, rng)) {
      double numeric = numeric_derivative(input, index);
      record_element(r, index, analytic_values[index], numeric, options);
    }
    return r;
  }
};

}  // namespace

bool GradcheckReport::passed() const {
  return std::all_of(inputs.begin(), inputs.end(), [](auto& r) { return r.passed; });
}

std::string GradcheckReport::str() const {
  std::string s;
  for (auto& r : inputs) {
    s += fmt::format(
        "{:<12} {:>8} checked  max abs err {:.3e}  max rel err {:.3e}  worst #{} "
        "(analytic {:.9g}, numeric {:.9g})  {}\n",
        r.name, r.checked, r.max_abs_error, r.max_rel_error, r.worst_index, r.worst_analytic,
        r.worst_numeric, r.passed ? "pass" : "FAIL");
  }
  return s;
}

GradcheckReport gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                          const std::vector<std::string>& names, const GradcheckOptions& options) {
  check_arguments(inputs, options);
  // Keep the caller's gradients; the check must leave them as they were.
  std::vector<Tensor> saved = take_grads(inputs);
  std::vector<Tensor> analytic_inputs = analytic_pass_inputs(inputs, options);
  const std::vector<double> weight_values = run_analytic_pass(fn, analytic_inputs, options);

  GradcheckReport report;
  std::mt19937_64 rng(options.seed);
  const WeightedLoss loss{fn, inputs, weight_values, options};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    std::string name = i < names.size() ? names[i] : fmt::format("input{}", i);
    report.inputs.push_back(
        loss.check_input(inputs[i], std::move(name), analytic_inputs[i].grad(), rng));
  }

  restore_grads(inputs, saved);
  return report;
}

}  // namespace mg
