// The training loop of ANDREA's input layer + untied head (see trainer.h), and what its
// checkpoints hold (each save a folder of checkpoint.h's directory):
//   tokenizer.model       the SentencePiece model the ids come from
//   optimizer.safetensors the optimizer's state
//   model.safetensors     the parameters; metadata: the model config, the run's settings,
//                         "step" and the token counts
// The data order is a pure function of (seed, step), so the step is all of its state.
#include "trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

#include "checkpoint.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "minigraph/autograd.h"
#include "minigraph/cpu.h"
#include "minigraph/distributed/communicator.h"
#include "minigraph/distributed/gradient_reducer.h"
#include "minigraph/error.h"
#include "minigraph/models/layers/init.h"
#include "minigraph/optim/adamw.h"
#include "minigraph/optim/clip.h"
#include "minigraph/optim/schedule.h"
#include "minigraph/optim/sgd.h"
#include "minigraph/safetensors.h"

namespace mg::train {

namespace fs = std::filesystem;

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
}

andrea::AndreaConfig TrainConfig::model_config(std::int64_t vocab) const {
  andrea::AndreaConfig c;
  c.vocab_size = vocab;
  c.d_model = d_model;
  c.context = context;
  c.positions = positions;
  c.seed = seed;
  c.dtype = dtype;
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

namespace {

Tokenizer train_tokenizer(const TrainConfig& c) {
  MG_CHECK(c.vocab_size <= std::numeric_limits<int>::max(), "train", "vocab_size",
           "a vocabulary SentencePiece can train (< 2^31)", "{}", c.vocab_size);
  return Tokenizer::train(c.corpus, static_cast<int>(c.vocab_size));
}

std::int64_t warmup_steps(const TrainConfig& c) { return c.warmup >= 0 ? c.warmup : c.steps / 20; }

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

const char* optimizer_name(OptimizerKind kind) {
  return kind == OptimizerKind::adamw ? "adamw" : "sgd";
}

// What a checkpoint must agree on with the configuration that resumes it.
std::map<std::string, std::string> run_identity(const TrainConfig& c, std::int64_t tokens) {
  return {{"train.d_model", std::to_string(c.d_model)},
          {"train.context", std::to_string(c.context)},
          {"train.batch", std::to_string(c.batch)},
          {"train.dtype", std::string(dtype_name(c.dtype))},
          {"train.positions", std::string(position_kind_name(c.positions))},
          {"train.optimizer", optimizer_name(c.optimizer)},
          {"train.seed", std::to_string(c.seed)},
          {"train.lr", fmt::format("{}", c.lr)},
          {"train.min_lr", fmt::format("{}", c.min_lr)},
          {"train.warmup", std::to_string(warmup_steps(c))},
          {"train.weight_decay", fmt::format("{}", c.weight_decay)},
          {"train.momentum", fmt::format("{}", c.momentum)},
          {"train.clip", fmt::format("{}", c.clip)},
          {"train.corpus_tokens", std::to_string(tokens)}};
}

// A whole number >= 0 from a checkpoint's metadata: an mg::Error naming the file when the entry
// is missing or is not one.
std::int64_t metadata_count(const std::map<std::string, std::string>& metadata,
                            const std::string& key, const std::string& file,
                            const char* op = "train --resume") {
  auto found = metadata.find(key);
  MG_CHECK(found != metadata.end(), op, key, "an entry in the file's metadata", "none in '{}'",
           file);
  std::int64_t value = -1;
  const std::string& text = found->second;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  MG_CHECK(ec == std::errc() && end == text.data() + text.size() && value >= 0, op, key,
           "a whole number >= 0", "'{}' in '{}'", text, file);
  return value;
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
      optim::WarmupCosine(config_.lr, config_.min_lr, warmup_steps(config_), config_.steps);
  if (p_->comm != nullptr) {
    distributed::check_same_on_every_rank(*p_->comm, "train", run_description());
    NoGradGuard no_grad;
    for (const Tensor& p : model_->parameters()) p_->comm->broadcast(p, 0);
    p_->reducer = std::make_unique<distributed::GradientReducer>(*p_->comm, model_->named_parameters(),
                                                          config_.bucket_bytes);
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
  text += fmt::format("tokenizer = {} pieces, {} bytes, FNV-1a {:016x}\n",
                      tokenizer_->vocab_size(), tokenizer_->serialized().size(), hash);
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
  CheckpointSave save(dir, step_);
  save.write_tokenizer("tokenizer.model", *tokenizer_);
  save.write_safetensors("optimizer.safetensors", p_->optimizer->state_dict(), {});
  auto metadata = andrea::config_metadata(model_->config());
  metadata.merge(run_identity(config_, dataset().size()));
  metadata["step"] = std::to_string(step_);
  metadata["train.steps"] = std::to_string(config_.steps);
  save.write_safetensors("model.safetensors", model_->state_dict(), metadata);
  save.commit();
}

std::unique_ptr<Trainer> Trainer::resume(const std::string& dir, const TrainConfig& config,
                                         distributed::Communicator* comm) {
  CheckpointFiles files = read_checkpoint(dir, /*with_optimizer=*/true, "train --resume");
  const std::string model_path = files.model.source();
  const auto& meta = files.model.metadata();
  // A run continued for more steps keeps the warmup it started with (steps / 20 of the
  // original run when it was left to the default).
  TrainConfig resumed = config;
  if (resumed.warmup < 0) resumed.warmup = metadata_count(meta, "train.warmup", model_path);
  std::unique_ptr<Trainer> t(
      new Trainer(resumed, std::make_unique<Tokenizer>(std::move(files.tokenizer)), comm));
  // Everything that shapes the run must be what the checkpoint was made with.
  for (const auto& [key, value] : run_identity(t->config_, t->dataset().size())) {
    auto found = meta.find(key);
    MG_CHECK(
        found != meta.end() && found->second == value, "train --resume", key,
        fmt::format("{} (as in {})", found == meta.end() ? "an entry" : found->second, model_path),
        "{} from this command line", value);
  }
  const std::int64_t step = metadata_count(meta, "step", model_path);
  MG_CHECK(step == files.id.step, "train --resume", "step",
           fmt::format("the save's step {} (checkpoint.step)", files.id.step), "{} in '{}'", step,
           model_path);
  MG_CHECK(step <= t->config_.steps, "train --resume", "steps",
           fmt::format("at least the checkpoint's {} steps", step), "{}", t->config_.steps);
  t->model_->load_state_dict(files.model.tensors(), /*strict=*/true);
  t->p_->optimizer->load_state_dict(files.optimizer->tensors());
  t->step_ = step;
  t->p_->first_step = step;
  return t;
}

std::int64_t Trainer::peak_memory_bytes() const {
  return static_cast<std::int64_t>(cpu::memory_stats().peak_in_use_bytes);
}

Snapshot load_snapshot(const std::string& dir) {
  CheckpointFiles files = read_checkpoint(dir, /*with_optimizer=*/false, "similar");
  Snapshot snap;
  snap.tokenizer = std::make_shared<Tokenizer>(std::move(files.tokenizer));
  snap.token_table = files.model.tensor("input.tok_emb.weight").to(DType::f32);
  snap.step = files.id.step;
  MG_CHECK(snap.token_table.dim() == 2 && snap.token_table.size(0) == snap.tokenizer->vocab_size(),
           "similar", "checkpoint",
           fmt::format("a token table of the tokenizer's {} rows", snap.tokenizer->vocab_size()),
           "{} in '{}'", shape_str(snap.token_table.shape()), files.model.source());
  return snap;
}

Snapshot untrained_snapshot(const TrainConfig& config) {
  config.validate();
  Snapshot snap;
  snap.tokenizer = std::make_shared<Tokenizer>(train_tokenizer(config));
  andrea::AndreaConfig c = config.model_config(snap.tokenizer->vocab_size());
  // The table a new run starts from (andrea::InputLayer's tok_emb): the same seed, the same rows.
  snap.token_table = init_normal_scaled({c.vocab_size, c.d_model}, c.d_model, c.seed, c.dtype);
  return snap;
}

}  // namespace mg::train
