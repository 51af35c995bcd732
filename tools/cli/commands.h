// The subcommands of `minigraph`; each file under tools/cli/ adds one to the app.
#pragma once

#include <CLI/CLI.hpp>

namespace mg::cli {

// Each returns through `exit_code` (0 ok, 1 a failed check); errors are thrown as mg::Error.
void add_summary_command(CLI::App& app, int& exit_code);
void add_demo_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_gradcheck_command(CLI::App& app, int& exit_code);
void add_ops_command(CLI::App& app, int& exit_code);
void add_graph_command(CLI::App& app, int& exit_code);
// --plugin PATH and MINIGRAPH_PLUGINS: call before adding the subcommands.
void add_plugin_option(CLI::App& app);

}  // namespace mg::cli
