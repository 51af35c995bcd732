// minigraph demo: the main job on embedded defaults. Builds ANDREA-120M on the CPU, runs
// B x 1,024 ids through the input layer and the untied head, checks
// x_t == tok_emb[id_t] + pos_emb[t] on the real output, and runs backward from a scalar.
#include <fmt/format.h>

#include <chrono>
#include <random>

#include "andrea/model.h"
#include "commands.h"
#include "sum_to/sum_to.h"

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

}  // namespace

void add_demo_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "run ANDREA-120M's input layer and head on the CPU");
  auto batch = std::make_shared<std::int64_t>(1);
  auto seed = std::make_shared<std::uint64_t>(7);
  cmd->add_option("--batch", *batch, "sequences of 1,024 ids")->capture_default_str();
  cmd->add_option("--seed", *seed, "seed of the random ids")->capture_default_str();
  cmd->callback([batch, seed, &exit_code] {
    using clock = std::chrono::steady_clock;
    const auto config = andrea::AndreaConfig::andrea_120m();
    fmt::print("ANDREA-120M input layer and untied head on the CPU\n\n{}\n",
               andrea::summary(config));

    auto start = clock::now();
    andrea::Andrea model(config);
    fmt::print("built and initialised {} parameters in {:.3f} s\n",
               andrea::group_thousands(model.num_parameters()), seconds_since(start));

    const std::int64_t t_len = config.context;
    std::mt19937_64 rng(*seed);
    std::vector<std::int64_t> id_values(static_cast<std::size_t>(*batch * t_len));
    for (auto& id : id_values) id = static_cast<std::int64_t>(rng() % config.vocab_size);
    Tensor ids = Tensor::from_vector(id_values, {*batch, t_len});

    start = clock::now();
    Tensor x = model.input.forward(ids);
    const double input_s = seconds_since(start);
    start = clock::now();
    Tensor logits = model.head.forward(x);
    const double head_s = seconds_since(start);
    start = clock::now();
    Tensor loss = sum(logits);
    loss.backward();
    const double backward_s = seconds_since(start);

    fmt::print("ids    {}  (i64)\n", shape_str(ids.shape()));
    fmt::print("x      {}  input layer forward  {:8.2f} ms\n", shape_str(x.shape()), input_s * 1e3);
    fmt::print("logits {}  head forward         {:8.2f} ms\n", shape_str(logits.shape()),
               head_s * 1e3);
    fmt::print("loss = sum(logits) = {:.6g}; backward {:8.2f} ms\n", loss.item(), backward_s * 1e3);
    for (auto& [name, p] : model.named_parameters()) {
      fmt::print("  grad {:<22} {}\n", name, shape_str(p.grad().shape()));
    }
    const std::int64_t mismatches = count_mismatches(x, id_values, model.input);
    fmt::print("check x_t == tok_emb[id_t] + pos_emb[t] over {} elements: {}\n",
               andrea::group_thousands(x.numel()),
               mismatches == 0 ? "exact" : fmt::format("{} MISMATCHES", mismatches));
    exit_code = mismatches == 0 ? 0 : 1;
  });
}

}  // namespace mg::cli
