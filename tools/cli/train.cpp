// minigraph train: ANDREA's input layer + untied head trained as a next-token model on a text
// corpus (the shipped one by default): a SentencePiece tokenizer trained on it, random windows
// of T + 1 tokens from a seeded order, the fused head + loss, AdamW or SGD with clipping and a
// warmup + cosine schedule, a held-out validation loss, checkpoints to resume from bit for bit.
// On a terminal: a progress bar on stderr; in a pipe: a log line every --log-every steps;
// --json: one JSON object per step on stdout. ^C (or SIGTERM) stops after the step in
// progress and writes the checkpoint, so `--resume` continues as if never stopped. Started by
// mpirun, every process is one rank of a data-parallel run (distributed_job.h): rank 0 prints and
// writes, and a rank that fails ends the whole job.
#include <fmt/format.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "distributed_job.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

namespace {

struct TrainOptions {
  train::TrainConfig config;
  std::string optimizer = "adamw", positions = "learned", device = "cpu", dist = "auto";
  std::string checkpoint, tokenizer;
  bool resume = false, json = false;
  bool vocab_size_given = false;  // then a tokenizer from elsewhere must have that size
  int threads = 0;
  std::int64_t log_every = 0, save_every = 0, chunk_mib = 64, bucket_mib = 25;
  double dist_timeout = 600;
};

volatile std::sig_atomic_t stop_signal = 0;
extern "C" void request_stop(int signal) { stop_signal = signal; }

// While alive, SIGINT and SIGTERM only ask the training loop to stop after its current step;
// the handlers before it come back afterwards.
class StopRequests {
 public:
  StopRequests() {
    stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopRequests() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopRequests(const StopRequests&) = delete;
  StopRequests& operator=(const StopRequests&) = delete;
  int signal() const { return stop_signal; }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

std::string clock_text(double seconds) {
  const auto s = static_cast<std::int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string bar(std::int64_t done, std::int64_t total) {
  constexpr int kWidth = 12;
  const auto filled = static_cast<int>(kWidth * done / std::max<std::int64_t>(total, 1));
  return "[" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(kWidth - filled), '.') + "]";
}

std::string metrics_text(const train::StepMetrics& m, double last_val) {
  return fmt::format("step {}/{}  loss {:.4f}  val {}  lr {:.2e}  {:.0f} tok/s  ETA {}", m.step,
                     m.steps, m.loss, last_val >= 0 ? fmt::format("{:.4f}", last_val) : "-", m.lr,
                     m.tokens_per_s, clock_text(m.eta_s));
}

// The terminal's line, within Progress's 78 columns: the bar, step, loss, validation loss,
// tokens/s and ETA.
std::string progress_text(const train::StepMetrics& m, double last_val) {
  return fmt::format("{} {}/{} loss {:.4f} val {} {:.0f} tok/s ETA {}", bar(m.step, m.steps),
                     m.step, m.steps, m.loss, last_val >= 0 ? fmt::format("{:.4f}", last_val) : "-",
                     m.tokens_per_s, clock_text(m.eta_s));
}

nlohmann::json metrics_json(const train::StepMetrics& m) {
  nlohmann::json j{{"step", m.step},           {"steps", m.steps},
                   {"loss", m.loss},           {"lr", m.lr},
                   {"grad_norm", m.grad_norm}, {"tokens_per_s", m.tokens_per_s},
                   {"elapsed_s", m.elapsed_s}, {"eta_s", m.eta_s}};
  if (m.val_loss >= 0) j["val_loss"] = m.val_loss;
  return j;
}

// Options that contradict each other, or that the run would ignore: a wrong command line
// (exit 2), named as typed, before anything is read or made.
void refuse_contradictions(const CLI::App& cmd, const TrainOptions& o) {
  const train::TrainConfig& c = o.config;
  auto shown = [&](const char* option, const auto& value) {
    return cmd.count(option) > 0 ? fmt::format("{}", value)
                                 : fmt::format("{} (its default)", value);
  };
  if (o.resume && o.checkpoint.empty()) {
    throw UsageError("train --resume: expected --checkpoint DIR with it, got none");
  }
  if (o.save_every > 0 && o.checkpoint.empty()) {
    throw UsageError("train --save-every: expected --checkpoint DIR with it, got none");
  }
  refuse_together(cmd, "--tokenizer", "--resume", "the checkpoint holds its tokenizer");
  refuse_together(cmd, "--log-every", "--json", "--json writes every step");
  if (c.min_lr > c.lr) {
    throw UsageError(fmt::format("train --min-lr: expected at most --lr ({}), got {}",
                                 shown("--lr", c.lr), shown("--min-lr", c.min_lr)));
  }
  if (c.warmup > c.steps) {
    throw UsageError(fmt::format("train --warmup: expected at most --steps ({}), got {}",
                                 shown("--steps", c.steps), c.warmup));
  }
  if (cmd.count("--momentum") > 0 && o.optimizer != "sgd") {
    throw UsageError(
        fmt::format("train --momentum: expected --optimizer sgd with it (AdamW has none), got {}",
                    shown("--optimizer", o.optimizer)));
  }
  if (cmd.count("--eval-batches") > 0 && c.eval_every == 0) {
    throw UsageError(
        "train --eval-batches: expected --eval-every above 0 with it (no evaluation runs), got "
        "--eval-every 0");
  }
}

// What CLI11 cannot put into the config by itself, then the config's own checks; --batch is
// checked first, as only the job knows how many ranks share it.
void finish_config(TrainOptions& o, const DistributedJob& job) {
  train::TrainConfig& c = o.config;
  if (c.batch % job.world() != 0) {
    throw UsageError(
        fmt::format("train --batch: expected a multiple of the {} ranks (each takes "
                    "B / {} windows), got {}",
                    job.world(), job.world(), c.batch));
  }
  c.optimizer = o.optimizer == "sgd" ? train::OptimizerKind::sgd : train::OptimizerKind::adamw;
  c.positions = parse_position_kind(o.positions);
  c.chunk_bytes = o.chunk_mib << 20;
  c.bucket_bytes = o.bucket_mib << 20;
  if (o.threads > 0) set_num_threads(o.threads);
  c.validate();
}

// Resumed from --checkpoint, or new with --tokenizer's tokenizer or one trained on the corpus
// (minutes on a large corpus: the progress line says which).
std::unique_ptr<train::Trainer> start_trainer(const TrainOptions& o, const DistributedJob& job,
                                              Progress& progress) {
  const train::TrainConfig& c = o.config;
  progress.show(
      o.resume ? "train: loading the checkpoint ..."
      : o.tokenizer.empty()
          ? fmt::format("train: training a {}-piece tokenizer on {} ...", c.vocab_size, c.corpus)
          : fmt::format("train: tokenizing {} ...", c.corpus));
  std::unique_ptr<train::Trainer> owned;
  if (o.resume) {
    owned = train::Trainer::resume(o.checkpoint, c, job.gradients());
  } else if (!o.tokenizer.empty()) {
    owned = std::make_unique<train::Trainer>(
        c, std::make_unique<train::Tokenizer>(train::Tokenizer::load(o.tokenizer)),
        job.gradients());
  } else {
    owned = std::make_unique<train::Trainer>(c, nullptr, job.gradients());
  }
  progress.clear();
  return owned;
}

// A tokenizer that came with the run (--tokenizer, or the checkpoint's) sets V: a --vocab-size
// typed beside it would be silently ignored when it differs.
void refuse_other_vocab_size(const TrainOptions& o, const train::Trainer& t) {
  const train::TrainConfig& c = o.config;
  if (o.vocab_size_given && t.tokenizer().vocab_size() != c.vocab_size) {
    throw CantWorkError(fmt::format(
        "train --vocab-size: expected the size of {} ({}), got {}",
        o.resume ? "the tokenizer in --checkpoint " + o.checkpoint : "--tokenizer " + o.tokenizer,
        t.tokenizer().vocab_size(), c.vocab_size));
  }
}

// Non-const Trainer: it gives its model out only as a mutable one.
void print_run_header(const TrainOptions& o, const DistributedJob& job, train::Trainer& t) {
  const train::TrainConfig& c = o.config;
  const auto& data = t.dataset();
  fmt::print("{}\n{}\ncorpus {}: {} training tokens, {} held out; vocabulary {}\n{}\n",
             threads_line(), gemm_line(), c.corpus, andrea::group_thousands(data.train_size()),
             andrea::group_thousands(data.validation_size()), t.tokenizer().vocab_size(),
             andrea::summary(t.model().config()));
  if (job.distributed()) fmt::print("{}\n", job.describe());
  if (o.resume) fmt::print("resumed at step {} from {}\n", t.steps_done(), o.checkpoint);
}

// What rank 0 shows of a step: JSON for every step, else the terminal's line, else (in a
// pipe) a log line every --log-every steps, at the last and at each validation.
void print_step(const TrainOptions& o, bool leader, Progress& progress,
                const train::StepMetrics& last, double last_val, std::int64_t log_every) {
  const bool log_line = last.step % log_every == 0 || last.step == last.steps || last.val_loss >= 0;
  if (leader && o.json) {
    fmt::print("{}\n", metrics_json(last).dump());
  } else if (leader && progress.enabled()) {
    progress.show(progress_text(last, last_val));
  } else if (leader && log_line) {
    fmt::print("{}\n", metrics_text(last, last_val));
  }
  std::fflush(stdout);
}

// Where the step loop ended: the last step's metrics, the last validation loss (-1: none yet)
// and whether a signal ended it early.
struct LoopEnd {
  train::StepMetrics last;
  double last_val = -1;
  bool stopping = false;
};

LoopEnd run_steps(train::Trainer& t, const TrainOptions& o, const DistributedJob& job,
                  const StopRequests& stop, Progress& progress,
                  std::optional<train::CheckpointDir>& checkpoint_dir) {
  const train::TrainConfig& c = o.config;
  const bool leader = job.rank() == 0;
  const std::int64_t log_every =
      o.log_every > 0 ? o.log_every : std::max<std::int64_t>(1, c.steps / 20);
  LoopEnd end;
  // A signal stops every rank after the same step: they agree before the first and after each.
  bool stopping = job.any(stop.signal() > 0);
  while (!t.done() && !stopping) {
    end.last = t.step();
    const train::StepMetrics& last = end.last;
    if (last.val_loss >= 0) end.last_val = last.val_loss;
    print_step(o, leader, progress, last, end.last_val, log_every);
    if (!std::isfinite(last.loss)) {
      throw Error("train", "loss", "a finite loss",
                  fmt::format("{} at step {} (lower --lr, or --clip)", last.loss, last.step));
    }
    if (checkpoint_dir && o.save_every > 0 && last.step % o.save_every == 0 && !t.done())
      t.save(*checkpoint_dir);
    stopping = job.any(stop.signal() != 0);
  }
  end.stopping = stopping;
  return end;
}

// On rank 0 only: which signal stopped the run, and how to continue it.
void report_stop(const TrainOptions& o, const StopRequests& stop, const train::Trainer& t) {
  fmt::print(stderr, "train: stopped by {} after step {} of {}{}\n",
             stop.signal() == SIGINT ? "SIGINT"
             : stop.signal() != 0    ? "SIGTERM"
                                     : "a signal to another rank",
             t.steps_done(), o.config.steps,
             o.checkpoint.empty()
                 ? " (no --checkpoint: nothing written)"
                 : fmt::format("; checkpoint in {}: the same command with --resume continues",
                               o.checkpoint));
}

void report_done(const TrainOptions& o, const train::Trainer& t, const LoopEnd& end) {
  fmt::print(
      "done: {} steps, loss {:.4f}, validation loss {}, {:.0f} tokens/s, peak tensor "
      "memory {}{}\n",
      end.last.step, end.last.loss, end.last_val >= 0 ? fmt::format("{:.4f}", end.last_val) : "-",
      end.last.tokens_per_s, format_bytes(static_cast<double>(t.peak_memory_bytes())),
      o.checkpoint.empty() ? "" : ", checkpoint in " + o.checkpoint);
}

// The run itself, on every rank of a job; rank 0 alone prints.
void run_training(TrainOptions& o, const DistributedJob& job, int& exit_code) {
  finish_config(o, job);
  // From here on, ^C and SIGTERM stop the run at the next whole step (or before the first, once
  // the tokenizer and the model are made) and write the checkpoint.
  const StopRequests stop;
  const bool leader = job.rank() == 0;
  check_corpus("train --corpus", o.config.corpus, leader);
  // Held for the whole run: a second run on the same directory is refused here, at once.
  std::optional<train::CheckpointDir> checkpoint_dir;
  if (leader && !o.checkpoint.empty()) checkpoint_dir.emplace(o.checkpoint);

  Progress progress(!o.json && leader);
  const std::unique_ptr<train::Trainer> owned = start_trainer(o, job, progress);
  train::Trainer& t = *owned;
  refuse_other_vocab_size(o, t);
  if (!o.json && leader) print_run_header(o, job, t);
  const LoopEnd end = run_steps(t, o, job, stop, progress, checkpoint_dir);
  progress.clear();
  if (checkpoint_dir) t.save(*checkpoint_dir);
  if (end.stopping) {
    if (leader) report_stop(o, stop, t);
    exit_code = kExitStopped;
    return;
  }
  if (!o.json && leader) report_done(o, t, end);
  exit_code = kExitOk;
}

// --corpus .. --steps: the data and the model's sizes. The corpus default is set first, for
// --help to show it.
void add_data_options(CLI::App& cmd, train::TrainConfig& c) {
  c.corpus = default_corpus_path();
  cmd.add_option("--corpus", c.corpus, "a UTF-8 text file")->check(a_path())->capture_default_str();
  cmd.add_option("--vocab-size", c.vocab_size, "the tokenizer's vocabulary V")
      ->check(whole_number(train::Tokenizer::kMinVocabSize, kMaxVocab))
      ->capture_default_str();
  cmd.add_option("--d-model", c.d_model, "width D")
      ->check(whole_number(1, kMaxWidth))
      ->capture_default_str();
  cmd.add_option("--context", c.context, "tokens per window T")
      ->check(whole_number(1, kMaxContext))
      ->capture_default_str();
  cmd.add_option("--batch", c.batch, "windows per step B")
      ->check(whole_number(1, 4096))
      ->capture_default_str();
  cmd.add_option("--steps", c.steps, "optimizer steps in all")
      ->check(whole_number(1, std::int64_t{1} << 40))
      ->capture_default_str();
}

// --lr .. --seed: the schedule, the optimizer and the seed.
void add_optimizer_options(CLI::App& cmd, TrainOptions& o) {
  train::TrainConfig& c = o.config;
  cmd.add_option("--lr", c.lr, "peak learning rate")
      ->check(real_number(0, 10, true))
      ->capture_default_str();
  cmd.add_option("--min-lr", c.min_lr, "learning rate at the end of the cosine")
      ->check(real_number(0, 10))
      ->capture_default_str();
  cmd.add_option("--warmup", c.warmup, "warmup steps (-1: steps / 20)")
      ->check(whole_number(-1, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd.add_option("--optimizer", o.optimizer, "adamw or sgd")
      ->check(one_of({"adamw", "sgd"}))
      ->capture_default_str();
  cmd.add_option("--weight-decay", c.weight_decay, "decoupled (adamw) or L2 (sgd)")
      ->check(real_number(0, 10))
      ->capture_default_str();
  cmd.add_option("--momentum", c.momentum, "sgd's momentum")
      ->check(real_number(0, 0.999))
      ->capture_default_str();
  cmd.add_option("--clip", c.clip, "global gradient norm (0: none)")
      ->check(real_number(0, 1e30))
      ->capture_default_str();
  cmd.add_option("--seed", c.seed, "parameters and batch order")
      ->check(whole_number_u64())
      ->capture_default_str();
}

// --threads .. --chunk-mib: where and how the steps run, and the validation loss.
void add_run_options(CLI::App& cmd, TrainOptions& o) {
  train::TrainConfig& c = o.config;
  cmd.add_option("--threads", o.threads, "CPU threads (0: OMP_NUM_THREADS, else every core)")
      ->check(whole_number(0, 256))
      ->capture_default_str();
  add_block_options(cmd, {c.layers, c.heads, c.mlp_ratio, c.tied_head});
  cmd.add_option("--dropout", c.dropout, "of the embeddings and each residual branch")
      ->check(real_number(0, 0.9))
      ->capture_default_str();
  cmd.add_option("--positions", o.positions, "learned or sinusoidal")
      ->check(one_of({"learned", "sinusoidal"}))
      ->capture_default_str();
  cmd.add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd.add_option("--eval-every", c.eval_every, "validation loss every N steps (0: never)")
      ->check(whole_number(0, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd.add_option("--eval-batches", c.eval_batches, "validation batches of B windows")
      ->check(whole_number(1, 1 << 20))
      ->capture_default_str();
  cmd.add_option("--chunk-mib", o.chunk_mib, "the fused head's memory budget per chunk")
      ->check(whole_number(1, 1 << 20))
      ->capture_default_str();
}

// --tokenizer .. --json: the files the run reads and writes, and what it prints.
void add_files_and_output_options(CLI::App& cmd, TrainOptions& o) {
  cmd.add_option("--tokenizer", o.tokenizer,
                 "a SentencePiece .model file to use instead of training one (its size is V)")
      ->check(a_path());
  cmd.add_option("--checkpoint", o.checkpoint, "directory written at the end")->check(a_path());
  cmd.add_option("--save-every", o.save_every, "also write --checkpoint every N steps")
      ->check(whole_number(1, std::int64_t{1} << 40));
  cmd.add_flag("--resume", o.resume, "continue the run saved in --checkpoint");
  cmd.add_option("--log-every", o.log_every, "log line every N steps in a pipe (0: 20 lines)")
      ->check(whole_number(0, std::int64_t{1} << 40));
  cmd.add_flag("--json", o.json, "one JSON object per step on stdout, nothing else");
}

void add_distributed_options(CLI::App& cmd, TrainOptions& o) {
  cmd.add_option("--dist", o.dist, "data parallel: auto (MPI when started by mpirun), mpi, or none")
      ->check(one_of({"auto", "mpi", "none"}))
      ->capture_default_str();
  cmd.add_option("--dist-timeout", o.dist_timeout,
                 "seconds a rank waits for the others before the job ends with an error")
      ->check(real_number(0, 1e6, true))
      ->capture_default_str();
  cmd.add_option("--bucket-mib", o.bucket_mib, "gradients all-reduced in buckets of N MiB")
      ->check(whole_number(1, 1 << 16))
      ->capture_default_str();
}

}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "train", "train ANDREA (--layers N blocks, or the lesson's input layer + head) on a corpus");
  cmd->footer(std::string("A SentencePiece tokenizer is trained on the corpus (or loaded: from "
                          "--tokenizer, or from the checkpoint with --resume); each step takes B "
                          "random windows of T + 1 "
                          "tokens, in an order fixed by --seed. The same seed and --threads give "
                          "the same losses bit for bit, and a run resumed from its checkpoint "
                          "continues as if never stopped. --checkpoint DIR is written at the end "
                          "(and every --save-every steps); ^C or SIGTERM stops after the step in "
                          "progress, writes it and exits with 4.\n") +
              kExitCodesHelp);
  // Owned by the callback, which outlives the parse that writes the options into it.
  auto o = std::make_shared<TrainOptions>();
  // In this order in --help.
  add_data_options(*cmd, o->config);
  add_optimizer_options(*cmd, *o);
  add_run_options(*cmd, *o);
  add_files_and_output_options(*cmd, *o);
  add_distributed_options(*cmd, *o);
  cmd->callback([cmd, o, &exit_code] {
    refuse_contradictions(*cmd, *o);
    o->vocab_size_given = cmd->count("--vocab-size") > 0;
    train::TrainConfig& c = o->config;
    c.device = parse_device(o->device);
    const DistributedJob job(o->dist, c.device, o->dist_timeout);
    try {
      run_training(*o, job, exit_code);
    } catch (const UsageError&) {
      throw;  // the same on every rank: rank 0 says it (main.cpp), every rank exits 2
    } catch (const std::exception& e) {
      if (!job.distributed()) throw;
      job.fail(kExitCantWork, e.what());
    }
  });
}

}  // namespace mg::cli
