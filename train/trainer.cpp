// The training loop of ANDREA's input layer + untied head (see trainer.h); what its checkpoints
// hold is training_checkpoint.h's.
#include "trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "data/dataset.h"
#include "data/tokenizer.h"
#include "minigraph/autograd.h"
#include "minigraph/cpu.h"
#include "minigraph/distributed/communicator.h"
#include "minigraph/distributed/gradient_reducer.h"
#include "minigraph/error.h"
#include "minigraph/optim/adamw.h"
#include "minigraph/optim/clip.h"
#include "minigraph/optim/schedule.h"
#include "minigraph/optim/sgd.h"
#include "training_checkpoint.h"

namespace mg::train {

void TrainConfig::validate() const {
  auto positive = [](std::int64_t v, const char* name) {
    MG_CHECK(v > 0, "train", name, "a positive whole number", "{}", v);
  };
  positive(vocab_size, "vocab_size");
  positive(d_model, "d_model");
  positive(context, "context");
  positive(batch, "batch");
  positive(steps, "steps");
  positive(eval_batches, "eval_batches");
  positive(chunk_bytes, "chunk_bytes");
  MG_CHECK(std::isfinite(lr) && lr > 0, "train", "lr", "a positive learning rate", "{}", lr);
  MG_CHECK(std::isfinite(min_lr) && min_lr >= 0 && min_lr <= lr, "train", "min_lr",
           fmt::format("a learning rate in [0, lr = {}]", lr), "{}", min_lr);
  MG_CHECK(warmup >= -1 && warmup <= steps, "train", "warmup",
           fmt::format("-1 (steps / 20) or a step count in [0, {}]", steps), "{}", warmup);
  MG_CHECK(std::isfinite(weight_decay) && weight_decay >= 0, "train", "weight_decay",
           "a finite value >= 0", "{}", weight_decay);
  MG_CHECK(std::isfinite(momentum) && momentum >= 0 && momentum < 1, "train", "momentum",
           "a value in [0, 1)", "{}", momentum);
  MG_CHECK(std::isfinite(clip) && clip >= 0, "train", "clip", "a norm >= 0 (0: no clipping)", "{}",
           clip);
  MG_CHECK(eval_every >= 0, "train", "eval_every", "a step count >= 0 (0: never)", "{}",
           eval_every);
  MG_CHECK(is_floating(dtype), "train", "dtype", "f32 or f64", "{}", dtype_name(dtype));
  positive(bucket_bytes, "bucket_bytes");
  model_config(vocab_size).validate();  // the blocks' settings, before a tokenizer is trained
}

std::int64_t TrainConfig::warmup_steps() const { return warmup >= 0 ? warmup : steps / 20; }

andrea::AndreaConfig TrainConfig::model_config(std::int64_t vocab) const {
  andrea::AndreaConfig c;
  c.vocab_size = vocab;
  c.d_model = d_model;
  c.context = context;
  c.positions = positions;
  c.seed = seed;
  c.dtype = dtype;
  c.blocks = layers;
  c.heads = heads;
  c.mlp_ratio = mlp_ratio;
  c.dropout = dropout;
  c.tied_head = tied_head;
  return c;
}

struct Trainer::Private {
  std::unique_ptr<optim::Optimizer> optimizer;
  optim::WarmupCosine schedule{1, 0, 0, 1};  // set by the trainer's constructor
  std::chrono::steady_clock::time_point started;
  std::int64_t first_step = 0;  // of this process: tokens/s counts from here
  // Data parallel (null without a communicator, or with one rank).
  distributed::Communicator* comm = nullptr;
  std::unique_ptr<distributed::GradientReducer> reducer;
  int rank = 0, ranks = 1;
};

Tokenizer train_tokenizer(const TrainConfig& c) {
  MG_CHECK(c.vocab_size <= std::numeric_limits<int>::max(), "train", "vocab_size",
           "a vocabulary SentencePiece can train (< 2^31)", "{}", c.vocab_size);
  return Tokenizer::train(c.corpus, static_cast<int>(c.vocab_size));
}

namespace {

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& c, andrea::Andrea& model) {
  if (c.optimizer == OptimizerKind::adamw) {
    optim::AdamWOptions o;
    o.lr = c.lr;
    o.weight_decay = c.weight_decay;
    return std::make_unique<optim::AdamW>(model.named_parameters(), o);
  }
  optim::SGDOptions o;
  o.lr = c.lr;
  o.momentum = c.momentum;
  o.weight_decay = c.weight_decay;
  return std::make_unique<optim::SGD>(model.named_parameters(), o);
}

}  // namespace

Trainer::Trainer(const TrainConfig& config) : Trainer(config, nullptr) {}

Trainer::Trainer(const TrainConfig& config, std::unique_ptr<Tokenizer> tokenizer,
                 distributed::Communicator* comm)
    : config_(config), p_(std::make_unique<Private>()) {
  config_.validate();
  if (comm != nullptr && comm->world_size() > 1) {
    p_->comm = comm;
    p_->rank = comm->rank();
    p_->ranks = comm->world_size();
    MG_CHECK(
        config_.batch % p_->ranks == 0, "train", "batch",
        fmt::format("a multiple of the {} ranks (each takes B / {} rows)", p_->ranks, p_->ranks),
        "{}", config_.batch);
  }
  if (!tokenizer && p_->comm != nullptr) {
    // One tokenizer for all: rank 0 trains it, the others take its bytes.
    const std::string bytes = distributed::broadcast_bytes(
        *p_->comm, p_->rank == 0 ? train_tokenizer(config_).serialized() : "");
    tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_serialized(bytes));
  }
  tokenizer_ =
      tokenizer ? std::move(tokenizer) : std::make_unique<Tokenizer>(train_tokenizer(config_));
  sampler_ = std::make_unique<BatchSampler>(
      TokenDataset::from_file(*tokenizer_, config_.corpus, config_.context), config_.batch,
      config_.seed);
  model_ = std::make_unique<andrea::Andrea>(config_.model_config(tokenizer_->vocab_size()));
  model_->to(config_.device);
  p_->optimizer = make_optimizer(config_, *model_);
  p_->schedule =
      optim::WarmupCosine(config_.lr, config_.min_lr, config_.warmup_steps(), config_.steps);
  if (p_->comm != nullptr) {
    distributed::check_same_on_every_rank(*p_->comm, "train", run_description());
    NoGradGuard no_grad;
    for (const Tensor& p : model_->parameters()) p_->comm->broadcast(p, 0);
    p_->reducer = std::make_unique<distributed::GradientReducer>(
        *p_->comm, model_->named_parameters(), config_.bucket_bytes);
  }
  p_->started = std::chrono::steady_clock::now();
}

std::string Trainer::run_description() const {
  std::string text;
  for (const auto& [key, value] : run_identity(config_, dataset().size())) {
    text += fmt::format("{} = {}\n", key, value);
  }
  // What else every rank must do alike: the collectives' sizes and the steps they happen at.
  text += fmt::format("train.steps = {}\ntrain.eval_every = {}\ntrain.eval_batches = {}\n",
                      config_.steps, config_.eval_every, config_.eval_batches);
  text += fmt::format("train.bucket_bytes = {}\n", config_.bucket_bytes);
  // FNV-1a of the tokenizer's bytes: the same pieces, not only as many.
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : tokenizer_->serialized()) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  text += fmt::format("tokenizer = {} pieces, {} bytes, FNV-1a {:016x}\n", tokenizer_->vocab_size(),
                      tokenizer_->serialized().size(), hash);
  for (const auto& [name, p] : model_->named_parameters()) {
    text += fmt::format("{} = {} {}\n", name, shape_str(p.shape()), dtype_name(p.dtype()));
  }
  return text;
}

Trainer::~Trainer() = default;

const TokenDataset& Trainer::dataset() const { return sampler_->dataset(); }

bool Trainer::done() const { return step_ >= config_.steps; }

StepMetrics Trainer::step() {
  MG_CHECK(!done(), "train", "steps", fmt::format("a step within the run's {}", config_.steps),
           "step {}", step_ + 1);
  if (step_ == p_->first_step) p_->started = std::chrono::steady_clock::now();
  const double lr = p_->schedule.lr(step_);
  const std::int64_t rows = config_.batch / p_->ranks;
  Batch batch = sampler_->batch(step_, p_->rank * rows, rows);
  Tensor inputs = batch.inputs.to(config_.device), targets = batch.targets.to(config_.device);
  LinearCrossEntropyOptions loss_options;
  loss_options.chunk_bytes = config_.chunk_bytes;
  // Each step and rank draws masks of its own; ranks share the seed, never a counter.
  model_->set_dropout_counter(static_cast<std::uint64_t>(step_ * p_->ranks + p_->rank));
  Tensor loss = model_->loss(inputs, targets, loss_options);
  Tensor loss_value = loss;
  if (p_->reducer) {
    // The whole batch's loss: the mean of the ranks' (each a mean over as many tokens).
    loss_value = loss.detach().clone();
    auto loss_mean = p_->comm->all_reduce_async(loss_value, distributed::ReduceOp::mean);
    backward(loss, Tensor(), false, p_->reducer->hook());
    p_->reducer->finish();
    loss_mean->wait();
  } else {
    loss.backward();
  }
  std::vector<Tensor> params = model_->parameters();
  // max_norm 0 means no clipping: the norm is still measured, through a bound never reached.
  const double grad_norm = optim::clip_grad_norm(
      params, config_.clip > 0 ? config_.clip : std::numeric_limits<double>::max());
  if (!std::isfinite(grad_norm)) {  // an update would spread the inf or NaN into every row
    p_->optimizer->zero_grad();
    throw Error("train", "gradients", "a finite gradient norm",
                fmt::format("{} at step {}, the parameters left as they were after step {} "
                            "(lower the learning rate, or clip)",
                            grad_norm, step_ + 1, step_));
  }
  p_->optimizer->set_lr(lr);
  p_->optimizer->step();
  p_->optimizer->zero_grad();
  ++step_;

  StepMetrics m;
  m.step = step_;
  m.steps = config_.steps;
  m.loss = loss_value.item();
  m.lr = lr;
  m.grad_norm = grad_norm;
  m.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - p_->started).count();
  const auto taken = static_cast<double>(step_ - p_->first_step);
  m.tokens_per_s = m.elapsed_s > 0
                       ? taken * static_cast<double>(config_.batch * config_.context) / m.elapsed_s
                       : 0;
  m.eta_s = taken > 0 ? m.elapsed_s / taken * static_cast<double>(config_.steps - step_) : 0;
  if (config_.eval_every > 0 && (step_ % config_.eval_every == 0 || done())) {
    m.val_loss = validation_loss();
  }
  return m;
}

double Trainer::validation_loss() {
  NoGradGuard no_grad;
  model_->eval();  // no dropout
  struct TrainAgain {
    andrea::Andrea& model;
    ~TrainAgain() { model.train(); }
  } train_again{*model_};
  double sum = 0;
  const std::int64_t count = std::min(config_.eval_batches, sampler_->validation_batch_count());
  // Data parallel: batch i on rank i mod N, then the sum over the ranks.
  for (std::int64_t i = p_->rank; i < count; i += p_->ranks) {
    Batch batch = sampler_->validation_batch(i);
    LinearCrossEntropyOptions o;
    o.chunk_bytes = config_.chunk_bytes;
    sum +=
        model_->loss(batch.inputs.to(config_.device), batch.targets.to(config_.device), o).item();
  }
  if (p_->comm != nullptr) {
    Tensor total = Tensor::full({1}, sum, DType::f64).to(p_->comm->device());
    p_->comm->all_reduce(total);
    sum = total.to(Device::cpu()).item();
  }
  return sum / static_cast<double>(count);
}

void Trainer::save(const std::string& dir) const {
  if (p_->rank != 0) return;
  CheckpointDir held(dir);
  save(held);
}

void Trainer::save(CheckpointDir& dir) const {
  if (p_->rank != 0) return;
  save_training_checkpoint(dir, step_, config_, dataset().size(), *tokenizer_, *model_,
                           *p_->optimizer);
}

std::unique_ptr<Trainer> Trainer::resume(const std::string& dir, const TrainConfig& config,
                                         distributed::Communicator* comm) {
  TrainingCheckpoint checkpoint = open_training_checkpoint(dir, config);
  std::unique_ptr<Trainer> t(new Trainer(
      checkpoint.config, std::make_unique<Tokenizer>(std::move(checkpoint.files.tokenizer)), comm));
  const std::int64_t step = resume_step(checkpoint, t->dataset().size());
  t->model_->load_state_dict(checkpoint.files.model.tensors(), /*strict=*/true);
  t->p_->optimizer->load_state_dict(checkpoint.files.optimizer->tensors());
  t->step_ = step;
  t->p_->first_step = step;
  return t;
}

std::int64_t Trainer::peak_memory_bytes() const {
  return static_cast<std::int64_t>(cpu::memory_stats().peak_in_use_bytes);
}

}  // namespace mg::train
