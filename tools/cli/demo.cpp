// minigraph demo: the main job on embedded defaults. Builds ANDREA-120M on the CPU, runs
// B x 1,024 ids through the input layer and the untied head, checks
// x_t == tok_emb[id_t] + pos_emb[t] on the real output, and runs backward from a scalar.
// Refused up front when B needs more memory than is available; on a terminal, each step
// shows on stderr while it runs.
#include <fmt/format.h>

#include <chrono>
#include <random>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

namespace {

constexpr std::int64_t kMaxBatch = 1024;

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

}  // namespace

void add_demo_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "run ANDREA-120M's input layer and head on the CPU");
  cmd->footer(std::string("B x 1,024 random ids forward, backward from sum(logits), and an exact "
                          "check of x against the tables (exit 1 on a mismatch). Refused up front "
                          "(exit 3) when the run needs more memory than is available. On a "
                          "terminal, each step shows on stderr while it runs.\n") +
              kExitCodesHelp);
  auto batch = std::make_shared<std::int64_t>(1);
  auto seed = std::make_shared<std::uint64_t>(7);
  cmd->add_option("--batch", *batch, "sequences of 1,024 ids")
      ->check(whole_number(1, kMaxBatch))
      ->capture_default_str();
  cmd->add_option("--seed", *seed, "seed of the random ids")
      ->check(whole_number_u64())
      ->capture_default_str();
  cmd->callback([batch, seed, &exit_code] {
    using clock = std::chrono::steady_clock;
    const auto config = andrea::AndreaConfig::andrea_120m();
    const std::int64_t t_len = config.context;
    const DemoMemory memory = demo_memory(config);
    require_memory(fmt::format("demo --batch {}", *batch), memory.bytes(*batch),
                   [&](std::int64_t available) {
                     const std::int64_t fits = (available - memory.fixed) / memory.per_batch;
                     return fits >= 1 ? fmt::format("at most --batch {} fits", fits)
                                      : std::string("not even --batch 1 fits");
                   });

    fmt::print("ANDREA-120M input layer and untied head on the CPU\n{}\n{}\n\n{}\n", threads_line(),
               gemm_line(), andrea::summary(config));
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

    std::mt19937_64 rng(*seed);
    std::vector<std::int64_t> id_values(static_cast<std::size_t>(*batch * t_len));
    for (auto& id : id_values) id = static_cast<std::int64_t>(rng() % config.vocab_size);
    Tensor ids = Tensor::from_vector(id_values, {*batch, t_len});

    progress.show(fmt::format("demo: input layer forward, x [{}, {}, {}] ...", *batch, t_len,
                              config.d_model));
    start = clock::now();
    Tensor x = model.input.forward(ids);
    const double input_s = seconds_since(start);
    progress.show(fmt::format("demo: head forward, logits [{}, {}, {}] ...", *batch, t_len,
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
