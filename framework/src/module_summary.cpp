#include "minigraph/module_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace mg {
namespace {

thread_local ModuleShapes* innermost = nullptr;

int depth_of(const std::string& name) {
  return name.empty() ? 0 : 1 + static_cast<int>(std::count(name.begin(), name.end(), '.'));
}

// "├─" before a row at depth 1, "│    └─" at depth 2, ..., as torchinfo draws the tree.
std::string branch(int depth) {
  if (depth <= 1) return depth == 1 ? "├─" : "";
  std::string s;
  for (int i = 1; i < depth; ++i) s += "│    ";
  return s + "└─";
}

std::int64_t own_parameters(const Module& module) {
  std::int64_t total = module.num_parameters();
  for (const auto& [name, child] : module.named_modules()) {
    if (depth_of(name) == 1) total -= child->num_parameters();
  }
  return total;
}

}  // namespace

std::string group_thousands(std::int64_t value) {
  // Through the unsigned magnitude: -INT64_MIN does not fit an int64.
  const std::uint64_t magnitude =
      value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  const std::string digits = std::to_string(magnitude);
  std::string out = value < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

ModuleShapes::ModuleShapes() : outer_(innermost) { innermost = this; }

ModuleShapes::~ModuleShapes() { innermost = outer_; }

const Shape* ModuleShapes::find(const Module& module) const {
  const auto it = shapes_.find(&module);
  return it == shapes_.end() ? nullptr : &it->second;
}

const Tensor& Module::record_output(const Tensor& out) const {
  if (innermost != nullptr && out.defined()) innermost->note(*this, out.shape());
  return out;
}

std::string module_summary(const Module& model, const ModuleShapes& shapes, int max_depth) {
  const std::string rule(90, '='), title = "Layer (type:depth-idx)";
  std::string s =
      fmt::format("{}\n{:<50}{:<25}{}\n{}\n", rule, title, "Output Shape", "Param #", rule);
  std::map<int, int> index;  // per depth, as torchinfo numbers its rows
  for (const auto& [name, module] : model.named_modules()) {
    const int depth = depth_of(name);
    if (depth > max_depth) continue;
    std::string label = branch(depth) + module->type_name();
    if (depth > 0) {
      label += fmt::format(" ({}): {}-{}", name.substr(name.rfind('.') + 1), depth, ++index[depth]);
    }
    const Shape* shape = shapes.find(*module);
    const std::int64_t params =
        depth == max_depth ? module->num_parameters() : own_parameters(*module);
    // The tree's box characters take 3 bytes each and one column: pad by columns.
    const auto continuation_bytes = static_cast<std::size_t>(
        std::count_if(label.begin(), label.end(), [](char c) { return (c & 0xC0) == 0x80; }));
    const std::size_t columns = label.size() - continuation_bytes;
    s += label + std::string(columns < 50 ? 50 - columns : 1, ' ');
    s += fmt::format("{:<25}{}\n", shape != nullptr ? shape_str(*shape) : "--",
                     params > 0 ? group_thousands(params) : "--");
  }
  const std::int64_t total = model.num_parameters();
  s += fmt::format("{}\nTotal params: {}\n{}\n", rule, group_thousands(total), rule);
  return s;
}

}  // namespace mg
