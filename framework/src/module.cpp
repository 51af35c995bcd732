#include "minigraph/module.h"

#include <cmath>

#include "minigraph/error.h"

namespace mg {

void Module::register_parameter(std::string name, Tensor& slot) {
  MG_CHECK(slot.defined() && is_floating(slot.dtype()), "register_parameter", name,
           "a defined floating-point tensor", "{}",
           slot.defined() ? std::string(dtype_name(slot.dtype())) : "an undefined tensor");
  slot.set_requires_grad(true);
  params_.emplace_back(std::move(name), &slot);
}

void Module::register_module(std::string name, Module& child) {
  children_.emplace_back(std::move(name), &child);
}

void Module::collect(const std::string& prefix,
                     std::vector<std::pair<std::string, Tensor*>>& out) const {
  for (auto& [name, slot] : params_) out.emplace_back(prefix + name, slot);
  for (auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor*>> slots;
  collect("", slots);
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [name, slot] : slots) out.emplace_back(name, *slot);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

std::int64_t Module::num_parameters() const {
  std::int64_t n = 0;
  for (auto& t : parameters()) n = checked_add(n, t.numel(), "Module", "num_parameters");
  return n;
}

void Module::zero_grad() {
  for (auto t : parameters()) t.zero_grad();
}

void Module::to(Device device) {
  std::vector<std::pair<std::string, Tensor*>> slots;
  collect("", slots);
  // Every parameter is checked before any moves: a refusal leaves the module where it was.
  for (auto& [name, slot] : slots) {
    MG_CHECK(slot->device() == device || slot->impl()->storage.use_count() == 1, "Module::to", name,
             "a parameter that owns its storage alone",
             "one sharing it with {} other tensors (views or detach())",
             slot->impl()->storage.use_count() - 1);
  }
  for (auto& [name, slot] : slots) slot->to_(device);
}

Tensor init_normal_scaled(const Shape& shape, std::int64_t d_model, std::uint64_t seed,
                          DType dtype) {
  MG_CHECK(d_model > 0, "init_normal_scaled", "d_model", "a positive size", "{}", d_model);
  return Tensor::normal(shape, 0.0, 1.0 / std::sqrt(static_cast<double>(d_model)), seed, dtype);
}

}  // namespace mg
