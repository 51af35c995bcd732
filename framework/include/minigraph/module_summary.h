// A model's layers as a table, in torchinfo's layout: each module (its type, depth and index at
// that depth), the shape of its output in one forward pass, its parameter count; totals below.
//
//   ModuleShapes shapes;  // records while it lives, on this thread
//   model.forward(ids);
//   fmt::print("{}", module_summary(model, shapes));
//
// A module's output shape is known when its forward reports it (Module::record_output, which
// minigraph's layers call); "--" otherwise, or when the pass did not run it (a fused path).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "minigraph/module.h"

namespace mg {

class ModuleShapes {
 public:
  ModuleShapes();
  ~ModuleShapes();
  ModuleShapes(const ModuleShapes&) = delete;
  ModuleShapes& operator=(const ModuleShapes&) = delete;

  void note(const Module& module, const Shape& output) { shapes_[&module] = output; }
  const Shape* find(const Module& module) const;

 private:
  std::unordered_map<const Module*, Shape> shapes_;
  ModuleShapes* outer_;
};

// 6488832 -> "6,488,832"
std::string group_thousands(std::int64_t value);

// The table down to max_depth (the model is depth 0); a row at max_depth counts the parameters
// of everything below it, a row above counts its own ("--" for none).
std::string module_summary(const Module& model, const ModuleShapes& shapes, int max_depth = 2);

}  // namespace mg
