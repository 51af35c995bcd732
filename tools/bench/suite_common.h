// Helpers shared by the suites: ANDREA's sizes, inputs, and turning a timing into a Record.
#pragma once

#include <string>

#include "measure.h"
#include "minigraph/minigraph.h"
#include "minigraph/threads.h"
#include "suites.h"

namespace mg::bench {

inline constexpr std::int64_t kVocab = 8449, kWidth = 768, kContext = 1024;  // V, D, T
inline constexpr double kFloatBytes = 4;
inline constexpr double kMiB = 1 << 20;

// The three GEMMs of the head for n = B*T positions: logits = x W, dx = dlogits Wᵀ,
// dW = xᵀ dlogits.
inline double head_flops(double n) { return 6 * n * kWidth * kVocab; }

enum class Work { bytes, flops };

// Ids [batch, kContext] drawn uniformly from [0, kVocab), seeded.
Tensor random_ids(std::int64_t batch, std::uint64_t seed = 11);
// N(0, 1) values of a shape, optionally a leaf that requires grad.
Tensor random_tensor(const Shape& shape, bool requires_grad, std::uint64_t seed = 12);

// A record for `timing` of work of `amount` bytes or flops: the achieved rate, its share of
// the limit (copy bandwidth for bytes, FMA peak for flops) and the ratio to `raw_ms`.
Record rate_record(const std::string& name, std::optional<int> batch, const Timing& timing,
                   Work work, double amount, const Limits& limits, double raw_ms, std::string note);

}  // namespace mg::bench
