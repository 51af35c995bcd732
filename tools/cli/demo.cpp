// minigraph demo: the main job on embedded defaults. Builds ANDREA-120M (or the sizes given)
// on the CPU, runs B x T ids through the input layer and the untied head, checks
// x_t == tok_emb[id_t] + pos_emb[t] on the real output, and runs backward from a scalar.
// --weights loads a safetensors file into the model first (strictly: every tensor present, of
// the model's shape); --save writes the model's weights before the run. Refused up front when
// B needs more memory than is available; on a terminal, each step shows on stderr while it
// runs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every element of x [B, T, D] against the table rows it must be made of; returns mismatches.
std::int64_t count_mismatches(const Tensor& x, const std::vector<std::int64_t>& ids,
                              const andrea::InputLayer& layer) {
  const auto tok = layer.tok_emb().weight().to_vector<float>();
  const auto pos = layer.pos_emb().weight().to_vector<float>();
  const auto out = x.to_vector<float>();
  const std::int64_t t_len = x.size(1), width = x.size(2);
  std::int64_t mismatches = 0;
  for (std::size_t p = 0; p < ids.size(); ++p) {
    const std::int64_t t = static_cast<std::int64_t>(p) % t_len;
    for (std::int64_t d = 0; d < width; ++d) {
      float expected = tok[ids[p] * width + d] + pos[t * width + d];
      if (out[p * width + d] != expected) ++mismatches;
    }
  }
  return mismatches;
}

// The bytes a run holds at its peak, in f32 (legend: n = B*T positions, V, D, T).
struct DemoMemory {
  std::int64_t fixed = 0;      // tables, their gradients and host copies, the process itself
  std::int64_t per_batch = 0;  // for each sequence of T ids
  std::int64_t bytes(std::int64_t batch) const {
    return checked_add(fixed, checked_mul(per_batch, batch, "demo", "memory of --batch"), "demo",
                       "memory");
  }
};

DemoMemory demo_memory(const andrea::AndreaConfig& c) {
  const std::int64_t f = 4, V = c.vocab_size, D = c.d_model, T = c.context;
  const std::string what = "table sizes";
  const std::int64_t vd = checked_mul(V, D, "demo", what), td = checked_mul(T, D, "demo", what);
  // Parameters tok [V, D], pos [T, D], head [D, V], their gradients, and the copies of tok and
  // pos that the check reads; plus 64 MiB for the process, its libraries and thread pools.
  const std::int64_t table_floats = 2 * (2 * vd + td) + vd + td;
  DemoMemory m;
  m.fixed =
      checked_add(checked_mul(table_floats, f, "demo", what), std::int64_t{64} << 20, "demo", what);
  // Per sequence: x, its gradient, its host copy and one more [T, D] of margin; logits and
  // their gradient [T, V]; the ids as a vector and a tensor (i64). (Measured peak RSS at
  // ANDREA-120M: 152 MB + 80.4 MB per sequence; this gives 206 MB + 81.8 MB.)
  const std::int64_t per_position = f * (4 * D + 2 * V) + 16;
  m.per_batch = checked_mul(per_position, T, "demo", what);
  return m;
}

// The first weight that is not finite, as "nan at input.tok_emb.weight[3, 5]"; "" when all
// are. Such a weight makes the exact check meaningless (NaN never equals itself).
std::string first_non_finite(const andrea::Andrea& model) {
  for (const auto& [name, p] : model.named_parameters()) {
    const std::vector<double> values = p.to(DType::f64).to_vector<double>();
    const auto bad =
        std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
    if (bad == values.end()) continue;
    std::int64_t flat = bad - values.begin();
    std::vector<std::int64_t> index(static_cast<std::size_t>(p.dim()));
    for (auto d = static_cast<std::int64_t>(index.size()) - 1; d >= 0; --d) {
      index[static_cast<std::size_t>(d)] = flat % p.size(d);
      flat /= p.size(d);
    }
    return fmt::format("{} at {}[{}]", *bad, name, fmt::join(index, ", "));
  }
  return "";
}

// --weights: the file opened (and validated) before anything is built, then loaded strictly;
// a mismatch is one error naming the file and every tensor that does not fit, a weight that
// is not finite an error naming the first.
void load_weights(andrea::Andrea& model, const SafetensorsFile& file, bool gpt2_names) {
  StateDict dict = file.tensors();
  if (gpt2_names) dict = andrea::from_gpt2_names(dict);
  try {
    model.load_state_dict(dict, /*strict=*/true);
  } catch (const Error& e) {
    throw CantWorkError(fmt::format("demo --weights {}{}: {}", file.source(),
                                    gpt2_names ? " --gpt2-names" : "", e.what()));
  }
  if (const std::string bad = first_non_finite(model); !bad.empty()) {
    throw CantWorkError(
        fmt::format("demo --weights {}: expected finite weights, got {}", file.source(), bad));
  }
}

struct DemoOptions {
  andrea::AndreaConfig config = andrea::AndreaConfig::lesson();
  std::int64_t batch = 1;
  std::uint64_t seed = 7;
  std::string weights, save;
  bool gpt2_names = false;
};

// A --gpt2-names with no file to apply to is refused; both files are checked before the model
// is built, so a bad one fails in a moment.
std::optional<SafetensorsFile> open_files_first(const DemoOptions& o) {
  if (o.gpt2_names && o.weights.empty() && o.save.empty()) {
    throw UsageError("demo --gpt2-names: expected --weights or --save with it, got neither");
  }
  if (!o.save.empty()) check_writable("demo --save", o.save);
  std::optional<SafetensorsFile> weights;
  if (!o.weights.empty()) weights = SafetensorsFile::open(o.weights);
  return weights;
}

// Refused before anything is built, with the largest --batch that would fit.
void require_demo_memory(const DemoOptions& o) {
  const DemoMemory memory = demo_memory(o.config);
  require_memory(fmt::format("demo --batch {}", o.batch), memory.bytes(o.batch),
                 [&](std::int64_t available) {
                   const std::int64_t fits = (available - memory.fixed) / memory.per_batch;
                   return fits >= 1 ? fmt::format("at most --batch {} fits", fits)
                                    : std::string("not even --batch 1 fits");
                 });
}

void print_demo_header(const andrea::AndreaConfig& config) {
  const andrea::AndreaConfig preset = andrea::AndreaConfig::lesson();
  const bool is_preset = config.vocab_size == preset.vocab_size &&
                         config.d_model == preset.d_model && config.context == preset.context;
  fmt::print("{} input layer and untied head on the CPU\n{}\n{}\n\n{}\n",
             is_preset ? "ANDREA-120M" : "ANDREA", threads_line(), gemm_line(),
             andrea::summary(config));
}

void load_weights_timed(andrea::Andrea& model, const SafetensorsFile& weights, const DemoOptions& o,
                        Progress& progress) {
  progress.show(fmt::format("demo: loading {} ...", o.weights));
  const auto start = std::chrono::steady_clock::now();
  load_weights(model, weights, o.gpt2_names);
  const double load_s = seconds_since(start);
  progress.clear();
  fmt::print("loaded {} tensors ({} bytes) from {} in {:.3f} s\n", weights.entries().size(),
             andrea::group_thousands(weights.data_bytes()), o.weights, load_s);
}

void save_weights_timed(const andrea::Andrea& model, const DemoOptions& o, Progress& progress) {
  progress.show(fmt::format("demo: saving to {} ...", o.save));
  const auto start = std::chrono::steady_clock::now();
  const StateDict dict =
      o.gpt2_names ? andrea::to_gpt2_names(model.state_dict()) : model.state_dict();
  save_safetensors(o.save, dict, andrea::config_metadata(o.config));
  const double save_s = seconds_since(start);
  progress.clear();
  fmt::print("saved {} tensors to {} in {:.3f} s\n", dict.size(), o.save, save_s);
}

// B x T ids, uniform over the vocabulary, from --seed.
std::vector<std::int64_t> random_ids(const DemoOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::vector<std::int64_t> id_values(static_cast<std::size_t>(o.batch * o.config.context));
  for (auto& id : id_values) id = static_cast<std::int64_t>(rng() % o.config.vocab_size);
  return id_values;
}

// What the forward and backward passes leave to print, with their times.
struct DemoPasses {
  Tensor x, logits, loss;
  double input_s = 0, head_s = 0, backward_s = 0;
  std::int64_t mismatches = 0;  // elements of x that are not tok_emb[id_t] + pos_emb[t]
};

DemoPasses run_passes(andrea::Andrea& model, const DemoOptions& o,
                      const std::vector<std::int64_t>& id_values, const Tensor& ids,
                      Progress& progress) {
  const andrea::AndreaConfig& config = o.config;
  const std::int64_t t_len = config.context;
  DemoPasses r;
  progress.show(
      fmt::format("demo: input layer forward, x [{}, {}, {}] ...", o.batch, t_len, config.d_model));
  auto start = std::chrono::steady_clock::now();
  r.x = model.input.forward(ids);
  r.input_s = seconds_since(start);
  progress.show(fmt::format("demo: head forward, logits [{}, {}, {}] ...", o.batch, t_len,
                            config.vocab_size));
  start = std::chrono::steady_clock::now();
  r.logits = model.head.forward(r.x);
  r.head_s = seconds_since(start);
  progress.show("demo: backward from sum(logits) ...");
  start = std::chrono::steady_clock::now();
  r.loss = sum(r.logits);
  r.loss.backward();
  r.backward_s = seconds_since(start);
  progress.show("demo: checking x against the tables ...");
  r.mismatches = count_mismatches(r.x, id_values, model.input);
  progress.clear();
  return r;
}

void print_results(const andrea::Andrea& model, const Tensor& ids, const DemoPasses& r) {
  fmt::print("ids    {}  (i64)\n", shape_str(ids.shape()));
  fmt::print("x      {}  input layer forward  {:8.2f} ms\n", shape_str(r.x.shape()),
             r.input_s * 1e3);
  fmt::print("logits {}  head forward         {:8.2f} ms\n", shape_str(r.logits.shape()),
             r.head_s * 1e3);
  fmt::print("loss = sum(logits) = {:.6g}; backward {:8.2f} ms\n", r.loss.item(),
             r.backward_s * 1e3);
  for (auto& [name, p] : model.named_parameters()) {
    fmt::print("  grad {:<22} {}\n", name, shape_str(p.grad().shape()));
  }
  fmt::print("check x_t == tok_emb[id_t] + pos_emb[t] over {} elements: {}\n",
             andrea::group_thousands(r.x.numel()),
             r.mismatches == 0 ? "exact" : fmt::format("{} MISMATCHES", r.mismatches));
}

void run_demo(const DemoOptions& o, int& exit_code) {
  const andrea::AndreaConfig& config = o.config;
  const std::optional<SafetensorsFile> weights = open_files_first(o);
  require_demo_memory(o);
  print_demo_header(config);
  Progress progress;

  progress.show(fmt::format(
      "demo: building the model and initialising {} parameters ...",
      andrea::group_thousands(config.embedding_parameters() + config.head_parameters())));
  const auto start = std::chrono::steady_clock::now();
  andrea::Andrea model(config);
  const double build_s = seconds_since(start);
  progress.clear();
  fmt::print("built and initialised {} parameters in {:.3f} s\n",
             andrea::group_thousands(model.num_parameters()), build_s);
  if (weights) load_weights_timed(model, *weights, o, progress);
  if (!o.save.empty()) save_weights_timed(model, o, progress);

  const std::vector<std::int64_t> id_values = random_ids(o);
  const Tensor ids = Tensor::from_vector(id_values, {o.batch, config.context});
  const DemoPasses passes = run_passes(model, o, id_values, ids, progress);
  print_results(model, ids, passes);
  exit_code = passes.mismatches == 0 ? kExitOk : kExitFailed;
}

void add_demo_options(CLI::App& cmd, DemoOptions& o) {
  cmd.add_option("--batch", o.batch, "sequences of T = --context ids")
      ->check(whole_number(1, kMaxBatch))
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the random ids")
      ->check(whole_number_u64())
      ->capture_default_str();
  add_size_options(cmd, o.config);
  cmd.add_option("--weights", o.weights, "load the model's weights from this safetensors file")
      ->check(a_path());
  cmd.add_option("--save", o.save, "write the model's weights to this safetensors file")
      ->check(a_path());
  cmd.add_flag("--gpt2-names", o.gpt2_names,
               "the files of --weights and --save use GPT-2 names (transformer.wte.weight, "
               "transformer.wpe.weight, lm_head.weight transposed to [V, D])");
}

}  // namespace

void add_demo_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "run ANDREA-120M's input layer and head on the CPU");
  cmd->footer(std::string("B x T random ids forward, backward from sum(logits), and an exact "
                          "check of x against the tables (exit 1 on a mismatch). --weights loads "
                          "a safetensors file first (its shapes must be the model's: exit 3 "
                          "naming each tensor that does not fit); --save writes the weights "
                          "(after --weights, before the run). Refused up front (exit 3) when the "
                          "run needs more memory than is available. On a terminal, each step "
                          "shows on stderr while it runs.\n") +
              kExitCodesHelp);
  // Owned by the callback, which outlives the parse that writes the options into it.
  auto o = std::make_shared<DemoOptions>();
  add_demo_options(*cmd, *o);
  cmd->callback([o, &exit_code] { run_demo(*o, exit_code); });
}

}  // namespace mg::cli
