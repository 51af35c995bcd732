// Learning-rate schedules: the learning rate of each step, for Optimizer::set_lr.
#pragma once

#include <cstdint>

namespace mg::optim {

// Linear warmup, then a cosine decay to lr_min, then lr_min. For step s (counted from 0):
//   s in [0, warmup_steps):           lr_max * (s + 1) / warmup_steps
//   s in [warmup_steps, total_steps): lr_min + (lr_max - lr_min) * (1 + cos(pi * q)) / 2,
//                                     q = (s - warmup_steps) / (total_steps - warmup_steps)
//   s >= total_steps:                 lr_min
// So the last warmup step and the first cosine step both use lr_max, and the cosine would reach
// lr_min at s = total_steps. With warmup_steps 0 the schedule starts at lr_max.
class WarmupCosine {
 public:
  // Throws mg::Error unless 0 <= lr_min <= lr_max (finite, lr_max > 0) and
  // 0 <= warmup_steps <= total_steps.
  WarmupCosine(double lr_max, double lr_min, std::int64_t warmup_steps, std::int64_t total_steps);
  // Throws mg::Error for a negative step.
  double lr(std::int64_t step) const;

  double lr_max() const { return lr_max_; }
  double lr_min() const { return lr_min_; }
  std::int64_t warmup_steps() const { return warmup_steps_; }
  std::int64_t total_steps() const { return total_steps_; }

 private:
  double lr_max_, lr_min_;
  std::int64_t warmup_steps_, total_steps_;
};

}  // namespace mg::optim
