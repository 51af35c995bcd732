// minigraph summary: the ANDREA parameter table for the preset or for given sizes.
#include <fmt/format.h>

#include "andrea/model.h"
#include "commands.h"

namespace mg::cli {

void add_summary_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("summary", "print the embedding and head parameter table");
  auto config = std::make_shared<andrea::AndreaConfig>();
  cmd->add_option("--vocab", config->vocab_size, "vocabulary size V")->capture_default_str();
  cmd->add_option("--d-model", config->d_model, "model width D")->capture_default_str();
  cmd->add_option("--context", config->context, "positions T")->capture_default_str();
  cmd->callback([config, &exit_code] {
    fmt::print("{}", andrea::summary(*config));
    exit_code = 0;
  });
}

}  // namespace mg::cli
