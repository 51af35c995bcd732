// The optimizer base: the step loop over parameters with gradients, lazily allocated state,
// and state dicts checked in full before anything changes.
#include "optimizer.h"

#include <cmath>
#include <map>
#include <set>

#include "minigraph/autograd.h"
#include "minigraph/error.h"

namespace mg::optim {

namespace {

Tensor count_tensor(std::int64_t count) {
  return Tensor::from_vector(std::vector<std::int64_t>{count}, {1});
}

// A state dict's entries by name, each checked as it is read.
class DictEntries {
 public:
  // Refuses a name given twice and an undefined tensor.
  DictEntries(const StateDict& dict, std::string op) : op_(std::move(op)) {
    for (const auto& [name, t] : dict) {
      MG_CHECK(by_name_.emplace(name, &t).second, op_, name, "each entry once", "a repeated entry");
      MG_CHECK(t.defined(), op_, name, "a defined tensor", "an undefined one");
    }
  }

  std::size_t size() const { return by_name_.size(); }
  bool contains(const std::string& name) const { return by_name_.count(name) == 1; }

  // The count of an entry "step" or "<param>.step": i64 [1], at least `min`.
  std::int64_t read_count(const std::string& name, std::int64_t min) const {
    const Tensor& t = *by_name_.at(name);
    MG_CHECK(t.dtype() == DType::i64 && t.shape() == Shape{1}, op_, name,
             "an i64 tensor of shape [1]", "{} {}", dtype_name(t.dtype()), shape_str(t.shape()));
    // Read as an integer: item() is a double, which rounds counts past 2^53 (fuzz_checkpoint).
    const std::int64_t count = t.to(Device::cpu()).to_vector<std::int64_t>()[0];
    MG_CHECK(count >= min, op_, name, fmt::format("a step count >= {}", min), "{}", count);
    return count;
  }

  std::int64_t step_count() const {
    MG_CHECK(contains("step"), op_, "step", "an entry 'step' (the step count)", "no such entry");
    return read_count("step", 0);
  }

  // Whether the dict has parameter `param`'s entries ("<param>.step" and one per state name):
  // all of them or none, else an error.
  bool has_param_entries(const std::string& param, const std::vector<std::string>& names) const {
    const std::string step_name = param + ".step";
    const bool has_step = contains(step_name);
    for (const std::string& state : names) {
      const std::string name = param + "." + state;
      const bool has = contains(name);
      MG_CHECK(has == has_step, op_, has ? step_name : name,
               fmt::format("an entry, as '{}' has one", has ? name : step_name), "no such entry");
    }
    return has_step;
  }

  // Each state tensor of parameter `param` (p) must have its shape and dtype.
  void check_state_tensors(const std::string& param, const Tensor& p,
                           const std::vector<std::string>& names) const {
    for (const std::string& state : names) {
      const std::string name = param + "." + state;
      const Tensor& t = *by_name_.at(name);
      MG_CHECK(t.shape() == p.shape() && t.dtype() == p.dtype(), op_, name,
               fmt::format("shape {} and dtype {} (parameter '{}')", shape_str(p.shape()),
                           dtype_name(p.dtype()), param),
               "shape {} and dtype {}", shape_str(t.shape()), dtype_name(t.dtype()));
    }
  }

  // Refuses an entry that is not 'step', '<param>.step' or '<param>.<state name>'.
  void check_known(const NamedParameters& params, const std::vector<std::string>& names,
                   const std::string& kind) const {
    std::set<std::string> known{"step"};
    for (const auto& [param, p] : params) {
      known.insert(param + ".step");
      for (const std::string& state : names) known.insert(param + "." + state);
    }
    for (const auto& [name, t] : by_name_) {
      MG_CHECK(known.count(name) == 1, op_, name,
               fmt::format("an entry of this {} ('step', '<param>.step' or '<param>.<{}>')", kind,
                           fmt::join(names, "|")),
               "an unknown entry");
    }
  }

  // Copies into fresh tensors (a dict's tensors may be this optimizer's own live state).
  std::vector<Tensor> copied_state(const std::string& param, const Tensor& p,
                                   const std::vector<std::string>& names) const {
    std::vector<Tensor> state;
    for (const std::string& name : names) {
      Tensor t = Tensor::empty(p.shape(), p.dtype(), p.device());
      t.copy_(*by_name_.at(param + "." + name));
      state.push_back(std::move(t));
    }
    return state;
  }

 private:
  std::string op_;
  std::map<std::string, const Tensor*> by_name_;
};

}  // namespace

Optimizer::Optimizer(std::string kind, NamedParameters params, double lr)
    : kind_(std::move(kind)), params_(std::move(params)), slots_(params_.size()), lr_(0) {
  std::set<std::string> seen;
  for (const auto& [name, p] : params_) {
    MG_CHECK(!name.empty() && name != "step", kind_, "params",
             "parameter names other than \"\" and \"step\"", "'{}'", name);
    MG_CHECK(seen.insert(name).second, kind_, "params", "each parameter name once", "'{}' twice",
             name);
    MG_CHECK(p.defined(), kind_, name, "a defined parameter", "an undefined tensor");
    MG_CHECK(is_floating(p.dtype()), kind_, name, "a floating-point parameter (f32, f64)", "{}",
             dtype_name(p.dtype()));
  }
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  MG_CHECK(std::isfinite(lr) && lr >= 0, kind_, "lr", "a finite learning rate >= 0", "{}", lr);
  lr_ = lr;
}

void Optimizer::step() {
  NoGradGuard no_grad;
  ++step_count_;
  const std::vector<std::string> names = state_names();
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i].second;
    const Tensor grad = p.grad();
    if (!grad.defined()) continue;
    Slot& slot = slots_[i];
    if (slot.state.size() != names.size()) {
      slot.state.clear();
      for (std::size_t k = 0; k < names.size(); ++k) {
        slot.state.push_back(Tensor::zeros(p.shape(), p.dtype(), p.device()));
      }
    }
    update(p, grad, slot.state, ++slot.steps);
  }
}

void Optimizer::zero_grad() {
  for (auto& [name, p] : params_) p.zero_grad();
}

StateDict Optimizer::state_dict() const {
  StateDict dict;
  dict.emplace_back("step", count_tensor(step_count_));
  const std::vector<std::string> names = state_names();
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const Slot& slot = slots_[i];
    if (slot.steps == 0) continue;
    const std::string& param = params_[i].first;
    dict.emplace_back(param + ".step", count_tensor(slot.steps));
    for (std::size_t k = 0; k < names.size() && k < slot.state.size(); ++k) {
      dict.emplace_back(param + "." + names[k], slot.state[k]);
    }
  }
  return dict;
}

void Optimizer::load_state_dict(const StateDict& dict) {
  const DictEntries entries(dict, kind_ + ".load_state_dict");
  const std::int64_t step_count = entries.step_count();

  // Everything is checked and staged first; the optimizer changes only once all of it fits.
  const std::vector<std::string> names = state_names();
  std::vector<Slot> staged(params_.size());
  std::size_t used = 1;  // "step"
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto& [param, p] = params_[i];
    if (!entries.has_param_entries(param, names)) continue;
    staged[i].steps = entries.read_count(param + ".step", 1);
    entries.check_state_tensors(param, p, names);
    used += 1 + names.size();
  }
  if (used != entries.size()) entries.check_known(params_, names, kind_);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (staged[i].steps == 0) continue;
    staged[i].state = entries.copied_state(params_[i].first, params_[i].second, names);
  }
  slots_ = std::move(staged);
  step_count_ = step_count;
}

}  // namespace mg::optim
