// The backward engine, in named steps: ordering (topological, every node checked first),
// running a node's rule, accumulating the gradients it returns, releasing what the node saved,
// and landing the leaf gradients, which happens only once the whole pass succeeded, so an
// error part-way leaves every .grad() untouched.
#include "minigraph/autograd.h"

#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "minigraph/backend.h"
#include "minigraph/op.h"

namespace mg {

// The input is moved, not copied, where it is kept whole: recording costs no reference count.
RecordedInput::RecordedInput(Tensor input, bool save) {
  const TensorImpl& impl = *input.impl();  // alive while input, saved_ or leaf_ holds it
  const bool leaf = !impl.grad_fn && impl.requires_grad;
  if (impl.grad_fn) {
    grad_fn_ = impl.grad_fn;
  } else if (!leaf) {
    constant_shape_ = impl.shape;
    constant_dtype_ = impl.dtype;
  }
  if (save) {
    saved_.version = input.version();
    saved_.tensor = leaf ? input : Tensor(std::move(input));
  }
  if (leaf) leaf_ = std::move(input);
}

const Shape& RecordedInput::shape() const {
  if (grad_fn_) return grad_fn_->out_shape;
  return leaf_.defined() ? leaf_.impl()->shape : constant_shape_;
}

DType RecordedInput::dtype() const {
  if (grad_fn_) return grad_fn_->out_dtype;
  return leaf_.defined() ? leaf_.dtype() : constant_dtype_;
}

namespace {

thread_local bool g_grad_enabled = true;
std::atomic<GradientSum> g_gradient_sum{nullptr};

std::string input_name(const Node& node, std::size_t i) { return node.op->input_name(i); }

// grad + contribution, out of place (the old gradient may be shared with a caller).
Tensor sum_gradients(const Tensor& grad, const Tensor& contribution) {
  if (!grad.defined()) return contribution;
  GradientSum sum = g_gradient_sum.load();
  MG_CHECK(sum != nullptr, "backward", "gradient sum",
           "a sum installed by the ops library (mg::register_builtin_ops)", "none");
  return sum(grad, contribution);
}

// What a node kept for its rule must hold the values it had when it was recorded: the rule
// reads them (matmul's gradients are products with the other input). `input`: which input
// `saved` is, or kResult.
constexpr std::size_t kResult = ~std::size_t{0};
void check_version(const Node& node, std::size_t input, const SavedTensor& saved) {
  if (!saved.tensor.defined()) return;
  const std::uint64_t now = saved.tensor.version();
  MG_CHECK(now == saved.version, node.op->name,
           input == kResult ? std::string("result") : input_name(node, input),
           fmt::format("the values its backward reads, saved at version {}", saved.version),
           "version {}: written in place after the forward (copy_, add_, an optimizer step "
           "...); run the forward again after the write",
           now);
}

// Whether `node` can run its rule: not released, with a rule, and what it saved unchanged.
void check_runnable(const Node& node) {
  MG_CHECK(!node.released, "backward", "graph",
           "a graph kept by the earlier backward (pass retain_graph = true to it)",
           "a graph released by an earlier backward (at op '{}')", node.op->name);
  MG_CHECK(static_cast<bool>(node.op->backward), "backward", "graph", "ops with a backward rule",
           "op '{}', which has none", node.op->name);
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    check_version(node, i, node.inputs[i].saved());
  }
  check_version(node, kResult, node.result);
}

// The recorded graph below `root`, inputs before the nodes using them (iterative post-order
// DFS: deep graphs must not overflow the stack).
std::vector<Node*> topological_order(const Tensor& root) {
  std::vector<Node*> order;
  if (!root.defined() || !root.grad_fn()) return order;
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<Node*, std::size_t>> stack{{root.grad_fn().get(), 0}};
  seen.insert(root.grad_fn().get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      Node* child = node->inputs[next++].grad_fn().get();
      if (child && seen.insert(child).second) stack.push_back({child, 0});
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

// Ordering: every node the pass will visit, checked before any rule runs.
std::vector<Node*> backward_order(const Tensor& root) {
  std::vector<Node*> order = topological_order(root);
  for (auto it = order.rbegin(); it != order.rend(); ++it) check_runnable(**it);  // root first
  return order;
}

// Releasing: what a node kept for its rule goes as soon as the rule has run; the node stays,
// marked, so that a second backward through it is refused by name.
void release_saved(Node& node) {
  for (std::size_t i = 0; i < node.inputs.size(); ++i) node.inputs[i].release_saved();
  node.result = {};
  node.kernel_saved.clear();
  node.released = true;
}

// The gradient backward starts from: `grad` checked against `root`, or ones for a scalar root.
Tensor checked_seed(const Tensor& root, const Tensor& grad) {
  MG_CHECK(root.defined(), "backward", "self", "a defined tensor", "an undefined tensor");
  MG_CHECK(root.requires_grad(), "backward", "self", "a tensor that requires grad",
           "a tensor with no recorded graph and requires_grad = false");
  Tensor seed = grad;
  if (!seed.defined()) {
    MG_CHECK(root.numel() == 1, "backward", "grad", "an upstream gradient for a non-scalar output",
             "none, for shape {}", shape_str(root.shape()));
    seed = Tensor::ones(root.shape(), root.dtype(), root.device());
  } else {
    MG_CHECK(seed.shape() == root.shape(), "backward", "grad",
             fmt::format("shape {}", shape_str(root.shape())), "{}", shape_str(seed.shape()));
    MG_CHECK(seed.dtype() == root.dtype(), "backward", "grad",
             std::string(dtype_name(root.dtype())), "{}", dtype_name(seed.dtype()));
    MG_CHECK(seed.device() == root.device(), "backward", "grad", root.device().str(), "{}",
             seed.device().str());
  }
  return seed;
}

// One backward pass: the gradients it gathers stay here, apart from the leaves, until
// land_leaf_grads, so a pass that fails part-way changes no .grad().
class BackwardPass {
 public:
  BackwardPass(const LeafGradReady& hook, bool retain_graph)
      : on_leaf_grad_ready_(hook), retain_graph_(retain_graph) {}

  // Runs every node's rule, from `root` (seeded with `seed`) down to the leaves, releasing
  // each node's saved tensors once its rule has run unless the graph is retained.
  void run(const Tensor& root, const Tensor& seed, const std::vector<Node*>& order) {
    if (on_leaf_grad_ready_) count_leaf_edges(order);
    NoGradGuard no_grad;
    const RecordedInput root_edge(root, false);
    accumulate(root_edge, seed);
    if (on_leaf_grad_ready_ && root_edge.leaf().defined()) {
      on_leaf_grad_ready_(root, leaf_grads_[root.impl()]);
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node& node = **it;
      run_node(node);
      if (!retain_graph_) release_saved(node);
      for (std::size_t i = 0; i < node.inputs.size(); ++i) edge_done(node.inputs[i]);
    }
  }

  // Landing: adds this pass's gradients to the leaves' .grad().
  void land_leaf_grads() {
    for (auto& leaf : leaves_) {
      Tensor contribution = std::move(leaf_grads_[leaf.get()]);
      if (leaf->grad) {
        leaf->grad = sum_gradients(Tensor(leaf->grad), contribution).impl_ptr();
      } else {
        // A gradient that shares storage with someone else's tensor (e.g. the caller's upstream
        // gradient passed through unchanged, or a retained node's saved tensor) is copied, so
        // later in-place use cannot leak.
        bool shared =
            contribution.impl_ptr().use_count() > 1 || contribution.impl()->storage.use_count() > 1;
        leaf->grad = (shared ? contribution.clone() : contribution.detach()).impl_ptr();
      }
    }
  }

 private:
  // Accumulating: a gradient for `target` joins the others of its node, or of its leaf.
  void accumulate(const RecordedInput& target, const Tensor& contribution) {
    if (target.grad_fn()) {
      auto& slot = node_grads_[target.grad_fn().get()];
      slot = sum_gradients(slot, contribution);
    } else if (const Tensor& leaf = target.leaf(); leaf.defined()) {
      auto [it, inserted] = leaf_grads_.try_emplace(leaf.impl());
      if (inserted) leaves_.push_back(leaf.impl_ptr());
      // Contiguous, as the parameter it lands beside: an expanded or transposed gradient
      // would otherwise reach the hook and every optimizer step as a view.
      it->second = sum_gradients(it->second, contribution).contiguous();
    }
  }

  // Running a node: its rule on the gradient gathered for it, each result checked against the
  // input it is for. A node no gradient reached (every rule above it returned none for it)
  // has nothing to run.
  void run_node(const Node& node) {
    auto found = node_grads_.find(&node);
    if (found == node_grads_.end()) return;
    Tensor grad_out = std::move(found->second);
    node_grads_.erase(found);
    auto grads = node.op->backward(BackwardContext(node, grad_out));
    MG_CHECK(grads.size() == node.inputs.size(), node.op->name, "backward rule",
             fmt::format("{} gradients", node.inputs.size()), "{}", grads.size());
    for (std::size_t i = 0; i < grads.size(); ++i) {
      const RecordedInput& input = node.inputs[i];
      if (!grads[i].defined() || !input.requires_grad()) continue;
      MG_CHECK(
          grads[i].shape() == input.shape() && grads[i].dtype() == input.dtype(), node.op->name,
          "backward rule gradient for '" + input_name(node, i) + "'",
          fmt::format("shape {} and dtype {}", shape_str(input.shape()), dtype_name(input.dtype())),
          "shape {} and dtype {}", shape_str(grads[i].shape()), dtype_name(grads[i].dtype()));
      accumulate(input, grads[i]);
    }
  }

  void count_leaf_edges(const std::vector<Node*>& order) {
    for (const Node* node : order) {
      for (std::size_t i = 0; i < node->inputs.size(); ++i) {
        if (const Tensor& leaf = node->inputs[i].leaf(); leaf.defined())
          ++pending_edges_[leaf.impl()];
      }
    }
  }

  // The hook hears of a leaf once the last edge into it has run.
  void edge_done(const RecordedInput& input) {
    const Tensor& leaf = input.leaf();
    if (!on_leaf_grad_ready_ || !leaf.defined() || --pending_edges_[leaf.impl()] > 0) return;
    auto found = leaf_grads_.find(leaf.impl());
    if (found != leaf_grads_.end()) on_leaf_grad_ready_(leaf, found->second);
  }

  const LeafGradReady& on_leaf_grad_ready_;
  const bool retain_graph_;
  std::unordered_map<const Node*, Tensor> node_grads_;
  std::unordered_map<TensorImpl*, Tensor> leaf_grads_;  // keyed by leaf; kept alive by leaves_
  std::vector<std::shared_ptr<TensorImpl>> leaves_;
  // With a hook: the edges into each leaf that are still to run; a leaf is ready at zero.
  std::unordered_map<TensorImpl*, std::size_t> pending_edges_;
};

}  // namespace

BackwardContext::BackwardContext(const Node& node, const Tensor& grad_out)
    : op(*node.op), attrs(node.attrs), grad_out(grad_out), saved(node.kernel_saved), node_(node) {}

const Tensor& BackwardContext::input(std::size_t i) const {
  MG_CHECK(i < node_.inputs.size(), op.name, "backward rule",
           fmt::format("an input index below {}", node_.inputs.size()), "{}", i);
  const Tensor& t = node_.inputs[i].saved().tensor;
  MG_CHECK(t.defined(), op.name, "backward rule",
           fmt::format("to read only what the op's backward_reads names ({})",
                       fmt::join(op.backward_reads, ", ")),
           "a read of input '{}', which it does not name (add it to backward_reads)",
           input_name(node_, i));
  return t;
}

const Tensor& BackwardContext::result() const {
  MG_CHECK(node_.result.tensor.defined(), op.name, "backward rule",
           fmt::format("to read only what the op's backward_reads names ({})",
                       fmt::join(op.backward_reads, ", ")),
           "a read of its result, which it does not name (add \"result\" to backward_reads)");
  return node_.result.tensor;
}

const Shape& BackwardContext::input_shape(std::size_t i) const {
  MG_CHECK(i < node_.inputs.size(), op.name, "backward rule",
           fmt::format("an input index below {}", node_.inputs.size()), "{}", i);
  return node_.inputs[i].shape();
}

bool BackwardContext::needs_grad(std::size_t i) const {
  return i < node_.inputs.size() && node_.inputs[i].requires_grad();
}

std::size_t BackwardContext::input_count() const { return node_.inputs.size(); }

bool grad_enabled() { return g_grad_enabled; }
void set_gradient_sum(GradientSum sum) { g_gradient_sum.store(sum); }

bool will_record(std::span<const Tensor> inputs) {
  return grad_enabled() &&
         std::any_of(inputs.begin(), inputs.end(), [](auto& t) { return t.requires_grad(); });
}

void record_node(const OpDef& op, std::vector<Tensor> inputs, std::any attrs, Tensor& out,
                 Shape out_shape, std::vector<Tensor> kernel_saved) {
  // A mask or indices (bool, integer) carry no gradient, whatever their inputs do (as torch).
  if (!will_record(inputs) || !is_floating(out.dtype())) return;
  // Default-initialized: make_shared would zero the whole node first, a third of the cost of
  // recording a small op.
  auto node = std::make_shared_for_overwrite<Node>();
  node->op = &op;
  const BackwardReadSet& reads = op.backward_read_set;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    node->inputs.push_back(RecordedInput(std::move(inputs[i]), reads.reads_input(i)));
  }
  // A handle of its own on out's storage: out itself holds the node.
  if (reads.result) node->result = {out.detach(), out.version()};
  node->attrs = std::move(attrs);
  node->kernel_saved = std::move(kernel_saved);
  node->out_shape = std::move(out_shape);
  node->out_dtype = out.dtype();
  node->out_device = out.device();
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
}
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

std::vector<const Node*> graph_nodes(const Tensor& root) {
  std::vector<Node*> order = topological_order(root);
  return {order.begin(), order.end()};
}

void backward(const Tensor& root, const Tensor& grad, bool retain_graph) {
  backward(root, grad, retain_graph, LeafGradReady());
}

void backward(const Tensor& root, const Tensor& grad, bool retain_graph,
              const LeafGradReady& on_leaf_grad_ready) {
  const Tensor seed = checked_seed(root, grad);
  const std::vector<Node*> order = backward_order(root);
  BackwardPass pass(on_leaf_grad_ready, retain_graph);
  pass.run(root, seed, order);
  NoGradGuard no_grad;
  pass.land_leaf_grads();  // nothing before touched a leaf
}

}  // namespace mg
