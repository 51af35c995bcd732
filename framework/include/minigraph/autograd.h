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

// A tensor a backward rule reads, with its storage's version when it was saved: a backward
// after an in-place write into it (copy_, add_, an optimizer step) is refused.
struct SavedTensor {
  Tensor tensor;
  std::uint64_t version = 0;
};

// One input of a recorded op, as the backward pass sees it: where its gradient goes (the node
// that made the input, or the leaf it lands in), that gradient's shape and dtype, and the
// input's values only when the op's backward rule reads them (OpDef::backward_reads).
class RecordedInput {
 public:
  RecordedInput() = default;
  RecordedInput(Tensor input, bool save);
  const std::shared_ptr<Node>& grad_fn() const { return grad_fn_; }  // null for a leaf
  // The input when it is a leaf that requires grad (where its gradient lands), else undefined.
  const Tensor& leaf() const { return leaf_; }
  bool requires_grad() const { return grad_fn_ != nullptr || leaf_.defined(); }
  const Shape& shape() const;
  DType dtype() const;
  const SavedTensor& saved() const { return saved_; }  // undefined tensor: not kept
  void release_saved() { saved_ = {}; }

 private:
  std::shared_ptr<Node> grad_fn_;
  Tensor leaf_;
  Shape constant_shape_;  // an input that takes no gradient: its shape and dtype, kept here
  DType constant_dtype_ = DType::f32;
  SavedTensor saved_;
};

// A node's inputs: inline for up to three, so recording an op allocates nothing for them.
class RecordedInputs {
 public:
  void push_back(RecordedInput input) {
    if (size_ < first_.size()) {
      first_[size_] = std::move(input);
    } else {
      rest_.push_back(std::move(input));
    }
    ++size_;
  }
  RecordedInput& operator[](std::size_t i) {
    return i < first_.size() ? first_[i] : rest_[i - first_.size()];
  }
  const RecordedInput& operator[](std::size_t i) const {
    return i < first_.size() ? first_[i] : rest_[i - first_.size()];
  }
  std::size_t size() const { return size_; }

 private:
  std::array<RecordedInput, 3> first_;
  std::vector<RecordedInput> rest_;
  std::size_t size_ = 0;
};

// One recorded op application: the edges of the graph (each input's grad_fn() is the node
// that made it, or null for a leaf), and what its backward rule reads, which is released as
// soon as that rule has run (unless the backward retains the graph).
struct Node {
  const OpDef* op = nullptr;
  RecordedInputs inputs;
  SavedTensor result;  // the op's output, when the rule reads it (no grad_fn: no cycle)
  std::any attrs;
  std::vector<Tensor> kernel_saved;  // what the op's kernel saved for its backward (op.h)
  Shape out_shape;
  DType out_dtype = DType::f32;
  Device out_device;
  bool released = false;  // saved tensors dropped by a backward pass without retain_graph
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
// the whole pass succeeded, so a failing backward leaves every .grad() as it was. Each node's
// saved tensors are released as soon as its rule has run, unless `retain_graph` (as in
// libtorch): a second backward through a released node is an mg::Error naming it, and so is
// one through a pass that failed part-way (its nodes that ran were released).
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

// Makes `out` the output of a recorded `op` applied to `inputs`, when grad mode is on and an
// input requires grad; otherwise leaves it alone. The node keeps the inputs and the result
// that op.backward_reads names (with their versions), and of the others only where their
// gradients go. `out_shape` is out's shape, handed over so that recording copies no shape.
// apply_op and the views (view, narrow) record through it. `kernel_saved` is what the op's
// kernel saved for its backward rule.
bool will_record(std::span<const Tensor> inputs);  // grad mode on and an input requires grad
void record_node(const OpDef& op, std::vector<Tensor> inputs, std::any attrs, Tensor& out,
                 Shape out_shape, std::vector<Tensor> kernel_saved = {});

// How backward sums two gradients of one tensor, out of place (either may be shared). The
// ops library installs its add op here when it registers the built-in ops: the core has no
// arithmetic of its own. A backward that needs a sum before one is installed is an mg::Error.
using GradientSum = Tensor (*)(const Tensor& a, const Tensor& b);
void set_gradient_sum(GradientSum sum);

}  // namespace mg
