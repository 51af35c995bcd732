// Reverse-mode autograd, define-by-run (after micrograd): each op call records a Node when
// grad mode is on and an input requires grad; backward() visits nodes in reverse topological
// order and calls each op's backward rule, which is itself written in ops.
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

struct OpDef;

// One recorded op application. Inputs are the edges of the graph: an input's grad_fn() is
// the node that made it, or null for a leaf.
struct Node {
  const OpDef* op = nullptr;
  std::vector<Tensor> inputs;
  std::any attrs;
  Shape out_shape;
  DType out_dtype = DType::f32;
  bool released = false;  // inputs dropped after a backward pass without retain_graph
};

// Grad mode is per thread and on by default.
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Accumulates d(root)/d(leaf) into every leaf that requires grad. Leaves change only after
// the whole pass succeeded, so a failing backward leaves every .grad() as it was.
void backward(const Tensor& root, const Tensor& grad = Tensor(), bool retain_graph = false);

// The recorded graph below `root` in topological order (inputs before the nodes using them).
std::vector<const Node*> graph_nodes(const Tensor& root);

}  // namespace mg
