// Dropout as a module, as torch.nn.Dropout: x [..X] -> x [..X], each element zeroed with
// probability p and the rest scaled by 1 / (1 - p) in training mode; x itself in evaluation
// mode. Masks are drawn by the dropout op from (seed, counter): a model gives each of its
// Dropouts a seed of its own and sets their counter to the training step (set_counter), so a run
// repeats and resumes bit for bit without any random state to save.
#pragma once

#include <cstdint>

#include "minigraph/module.h"

namespace mg {

class Dropout : public Module {
 public:
  // Throws mg::Error unless p is in [0, 1).
  explicit Dropout(double p = 0.5, std::uint64_t seed = 0);
  Tensor forward(const Tensor& x) const;
  double p() const { return p_; }
  std::uint64_t seed() const { return seed_; }
  // The counter the next masks are drawn with: calls with the same counter drop the same
  // elements.
  void set_counter(std::uint64_t counter) { counter_ = counter; }
  std::uint64_t counter() const { return counter_; }

 private:
  double p_;
  std::uint64_t seed_;
  std::uint64_t counter_ = 0;
};

// Sets the counter of every Dropout in `model` (Module::apply).
void set_dropout_counter(Module& model, std::uint64_t counter);

}  // namespace mg
