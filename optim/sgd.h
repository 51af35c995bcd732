// Stochastic gradient descent with momentum, as torch.optim.SGD (same defaults, same order of
// operations; the update ops momentum_update and sgd_update, written in place).
#pragma once

#include "minigraph/optim/optimizer.h"

namespace mg::optim {

struct SGDOptions {
  double lr = 1e-3;           // >= 0
  double momentum = 0.0;      // >= 0
  double dampening = 0.0;     // in [0, 1]
  double weight_decay = 0.0;  // >= 0, L2 (added to the gradient)
  bool nesterov = false;      // needs momentum > 0 and dampening 0
};

// Per step and parameter p with gradient g (PyTorch's algorithm):
//   d = g + weight_decay * p
//   with momentum: buf = d on p's first step, else momentum * buf + (1 - dampening) * d;
//                  d = nesterov ? d + momentum * buf : buf
//   p = p - lr * d
// State: "momentum_buffer" per parameter when momentum != 0, none otherwise.
class SGD final : public Optimizer {
 public:
  // Throws mg::Error for options out of range (PyTorch's ValueErrors).
  explicit SGD(NamedParameters params, SGDOptions options = {});
  const SGDOptions& options() const { return options_; }
  std::vector<std::string> state_names() const override;

 private:
  void update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& state,
              std::int64_t step) override;
  SGDOptions options_;
};

}  // namespace mg::optim
