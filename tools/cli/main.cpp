// minigraph: the command-line tool (summary, demo, gradcheck, ...). Exit codes and the
// options of every command: commands.h.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace {

using namespace mg::cli;

std::string command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return fmt::format("{}", fmt::join(names, ", "));
}

// "demo" when a subcommand was recognised, else "".
std::string current_command(const CLI::App& app) {
  const auto parsed = app.get_subcommands();
  return parsed.empty() ? "" : parsed.front()->get_name();
}

// What was left over: the first word that is not an option is an unknown command (before a
// command) or a stray argument; the first option is an unknown option.
std::string describe_leftovers(const CLI::App& app, const std::vector<std::string>& left) {
  const std::string command = current_command(app);
  const std::string help =
      command.empty() ? "minigraph --help" : "minigraph " + command + " --help";
  for (const std::string& word : left) {
    if (word.size() > 1 && word[0] == '-') {
      const std::string name = word.substr(0, word.find('='));
      return command.empty()
                 ? fmt::format("unknown option '{}'; see {}", name, help)
                 : fmt::format("unknown option '{}' for '{}'; see {}", name, command, help);
    }
  }
  const std::string& word = left.front();
  if (command.empty()) {
    return fmt::format("unknown command '{}'; commands: {}", word, command_names(app));
  }
  return fmt::format("'{}' takes no argument '{}'; see {}", command, word, help);
}

// One line for a CLI11 parse error, naming the command and the option.
std::string describe(const CLI::App& app, const CLI::ParseError& e) {
  const std::vector<std::string> left = app.remaining(true);
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !left.empty()) {
    return describe_leftovers(app, left);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && current_command(app).empty()) {
    if (!left.empty()) return describe_leftovers(app, left);
    return fmt::format("no command given; commands: {} (see minigraph --help)", command_names(app));
  }
  const std::string command = current_command(app);
  std::string what = e.what();
  // CLI11's "--batch: 1 required INT:[1, 1024] missing" for an option given without its value.
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && what.ends_with(" missing")) {
    what = what.substr(0, what.find(':')) + ": expected a value, got none";
  }
  // "--batch: At Most 1 required but received 2" for an option given twice.
  if (const auto at = what.find(": At Most 1 required but received ");
      dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && at != std::string::npos) {
    what = fmt::format("{}: expected one value, got {}", what.substr(0, at),
                       what.substr(at + std::strlen(": At Most 1 required but received ")));
  }
  for (char& c : what) {
    if (c == '\n') c = ' ';
  }
  return command.empty() ? what : fmt::format("{} {}", command, what);
}

// In an MPI job every rank sees the same command line: rank 0 alone reports what is wrong
// with it (a rank's own failure in `train` is reported by that rank, distributed_job.h).
int fail(int code, const std::string& message) {
  std::fflush(stdout);
  if (mg::distributed::launcher_rank() == 0) fmt::print(stderr, "error: {}\n", message);
  return code;
}

int run(int argc, char** argv) {
  CLI::App app{"minigraph: a small compute-graph framework and the ANDREA-120M input layer + head"};
  app.require_subcommand(1);
  app.footer(std::string("Environment: OMP_NUM_THREADS sets the thread count (--version shows the "
                         "one in effect); MINIGRAPH_PLUGINS=a.so:b.so loads op libraries.\n") +
             kExitCodesHelp);
  app.set_version_flag(
      "--version", [] { return version_text(); },
      "print the version, git commit, GEMM library, CUDA backend and threads");
  int exit_code = kExitOk;
  add_plugin_option(app);
  add_summary_command(app, exit_code);
  add_demo_command(app, exit_code);
  add_bench_command(app, exit_code);
  add_gradcheck_command(app, exit_code);
  add_ops_command(app, exit_code);
  add_graph_command(app, exit_code);
  add_inspect_command(app, exit_code);
  add_train_command(app, exit_code);
  add_similar_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // help on stdout, 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(kExitUsage, describe(app, e));  // CLI11's own codes (105, 106, ...) become 2
  } catch (const UsageError& e) {
    return fail(kExitUsage, e.what());
  }
  return exit_code;
}

// The last resort when an exception reaches a place none may leave (a destructor, a noexcept
// function, a thread): one error line and exit 3 instead of abort(). Every known path
// catches before this; nothing here allocates, as the exception may be std::bad_alloc.
[[noreturn]] void on_terminate() {
  const char* what = "std::terminate without an exception";
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      what = "out of memory: an allocation failed (std::bad_alloc)";
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
      what = "an unknown exception";
    }
  }
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s (where no exception may pass: a bug, please report it)\n", what);
  std::_Exit(kExitCantWork);
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  // The work runs inside parse (the subcommands' callbacks): whatever escapes it ends here as
  // one line and a documented exit code, never as std::terminate.
  try {
    mg::register_builtin_ops();  // before --plugin libraries join, and for `minigraph ops`
    return run(argc, argv);
  } catch (const CantWorkError& e) {
    return fail(kExitCantWork, e.what());
  } catch (const mg::Error& e) {
    return fail(kExitCantWork, e.what());
  } catch (const std::bad_alloc&) {
    return fail(kExitCantWork, "out of memory: an allocation failed (std::bad_alloc)");
  } catch (const std::exception& e) {
    return fail(kExitCantWork, e.what());
  } catch (...) {
    return fail(kExitCantWork, "an unknown exception");
  }
}
