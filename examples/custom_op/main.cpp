// The custom-op example as a user writes it: take the scaled_gelu op library (linked here;
// `minigraph --plugin` loads the same sources as a shared library), use it in a layer with
// the ANDREA input layer and the untied head, train-step it once and check its gradients.
//   example_custom_op [graph.dot]   also writes the recorded graph as Graphviz DOT
#include <minigraph/minigraph.h>

#include <fstream>

#include "gelu_input_layer.h"
#include "minigraph/graphviz.h"
#include "minigraph/plugin.h"

int main(int argc, char** argv) {
  using namespace mg;
  register_op_library(minigraph_register_ops, "scaled_gelu (linked)");

  andrea::AndreaConfig config;  // the ANDREA-120M layout at a size gradcheck can perturb
  config.vocab_size = 50, config.d_model = 8, config.context = 16;
  config.dtype = DType::f64;
  example::GeluInputLayer layer(config, 1.702);
  andrea::OutputHead head(config);

  Tensor ids = Tensor::from_vector<std::int64_t>({5, 7, 5, 49, 0, 5, 7, 7}, {2, 4});  // [B, T]
  Tensor x = layer.forward(ids);    // 1.702 * gelu(tok_emb[ids] + pos_emb[0..T))  [2, 4, 8]
  Tensor logits = head.forward(x);  // x @ W_head                                  [2, 4, 50]
  Tensor loss = sum(logits);
  if (argc > 1) {
    DotOptions options;
    options.parameters = layer.named_parameters();
    options.parameters.emplace_back("head.weight", head.weight());
    options.inputs = {{"ids", ids}};
    options.title = "GeluInputLayer + head: loss = sum(logits)";
    std::ofstream(argv[1]) << to_dot(loss, options);
    fmt::print("wrote {}\n", argv[1]);
  }
  loss.backward();
  fmt::print("x {}, logits {}, d loss / d tok_emb {}\n", shape_str(x.shape()),
             shape_str(logits.shape()), shape_str(layer.input.tok_emb().weight().grad().shape()));

  std::vector<Tensor> params = layer.parameters();
  params.push_back(head.weight());
  GradcheckReport report =
      gradcheck([&](const std::vector<Tensor>&) { return head.forward(layer.forward(ids)); },
                params, {"tok_emb", "pos_emb", "head"});
  fmt::print("{}", report.str());
  return report.passed() ? 0 : 1;
}
