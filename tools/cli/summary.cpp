// minigraph summary: the ANDREA parameter table for the preset or for given sizes. Each size is
// bounded (commands.h), so the counts cannot overflow; they are added up checked all the same.
#include <fmt/format.h>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

void add_summary_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("summary", "print the embedding and head parameter table");
  cmd->footer(kExitCodesHelp);
  auto config = std::make_shared<andrea::AndreaConfig>();
  add_size_options(*cmd, *config);
  cmd->callback([config, &exit_code] {
    const andrea::AndreaConfig& c = *config;
    fmt::print("{}", andrea::summary(c));
    exit_code = kExitOk;
  });
}

}  // namespace mg::cli
