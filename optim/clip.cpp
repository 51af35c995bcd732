// clip_grad_norm: squared norms per gradient (deterministic, in double), one sum on the host,
// then an in-place scale of each gradient when the total is above max_norm.
#include "clip.h"

#include <cmath>

#include "minigraph/autograd.h"
#include "minigraph/error.h"
#include "minigraph/op.h"
#include "minigraph/ops/builtin_ops.h"
#include "minigraph/ops/squared_norm/squared_norm.h"
#include "minigraph/ops/unary/unary.h"

namespace mg::optim {

double clip_grad_norm(std::span<const Tensor> params, double max_norm) {
  MG_CHECK(std::isfinite(max_norm) && max_norm >= 0, "clip_grad_norm", "max_norm",
           "a finite number >= 0", "{}", max_norm);
  NoGradGuard no_grad;
  double sum = 0;
  for (const Tensor& p : params) {
    const Tensor grad = p.grad();
    if (grad.defined()) sum += squared_norm(grad).item();
  }
  const double total = std::sqrt(sum);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1) {  // false for a NaN total too
    static const OpDef& scale_op = (register_builtin_ops(), OpRegistry::instance().get("scale"));
    for (const Tensor& p : params) {
      const Tensor grad = p.grad();
      if (grad.defined()) apply_op_into(scale_op, {grad}, grad, ScaleAttrs{coef});
    }
  }
  return total;
}

double clip_grad_norm(const Optimizer& optimizer, double max_norm) {
  std::vector<Tensor> params;
  for (const auto& [name, p] : optimizer.parameters()) params.push_back(p);
  return clip_grad_norm(params, max_norm);
}

}  // namespace mg::optim
