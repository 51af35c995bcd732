// GeluInputLayer: the ANDREA input layer, then scaled_gelu from the op library.
#include "gelu_input_layer.h"

#include "scaled_gelu/scaled_gelu.h"

namespace mg::example {

GeluInputLayer::GeluInputLayer(const andrea::AndreaConfig& config, double scale)
    : scale_(scale), input(config) {
  register_module("input", input);
}

Tensor GeluInputLayer::forward(const Tensor& ids) const {
  return scaled_gelu(input.forward(ids), scale_);
}

}  // namespace mg::example
