// Containers of modules, as torch.nn.ModuleList and torch.nn.Sequential: a stack of blocks is
// plain C++. Each element is moved into the container and owned there (on the heap, so the
// container itself moves), registered under its index: "0", "1", ...
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "minigraph/module.h"

namespace mg {

// Modules of type M (any Module by default), in order: for (const Block& b : blocks) ...
template <typename M = Module>
class ModuleList : public Module {
 public:
  template <typename Element>
  Element& push_back(Element module) {
    auto owned = std::make_unique<Element>(std::move(module));
    Element& out = *owned;
    register_module(std::to_string(items_.size()), std::move(owned));
    items_.push_back(&out);
    return out;
  }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  M& operator[](std::size_t i) { return *items_.at(i); }
  const M& operator[](std::size_t i) const { return *items_.at(i); }
  auto begin() const { return Iterator{items_.begin()}; }
  auto end() const { return Iterator{items_.end()}; }

 private:
  struct Iterator {
    typename std::vector<M*>::const_iterator at;
    M& operator*() const { return **at; }
    Iterator& operator++() {
      ++at;
      return *this;
    }
    bool operator==(const Iterator&) const = default;
  };
  std::vector<M*> items_;
};

// Modules with Tensor forward(const Tensor&) const, applied in order.
class Sequential : public Module {
 public:
  template <typename Element>
  Element& push_back(Element module) {
    auto owned = std::make_unique<Element>(std::move(module));
    Element* out = owned.get();
    register_module(std::to_string(steps_.size()), std::move(owned));
    steps_.push_back([out](const Tensor& x) { return out->forward(x); });
    return *out;
  }
  std::size_t size() const { return steps_.size(); }
  Tensor forward(const Tensor& x) const {
    Tensor y = x;
    for (const auto& step : steps_) y = step(y);
    return record_output(y);
  }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};

}  // namespace mg
