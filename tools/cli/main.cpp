// minigraph: the command-line tool (summary, demo, gradcheck, ...).
#include <fmt/format.h>

#include "commands.h"
#include "minigraph/error.h"

int main(int argc, char** argv) {
  CLI::App app{"minigraph: a small compute-graph framework and the ANDREA-120M input layer + head"};
  app.require_subcommand(1);
  int exit_code = 0;
  mg::cli::add_plugin_option(app);
  mg::cli::add_summary_command(app, exit_code);
  mg::cli::add_demo_command(app, exit_code);
  mg::cli::add_bench_command(app, exit_code);
  mg::cli::add_gradcheck_command(app, exit_code);
  mg::cli::add_ops_command(app, exit_code);
  mg::cli::add_graph_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const mg::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  return exit_code;
}
