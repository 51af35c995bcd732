// WarmupCosine: linear warmup, cosine decay, then a floor.
#include "schedule.h"

#include <cmath>
#include <numbers>

#include "minigraph/error.h"

namespace mg::optim {

WarmupCosine::WarmupCosine(double lr_max, double lr_min, std::int64_t warmup_steps,
                           std::int64_t total_steps)
    : lr_max_(lr_max), lr_min_(lr_min), warmup_steps_(warmup_steps), total_steps_(total_steps) {
  MG_CHECK(std::isfinite(lr_max) && lr_max > 0, "WarmupCosine", "lr_max", "a finite number > 0",
           "{}", lr_max);
  MG_CHECK(std::isfinite(lr_min) && lr_min >= 0 && lr_min <= lr_max, "WarmupCosine", "lr_min",
           fmt::format("a number in [0, lr_max = {}]", lr_max), "{}", lr_min);
  MG_CHECK(warmup_steps >= 0, "WarmupCosine", "warmup_steps", "a step count >= 0", "{}",
           warmup_steps);
  MG_CHECK(total_steps >= warmup_steps, "WarmupCosine", "total_steps",
           fmt::format("a step count >= warmup_steps ({})", warmup_steps), "{}", total_steps);
}

double WarmupCosine::lr(std::int64_t step) const {
  MG_CHECK(step >= 0, "WarmupCosine", "step", "a step >= 0", "{}", step);
  if (step < warmup_steps_) {
    return lr_max_ * static_cast<double>(step + 1) / static_cast<double>(warmup_steps_);
  }
  if (step >= total_steps_) return lr_min_;
  const double q =
      static_cast<double>(step - warmup_steps_) / static_cast<double>(total_steps_ - warmup_steps_);
  return lr_min_ + (lr_max_ - lr_min_) * (1 + std::cos(std::numbers::pi * q)) / 2;
}

}  // namespace mg::optim
