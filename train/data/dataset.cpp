// TokenDataset (the split) and BatchSampler (counter-based windows). Legend: N tokens, B batch
// rows, T context.
#include "data/dataset.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "data/tokenizer.h"
#include "minigraph/dtype.h"
#include "minigraph/error.h"

namespace mg::train {

namespace {

// splitmix64's finaliser: a bijection of 64-bit words whose outputs pass statistical tests even
// for consecutive inputs, which is what a counter-based generator needs.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

TokenDataset::TokenDataset(std::vector<std::int32_t> ids, std::int64_t context,
                           double validation_fraction)
    : context_(context) {
  const std::string op = "TokenDataset";
  MG_CHECK(context >= 1, op, "context", "at least 1", "{}", context);
  MG_CHECK(validation_fraction > 0.0 && validation_fraction < 1.0, op, "validation_fraction",
           "in (0, 1)", "{}", validation_fraction);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    MG_CHECK(ids[i] >= 0, op, "ids", "ids >= 0", "{} at position {}", ids[i], i);
  }
  const auto n = static_cast<std::int64_t>(ids.size());
  // Rounded to nearest, not up: 170 * 0.1 is 17.000000000000004 in doubles.
  const std::int64_t held_out = std::llround(static_cast<double>(n) * validation_fraction);
  split_ = n - held_out;
  // A window is T + 1 tokens (T inputs and the target after the last); each part needs one.
  const std::int64_t window = checked_add(context, 1, op, "context + 1");
  const std::int64_t needed_total =
      static_cast<std::int64_t>(std::ceil(static_cast<double>(window) / validation_fraction));
  MG_CHECK(split_ >= window && held_out >= window, op, "ids",
           fmt::format("at least {} tokens in each part (a window of context + 1), so about {} "
                       "tokens at validation_fraction {}",
                       window, std::max(needed_total, 2 * window), validation_fraction),
           "{} tokens: {} for training and {} held out", n, split_, held_out);
  ids_ = std::make_shared<const std::vector<std::int32_t>>(std::move(ids));
}

TokenDataset TokenDataset::from_file(const Tokenizer& tokenizer, const std::string& path,
                                     std::int64_t context, double validation_fraction) {
  return TokenDataset(tokenizer.encode_file(path), context, validation_fraction);
}

std::span<const std::int32_t> TokenDataset::train_tokens() const {
  return {ids_->data(), static_cast<std::size_t>(split_)};
}

std::span<const std::int32_t> TokenDataset::validation_tokens() const {
  return {ids_->data() + split_, static_cast<std::size_t>(size() - split_)};
}

BatchSampler::BatchSampler(TokenDataset dataset, std::int64_t batch_size, std::uint64_t seed)
    : dataset_(std::move(dataset)), batch_size_(batch_size), seed_(seed) {
  MG_CHECK(batch_size >= 1, "BatchSampler", "batch_size", "at least 1", "{}", batch_size);
  // B·T elements must fit a tensor; checked once here so batch() cannot overflow.
  checked_mul(batch_size, dataset_.context(), "BatchSampler", "batch_size × context");
}

std::int64_t BatchSampler::window_start(std::int64_t step, std::int64_t row) const {
  MG_CHECK(step >= 0, "BatchSampler::window_start", "step", "at least 0", "{}", step);
  MG_CHECK(row >= 0 && row < batch_size_, "BatchSampler::window_start", "row",
           fmt::format("in [0, {})", batch_size_), "{}", row);
  // Starts 0 .. train_size - T - 1, so the window's T + 1 tokens lie in the training part.
  const auto starts = static_cast<std::uint64_t>(dataset_.train_size() - dataset_.context());
  const std::uint64_t key =
      mix(mix(mix(seed_) ^ static_cast<std::uint64_t>(step)) ^ static_cast<std::uint64_t>(row));
  // Modulo bias is below starts / 2^64 (< 1e-9 for corpora under 2^34 tokens): negligible.
  return static_cast<std::int64_t>(key % starts);
}

Batch BatchSampler::batch(std::int64_t step) const { return batch(step, 0, batch_size_); }

Batch BatchSampler::batch(std::int64_t step, std::int64_t first_row, std::int64_t rows) const {
  MG_CHECK(first_row >= 0 && rows >= 1 && first_row <= batch_size_ - rows, "BatchSampler::batch",
           "rows", fmt::format("a range of rows within the batch's {}", batch_size_),
           "{} rows from row {}", rows, first_row);
  std::vector<std::int64_t> starts(static_cast<std::size_t>(rows));
  for (std::int64_t row = 0; row < rows; ++row) {
    starts[static_cast<std::size_t>(row)] = window_start(step, first_row + row);
  }
  return gather(dataset_.train_tokens(), starts);
}

std::int64_t BatchSampler::validation_batch_count() const {
  // Windows start at k·T while k·T <= size - (T + 1), that is k <= (size - 1) / T - 1.
  const std::int64_t windows = (dataset_.validation_size() - 1) / dataset_.context();
  return (windows + batch_size_ - 1) / batch_size_;
}

Batch BatchSampler::validation_batch(std::int64_t index) const {
  const std::int64_t count = validation_batch_count();
  MG_CHECK(index >= 0 && index < count, "BatchSampler::validation_batch", "index",
           fmt::format("in [0, {})", count), "{}", index);
  const std::int64_t t = dataset_.context();
  const std::int64_t windows = (dataset_.validation_size() - 1) / t;
  const std::int64_t first = index * batch_size_;
  const std::int64_t rows = std::min(batch_size_, windows - first);
  std::vector<std::int64_t> starts(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) starts[static_cast<std::size_t>(r)] = (first + r) * t;
  return gather(dataset_.validation_tokens(), starts);
}

Batch BatchSampler::gather(std::span<const std::int32_t> tokens,
                           const std::vector<std::int64_t>& starts) const {
  const std::int64_t t = dataset_.context();
  const auto rows = static_cast<std::int64_t>(starts.size());
  std::vector<std::int64_t> inputs(static_cast<std::size_t>(rows * t));
  std::vector<std::int64_t> targets(inputs.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int32_t* window = tokens.data() + starts[static_cast<std::size_t>(r)];
    for (std::int64_t i = 0; i < t; ++i) {
      inputs[static_cast<std::size_t>(r * t + i)] = window[i];
      targets[static_cast<std::size_t>(r * t + i)] = window[i + 1];
    }
  }
  return {Tensor::from_vector(inputs, {rows, t}), Tensor::from_vector(targets, {rows, t})};
}

}  // namespace mg::train
