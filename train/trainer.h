// Training ANDREA as a next-token model on a text corpus: the input layer, N transformer
// blocks (none: the lesson model) and the head, the fused linear_cross_entropy loss,
// global-norm clipping, a warmup + cosine learning rate, AdamW or SGD, a held-out validation
// loss, and checkpoints from which a run continues bit for bit.
// Legend: V vocabulary, D = d_model, T = context, B batch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "minigraph/models/andrea/model.h"
#include "minigraph/tensor.h"

namespace mg::distributed {
class Communicator;
class GradientReducer;
}  // namespace mg::distributed

namespace mg::train {

class Tokenizer;
class TokenDataset;
class CheckpointDir;
class BatchSampler;

enum class OptimizerKind { adamw, sgd };

// The defaults are the lesson's run: ANDREA's vocabulary at a width and context that train in
// about half a minute on 2 cores, long enough for cat and dog to meet. ANDREA-120M's own sizes
// are d_model 768, context 1024, batch 8 (`minigraph train --d-model 768 --context 1024
// --batch 8`).
struct TrainConfig {
  std::string corpus;              // a UTF-8 text file
  std::int64_t vocab_size = 8449;  // V, the tokenizer's target size
  std::int64_t d_model = 64;       // D
  std::int64_t context = 32;       // T: each batch row is a window of T + 1 tokens
  std::int64_t batch = 16;         // B
  std::int64_t steps = 1000;       // optimizer steps in all (a resumed run counts from 0)
  double lr = 1e-2;                // peak learning rate, after warmup
  double min_lr = 1e-3;            // at the end of the cosine
  std::int64_t warmup = -1;        // warmup steps; -1: steps / 20
  OptimizerKind optimizer = OptimizerKind::adamw;
  double weight_decay = 0.0;  // decoupled (AdamW) or L2 (SGD)
  double momentum = 0.9;      // SGD
  double clip = 1.0;          // global gradient norm; 0: no clipping
  std::uint64_t seed = 1;     // parameters, and the order of the batches
  PositionKind positions = PositionKind::learned;
  // The transformer: 0 blocks is the lesson model (input layer and head alone).
  std::int64_t layers = 0;  // N blocks
  std::int64_t heads = 4;   // H, dividing d_model
  double mlp_ratio = 4.0;
  // Of the embeddings and each residual branch, while training (not in validation). Masks are
  // keyed by the step (and, data parallel, the rank): a run repeats and resumes bit for bit.
  double dropout = 0.0;
  bool tied_head = false;  // the head is the token table
  Device device = Device::cpu();
  std::int64_t eval_every = 100;  // validation loss every N steps and at the last; 0: never
  std::int64_t eval_batches = 4;  // validation windows: eval_batches × B
  std::int64_t chunk_bytes = std::int64_t{64} << 20;  // the fused head's memory budget
  DType dtype = DType::f32;                           // the parameters' (f32 or f64)
  // Data parallel: gradients are all-reduced in buckets of about this many bytes.
  std::int64_t bucket_bytes = std::int64_t{25} << 20;

  void validate() const;  // throws mg::Error naming the field
  andrea::AndreaConfig model_config(std::int64_t vocab) const;
  std::int64_t warmup_steps() const;  // warmup, or steps / 20 when left at -1
};

// The tokenizer a run trains on config.corpus, of config.vocab_size pieces.
Tokenizer train_tokenizer(const TrainConfig& config);

struct StepMetrics {
  std::int64_t step = 0;   // 1-based: the step just taken
  std::int64_t steps = 0;  // of the run
  double loss = 0;
  double val_loss = -1;  // < 0: not evaluated at this step
  double lr = 0;
  double grad_norm = 0;     // before clipping
  double tokens_per_s = 0;  // over this run's steps so far (B × T per step)
  double elapsed_s = 0;
  double eta_s = 0;
};

class Trainer {
 public:
  // A new run: trains the tokenizer on config.corpus to config.vocab_size, tokenizes the
  // corpus, builds the model from config.seed.
  explicit Trainer(const TrainConfig& config);
  // The same with a tokenizer already made (trained on the corpus, or loaded; null: trained).
  //
  // Data parallel with `comm` (one Trainer per rank, all made with the same arguments; comm
  // outlives the trainer): the batch of B windows is cut into N = comm->world_size() shards of
  // B / N rows, one per rank, so N ranks take exactly the batches one process would; rank 0
  // trains the tokenizer and sends it to the others; every rank checks that all ranks have the
  // same model and settings, then takes rank 0's parameters; gradients are averaged over the
  // ranks in buckets of config.bucket_bytes while the backward pass runs; the optimizer step
  // is the same on every rank, so the ranks' parameters stay identical. Losses and metrics are
  // the whole batch's on every rank; save() writes on rank 0 only. Throws mg::Error on every
  // rank when B is not a multiple of N or the ranks differ.
  Trainer(const TrainConfig& config, std::unique_ptr<Tokenizer> tokenizer,
          distributed::Communicator* comm = nullptr);
  // A run continued from a checkpoint directory written by save() (or one save's folder in
  // it), its files checked to be one save's: the model, the optimizer's
  // state, the tokenizer and the step; `config` must agree with the checkpoint on everything
  // that shapes the run (sizes, positions, optimizer, seed, corpus size), and may change
  // `steps` (to run longer) and the evaluation settings. With `comm`, every rank reads the
  // directory, and the number of ranks may differ from the run that wrote it.
  static std::unique_ptr<Trainer> resume(const std::string& dir, const TrainConfig& config,
                                         distributed::Communicator* comm = nullptr);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  bool done() const;
  // One optimizer step on the next batch. A gradient norm that is not finite throws mg::Error
  // before the update: the parameters and the step count stay as they were.
  StepMetrics step();
  double validation_loss();  // over the fixed held-out windows, no gradients
  // Model, optimizer, tokenizer, data-order state, as one atomic save into a checkpoint
  // directory (checkpoint.h): into `dir` while holding its lock for the save, or into a
  // directory held for the run. With a communicator, rank 0 writes and the other ranks return
  // at once.
  void save(const std::string& dir) const;
  void save(CheckpointDir& dir) const;

  const TrainConfig& config() const { return config_; }
  std::int64_t steps_done() const { return step_; }
  andrea::Andrea& model() { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const TokenDataset& dataset() const;
  std::int64_t peak_memory_bytes() const;  // CPU allocator's peak since the run started

 private:
  struct Private;
  // What every rank must agree on: the settings, the tokenizer, the parameters.
  std::string run_description() const;
  TrainConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<BatchSampler> sampler_;
  std::unique_ptr<andrea::Andrea> model_;
  std::unique_ptr<Private> p_;
  std::int64_t step_ = 0;
};

}  // namespace mg::train
