// minigraph graph: the recorded graph of the ANDREA input layer + head, forward and
// backward, as Graphviz DOT (and SVG through Graphviz's `dot` with --svg). By default the
// layer is drawn op by op (InputLayer::forward_composed: embedding, position_embedding, add,
// then the head's matmul); --as-model draws Andrea::forward as the module runs it (the fused
// token_position_embedding op). Shapes are the preset's unless given; the batch is small: the
// structure matters. --out is opened before anything is built; the sizes are bounded
// (commands.h) and the run is refused up front when it needs more memory than is available.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "commands.h"
#include "minigraph/minigraph.h"

extern char** environ;

namespace mg::cli {

namespace {

constexpr std::int64_t kMaxGraphBatch = 64;

struct GraphOptions {
  andrea::AndreaConfig config;
  std::int64_t batch = 2, tokens = 8;
  std::string out = "andrea-graph.dot";
  bool svg = false, forward_only = false, as_model = false;
};

std::string andrea_dot(const GraphOptions& o) {
  andrea::Andrea model(o.config);
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> values(static_cast<std::size_t>(o.batch * o.tokens));
  for (auto& id : values) id = static_cast<std::int64_t>(rng() % o.config.vocab_size);
  Tensor ids = Tensor::from_vector(values, {o.batch, o.tokens});
  Tensor x = o.as_model ? model.input.forward(ids) : model.input.forward_composed(ids);
  Tensor logits = model.head.forward(x);
  Tensor loss = sum(logits);
  DotOptions options;
  options.parameters = model.named_parameters();
  options.inputs = {{"ids", ids}};
  options.backward = !o.forward_only;
  options.title =
      fmt::format("ANDREA input layer + untied head, loss = sum(logits); V={}, D={}, T_max={}",
                  o.config.vocab_size, o.config.d_model, o.config.context);
  return to_dot(loss, options);
}

// Runs `dot -Tsvg in -o out` without a shell; returns an error message, empty on success.
std::string render_svg(const std::string& dot_file, const std::string& svg_file) {
  std::vector<std::string> args{"dot", "-Tsvg", dot_file, "-o", svg_file};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
  if (rc == ENOENT) {
    return "Graphviz's `dot` is not on PATH (Debian: apt-get install graphviz); "
           "render later with: dot -Tsvg " +
           dot_file + " -o " + svg_file;
  }
  if (rc != 0) return fmt::format("could not run dot: {}", std::strerror(rc));
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "dot failed on " + dot_file;
  return "";
}

// The bytes the graph's run holds: tables tok [V, D], pos [T, D], head [D, V] and their
// gradients, x [B, T, D] and logits [B, T, V] with theirs, and 64 MiB for the process.
std::int64_t graph_bytes(const GraphOptions& o) {
  const std::int64_t V = o.config.vocab_size, D = o.config.d_model, T = o.config.context;
  const std::string what = "sizes";
  const std::int64_t n = checked_mul(o.batch, o.tokens, "graph", what);
  std::int64_t floats = checked_add(checked_mul(2, checked_mul(V, D, "graph", what), "graph", what),
                                    checked_mul(T, D, "graph", what), "graph", what);
  floats = checked_mul(floats, 2, "graph", what);
  floats =
      checked_add(floats,
                  checked_mul(2, checked_mul(n, checked_add(V, D, "graph", what), "graph", what),
                              "graph", what),
                  "graph", what);
  return checked_add(checked_mul(floats, 4, "graph", what), std::int64_t{64} << 20, "graph", what);
}

std::string svg_name(const std::string& dot_file) {
  const bool dot_suffix = dot_file.size() > 4 && dot_file.ends_with(".dot");
  return (dot_suffix ? dot_file.substr(0, dot_file.size() - 4) : dot_file) + ".svg";
}

}  // namespace

void add_graph_command(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("graph", "write the ANDREA input layer + head graph as Graphviz DOT");
  cmd->footer(std::string("--out is opened for writing before anything is built (exit 3 when it "
                          "cannot be); exit 3 when --svg cannot run Graphviz's dot, or the sizes "
                          "need more memory than is available.\n") +
              kExitCodesHelp);
  auto o = std::make_shared<GraphOptions>();
  cmd->add_option("--out", o->out, "the DOT file to write (checked before anything is built)")
      ->check(a_path())
      ->capture_default_str();
  cmd->add_flag("--svg", o->svg, "also render an SVG next to it with Graphviz's dot");
  cmd->add_flag("--forward-only", o->forward_only, "leave out the backward cluster");
  cmd->add_flag("--as-model", o->as_model, "draw Andrea::forward as the module runs it");
  add_size_options(*cmd, o->config);
  cmd->add_option("--batch", o->batch, "sequences B")
      ->check(whole_number(1, kMaxGraphBatch))
      ->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "tokens per sequence T, at most --context")
      ->check(whole_number(1, kMaxContext))
      ->capture_default_str();
  cmd->callback([o, &exit_code] {
    if (o->tokens > o->config.context) {
      throw UsageError(fmt::format("graph --tokens: expected at most --context ({}), got {}",
                                   o->config.context, o->tokens));
    }
    require_memory(fmt::format("graph with V={}, D={}, T_max={}, B={}, T={}", o->config.vocab_size,
                               o->config.d_model, o->config.context, o->batch, o->tokens),
                   graph_bytes(*o));
    // Before anything is built: a file that cannot be written fails in a moment, not after.
    std::FILE* file = open_for_writing("graph --out", o->out);
    std::string dot;
    try {
      dot = andrea_dot(*o);
    } catch (...) {
      std::fclose(file);
      std::remove(o->out.c_str());
      throw;
    }
    finish_file(file, "graph --out", o->out, dot);
    fmt::print("wrote {}\n", o->out);
    exit_code = kExitOk;
    if (!o->svg) return;
    const std::string svg = svg_name(o->out);
    const std::string problem = render_svg(o->out, svg);
    if (!problem.empty()) throw CantWorkError("graph --svg: " + problem);
    fmt::print("wrote {}\n", svg);
  });
}

}  // namespace mg::cli
