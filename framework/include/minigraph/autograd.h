// Reverse-mode autograd, define-by-run (after micrograd): each op call records a Node when
// grad mode is on and an input requires grad; backward() visits nodes in reverse topological
// order and calls each op's backward rule, which is itself written in ops.
#pragma once

#include <any>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

struct OpDef;

// Each input's storage version when a node was recorded: inline for up to four inputs, so
// recording an op allocates nothing for them.
class SavedVersions {
 public:
  void push_back(std::uint64_t version) {
    if (size_ < first_.size()) {
      first_[size_] = version;
    } else {
      rest_.push_back(version);
    }
    ++size_;
  }
  std::uint64_t operator[](std::size_t i) const {
    return i < first_.size() ? first_[i] : rest_[i - first_.size()];
  }
  std::size_t size() const { return size_; }

 private:
  std::array<std::uint64_t, 4> first_{};
  std::vector<std::uint64_t> rest_;
  std::size_t size_ = 0;
};

// One recorded op application. Inputs are the edges of the graph: an input's grad_fn() is
// the node that made it, or null for a leaf.
struct Node {
  const OpDef* op = nullptr;
  std::vector<Tensor> inputs;
  SavedVersions saved_versions;
  std::any attrs;
  std::vector<Tensor> saved;  // what the op's kernel saved for its backward (op.h)
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

// Called during a backward pass once for each leaf that takes a gradient, as soon as no node
// left to run adds to that leaf's gradient of this pass, and before any leaf is written: what
// data-parallel training hooks to start reducing gradients while the rest of the pass runs.
// `grad` is this pass's gradient of `leaf` (not yet added to leaf.grad()); the hook reads it
// and must not write it. An exception from the hook fails the pass: no .grad() changes.
using LeafGradReady = std::function<void(const Tensor& leaf, const Tensor& grad)>;
void backward(const Tensor& root, const Tensor& grad, bool retain_graph,
              const LeafGradReady& on_leaf_grad_ready);

// The recorded graph below `root` in topological order (inputs before the nodes using them).
std::vector<const Node*> graph_nodes(const Tensor& root);

// Makes `out` the output of a recorded `op` applied to `inputs` (their versions saved), when
// grad mode is on and an input requires grad; otherwise leaves it alone. `out_shape` is out's
// shape, handed over so that recording copies no shape. apply_op and the views (view, narrow)
// record through it. `saved` is what the op's kernel saved for its backward rule.
bool will_record(std::span<const Tensor> inputs);  // grad mode on and an input requires grad
void record_node(const OpDef& op, std::vector<Tensor> inputs, std::any attrs, Tensor& out,
                 Shape out_shape, std::vector<Tensor> saved = {});

// How backward sums two gradients of one tensor, out of place (either may be shared). The
// ops library installs its add op here when it registers the built-in ops: the core has no
// arithmetic of its own. A backward that needs a sum before one is installed is an mg::Error.
using GradientSum = Tensor (*)(const Tensor& a, const Tensor& b);
void set_gradient_sum(GradientSum sum);

}  // namespace mg
