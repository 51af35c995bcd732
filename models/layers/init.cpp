#include "layers/init.h"

#include <cmath>

#include "minigraph/error.h"

namespace mg {

Tensor init_normal_scaled(const Shape& shape, std::int64_t d_model, std::uint64_t seed,
                          DType dtype) {
  MG_CHECK(d_model > 0, "init_normal_scaled", "d_model", "a positive size", "{}", d_model);
  return Tensor::normal(shape, 0.0, 1.0 / std::sqrt(static_cast<double>(d_model)), seed, dtype);
}

}  // namespace mg
