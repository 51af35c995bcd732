// What a training run's checkpoint holds, each save a folder of checkpoint.h's directory:
//   tokenizer.model       the SentencePiece model the ids come from
//   optimizer.safetensors the optimizer's state
//   model.safetensors     the parameters; metadata: the model config, the run's identity
//                         (run_identity), "step" and "train.steps"
// The data order is a pure function of (seed, step), so the step is all of its state. Private to
// the train floor: the Trainer saves and resumes through it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "checkpoint.h"
#include "minigraph/models/andrea/model.h"
#include "minigraph/optim/optimizer.h"
#include "trainer.h"

namespace mg::train {

// What a checkpoint must agree on with the configuration that resumes it; `corpus_tokens` is the
// tokenized corpus's length.
std::map<std::string, std::string> run_identity(const TrainConfig& config,
                                                std::int64_t corpus_tokens);

// Writes one save of the run at `step` into `dir` and commits it.
void save_training_checkpoint(CheckpointDir& dir, std::int64_t step, const TrainConfig& config,
                              std::int64_t corpus_tokens, const Tokenizer& tokenizer,
                              const andrea::Andrea& model, const optim::Optimizer& optimizer);

// The latest save of a checkpoint directory, opened to resume a run.
struct TrainingCheckpoint {
  CheckpointFiles files;
  // The command line's configuration as the run resumes it: a run continued for more steps keeps
  // the warmup it started with (steps / 20 of the original run when left to the default).
  TrainConfig config;
};
TrainingCheckpoint open_training_checkpoint(const std::string& dir, const TrainConfig& config);

// The step to resume at, once everything that shapes the run (run_identity of the resumed
// configuration) is what the checkpoint was made with: an mg::Error naming the entry otherwise.
std::int64_t resume_step(const TrainingCheckpoint& checkpoint, std::int64_t corpus_tokens);

}  // namespace mg::train
