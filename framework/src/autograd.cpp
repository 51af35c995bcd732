// The backward engine: topological order, then each node's backward rule in reverse.
// Gradients are gathered in maps and written to the leaves only once the whole pass
// succeeded, so an error part-way leaves every .grad() untouched.
#include "minigraph/autograd.h"

#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "minigraph/backend.h"
#include "minigraph/op.h"

namespace mg {

namespace {

thread_local bool g_grad_enabled = true;
std::atomic<GradientSum> g_gradient_sum{nullptr};

// grad += contribution, out of place (the old gradient may be shared with a caller).
Tensor accumulate(const Tensor& grad, const Tensor& contribution) {
  if (!grad.defined()) return contribution;
  GradientSum sum = g_gradient_sum.load();
  MG_CHECK(sum != nullptr, "backward", "gradient sum",
           "a sum installed by the ops library (mg::register_builtin_ops)", "none");
  return sum(grad, contribution);
}

// A node's inputs must hold the values they had when it was recorded: its backward rule reads
// them (matmul's gradients are products with the other input).
void check_versions(const Node& node) {
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const std::uint64_t now = node.inputs[i].version(), saved = node.saved_versions[i];
    MG_CHECK(now == saved, node.op->name,
             i < node.op->inputs.size() ? node.op->inputs[i] : fmt::format("input {}", i),
             fmt::format("the values the graph saved (version {})", saved),
             "version {}: written in place after the forward (copy_, add_, an optimizer step "
             "...); run the forward again after the write",
             now);
  }
}

void check_released(const std::vector<const Node*>& nodes) {
  for (const Node* node : nodes) {
    if (!node->released) check_versions(*node);
    MG_CHECK(!node->released, "backward", "graph",
             "a graph kept by the earlier backward (pass retain_graph = true to it)",
             "a graph released by an earlier backward (at op '{}')", node->op->name);
    MG_CHECK(static_cast<bool>(node->op->backward), "backward", "graph", "ops with a backward rule",
             "op '{}', which has none", node->op->name);
  }
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

bool is_leaf_edge(const Tensor& input) { return !input.grad_fn() && input.requires_grad(); }

// One backward pass: the gradients it gathers stay here, apart from the leaves, until
// commit_leaf_grads, so a pass that fails part-way changes no .grad().
struct BackwardPass {
  explicit BackwardPass(const LeafGradReady& hook) : on_leaf_grad_ready(hook) {}

  // Runs every node's backward rule, from `root` (seeded with `seed`) down to the leaves.
  void run(const Tensor& root, const Tensor& seed, const std::vector<const Node*>& nodes) {
    if (on_leaf_grad_ready) count_leaf_edges(nodes);
    NoGradGuard no_grad;
    route(root, seed);
    if (on_leaf_grad_ready && is_leaf_edge(root)) {
      on_leaf_grad_ready(root, leaf_grads[root.impl()]);
    }
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const Node* node = *it;
      run_node(*node);
      for (const Tensor& input : node->inputs) edge_done(input);
    }
  }

  // Adds this pass's gradients to the leaves' .grad().
  void commit_leaf_grads() {
    for (auto& leaf : leaves) {
      Tensor contribution = std::move(leaf_grads[leaf.get()]);
      if (leaf->grad) {
        leaf->grad = accumulate(Tensor(leaf->grad), contribution).impl_ptr();
      } else {
        // A gradient that shares storage with someone else's tensor (e.g. the caller's upstream
        // gradient, passed through unchanged) is copied, so later in-place use cannot leak.
        bool shared =
            contribution.impl_ptr().use_count() > 1 || contribution.impl()->storage.use_count() > 1;
        leaf->grad = (shared ? contribution.clone() : contribution.detach()).impl_ptr();
      }
    }
  }

  void route(const Tensor& target, const Tensor& contribution) {
    if (target.grad_fn()) {
      auto& slot = node_grads[target.grad_fn().get()];
      slot = accumulate(slot, contribution);
    } else if (target.requires_grad()) {
      auto [it, inserted] = leaf_grads.try_emplace(target.impl());
      if (inserted) leaves.push_back(target.impl_ptr());
      // Contiguous, as the parameter it lands beside: an expanded or transposed gradient
      // would otherwise reach the hook and every optimizer step as a view.
      it->second = accumulate(it->second, contribution).contiguous();
    }
  }

  // A node that no gradient reached (every rule above it returned none for it) has nothing to run.
  void run_node(const Node& node) {
    auto found = node_grads.find(&node);
    if (found == node_grads.end()) return;
    Tensor grad_out = std::move(found->second);
    node_grads.erase(found);
    auto grads =
        node.op->backward(BackwardContext{*node.op, node.inputs, node.attrs, grad_out, node.saved});
    MG_CHECK(grads.size() == node.inputs.size(), node.op->name, "backward rule",
             fmt::format("{} gradients", node.inputs.size()), "{}", grads.size());
    for (std::size_t i = 0; i < grads.size(); ++i) {
      const Tensor& input = node.inputs[i];
      if (!grads[i].defined() || !input.requires_grad()) continue;
      MG_CHECK(grads[i].shape() == input.shape(), node.op->name,
               "backward rule gradient for '" + node.op->inputs[i] + "'",
               fmt::format("shape {}", shape_str(input.shape())), "{}",
               shape_str(grads[i].shape()));
      route(input, grads[i]);
    }
  }

  void count_leaf_edges(const std::vector<const Node*>& nodes) {
    for (const Node* node : nodes) {
      for (const Tensor& input : node->inputs) {
        if (is_leaf_edge(input)) ++pending_edges[input.impl()];
      }
    }
  }

  // The hook hears of a leaf once the last edge into it has run.
  void edge_done(const Tensor& input) {
    if (!on_leaf_grad_ready || !is_leaf_edge(input) || --pending_edges[input.impl()] > 0) return;
    auto found = leaf_grads.find(input.impl());
    if (found != leaf_grads.end()) on_leaf_grad_ready(input, found->second);
  }

  const LeafGradReady& on_leaf_grad_ready;
  std::unordered_map<const Node*, Tensor> node_grads;
  std::unordered_map<TensorImpl*, Tensor> leaf_grads;  // keyed by leaf; kept alive by the graph
  std::vector<std::shared_ptr<TensorImpl>> leaves;
  // With a hook: the edges into each leaf that are still to run; a leaf is ready at zero.
  std::unordered_map<TensorImpl*, std::size_t> pending_edges;
};

// Without retain_graph: drops what each node kept for its backward rule.
void release_graph(const std::vector<const Node*>& nodes) {
  for (const Node* node : nodes) {
    auto* mutable_node = const_cast<Node*>(node);
    mutable_node->inputs.clear();
    mutable_node->attrs.reset();
    mutable_node->saved.clear();
    mutable_node->released = true;
  }
}

}  // namespace

bool grad_enabled() { return g_grad_enabled; }
void set_gradient_sum(GradientSum sum) { g_gradient_sum.store(sum); }

bool will_record(std::span<const Tensor> inputs) {
  return grad_enabled() &&
         std::any_of(inputs.begin(), inputs.end(), [](auto& t) { return t.requires_grad(); });
}

void record_node(const OpDef& op, std::vector<Tensor> inputs, std::any attrs, Tensor& out,
                 Shape out_shape, std::vector<Tensor> saved) {
  if (!will_record(inputs)) return;
  auto node = std::make_shared<Node>();
  node->op = &op;
  for (const Tensor& t : inputs) node->saved_versions.push_back(t.version());
  node->inputs = std::move(inputs);
  node->attrs = std::move(attrs);
  node->saved = std::move(saved);
  node->out_shape = std::move(out_shape);
  node->out_dtype = out.dtype();
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
}
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

std::vector<const Node*> graph_nodes(const Tensor& root) {
  std::vector<const Node*> order;
  if (!root.defined() || !root.grad_fn()) return order;
  std::unordered_set<const Node*> seen;
  // Iterative post-order DFS: deep graphs must not overflow the stack.
  std::vector<std::pair<const Node*, std::size_t>> stack{{root.grad_fn().get(), 0}};
  seen.insert(root.grad_fn().get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const Node* child = node->inputs[next++].grad_fn().get();
      if (child && seen.insert(child).second) stack.push_back({child, 0});
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

void backward(const Tensor& root, const Tensor& grad, bool retain_graph) {
  backward(root, grad, retain_graph, LeafGradReady());
}

void backward(const Tensor& root, const Tensor& grad, bool retain_graph,
              const LeafGradReady& on_leaf_grad_ready) {
  Tensor seed = checked_seed(root, grad);
  auto nodes = graph_nodes(root);
  check_released(nodes);

  BackwardPass pass(on_leaf_grad_ready);
  pass.run(root, seed, nodes);

  // Commit: nothing above touched a leaf.
  NoGradGuard no_grad;
  pass.commit_leaf_grads();
  if (!retain_graph) {
    release_graph(nodes);
  }
}

}  // namespace mg
