#include "layers/dropout.h"

#include <cmath>

#include "minigraph/error.h"
#include "minigraph/ops/dropout/dropout.h"

namespace mg {

Dropout::Dropout(double p, std::uint64_t seed) : p_(p), seed_(seed) {
  MG_CHECK(std::isfinite(p) && p >= 0 && p < 1, "Dropout", "p", "a probability in [0, 1)", "{}", p);
}

Tensor Dropout::forward(const Tensor& x) const {
  return record_output(dropout(x, p_, is_training(), seed_, counter_));
}

void set_dropout_counter(Module& model, std::uint64_t counter) {
  model.apply([counter](Module& m) {
    if (auto* layer = dynamic_cast<Dropout*>(&m)) layer->set_counter(counter);
  });
}

}  // namespace mg
