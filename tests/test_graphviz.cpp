// Graph pictures: the DOT text of the ANDREA input layer + head has the forward ops, the
// parameter leaves and the edges between them, and, for the backward, the ops each rule
// runs with gradient edges into the parameters; drawing changes no gradient.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <sstream>
#include <string_view>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

// The nodes and edges of a DOT text written by to_dot, by the first line of their labels.
struct ParsedDot {
  std::map<std::string, std::string> labels;  // node id -> full label
  struct Edge {
    std::string from, to, label, style;
  };
  std::vector<Edge> edges;

  static std::string first_line(const std::string& label) {
    return label.substr(0, label.find("\\n"));
  }

  // Lines `id [label="..."` and `from -> to [label="..."<style>];`, read by hand: <regex> trips
  // GCC 12's -Wmaybe-uninitialized under -fsanitize (a false positive that -Werror makes fatal).
  explicit ParsedDot(const std::string& dot) {
    std::istringstream lines(dot);
    for (std::string line; std::getline(lines, line);) {
      std::size_t pos = line.find_first_not_of(" \t");
      if (pos == std::string::npos) continue;
      const std::string from = word(line, pos);
      if (from.empty()) continue;
      std::string label;
      if (skip(line, pos, " -> ")) {
        const std::string to = word(line, pos);
        if (to.empty() || !skip(line, pos, " [label=\"") || !quoted(line, pos, label)) continue;
        const std::string rest = line.substr(pos);
        if (rest.size() < 2 || rest.compare(rest.size() - 2, 2, "];") != 0) continue;
        edges.push_back({from, to, label, rest.substr(0, rest.size() - 2)});
      } else if (skip(line, pos, " [label=\"") && quoted(line, pos, label)) {
        labels[from] = label;
      }
    }
  }
  // The identifier ([A-Za-z0-9_]+) at pos, pos moved past it; empty when there is none.
  static std::string word(const std::string& s, std::size_t& pos) {
    const std::size_t start = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) {
      ++pos;
    }
    return s.substr(start, pos - start);
  }
  // Whether `text` is at pos; if so pos moves past it.
  static bool skip(const std::string& s, std::size_t& pos, std::string_view text) {
    if (s.compare(pos, text.size(), text) != 0) return false;
    pos += text.size();
    return true;
  }
  // The text up to the closing quote, escapes kept as written; pos moves past the quote.
  static bool quoted(const std::string& s, std::size_t& pos, std::string& out) {
    const std::size_t start = pos;
    while (pos < s.size() && s[pos] != '"') pos += s[pos] == '\\' ? 2 : 1;
    if (pos >= s.size()) return false;
    out = s.substr(start, pos - start);
    ++pos;
    return true;
  }
  // Labels of the nodes whose first line is `name`.
  std::vector<std::string> nodes(const std::string& name) const {
    std::vector<std::string> out;
    for (auto& [id, label] : labels) {
      if (first_line(label) == name) out.push_back(label);
    }
    return out;
  }
  // Edges from a node named `from` to one named `to`, with label `label`.
  int count_edges(const std::string& from, const std::string& to, const std::string& label) const {
    int n = 0;
    for (const Edge& e : edges) {
      if (labels.count(e.from) && labels.count(e.to) && first_line(labels.at(e.from)) == from &&
          first_line(labels.at(e.to)) == to && e.label == label) {
        ++n;
      }
    }
    return n;
  }
};

struct TinyAndrea {
  andrea::AndreaConfig config = [] {
    andrea::AndreaConfig c;
    c.vocab_size = 11, c.d_model = 4, c.context = 6;
    return c;
  }();
  andrea::Andrea model{config};
  Tensor ids = Tensor::from_vector<std::int64_t>({3, 3, 10, 0, 3, 1, 1, 7, 3, 2}, {2, 5});
  // Op by op, as the model is defined (Andrea::forward may run a fused op instead).
  Tensor loss = sum(matmul(add(embedding(model.input.tok_emb().weight(), ids),
                               position_embedding(model.input.pos_emb().weight(), 5)),
                           model.head.weight()));

  DotOptions options(bool backward = true) const {
    DotOptions o;
    o.parameters = model.named_parameters();
    o.inputs = {{"ids", ids}};
    o.backward = backward;
    o.title = "tiny ANDREA";
    return o;
  }
};

TEST(Graphviz, ForwardNodesLeavesAndEdgesOfInputLayerPlusHead) {
  TinyAndrea a;
  ParsedDot dot(to_dot(a.loss, a.options(false)));
  for (const char* op : {"embedding", "narrow", "add", "matmul", "sum"}) {
    EXPECT_EQ(dot.nodes(op).size(), 1u) << op;
  }
  ASSERT_EQ(dot.nodes("input.tok_emb.weight").size(), 1u);
  EXPECT_EQ(dot.nodes("input.tok_emb.weight")[0],
            "input.tok_emb.weight\\n[11, 4] f32\\nparameter, requires grad");
  EXPECT_EQ(dot.nodes("input.pos_emb.weight")[0],
            "input.pos_emb.weight\\n[6, 4] f32\\nparameter, requires grad");
  EXPECT_EQ(dot.nodes("head.weight")[0], "head.weight\\n[4, 11] f32\\nparameter, requires grad");
  EXPECT_EQ(dot.nodes("ids")[0], "ids\\n[2, 5] i64\\nconstant");
  EXPECT_EQ(dot.nodes("narrow")[0], "narrow\\ndim=0, start=0, length=5\\n-> [5, 4] f32");
  EXPECT_EQ(dot.nodes("matmul")[0],
            "matmul\\ntranspose_a=false, transpose_b=false\\n-> [2, 5, 11] f32");
  EXPECT_EQ(dot.nodes("sum")[0], "sum\\ndims={}, keepdim=false\\n-> [] f32");

  EXPECT_EQ(dot.count_edges("input.tok_emb.weight", "embedding", "table"), 1);
  EXPECT_EQ(dot.count_edges("ids", "embedding", "ids"), 1);
  EXPECT_EQ(dot.count_edges("input.pos_emb.weight", "narrow", "self"), 1);  // position_embedding
  EXPECT_EQ(dot.count_edges("embedding", "add", "a"), 1);
  EXPECT_EQ(dot.count_edges("narrow", "add", "b"), 1);
  EXPECT_EQ(dot.count_edges("add", "matmul", "a"), 1);
  EXPECT_EQ(dot.count_edges("head.weight", "matmul", "b"), 1);
  EXPECT_EQ(dot.count_edges("matmul", "sum", "x"), 1);
  EXPECT_EQ(dot.edges.size(), 8u);
  EXPECT_EQ(dot.labels.size(), 9u);  // 5 ops, 3 parameters, ids
}

TEST(Graphviz, BackwardRulesAndGradientEdgesIntoParameters) {
  TinyAndrea a;
  const std::string text = to_dot(a.loss, a.options());
  ParsedDot dot(text);
  EXPECT_NE(text.find("subgraph cluster_backward"), std::string::npos);
  EXPECT_NE(text.find("label=\"backward of matmul\""), std::string::npos);
  EXPECT_EQ(dot.nodes("upstream gradient")[0], "upstream gradient\\n[] f32");
  // sum's rule: the upstream expanded back (a view, drawn as the seed); matmul's: two matmuls; each
  // embedding: its scatter.
  EXPECT_EQ(dot.count_edges("upstream gradient", "matmul", "a"), 1);  // expanded: no copy
  EXPECT_EQ(dot.nodes("matmul").size(), 3u);  // the forward one and two in its backward
  EXPECT_EQ(dot.nodes("embedding_backward").size(), 1u);
  EXPECT_EQ(dot.nodes("place_in_zeros").size(), 1u);  // narrow's rule
  EXPECT_EQ(dot.count_edges("embedding_backward", "input.tok_emb.weight", "grad table"), 1);
  EXPECT_EQ(dot.count_edges("place_in_zeros", "input.pos_emb.weight", "grad self"), 1);
  EXPECT_EQ(dot.count_edges("matmul", "head.weight", "grad b"), 1);
  // Forward tensors a backward op reads are named in its label.
  EXPECT_EQ(dot.nodes("embedding_backward")[0],
            "embedding_backward\\nrows=11\\nids = ids\\n-> [11, 4] f32");
  const auto matmuls = dot.nodes("matmul");
  auto has = [&](const std::string& label) {
    return std::find(matmuls.begin(), matmuls.end(), label) != matmuls.end();
  };
  EXPECT_TRUE(has(
      "matmul\\ntranspose_a=false, transpose_b=true\\nb = head.weight\\n-> [2, 5, 4] f32"));  // dA
                                                                                              // =
                                                                                              // dC
                                                                                              // Bᵀ
  EXPECT_TRUE(
      has("matmul\\ntranspose_a=true, transpose_b=false\\na = add's output as [10, 4]\\n-> [4, 11] "
          "f32"));
  EXPECT_EQ(dot.count_edges("matmul", "embedding_backward", "grad"), 1);  // add passes it through
  // Drawing ran the rules but wrote no gradient, and the graph can still be run.
  for (auto& [name, p] : a.model.named_parameters()) EXPECT_FALSE(p.grad().defined()) << name;
  a.loss.backward();
  EXPECT_TRUE(a.model.head.weight().grad().defined());
}

TEST(Graphviz, TensorUsedTwiceGetsBothGradientEdges) {
  Tensor x = Tensor::from_vector<double>({1, 2}, {2});
  x.set_requires_grad(true);
  DotOptions options;
  options.inputs = {{"x", x}};
  ParsedDot dot(to_dot(add(x, x), options));
  EXPECT_EQ(dot.nodes("x")[0], "x\\n[2] f64\\nrequires grad");
  EXPECT_EQ(dot.count_edges("x", "add", "a"), 1);
  EXPECT_EQ(dot.count_edges("x", "add", "b"), 1);
  EXPECT_EQ(dot.count_edges("upstream gradient", "x", "grad a"), 1);  // add passes it through
  EXPECT_EQ(dot.count_edges("upstream gradient", "x", "grad b"), 1);
}

TEST(Graphviz, LeafRootIsOneNode) {
  ParsedDot dot(to_dot(Tensor::zeros({2, 3})));
  ASSERT_EQ(dot.labels.size(), 1u);
  EXPECT_EQ(dot.labels.begin()->second, "tensor\\n[2, 3] f32\\nconstant");
  EXPECT_TRUE(dot.edges.empty());
}

TEST(Graphviz, ReleasedGraphAndUndefinedRootAreErrors) {
  TinyAndrea a;
  a.loss.backward();
  try {
    to_dot(a.loss);
    ADD_FAILURE() << "expected mg::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "to_dot");
    EXPECT_NE(std::string(e.what()).find("a graph released by backward() (at op"),
              std::string::npos)
        << e.what();
  }
  testing::expect_error_containing([] { to_dot(Tensor()); }, "undefined");
}

TEST(OpObserver, SeesEveryOpInItsScopeAndRestoresThePrevious) {
  std::vector<std::string> outer, inner;
  Tensor a = Tensor::ones({2}), b = Tensor::ones({2});
  {
    OpObserverScope watch_outer([&](const OpDef& op, std::span<const Tensor>, const std::any&,
                                    const Tensor&) { outer.push_back(op.name); });
    add(a, b);
    {
      OpObserverScope watch_inner(
          [&](const OpDef& op, std::span<const Tensor> in, const std::any&, const Tensor& out) {
            inner.push_back(fmt::format("{} {} -> {}", op.name, in.size(), shape_str(out.shape())));
          });
      sum(a);
    }
    matmul(Tensor::ones({1, 2}), Tensor::ones({2, 1}));
  }
  add(a, b);  // no observer left
  EXPECT_EQ(outer, (std::vector<std::string>{"add", "matmul"}));
  EXPECT_EQ(inner, (std::vector<std::string>{"sum 1 -> []"}));
}

}  // namespace
}  // namespace mg
