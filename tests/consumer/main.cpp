// Builds the ANDREA input layer and head from the installed package and checks one value;
// the tokenizer rejects bytes that are no model.
#include <minigraph/minigraph.h>

#include <cstdio>

int main() {
  mg::andrea::AndreaConfig config;
  config.vocab_size = 13;
  config.d_model = 4;
  config.context = 8;
  mg::andrea::Andrea model(config);
  mg::Tensor ids = mg::Tensor::from_vector<std::int64_t>({1, 12, 5}, {1, 3});
  mg::Tensor logits = model.forward(ids);
  logits.backward(mg::Tensor::ones(logits.shape()));
  bool ok = logits.shape() == mg::Shape{1, 3, 13} &&
            model.head.weight().grad().shape() == mg::Shape{4, 13};
  // The tokenizer links SentencePiece, a dependency of the static library: bytes that are no
  // model must come back as an mg::Error.
  try {
    mg::train::Tokenizer::from_serialized("not a model");
    ok = false;
  } catch (const mg::Error&) {
  }
  std::printf("consumer: logits %s, %s\n", mg::shape_str(logits.shape()).c_str(),
              ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
