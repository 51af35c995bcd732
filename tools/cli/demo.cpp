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
  andrea::AndreaConfig config = andrea::AndreaConfig::andrea_120m();
  std::int64_t batch = 1;
  std::uint64_t seed = 7;
  std::string weights, save;
  bool gpt2_names = false;
};

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
  auto o = std::make_shared<DemoOptions>();
  cmd->add_option("--batch", o->batch, "sequences of T = --context ids")
      ->check(whole_number(1, kMaxBatch))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the random ids")
      ->check(whole_number_u64())
      ->capture_default_str();
  add_size_options(*cmd, o->config);
  cmd->add_option("--weights", o->weights, "load the model's weights from this safetensors file")
      ->check(a_path());
  cmd->add_option("--save", o->save, "write the model's weights to this safetensors file")
      ->check(a_path());
  cmd->add_flag("--gpt2-names", o->gpt2_names,
                "the files of --weights and --save use GPT-2 names (transformer.wte.weight, "
                "transformer.wpe.weight, lm_head.weight transposed to [V, D])");
  cmd->callback([o, &exit_code] {
    using clock = std::chrono::steady_clock;
    const andrea::AndreaConfig& config = o->config;
    if (o->gpt2_names && o->weights.empty() && o->save.empty()) {
      throw UsageError("demo --gpt2-names: expected --weights or --save with it, got neither");
    }
    // Both files are checked before the model is built: a bad one fails in a moment.
    if (!o->save.empty()) check_writable("demo --save", o->save);
    std::optional<SafetensorsFile> weights;
    if (!o->weights.empty()) weights = SafetensorsFile::open(o->weights);
    const std::int64_t t_len = config.context;
    const DemoMemory memory = demo_memory(config);
    require_memory(fmt::format("demo --batch {}", o->batch), memory.bytes(o->batch),
                   [&](std::int64_t available) {
                     const std::int64_t fits = (available - memory.fixed) / memory.per_batch;
                     return fits >= 1 ? fmt::format("at most --batch {} fits", fits)
                                      : std::string("not even --batch 1 fits");
                   });

    const andrea::AndreaConfig preset = andrea::AndreaConfig::andrea_120m();
    const bool is_preset = config.vocab_size == preset.vocab_size &&
                           config.d_model == preset.d_model && config.context == preset.context;
    fmt::print("{} input layer and untied head on the CPU\n{}\n{}\n\n{}\n",
               is_preset ? "ANDREA-120M" : "ANDREA", threads_line(), gemm_line(),
               andrea::summary(config));
    Progress progress;

    progress.show(fmt::format(
        "demo: building the model and initialising {} parameters ...",
        andrea::group_thousands(config.embedding_parameters() + config.head_parameters())));
    auto start = clock::now();
    andrea::Andrea model(config);
    const double build_s = seconds_since(start);
    progress.clear();
    fmt::print("built and initialised {} parameters in {:.3f} s\n",
               andrea::group_thousands(model.num_parameters()), build_s);
    if (weights) {
      progress.show(fmt::format("demo: loading {} ...", o->weights));
      start = clock::now();
      load_weights(model, *weights, o->gpt2_names);
      const double load_s = seconds_since(start);
      progress.clear();
      fmt::print("loaded {} tensors ({} bytes) from {} in {:.3f} s\n", weights->entries().size(),
                 andrea::group_thousands(weights->data_bytes()), o->weights, load_s);
    }
    if (!o->save.empty()) {
      progress.show(fmt::format("demo: saving to {} ...", o->save));
      start = clock::now();
      const StateDict dict =
          o->gpt2_names ? andrea::to_gpt2_names(model.state_dict()) : model.state_dict();
      save_safetensors(o->save, dict, andrea::config_metadata(config));
      const double save_s = seconds_since(start);
      progress.clear();
      fmt::print("saved {} tensors to {} in {:.3f} s\n", dict.size(), o->save, save_s);
    }

    std::mt19937_64 rng(o->seed);
    std::vector<std::int64_t> id_values(static_cast<std::size_t>(o->batch * t_len));
    for (auto& id : id_values) id = static_cast<std::int64_t>(rng() % config.vocab_size);
    Tensor ids = Tensor::from_vector(id_values, {o->batch, t_len});

    progress.show(fmt::format("demo: input layer forward, x [{}, {}, {}] ...", o->batch, t_len,
                              config.d_model));
    start = clock::now();
    Tensor x = model.input.forward(ids);
    const double input_s = seconds_since(start);
    progress.show(fmt::format("demo: head forward, logits [{}, {}, {}] ...", o->batch, t_len,
                              config.vocab_size));
    start = clock::now();
    Tensor logits = model.head.forward(x);
    const double head_s = seconds_since(start);
    progress.show("demo: backward from sum(logits) ...");
    start = clock::now();
    Tensor loss = sum(logits);
    loss.backward();
    const double backward_s = seconds_since(start);
    progress.show("demo: checking x against the tables ...");
    const std::int64_t mismatches = count_mismatches(x, id_values, model.input);
    progress.clear();

    fmt::print("ids    {}  (i64)\n", shape_str(ids.shape()));
    fmt::print("x      {}  input layer forward  {:8.2f} ms\n", shape_str(x.shape()), input_s * 1e3);
    fmt::print("logits {}  head forward         {:8.2f} ms\n", shape_str(logits.shape()),
               head_s * 1e3);
    fmt::print("loss = sum(logits) = {:.6g}; backward {:8.2f} ms\n", loss.item(), backward_s * 1e3);
    for (auto& [name, p] : model.named_parameters()) {
      fmt::print("  grad {:<22} {}\n", name, shape_str(p.grad().shape()));
    }
    fmt::print("check x_t == tok_emb[id_t] + pos_emb[t] over {} elements: {}\n",
               andrea::group_thousands(x.numel()),
               mismatches == 0 ? "exact" : fmt::format("{} MISMATCHES", mismatches));
    exit_code = mismatches == 0 ? kExitOk : kExitFailed;
  });
}

}  // namespace mg::cli
