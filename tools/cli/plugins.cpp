// The global option --plugin PATH (repeatable) and the variable MINIGRAPH_PLUGINS (paths
// separated by ':'): op libraries loaded once the command line is parsed, before the
// subcommand runs, so `ops`, `gradcheck` and the rest see their ops. A library that cannot be
// loaded is an mg::Error naming it: exit 3 (commands.h).
#include <cstdlib>
#include <sstream>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

namespace {

std::vector<std::string> plugins_from_env() {
  std::vector<std::string> paths;
  const char* value = std::getenv("MINIGRAPH_PLUGINS");
  std::istringstream list(value != nullptr ? value : "");
  for (std::string path; std::getline(list, path, ':');) {
    if (!path.empty()) paths.push_back(path);
  }
  return paths;
}

}  // namespace

void add_plugin_option(CLI::App& app) {
  auto paths = std::make_shared<std::vector<std::string>>();
  app.add_option("--plugin", *paths,
                 "load an op library (a shared library defining minigraph_register_ops); "
                 "repeatable; MINIGRAPH_PLUGINS=a.so:b.so adds more")
      ->check(a_path());
  // Subcommands made after this pass --plugin up, so it may follow the subcommand too.
  app.fallthrough();
  app.parse_complete_callback([paths] {
    for (const std::string& path : plugins_from_env()) load_op_library(path);
    for (const std::string& path : *paths) load_op_library(path);
  });
}

}  // namespace mg::cli
