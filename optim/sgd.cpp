// SGD: momentum_update writes the buffer (reading the parameter before it changes), then
// sgd_update writes the parameter; both in place through apply_op_into.
#include "sgd.h"

#include <cmath>
#include <limits>

#include "minigraph/error.h"
#include "minigraph/op.h"
#include "minigraph/ops/builtin_ops.h"
#include "minigraph/ops/update/update.h"

namespace mg::optim {

namespace {
void check_in(const char* name, double value, double lo, double hi) {
  MG_CHECK(std::isfinite(value) && value >= lo && value <= hi, "SGD", name,
           hi == std::numeric_limits<double>::max() ? fmt::format("a finite number >= {}", lo)
                                                    : fmt::format("a number in [{}, {}]", lo, hi),
           "{}", value);
}
}  // namespace

SGD::SGD(NamedParameters params, SGDOptions options)
    : Optimizer("SGD", std::move(params), options.lr), options_(options) {
  constexpr double kMax = std::numeric_limits<double>::max();
  check_in("momentum", options.momentum, 0, kMax);
  check_in("dampening", options.dampening, 0, 1);
  check_in("weight_decay", options.weight_decay, 0, kMax);
  MG_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0), "SGD", "nesterov",
           "a momentum > 0 and dampening 0 with Nesterov momentum", "momentum {}, dampening {}",
           options.momentum, options.dampening);
}

std::vector<std::string> SGD::state_names() const {
  if (options_.momentum == 0) return {};
  return {"momentum_buffer"};
}

void SGD::update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& state,
                 std::int64_t step) {
  static const OpDef& momentum_op =
      (register_builtin_ops(), OpRegistry::instance().get("momentum_update"));
  static const OpDef& sgd_op = (register_builtin_ops(), OpRegistry::instance().get("sgd_update"));
  const SGDOptions& o = options_;
  // Without momentum sgd_update does not read its buf: the gradient stands in.
  Tensor buf = grad;
  if (o.momentum != 0) {
    buf = state[0];
    apply_op_into(momentum_op, {buf, grad, param}, buf,
                  MomentumUpdateAttrs{o.momentum, o.dampening, o.weight_decay, step == 1});
  }
  apply_op_into(sgd_op, {param, grad, buf}, param,
                SgdUpdateAttrs{lr(), o.weight_decay, o.momentum, o.nesterov});
}

}  // namespace mg::optim
