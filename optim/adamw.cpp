// AdamW: moving_average writes m and v, then adamw_update writes the parameter; all in place
// through apply_op_into. The bias corrections are computed here in double, as PyTorch does in
// Python (1 - beta ** step).
#include "adamw.h"

#include <cmath>
#include <limits>

#include "minigraph/error.h"
#include "minigraph/op.h"
#include "minigraph/ops/builtin_ops.h"
#include "minigraph/ops/update/update.h"

namespace mg::optim {

namespace {
void check_in(const char* name, double value, double lo, double hi, bool hi_open) {
  const bool below_hi = hi_open ? value < hi : value <= hi;
  MG_CHECK(std::isfinite(value) && value >= lo && below_hi, "AdamW", name,
           hi == std::numeric_limits<double>::max()
               ? fmt::format("a finite number >= {}", lo)
               : fmt::format("a number in [{}, {}{}", lo, hi, hi_open ? ")" : "]"),
           "{}", value);
}
}  // namespace

AdamW::AdamW(NamedParameters params, AdamWOptions options)
    : Optimizer("AdamW", std::move(params), options.lr), options_(options) {
  constexpr double kMax = std::numeric_limits<double>::max();
  check_in("beta1", options.beta1, 0, 1, true);
  check_in("beta2", options.beta2, 0, 1, true);
  check_in("eps", options.eps, 0, kMax, false);
  check_in("weight_decay", options.weight_decay, 0, kMax, false);
}

std::vector<std::string> AdamW::state_names() const { return {"exp_avg", "exp_avg_sq"}; }

void AdamW::update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& state,
                   std::int64_t step) {
  static const OpDef& average_op =
      (register_builtin_ops(), OpRegistry::instance().get("moving_average"));
  static const OpDef& update_op =
      (register_builtin_ops(), OpRegistry::instance().get("adamw_update"));
  const AdamWOptions& o = options_;
  const Tensor& m = state[0];
  const Tensor& v = state[1];
  apply_op_into(average_op, {m, grad}, m, MovingAverageAttrs{o.beta1, false});
  apply_op_into(average_op, {v, grad}, v, MovingAverageAttrs{o.beta2, true});
  const auto t = static_cast<double>(step);
  apply_op_into(update_op, {param, m, v}, param,
                AdamWUpdateAttrs{lr(), 1 - std::pow(o.beta1, t), 1 - std::pow(o.beta2, t), o.eps,
                                 o.weight_decay});
}

}  // namespace mg::optim
