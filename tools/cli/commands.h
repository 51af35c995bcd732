// The `minigraph` command: its subcommands (one file each under tools/cli/), its exit codes,
// and the helpers they share (option validators, the memory check, progress on a terminal).
//
// Usage: minigraph [--plugin PATH]... [--version] [--help] COMMAND [OPTIONS]
//
// Commands and their options (`minigraph COMMAND --help` shows the same):
//   summary    the ANDREA parameter table for the preset or for given sizes
//                --vocab V (1..16777216, default 8449)  --d-model D (1..65536, default 768)
//                --context T (1..1048576, default 1024)
//   demo       ANDREA-120M's input layer and head on the CPU: B x T random ids forward,
//              backward from sum(logits), and an exact check of x against the tables
//                --batch B (1..1024, default 1)  --seed S (0..2^64-1, default 7)
//                --vocab V  --d-model D  --context T (as in summary; T ids per sequence)
//                --weights FILE (load a safetensors file first, strictly: a missing, extra or
//                wrong-shape tensor is exit 3, one line naming each and both shapes; so is a
//                weight that is not finite, named with its index)
//                --save FILE (write the weights, after --weights, before the run; checked
//                writable before anything is built)
//                --gpt2-names (the files use GPT-2 names: transformer.wte.weight,
//                transformer.wpe.weight, lm_head.weight [V, D]; needs --weights or --save)
//              refused up front (exit 3) when the run needs more memory than is available
//   bench      the machine's limits, every op, the ANDREA layers and whole steps
//                --threads N,N,... (1..256 each; default 1 and every core)
//                --batch B,B,... (1..1024 each; default 1,8)  --reps N (1..1000, default 5)
//                --filter TEXT (only measurements whose name contains it)
//                --json PATH (also write the records there; checked writable before the run)
//              refused up front (exit 3) when the largest batch needs more memory than there is
//   gradcheck  analytic gradients against finite differences, as a table
//                --op NAME (a registered op, or 'andrea' for the composed layer)
//                --all (every op and the composed layer; the default)  --dtype f64|f32
//                --json (JSON instead of the table; no progress)
//   ops        the registered ops, their kernels, dtypes and cases  --json
//   graph      the ANDREA input layer + head graph as Graphviz DOT
//                --out PATH (default andrea-graph.dot; opened for writing before anything is
//                built)
//                --svg (also render PATH.svg with Graphviz's dot)  --forward-only  --as-model
//                --vocab V  --d-model D  --context T (as in summary)
//                --batch B (1..64, default 2)  --tokens T (1..--context, default 8)
//   inspect    a safetensors file's tensors (name, dtype, shape, bytes) and metadata
//                FILE (required)  --json (a JSON object: file, data_bytes, tensors, metadata)
//              a missing, unreadable or invalid file is exit 3
//   train      ANDREA's input layer + untied head trained as a next-token model on a corpus
//                --corpus FILE (default data/corpus.txt; a regular file, as it is read more
//                than once: a pipe, /dev/stdin from one or a device is exit 3; refused up
//                front when it needs more memory than there is; a warning line when part of
//                it is not text)  --vocab-size V (5..2^24, 8449)
//                --d-model D (64)  --context T (32)  --batch B (1..4096, 16)  --steps N (1000)
//                --lr (0 < lr <= 10, 0.01)  --min-lr (0.001)  --warmup N (-1: steps / 20)
//                --optimizer adamw|sgd  --weight-decay (0)  --momentum (sgd, 0.9)
//                --clip (global norm, 1; 0: none)  --seed S (1)  --threads N (0: default)
//                --positions learned|sinusoidal  --device cpu|cuda|cuda:N
//                --eval-every N (100; 0: never)  --eval-batches N (4)  --chunk-mib N (64)
//                --tokenizer FILE.model (instead of training one; not with --resume;
//                --vocab-size beside it, or beside --resume, must be its size: exit 3)
//                --checkpoint DIR (written at the end; checked writable first; a run that
//                fails before its first save leaves no directory and no lock behind)
//                --save-every N (needs --checkpoint)  --resume (needs --checkpoint)
//                --log-every N (pipe only; 0: 20 lines)  --json (a JSON object per step)
//                --dist auto|mpi|none (auto: data parallel when started by mpirun)
//                --dist-timeout S (600: a rank waits this long for the others, then the job
//                ends with an error)  --bucket-mib N (25: gradients all-reduced in buckets)
//              contradictions are exit 2, named as typed: --min-lr above --lr, --warmup past
//              --steps, --momentum without --optimizer sgd, --eval-batches with --eval-every
//              0, --log-every with --json, --dist mpi outside an MPI launcher
//              ^C or SIGTERM: stops after the step in progress (or, while the tokenizer and
//              model are made, before the first: a checkpoint at step 0), writes the
//              checkpoint, exit 4
//              under mpirun: rank 0 prints and writes; --batch must be a multiple of the ranks
//              (else exit 2 from rank 0 alone); a rank's error is "error: rank R of N: ..."
//              and ends every rank (exit 3, MPI_Abort) (docs/distributed.md)
//   similar    WORD... (each one token; at most 1000, the tables being words x words, printed
//              row by row)  --k N (0..1000, 8)  --checkpoint DIR, or for a fresh model
//              --corpus --vocab-size --d-model --seed (not with --checkpoint: exit 2)  --json

//   --plugin PATH   load an op library (repeatable); MINIGRAPH_PLUGINS=a.so:b.so adds more
//   --version       the version, git commit, GEMM library, CUDA backend and thread setting
//   --help, -h      help (exit 0)
// Environment: OMP_NUM_THREADS sets the thread count (see --version for the one in effect);
// MINIGRAPH_PLUGINS as above.
//
// Progress: on a terminal, `demo`, `gradcheck`, `train` and `similar` show what they are doing
// on stderr (one line updated in place, cleared before the results); nothing when stderr is
// not a terminal or with --json.
//
// Every failure is one line on stderr, "error: ...", naming the option or the file, what was
// expected and what came, and ends with one of these exit codes:
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "minigraph/dtype.h"  // Device

namespace mg::andrea {
struct AndreaConfig;
}  // namespace mg::andrea

namespace mg::cli {

enum ExitCode : int {
  kExitOk = 0,        // the command did its work; every check passed
  kExitFailed = 1,    // a check found a mismatch: gradcheck FAIL, demo's x not exact
  kExitUsage = 2,     // the command line is wrong: no or unknown command, unknown option,
                      // a missing or bad value (out of range, not a number, an empty path),
                      // options that contradict each other or that the run would ignore
  kExitCantWork = 3,  // the work could not be done: a minigraph error (mg::Error), not enough
                      // memory (refused up front, or an allocation failed), a file that cannot
                      // be written, a plugin that cannot be loaded, Graphviz missing for --svg,
                      // a file to read that is not a regular file (a FIFO, a device), a weights
                      // file that is missing, invalid, not finite or does not fit the model, a
                      // checkpoint directory another run holds, a checkpoint of mixed saves
  kExitStopped = 4,   // train stopped by SIGINT (^C) or SIGTERM after a whole step, its
                      // checkpoint (if any) written
};
// The same, for the footer of every --help.
inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 ok; 1 a check found a mismatch; 2 the command line is wrong (unknown command "
    "or option, bad value, contradicting options); 3 the work could not be done (minigraph "
    "error, too little memory, unwritable file, a FIFO or device where a file is read, weights "
    "file unreadable, invalid, not finite or not fitting, plugin not loadable, checkpoint "
    "directory held by another run); "
    "4 train stopped by ^C or SIGTERM after a whole step (checkpoint written).";
// --help and --version exit 0. No command line ends in a signal, an uncaught exception or a
// hang (only the usual SIGPIPE when the reader of a pipe goes away first, as `head` does, and
// ^C outside train); an exception where none may pass ends as exit 3 too (main.cpp).

// A wrong command line found after CLI11 parsed it (exit 2): the message names the option.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Work that cannot be done (exit 3): too little memory, an unwritable file.
struct CantWorkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each adds one subcommand; its callback sets `exit_code` (kExitOk or kExitFailed) and throws
// UsageError, CantWorkError or mg::Error otherwise.
void add_summary_command(CLI::App& app, int& exit_code);
void add_demo_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_gradcheck_command(CLI::App& app, int& exit_code);
void add_ops_command(CLI::App& app, int& exit_code);
void add_graph_command(CLI::App& app, int& exit_code);
void add_inspect_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);
void add_similar_command(CLI::App& app, int& exit_code);
// --plugin PATH and MINIGRAPH_PLUGINS: call before adding the subcommands.
void add_plugin_option(CLI::App& app);

// The text of `minigraph --version` (several lines, no trailing newline).
std::string version_text();
// The git commit the binary was built from ("unknown" outside a git checkout); generated at
// build time by tools/cli/git_commit.cmake.
const char* build_commit();

// ---- option validation -------------------------------------------------------------------
// Largest sizes the commands accept (their products fit an int64 with room to spare).
inline constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;    // 16,777,216
inline constexpr std::int64_t kMaxWidth = std::int64_t{1} << 16;    // 65,536
inline constexpr std::int64_t kMaxContext = std::int64_t{1} << 20;  // 1,048,576
inline constexpr std::int64_t kMaxBatch = 1024;                     // demo and bench --batch

// A whole number in [lo, hi]; fails with "expected a whole number in [lo, hi], got X", which
// CLI11 prefixes with the option's name.
CLI::Validator whole_number(std::int64_t lo, std::int64_t hi);
CLI::Validator whole_number_u64(std::uint64_t lo = 0,
                                std::uint64_t hi = std::numeric_limits<std::uint64_t>::max());
// A finite number in [lo, hi], or (lo, hi] when above_lo: "expected a number in (0, 10], got 0".
CLI::Validator real_number(double lo, double hi, bool above_lo = false);
// --vocab, --d-model and --context into `config` (summary and graph share them).
void add_size_options(CLI::App& cmd, andrea::AndreaConfig& config);
// --layers, --heads, --mlp-ratio, --tied-head: the transformer (summary and train share them).
struct BlockSettings {
  std::int64_t& layers;
  std::int64_t& heads;
  double& mlp_ratio;
  bool& tied_head;
};
void add_block_options(CLI::App& cmd, const BlockSettings& settings);
// One of the given words: "expected one of f64, f32, got f16".
CLI::Validator one_of(std::vector<std::string> words);
// A path that is not empty: "expected a path, got ''" (an empty one must not mean "none").
CLI::Validator a_path();
// UsageError "train --vocab-size: expected no --resume with it (WHY), got both" when the
// command line gives both options; `cmd` is the parsed subcommand.
void refuse_together(const CLI::App& cmd, const std::string& option, const std::string& other,
                     const std::string& why);

// ---- resources ---------------------------------------------------------------------------
// "1.5 GiB", "320 MiB"
std::string format_bytes(double bytes);
// Throws CantWorkError when `bytes` exceed the available memory, e.g. "demo --batch 512 needs
// about 41.6 GiB of memory, 22.1 GiB is available (MemAvailable); at most --batch 260 fits":
// `advice(available bytes)` gives the text after the semicolon (none when empty).
void require_memory(const std::string& what, std::int64_t bytes,
                    const std::function<std::string(std::int64_t available)>& advice = {});

// Opens `path` for writing (truncating it) before any work is done; CantWorkError with
// strerror(errno) when it cannot be. The caller writes and closes it with finish_file.
std::FILE* open_for_writing(const std::string& what, const std::string& path);
void finish_file(std::FILE* file, const std::string& what, const std::string& path,
                 const std::string& text);
// Checks that `path` can be written later (bench --json): creates it if missing, then removes
// it again, leaving an existing file as it was.
void check_writable(const std::string& what, const std::string& path);

// ---- training ----------------------------------------------------------------------------
// The shipped corpus, data/corpus.txt: in the source tree the binary was built from, else
// where `cmake --install` put it (<prefix>/share/minigraph/corpus.txt).
std::string default_corpus_path();
// Before a corpus is read: a regular file (mg::Error naming `option`, as in "train
// --corpus", otherwise), refused up front (CantWorkError, the file's size and the memory
// there is) when training a tokenizer on it would need more memory than is available, and,
// when `warn`, one "warning: " line on stderr with the share of it that is not text.
void check_corpus(const std::string& option, const std::string& path, bool warn);
// "cpu", "cuda", "cuda:N" -> Device; UsageError otherwise.
Device parse_device(const std::string& text);

// ---- progress ----------------------------------------------------------------------------
// One status line on stderr, rewritten in place with \r, only when stderr is a terminal and
// `wanted` (false for --json); cleared by clear() and by the destructor, so results printed
// afterwards start on a clean line.
class Progress {
 public:
  explicit Progress(bool wanted = true);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void show(const std::string& text);
  void clear();
  bool enabled() const { return enabled_; }

 private:
  bool enabled_ = false, shown_ = false;
};

// The header lines of demo and bench: "threads: 2 (OMP_NUM_THREADS=2)" and "GEMM: ...".
std::string threads_line();
std::string gemm_line();

}  // namespace mg::cli
