#include "training_checkpoint.h"

#include <fmt/format.h>

#include <charconv>

#include "minigraph/error.h"

namespace mg::train {

namespace {

const char* optimizer_name(OptimizerKind kind) {
  return kind == OptimizerKind::adamw ? "adamw" : "sgd";
}

// A whole number >= 0 from a checkpoint's metadata: an mg::Error naming the file when the entry
// is missing or is not one.
std::int64_t metadata_count(const std::map<std::string, std::string>& metadata,
                            const std::string& key, const std::string& file) {
  constexpr const char* op = "train --resume";
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

std::map<std::string, std::string> run_identity(const TrainConfig& c, std::int64_t corpus_tokens) {
  return {{"train.d_model", std::to_string(c.d_model)},
          {"train.context", std::to_string(c.context)},
          {"train.batch", std::to_string(c.batch)},
          {"train.dtype", std::string(dtype_name(c.dtype))},
          {"train.positions", std::string(position_kind_name(c.positions))},
          {"train.layers", std::to_string(c.layers)},
          {"train.heads", std::to_string(c.heads)},
          {"train.mlp_ratio", fmt::format("{}", c.mlp_ratio)},
          {"train.dropout", fmt::format("{}", c.dropout)},
          {"train.tied_head", c.tied_head ? "true" : "false"},
          {"train.optimizer", optimizer_name(c.optimizer)},
          {"train.seed", std::to_string(c.seed)},
          {"train.lr", fmt::format("{}", c.lr)},
          {"train.min_lr", fmt::format("{}", c.min_lr)},
          {"train.warmup", std::to_string(c.warmup_steps())},
          {"train.weight_decay", fmt::format("{}", c.weight_decay)},
          {"train.momentum", fmt::format("{}", c.momentum)},
          {"train.clip", fmt::format("{}", c.clip)},
          {"train.corpus_tokens", std::to_string(corpus_tokens)}};
}

void save_training_checkpoint(CheckpointDir& dir, std::int64_t step, const TrainConfig& config,
                              std::int64_t corpus_tokens, const Tokenizer& tokenizer,
                              const andrea::Andrea& model, const optim::Optimizer& optimizer) {
  CheckpointSave save(dir, step);
  save.write_tokenizer("tokenizer.model", tokenizer);
  save.write_safetensors("optimizer.safetensors", optimizer.state_dict(), {});
  auto metadata = andrea::config_metadata(model.config());
  metadata.merge(run_identity(config, corpus_tokens));
  metadata["step"] = std::to_string(step);
  metadata["train.steps"] = std::to_string(config.steps);
  save.write_safetensors("model.safetensors", model.state_dict(), metadata);
  save.commit();
}

TrainingCheckpoint open_training_checkpoint(const std::string& dir, const TrainConfig& config) {
  TrainingCheckpoint checkpoint{read_checkpoint(dir, /*with_optimizer=*/true, "train --resume"),
                                config};
  const SafetensorsFile& model = checkpoint.files.model;
  TrainConfig& resumed = checkpoint.config;
  if (resumed.warmup < 0)
    resumed.warmup = metadata_count(model.metadata(), "train.warmup", model.source());
  return checkpoint;
}

std::int64_t resume_step(const TrainingCheckpoint& checkpoint, std::int64_t corpus_tokens) {
  const std::string& model_path = checkpoint.files.model.source();
  const auto& meta = checkpoint.files.model.metadata();
  for (const auto& [key, value] : run_identity(checkpoint.config, corpus_tokens)) {
    auto found = meta.find(key);
    MG_CHECK(
        found != meta.end() && found->second == value, "train --resume", key,
        fmt::format("{} (as in {})", found == meta.end() ? "an entry" : found->second, model_path),
        "{} from this command line", value);
  }
  const std::int64_t step = metadata_count(meta, "step", model_path);
  const SaveId& id = checkpoint.files.id;
  MG_CHECK(step == id.step, "train --resume", "step",
           fmt::format("the save's step {} (checkpoint.step)", id.step), "{} in '{}'", step,
           model_path);
  MG_CHECK(step <= checkpoint.config.steps, "train --resume", "steps",
           fmt::format("at least the checkpoint's {} steps", step), "{}", checkpoint.config.steps);
  return step;
}

}  // namespace mg::train
