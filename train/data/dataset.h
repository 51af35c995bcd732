// Token ids of a corpus, split into training and held-out validation parts, and the batches a
// training run reads from them. Legend: N tokens, B batch rows, T context (positions).
//
// Training batches are B windows of T + 1 tokens at starts drawn by a counter-based generator
// keyed by (seed, step, row): inputs = window[0, T), targets = window[1, T + 1). The data order
// is a pure function of (seed, step), so the whole "data-order state" of a run is those two
// numbers: resuming from step s reproduces the rest of the run exactly, on any machine.
// Validation batches are fixed: consecutive windows of the held-out part, each target token
// predicted once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minigraph/tensor.h"

namespace mg::train {

class Tokenizer;

class TokenDataset {
 public:
  // The last round(N * validation_fraction) tokens are held out, the others are for training.
  // Throws mg::Error for context < 1, a fraction outside (0, 1), an id < 0, or when either part
  // has fewer than T + 1 tokens (the message says how many there are and how many are needed).
  TokenDataset(std::vector<std::int32_t> ids, std::int64_t context,
               double validation_fraction = 0.05);
  // The ids of a text file as Tokenizer::encode_file gives them.
  static TokenDataset from_file(const Tokenizer& tokenizer, const std::string& path,
                                std::int64_t context, double validation_fraction = 0.05);

  std::int64_t context() const { return context_; }                              // T
  std::int64_t size() const { return static_cast<std::int64_t>(ids_->size()); }  // N
  std::int64_t train_size() const { return split_; }
  std::int64_t validation_size() const { return size() - split_; }
  std::span<const std::int32_t> train_tokens() const;
  std::span<const std::int32_t> validation_tokens() const;

 private:
  std::shared_ptr<const std::vector<std::int32_t>> ids_;  // shared by copies and samplers
  std::int64_t context_;
  std::int64_t split_;  // the first validation token
};

struct Batch {
  Tensor inputs;   // [B, T] i64
  Tensor targets;  // [B, T] i64, inputs shifted left by one
};

class BatchSampler {
 public:
  // Throws mg::Error for batch_size < 1.
  BatchSampler(TokenDataset dataset, std::int64_t batch_size, std::uint64_t seed);

  std::int64_t batch_size() const { return batch_size_; }
  std::uint64_t seed() const { return seed_; }
  const TokenDataset& dataset() const { return dataset_; }

  // The training batch of `step` (>= 0): the same (seed, step) always gives the same batch.
  Batch batch(std::int64_t step) const;
  // Rows [first_row, first_row + rows) of that batch: one rank's shard in data-parallel
  // training, so N ranks together take exactly the batch one process would. Throws mg::Error
  // for a range outside [0, B).
  Batch batch(std::int64_t step, std::int64_t first_row, std::int64_t rows) const;
  // Where row `row` of step `step` starts in train_tokens(): in [0, train_size - T - 1].
  std::int64_t window_start(std::int64_t step, std::int64_t row) const;

  // The held-out part as windows starting at 0, T, 2T, ... in batches of B rows (the last
  // batch may have fewer); the same for every seed.
  std::int64_t validation_batch_count() const;
  Batch validation_batch(std::int64_t index) const;

 private:
  Batch gather(std::span<const std::int32_t> tokens, const std::vector<std::int64_t>& starts) const;

  TokenDataset dataset_;
  std::int64_t batch_size_;
  std::uint64_t seed_;
};

}  // namespace mg::train
