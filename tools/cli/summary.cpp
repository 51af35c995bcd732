// minigraph summary: the ANDREA parameter table for the preset or for given sizes, and with
// --depth the built model's layers. Each size is bounded (commands.h); the counts are added up
// checked all the same.
#include <fmt/format.h>

#include <algorithm>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

void add_summary_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("summary", "print ANDREA's parameter table (the 120M preset)");
  cmd->footer(kExitCodesHelp);
  struct Options {
    andrea::AndreaConfig config = andrea::AndreaConfig::andrea_120m();
    int depth = -1;
    std::int64_t batch = 1, length = 0;
  };
  auto o = std::make_shared<Options>();
  add_size_options(*cmd, o->config);
  add_block_options(*cmd,
                    {o->config.blocks, o->config.heads, o->config.mlp_ratio, o->config.tied_head});
  cmd->add_option("--depth", o->depth,
                  "also build the model and print its layers to this depth (torchinfo's table)")
      ->check(whole_number(0, 8));
  cmd->add_option("--batch", o->batch, "the table's input batch B")
      ->check(whole_number(1, kMaxBatch))
      ->capture_default_str();
  cmd->add_option("--length", o->length, "the table's input length T (0: the context)")
      ->check(whole_number(0, kMaxContext));
  cmd->callback([o, &exit_code] {
    const andrea::AndreaConfig& c = o->config;
    fmt::print("{}", andrea::summary(c));
    if (o->depth >= 0) {
      // The parameters and, without gradients, a few [B, T, max(F, 3D, V)] activations at once.
      const std::int64_t length = o->length > 0 ? o->length : c.context;
      const std::int64_t widest =
          std::max({static_cast<std::int64_t>(c.mlp_ratio * static_cast<double>(c.d_model)) + 1,
                    3 * c.d_model, c.vocab_size});
      const auto element = static_cast<std::int64_t>(dtype_size(c.dtype));
      require_memory(fmt::format("summary --depth {}", o->depth),
                     (c.parameters() + 4 * o->batch * length * widest) * element);
      const andrea::Andrea model(c);
      fmt::print("\n{}", andrea::layer_table(model, o->batch, length, o->depth));
    }
    exit_code = kExitOk;
  });
}

}  // namespace mg::cli
