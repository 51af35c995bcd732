// Graph pictures as Graphviz DOT. The forward graph comes from graph_nodes(); the backward
// is found by running each node's backward rule once under an OpObserverScope, in the
// engine's order, and tracing which ops the rule applied to which tensors. Tensors are told
// apart by their storage, so a view inside a rule (matmul folds [B, T, D] into [B*T, D])
// still leads back to the tensor it views. Forward tensors a backward op reads are named in
// its label rather than drawn as edges, which would cross between the clusters.
#include "minigraph/graphviz.h"

#include <unordered_map>

#include "minigraph/autograd.h"
#include "minigraph/op.h"

namespace mg {

namespace {

// Quotes text for a DOT string; "\n" stays a DOT line break.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\' && !(i + 1 < text.size() && text[i + 1] == 'n')) {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string shape_and_dtype(const Shape& shape, DType dtype) {
  return fmt::format("{} {}", shape_str(shape), dtype_name(dtype));
}

// The op, its attributes, any extra lines, and its output.
std::string op_label(const OpDef& op, const std::string& attrs, const Shape& shape, DType dtype,
                     const std::vector<std::string>& extra = {}) {
  std::string label = op.name;
  if (!attrs.empty()) label += "\\n" + attrs;
  for (const std::string& line : extra) label += "\\n" + line;
  return label + "\\n-> " + shape_and_dtype(shape, dtype);
}

std::string describe(const OpDef& op, const std::any& attrs) {
  return op.describe_attrs && attrs.has_value() ? op.describe_attrs(attrs) : "";
}

constexpr const char* kForwardOpStyle =
    "shape=box, style=\"rounded,filled\", fillcolor=\"#dff0d8\"";
constexpr const char* kBackwardOpStyle =
    "shape=box, style=\"rounded,filled\", fillcolor=\"#f8d7da\"";
constexpr const char* kGradientEdge = "color=\"#c0392b\", fontcolor=\"#c0392b\"";

// One backward op as the observer saw it.
struct AppliedOp {
  const OpDef* op;
  std::string attrs;
  std::vector<Tensor> inputs;
  Tensor out;
};

class DotGraph {
 public:
  DotGraph(const Tensor& root, const DotOptions& options) : root_(root), options_(options) {}

  std::string render() {
    MG_CHECK(root_.defined(), "to_dot", "root", "a defined tensor", "an undefined tensor");
    nodes_ = graph_nodes(root_);
    for (const Node* node : nodes_) {
      MG_CHECK(!node->released, "to_dot", "root",
               "a recorded graph (draw it before backward(), or pass retain_graph = true)",
               "a graph released by backward() (at op '{}')", node->op->name);
    }
    body_ +=
        "digraph minigraph {\n  rankdir=TB; newrank=true; compound=true;\n"
        "  node [fontname=\"Helvetica\", fontsize=11]; edge [fontname=\"Helvetica\", "
        "fontsize=9];\n";
    body_ +=
        "  subgraph cluster_forward {\n    label=\"forward\"; style=rounded; color=\"#5b8c5a\";\n";
    draw_forward();
    body_ += "  }\n";
    if (options_.backward && root_.grad_fn()) {
      body_ +=
          "  subgraph cluster_backward {\n    label=\"backward\"; style=rounded; "
          "color=\"#c0392b\";\n";
      draw_backward();
      body_ += "  }\n";
    }
    body_ += edges_;
    body_ += "  labelloc=b; label=" + quoted(legend()) + ";\n}\n";
    return body_;
  }

 private:
  void add_node(const std::string& indent, const std::string& id, const std::string& label,
                const std::string& style) {
    body_ += fmt::format("{}{} [label={}, {}];\n", indent, id, quoted(label), style);
  }
  void add_edge(const std::string& from, const std::string& to, const std::string& label,
                const std::string& style) {
    edges_ += fmt::format("  {} -> {} [label={}{}{}];\n", from, to, quoted(label),
                          style.empty() ? "" : ", ", style);
  }

  const std::string* name_in(const std::vector<std::pair<std::string, Tensor>>& names,
                             const Tensor& t) const {
    for (auto& [name, tensor] : names) {
      if (tensor.defined() && tensor.impl() == t.impl()) return &name;
    }
    return nullptr;
  }

  // The id of a leaf, drawn on first sight: parameters blue, other tensors that require grad
  // yellow, constants (ids) grey.
  std::string leaf(const Tensor& t) {
    auto [it, inserted] = leaf_ids_.try_emplace(t.impl(), fmt::format("leaf{}", leaf_ids_.size()));
    if (!inserted) return it->second;
    const std::string* param = name_in(options_.parameters, t);
    const std::string* name = param ? param : name_in(options_.inputs, t);
    std::string label = (name ? *name : std::string("tensor")) + "\\n" +
                        shape_and_dtype(t.shape(), t.dtype()) + "\\n";
    std::string style;
    if (param) {
      label += t.requires_grad() ? "parameter, requires grad" : "parameter, frozen";
      style = "shape=box, style=filled, fillcolor=\"#cfe2f3\"";
    } else if (t.requires_grad()) {
      label += "requires grad";
      style = "shape=box, style=filled, fillcolor=\"#fff2cc\"";
    } else {
      label += "constant";
      style = "shape=note, style=filled, fillcolor=\"#eeeeee\"";
    }
    add_node("    ", it->second, label, style);
    saved_.try_emplace(t.impl()->storage.get(), Owner{name ? *name : "tensor", t.shape()});
    return it->second;
  }

  // The id of a node's input that no op made: a leaf, a constant its rule reads, or a constant
  // the node did not keep (drawn from its shape alone, once per use).
  std::string leaf(const RecordedInput& input) {
    if (input.leaf().defined()) return leaf(input.leaf());
    if (input.saved().tensor.defined()) return leaf(input.saved().tensor);
    const std::string id = fmt::format("unkept{}", unkept_constants_++);
    add_node("    ", id,
             "tensor\\n" + shape_and_dtype(input.shape(), input.dtype()) + "\\nconstant",
             "shape=note, style=filled, fillcolor=\"#eeeeee\"");
    return id;
  }

  void draw_forward() {
    for (std::size_t i = 0; i < nodes_.size(); ++i) node_ids_[nodes_[i]] = fmt::format("op{}", i);
    if (!root_.grad_fn()) {
      leaf(root_);
      return;
    }
    for (const Node* node : nodes_) {
      const std::string& id = node_ids_[node];
      for (std::size_t i = 0; i < node->inputs.size(); ++i) {
        const RecordedInput& input = node->inputs[i];
        const Node* maker = input.grad_fn().get();
        std::string from = maker ? node_ids_[maker] : leaf(input);
        if (const Tensor& kept = input.saved().tensor; maker && kept.defined()) {
          saved_.try_emplace(kept.impl()->storage.get(),
                             Owner{maker->op->name + "'s output", input.shape()});
        }
        add_edge(from, id, node->op->input_name(i), "");
      }
      if (const Tensor& result = node->result.tensor; result.defined()) {
        saved_.try_emplace(result.impl()->storage.get(),
                           Owner{node->op->name + "'s output", node->out_shape});
      }
      std::string style = kForwardOpStyle;
      if (node == root_.grad_fn().get()) style += ", peripheries=2";
      add_node(
          "    ", id,
          op_label(*node->op, describe(*node->op, node->attrs), node->out_shape, node->out_dtype),
          style);
    }
    saved_.try_emplace(root_.impl()->storage.get(),
                       Owner{root_.grad_fn()->op->name + "'s output", root_.shape()});
  }

  // Reverse topological order, as the engine: a node's rule runs once all its consumers
  // have named the drawn nodes whose outputs sum to its upstream gradient.
  void draw_backward() {
    const Node* root_node = root_.grad_fn().get();
    add_node("    ", "seed", "upstream gradient\\n" + shape_and_dtype(root_.shape(), root_.dtype()),
             "shape=ellipse, style=filled, fillcolor=\"#f8d7da\"");
    gradient_sources_[root_node] = {"seed"};
    NoGradGuard no_grad;
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
      auto sources = gradient_sources_.find(*it);
      if (sources != gradient_sources_.end()) draw_rule(**it, sources->second);
    }
  }

  void draw_rule(const Node& node, const std::vector<std::string>& sources) {
    Tensor grad_out = Tensor::zeros(node.out_shape, node.out_dtype, node.out_device);
    std::vector<AppliedOp> applied;
    std::vector<Tensor> grads;
    {
      OpObserverScope observe([&](const OpDef& op, std::span<const Tensor> inputs,
                                  const std::any& attrs, const Tensor& out) {
        applied.push_back({&op, describe(op, attrs), {inputs.begin(), inputs.end()}, out});
      });
      grads = node.op->backward(BackwardContext(node, grad_out));
    }
    const std::string& forward_id = node_ids_[&node];
    body_ += fmt::format(
        "    subgraph cluster_{} {{\n      label={}; style=dashed; color=\"#d98880\";\n",
        forward_id, quoted("backward of " + node.op->name));
    // Within the rule: storage -> the drawn nodes whose outputs it holds.
    std::unordered_map<const Storage*, std::vector<std::string>> gradients;
    gradients[grad_out.impl()->storage.get()] = sources;
    for (const AppliedOp& a : applied) {
      const std::string id = fmt::format("bw{}", backward_ops_++);
      std::vector<std::string> reads;  // forward tensors, named in the label: edges would cross
      for (std::size_t j = 0; j < a.inputs.size(); ++j) {
        const std::string arg = a.op->input_name(j);
        const Storage* storage = a.inputs[j].impl()->storage.get();
        if (auto g = gradients.find(storage); g != gradients.end()) {
          for (const std::string& from : g->second) add_edge(from, id, arg, kGradientEdge);
        } else if (auto s = saved_.find(storage); s != saved_.end()) {
          const bool viewed = s->second.shape != a.inputs[j].shape();
          reads.push_back(arg + " = " + s->second.name +
                          (viewed ? " as " + shape_str(a.inputs[j].shape()) : ""));
        } else {
          add_edge(constant(a.inputs[j]), id, arg, "");
        }
      }
      add_node("      ", id, op_label(*a.op, a.attrs, a.out.shape(), a.out.dtype(), reads),
               kBackwardOpStyle);
      gradients[a.out.impl()->storage.get()] = {id};
    }
    body_ += "    }\n";
    for (std::size_t i = 0; i < grads.size() && i < node.inputs.size(); ++i) {
      const RecordedInput& input = node.inputs[i];
      if (!grads[i].defined() || !input.requires_grad()) continue;
      auto g = gradients.find(grads[i].impl()->storage.get());
      std::vector<std::string> made_by =
          g != gradients.end() ? g->second : std::vector<std::string>{constant(grads[i])};
      if (const Node* maker = input.grad_fn().get()) {
        auto& next = gradient_sources_[maker];
        next.insert(next.end(), made_by.begin(), made_by.end());
      } else {
        for (const std::string& from : made_by) {
          add_edge(from, leaf(input), "grad " + node.op->input_name(i),
                   std::string(kGradientEdge) + ", style=dashed, constraint=false, penwidth=1.5");
        }
      }
    }
  }

  // A tensor a backward rule made without an op (the zeros sum_to's rule adds onto).
  std::string constant(const Tensor& t) {
    const std::string id = fmt::format("const{}", constants_++);
    add_node("      ", id, "tensor made by the rule\\n" + shape_and_dtype(t.shape(), t.dtype()),
             "shape=note, style=filled, fillcolor=\"#eeeeee\"");
    return id;
  }

  std::string legend() const {
    std::string text = options_.title.empty() ? "" : options_.title + "\\n";
    text +=
        "blue: parameters, yellow: other tensors that require grad, grey: constants; "
        "green: forward ops, red: backward ops (shape and dtype of their outputs)";
    if (options_.backward) {
      text +=
          "\\nred edges: gradients (dashed: into the leaves they update); "
          "'b = head.weight' in a backward op: a forward tensor it reads";
    }
    return text;
  }

  struct Owner {
    std::string name;  // "head.weight", "add's output"
    Shape shape;
  };

  const Tensor& root_;
  const DotOptions& options_;
  std::vector<const Node*> nodes_;
  std::unordered_map<const Node*, std::string> node_ids_;
  std::unordered_map<const TensorImpl*, std::string> leaf_ids_;
  std::unordered_map<const Storage*, Owner> saved_;  // forward tensors by storage
  std::unordered_map<const Node*, std::vector<std::string>> gradient_sources_;
  std::size_t backward_ops_ = 0, constants_ = 0, unkept_constants_ = 0;
  std::string body_, edges_;
};

}  // namespace

std::string to_dot(const Tensor& root, const DotOptions& options) {
  return DotGraph(root, options).render();
}

}  // namespace mg
