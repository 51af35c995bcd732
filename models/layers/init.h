// Parameter initialisations shared by the models' layers.
#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// The default initialisation of embedding tables and the head: N(0, 1/sqrt(d_model)), seeded.
// Throws mg::Error unless d_model > 0.
Tensor init_normal_scaled(const Shape& shape, std::int64_t d_model, std::uint64_t seed,
                          DType dtype = DType::f32);

}  // namespace mg
