// The README's example: compose the ANDREA input layer and the untied head from ops, run
// backward from a scalar, and check the composed gradients with gradcheck.
#include <minigraph/minigraph.h>

int main() {
  using namespace mg;
  andrea::AndreaConfig config;  // ANDREA-120M: V = 8449, D = 768, T = 1024
  config.vocab_size = 100, config.d_model = 16, config.context = 32;  // small enough to check
  config.dtype = DType::f64;
  andrea::Andrea model(config);

  Tensor ids = Tensor::from_vector<std::int64_t>({5, 7, 5, 99, 0, 5}, {2, 3});  // [B, T]
  Tensor x = model.input.forward(ids);    // tok_emb[ids] + pos_emb[0..T)  [2, 3, 16]
  Tensor logits = model.head.forward(x);  // x @ W_head                     [2, 3, 100]
  Tensor loss = sum(logits);
  loss.backward();
  fmt::print("logits {}, d loss / d tok_emb {}\n", shape_str(logits.shape()),
             shape_str(model.input.tok_emb().weight().grad().shape()));

  std::vector<Tensor> params = model.parameters();
  GradcheckReport report = gradcheck([&](const std::vector<Tensor>&) { return model.forward(ids); },
                                     params, {"tok_emb", "pos_emb", "head"});
  fmt::print("{}", report.str());
  return report.passed() ? 0 : 1;
}
