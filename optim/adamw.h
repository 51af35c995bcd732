// AdamW (decoupled weight decay), as torch.optim.AdamW: same defaults, same order of
// operations (the single-tensor path), through the update ops moving_average and adamw_update
// written in place.
#pragma once

#include "minigraph/optim/optimizer.h"

namespace mg::optim {

struct AdamWOptions {
  double lr = 1e-3;            // >= 0
  double beta1 = 0.9;          // in [0, 1)
  double beta2 = 0.999;        // in [0, 1)
  double eps = 1e-8;           // >= 0
  double weight_decay = 1e-2;  // >= 0, decoupled (applied to the parameter)
};

// Per step and parameter p with gradient g, t the parameter's own step count (from 1):
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
//   p = p * (1 - lr * weight_decay) - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
// State: "exp_avg" (m) and "exp_avg_sq" (v) per parameter, zeros before its first step.
class AdamW final : public Optimizer {
 public:
  // Throws mg::Error for options out of range (PyTorch's ValueErrors).
  explicit AdamW(NamedParameters params, AdamWOptions options = {});
  const AdamWOptions& options() const { return options_; }
  std::vector<std::string> state_names() const override;

 private:
  void update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& state,
              std::int64_t step) override;
  AdamWOptions options_;
};

}  // namespace mg::optim
