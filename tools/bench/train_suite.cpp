// A training step as `minigraph train` runs it, at ANDREA's shapes: the input layer, the fused
// head + loss (linear_cross_entropy), backward, clipping and an AdamW update; its time and the
// memory it takes beyond the parameters and the optimizer's state. And the head's loss alone,
// fused against unfused (matmul + cross_entropy, whose [n, V] logits and their gradient are
// materialised), in memory and time. And one checkpoint save of the parameters and the AdamW
// state (train/checkpoint.h: fsyncs and the rename included). Legend: n = B*T positions, D
// width, V vocabulary.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "minigraph/cpu.h"
#include "suite_common.h"

namespace mg::bench {

namespace {

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"); 0 where it cannot be read.
double status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

struct Growth {
  double rss = 0;     // the process's peak resident memory above its resident memory before
  double tensor = 0;  // the allocator's peak above the tensor memory in use before
};
// What `work` takes at its peak, measured the way compare_torch.py measures PyTorch (the
// resident set's high-water mark, reset through /proc/self/clear_refs) and by the allocator.
Growth peak_growth(const std::function<void()>& work) {
  cpu::empty_cache();
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
  const double rss_before = status_bytes("VmRSS");
  const auto in_use = static_cast<double>(cpu::memory_stats().in_use_bytes);
  cpu::reset_peak_memory_stats();
  work();
  return {status_bytes("VmHWM") - rss_before,
          static_cast<double>(cpu::memory_stats().peak_reserved_bytes) - in_use};
}

Record memory_record(const std::string& name, int batch, const Growth& growth,
                     const std::string& what) {
  Record r{.name = name, .threads = num_threads(), .batch = batch};
  r.achieved = growth.rss / kMiB;
  r.unit = "MiB";
  r.note = fmt::format("peak resident memory above that before {}; tensors: {:.0f} MiB", what,
                       growth.tensor / kMiB);
  return r;
}

// A save as a run's --checkpoint makes it, without the tokenizer's file (about 0.3 MB): the
// parameters (tok_emb, pos_emb, head: 55 MB in f32) and AdamW's two moments (110 MB), into a
// directory under TMPDIR, every file, the folder and the directory fsync'd.
void run_checkpoint_save(andrea::Andrea& model, const Tensor& ids, const Tensor& targets,
                         const SuiteOptions& options) {
  optim::AdamW optimizer(model.named_parameters(), optim::AdamWOptions{});
  linear_cross_entropy(model.input.forward(ids), model.head.weight(), targets).backward();
  optimizer.step();  // the moments exist from here on
  optimizer.zero_grad();
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("minigraph-bench-checkpoint-{}", ::getpid());
  double bytes = 0;
  {
    train::CheckpointDir held(dir.string());
    const StateDict moments = optimizer.state_dict(), parameters = model.state_dict();
    for (const auto* dict : {&moments, &parameters}) {
      for (const auto& [name, t] : *dict) bytes += static_cast<double>(t.nbytes());
    }
    std::int64_t step = 0;
    Timing t = time_reps(
        [&] {
          train::CheckpointSave save(held, ++step);
          save.write_safetensors("optimizer.safetensors", moments, {});
          save.write_safetensors("model.safetensors", parameters, {});
          save.commit();
        },
        options.reps, 1);
    Record r{.name = "checkpoint_save", .threads = num_threads()};
    r.median_ms = t.median_ms;
    r.min_ms = t.min_ms;
    r.max_ms = t.max_ms;
    r.achieved = bytes / (t.median_ms * 1e3);  // MB/s
    r.unit = "MB/s";
    r.note = fmt::format("parameters + AdamW state, {:.0f} MB, fsync'd, in {}", bytes / 1e6,
                         dir.parent_path().string());
    options.emit(r);
  }
  std::filesystem::remove_all(dir);
}

// A step as `minigraph train` runs it: its layout copies, its time, and its peak memory (the
// process's and the allocator's).
void run_train_step(andrea::Andrea& model, const Tensor& ids, const Tensor& targets, int batch,
                    const Limits& limits, const SuiteOptions& options) {
  const double n = static_cast<double>(batch) * kContext;
  optim::AdamW optimizer(model.named_parameters(), optim::AdamWOptions{});
  auto step = [&] {
    linear_cross_entropy(model.input.forward(ids), model.head.weight(), targets).backward();
    auto params = model.parameters();
    optim::clip_grad_norm(params, 1.0);
    optimizer.step();
    optimizer.zero_grad();
  };
  step();  // the optimizer's state exists from here on, as in a run
  const std::uint64_t copied_before = layout_copy_bytes();
  step();
  Record copies{.name = "train_step.layout_copies", .threads = num_threads(), .batch = batch};
  copies.achieved = static_cast<double>(layout_copy_bytes() - copied_before);
  copies.unit = "bytes";
  copies.note = "copied by layout changes (contiguous()) in one step; target 0";
  options.emit(copies);
  const Growth growth = peak_growth(step);
  Timing t = time_reps(step, options.reps, 1);
  options.emit(rate_record("train_step", batch, t, Work::flops, head_flops(n), limits, 0,
                           "input layer + fused head/loss + backward + clip + AdamW"));
  options.emit(memory_record("train_step.peak_memory", batch, growth,
                             "a step (parameters and AdamW state exist)"));
  Record tensors{.name = "train_step.peak_tensor_memory", .threads = num_threads(), .batch = batch};
  tensors.median_ms = tensors.min_ms = tensors.max_ms = t.median_ms;
  tensors.achieved = growth.tensor / kMiB;
  tensors.unit = "MiB";
  tensors.note = "the allocator's peak above the tensor memory in use before a step";
  options.emit(tensors);
}

// A training step of the whole ANDREA-120M (15 blocks) at B × T: the model's loss (blocks and
// the fused head), backward, clipping and AdamW, as `minigraph train --layers 15` runs it; its
// time and peak memory above the parameters and the optimizer's state.
void run_gpt_train_step(std::int64_t batch, std::int64_t length, const Limits& limits,
                        const SuiteOptions& options) {
  const andrea::AndreaConfig config = andrea::AndreaConfig::andrea_120m();
  andrea::Andrea model(config);
  const Tensor ids = random_ids(batch).narrow(1, 0, length).contiguous();
  const Tensor targets = random_ids(batch, 21).narrow(1, 0, length).contiguous();
  optim::AdamW optimizer(model.named_parameters(), optim::AdamWOptions{});
  auto step = [&] {
    model.loss(ids, targets).backward();
    auto params = model.parameters();
    optim::clip_grad_norm(params, 1.0);
    optimizer.step();
    optimizer.zero_grad();
  };
  step();  // the optimizer's state exists from here on, as in a run
  const Growth growth = peak_growth(step);
  Timing t = time_reps(step, options.reps, 1);
  // 6 flops a weight a position, and the causal attention's 6 T D a position and block.
  const double n = static_cast<double>(batch * length);
  const double weights = static_cast<double>(config.parameters() - config.embedding_parameters());
  const double flops =
      6 * n * weights + 6 * n * static_cast<double>(length * config.d_model * config.blocks);
  const std::string name = fmt::format("gpt_train_step.T{}", length);
  const int rows = static_cast<int>(batch);
  options.emit(rate_record(name, rows, t, Work::flops, flops, limits, 0,
                           "ANDREA-120M, 15 blocks: loss + backward + clip + AdamW"));
  options.emit(memory_record(name + ".peak_memory", rows, growth,
                             "a step (parameters and AdamW state exist)"));
  // The whole process's resident peak over the steps: parameters, gradients, AdamW's state and
  // the activations, what `minigraph train` at these sizes needs.
  Record resident{.name = name + ".peak_resident", .threads = num_threads(), .batch = rows};
  resident.achieved = status_bytes("VmHWM") / kMiB;
  resident.unit = "MiB";
  resident.note = "the process's resident peak during the steps (VmHWM)";
  options.emit(resident);
}

}  // namespace

void run_gpt_suite(const Limits& limits, const SuiteOptions& options) {
  if (options.wanted("gpt_train_step.T64")) run_gpt_train_step(4, 64, limits, options);
  if (options.wanted("gpt_train_step.T1024")) run_gpt_train_step(1, 1024, limits, options);
}

void run_train_suite(int batch, const Limits& limits, const SuiteOptions& options) {
  auto wanted = options.wanted;
  if (!wanted("train_step") && !wanted("head_loss") && !wanted("checkpoint_save")) return;
  const double n = static_cast<double>(batch) * kContext;
  andrea::Andrea model(andrea::AndreaConfig::lesson());
  Tensor ids = random_ids(batch), targets = random_ids(batch, 21);

  if (wanted("train_step")) run_train_step(model, ids, targets, batch, limits, options);
  if (wanted("checkpoint_save")) run_checkpoint_save(model, ids, targets, options);
  if (wanted("head_loss")) {
    Tensor x = random_tensor({batch, kContext, kWidth}, true, 15);
    const Tensor& w = model.head.weight();
    auto fused = [&] {
      x.zero_grad();
      model.zero_grad();
      linear_cross_entropy(x, w, targets).backward();
    };
    auto unfused = [&] {
      x.zero_grad();
      model.zero_grad();
      cross_entropy(matmul(x, w).view({-1, kVocab}), targets.view({-1})).backward();
    };
    const Growth fused_bytes = peak_growth(fused);
    const Growth unfused_bytes = peak_growth(unfused);
    Timing tf = time_reps(fused, options.reps, 1);
    options.emit(rate_record("head_loss.fused", batch, tf, Work::flops, head_flops(n), limits, 0,
                             "linear_cross_entropy fwd+bwd"));
    Timing tu = time_reps(unfused, options.reps, 1);
    options.emit(rate_record("head_loss.unfused", batch, tu, Work::flops, head_flops(n), limits, 0,
                             "matmul + cross_entropy fwd+bwd"));
    options.emit(memory_record("head_loss.fused.peak_memory", batch, fused_bytes, "fwd+bwd"));
    options.emit(memory_record("head_loss.unfused.peak_memory", batch, unfused_bytes, "fwd+bwd"));
  }
}

}  // namespace mg::bench
