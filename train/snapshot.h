// A token table with its tokenizer: what `minigraph similar` reads, from a checkpoint or from the
// start of a run that has not trained yet.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "minigraph/tensor.h"
#include "minigraph/train/data/tokenizer.h"
#include "minigraph/train/trainer.h"

namespace mg::train {

struct Snapshot {
  std::shared_ptr<Tokenizer> tokenizer;
  Tensor token_table;  // input.tok_emb.weight [V, D]
  std::int64_t step = 0;
};

// From a checkpoint directory written by Trainer::save (or one save's folder in it).
Snapshot load_snapshot(const std::string& dir);
// Before training: a tokenizer trained on config.corpus and the table a new run starts from.
Snapshot untrained_snapshot(const TrainConfig& config);

}  // namespace mg::train
