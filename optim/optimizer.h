// The optimizer base class: parameters by name, per-parameter state written in place, the step
// count, and state dicts for checkpoints. SGD (sgd.h) and AdamW (adamw.h) derive from it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "minigraph/safetensors.h"
#include "minigraph/tensor.h"

namespace mg::optim {

// Parameters by name, as Module::named_parameters() lists them. The tensors are shared handles:
// the optimizer writes the module's own parameters.
using NamedParameters = std::vector<std::pair<std::string, Tensor>>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient; parameters whose grad() is undefined
  // are skipped (as PyTorch does) and their state is left alone. Runs under NoGradGuard and
  // writes the parameters and the state in place through apply_op_into: after a parameter's
  // first step, a step allocates no tensor memory. Throws mg::Error (from the ops' rules) for a
  // gradient whose shape, dtype or device differs from its parameter's.
  void step();
  // Drops every parameter's gradient (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();

  // The learning rate of the next steps (a schedule sets it before each step); finite, >= 0.
  void set_lr(double lr);
  double lr() const { return lr_; }
  // Steps taken (calls of step(), including those that skipped every parameter).
  std::int64_t step_count() const { return step_count_; }
  const NamedParameters& parameters() const { return params_; }
  // The names of one parameter's state tensors: {"exp_avg", "exp_avg_sq"}, {"momentum_buffer"}
  // or none.
  virtual std::vector<std::string> state_names() const = 0;

  // The state, for a checkpoint: "step" (i64 [1], step_count()), then for each parameter
  // that has been updated, in parameter order, "<param>.step" (i64 [1], the parameter's own
  // update count, PyTorch's state['step']) and "<param>.<state name>" for each state name (the
  // live state tensors, in the parameter's shape, dtype and device: shared handles, not
  // copies). Parameters never updated have no entries, as in PyTorch.
  StateDict state_dict() const;
  // Sets the state from a dict of that layout (tensors on any device; copied into the state).
  // Checks every entry first, and throws mg::Error naming the entry, changing nothing, for: a
  // missing "step"; an unknown name; a parameter with some but not all of its entries; a
  // step entry that is not i64 [1] or holds a negative (or, for "<param>.step", zero) count; a
  // state tensor whose shape or dtype differs from its parameter's.
  void load_state_dict(const StateDict& dict);

 protected:
  // `kind` names the optimizer in errors ("SGD", "AdamW"). Throws mg::Error for an undefined
  // or non-float parameter, an empty, repeated or reserved ("step") name, or a bad lr.
  Optimizer(std::string kind, NamedParameters params, double lr);
  // One parameter's update, under NoGradGuard: grad is defined; state holds its tensors in
  // state_names() order, zeros before its first update; step is this parameter's update count
  // including this one (1 on its first update).
  virtual void update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& state,
                      std::int64_t step) = 0;
  const std::string& kind() const { return kind_; }

 private:
  struct Slot {
    std::vector<Tensor> state;  // empty until the first update
    std::int64_t steps = 0;     // updates of this parameter
  };
  std::string kind_;
  NamedParameters params_;
  std::vector<Slot> slots_;  // one per parameter
  double lr_;
  std::int64_t step_count_ = 0;
};

}  // namespace mg::optim
