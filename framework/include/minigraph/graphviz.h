// Graph pictures: the recorded graph below a tensor as Graphviz DOT text.
//
// Forward: the leaves (parameters, other tensors that require grad, constants such as ids)
// and one node per op with its attributes, output shape and dtype; edges carry the op's
// argument names. Backward (optional): for each forward op, in a cluster of its own, the ops
// its backward rule runs, with gradient edges between them and into the parameters.
// Render with `dot -Tsvg graph.dot -o graph.svg` (Graphviz).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

struct DotOptions {
  // Leaves drawn as parameters, under these names: e.g. Module::named_parameters(), which
  // gives "input.tok_emb.weight".
  std::vector<std::pair<std::string, Tensor>> parameters;
  // Names of other tensors, e.g. {"ids", ids}. Unnamed leaves are called "tensor".
  std::vector<std::pair<std::string, Tensor>> inputs;
  // Also draw the backward. Each op's backward rule runs once, without recording, on a zero
  // upstream gradient, under an OpObserverScope that notes the ops it applies: about the
  // cost of one backward pass. No tensor's .grad() changes.
  bool backward = true;
  std::string title;  // a caption, above the legend
};

// The DOT text of the graph that made `root` (a single leaf node when it has none). Throws
// mg::Error for an undefined root or a graph already released by backward().
std::string to_dot(const Tensor& root, const DotOptions& options = {});

}  // namespace mg
