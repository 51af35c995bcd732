#pragma once

#include <cstdint>

namespace mg {

// How a loss over many rows becomes the output: their mean (over the rows not ignored), their
// sum, or one loss per row. Shared by the loss ops (cross_entropy, linear_cross_entropy).
enum class Reduction { mean, sum, none };

// PyTorch's default ignore_index: rows whose target equals it add nothing to the loss and are
// not counted by the mean.
inline constexpr std::int64_t kDefaultIgnoreIndex = -100;

}  // namespace mg
