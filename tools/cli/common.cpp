// What the subcommands share: option validators, checked size arithmetic, the memory check,
// files opened before the work, progress on a terminal, and the text of --version.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

// ---- option validation -------------------------------------------------------------------

namespace {

// The value as given, quoted when it is not a number at all.
std::string shown(const std::string& text, bool numeric) {
  return numeric ? text : fmt::format("'{}'", text);
}

template <typename T>
CLI::Validator whole_number_of(T lo, T hi) {
  const std::string range = fmt::format("[{}, {}]", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        const bool digits = !text.empty() &&
                            std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(),
                                        [](char c) { return c >= '0' && c <= '9'; }) &&
                            text != "-";
        if (ec == std::errc() && ptr == end && value >= lo && value <= hi) return "";
        return fmt::format("expected a whole number in {}, got {}", range, shown(text, digits));
      },
      range, "WHOLE_NUMBER");
}

}  // namespace

CLI::Validator whole_number(std::int64_t lo, std::int64_t hi) { return whole_number_of(lo, hi); }

CLI::Validator real_number(double lo, double hi, bool above_lo) {
  const std::string range = fmt::format("{}{}, {}]", above_lo ? "(" : "[", lo, hi);
  return CLI::Validator(
      [lo, hi, above_lo, range](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        const bool number = ec == std::errc() && ptr == end && !text.empty();
        if (number && std::isfinite(value) && (above_lo ? value > lo : value >= lo) &&
            value <= hi) {
          return "";
        }
        return fmt::format("expected a number in {}, got {}", range, shown(text, number));
      },
      range, "NUMBER");
}

CLI::Validator whole_number_u64(std::uint64_t lo, std::uint64_t hi) {
  return whole_number_of(lo, hi);
}

void add_size_options(CLI::App& cmd, andrea::AndreaConfig& config) {
  cmd.add_option("--vocab", config.vocab_size, "vocabulary size V")
      ->check(whole_number(1, kMaxVocab))
      ->capture_default_str();
  cmd.add_option("--d-model", config.d_model, "model width D")
      ->check(whole_number(1, kMaxWidth))
      ->capture_default_str();
  cmd.add_option("--context", config.context, "positions T_max")
      ->check(whole_number(1, kMaxContext))
      ->capture_default_str();
}

void add_block_options(CLI::App& cmd, const BlockSettings& settings) {
  cmd.add_option("--layers", settings.layers, "transformer blocks N (0: input layer and head)")
      ->check(whole_number(0, andrea::AndreaConfig::kMaxBlocks))
      ->capture_default_str();
  cmd.add_option("--heads", settings.heads, "attention heads H, dividing the width")
      ->check(whole_number(1, kMaxWidth))
      ->capture_default_str();
  cmd.add_option("--mlp-ratio", settings.mlp_ratio, "the MLP's hidden width over the model's")
      ->check(real_number(0, 16, true))
      ->capture_default_str();
  cmd.add_flag("--tied-head", settings.tied_head, "the head is the token table (GPT-2's)");
}

CLI::Validator one_of(std::vector<std::string> words) {
  const std::string list = fmt::format("{}", fmt::join(words, ", "));
  return CLI::Validator(
      [words, list](std::string& text) -> std::string {
        if (std::find(words.begin(), words.end(), text) != words.end()) return "";
        return fmt::format("expected one of {}, got '{}'", list, text);
      },
      fmt::format("{{{}}}", fmt::join(words, "|")), "ONE_OF");
}

CLI::Validator a_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "expected a path, got ''" : "";
      },
      "PATH", "PATH");
}

void refuse_together(const CLI::App& cmd, const std::string& option, const std::string& other,
                     const std::string& why) {
  if (cmd.count(option) > 0 && cmd.count(other) > 0) {
    throw UsageError(fmt::format("{} {}: expected no {} with it ({}), got both", cmd.get_name(),
                                 option, other, why));
  }
}

// ---- resources ---------------------------------------------------------------------------

std::string format_bytes(double bytes) {
  constexpr double kMiB = 1 << 20, kGiB = 1 << 30;
  if (bytes >= 1024 * kGiB) return fmt::format("{:.1f} TiB", bytes / (1024 * kGiB));
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  return fmt::format("{:.0f} MiB", bytes / kMiB);
}

void require_memory(const std::string& what, std::int64_t bytes,
                    const std::function<std::string(std::int64_t available)>& advice) {
  const cpu::AvailableMemory available = cpu::available_memory();
  if (!available.known || bytes <= available.bytes) return;
  std::string tail = advice ? advice(available.bytes) : "";
  throw CantWorkError(fmt::format("{} needs about {} of memory, {} is available ({}){}{}", what,
                                  format_bytes(static_cast<double>(bytes)),
                                  format_bytes(static_cast<double>(available.bytes)),
                                  available.source, tail.empty() ? "" : "; ", tail));
}

// ---- files -------------------------------------------------------------------------------

namespace {

// open(2) for writing without waiting: a FIFO no one reads fails at once (ENXIO) instead of
// blocking until a reader comes; the descriptor is blocking again afterwards.
int open_without_waiting(const std::string& what, const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw CantWorkError(fmt::format("{}: cannot write '{}': {}{}", what, path, std::strerror(errno),
                                    errno == ENXIO ? " (a FIFO that no process reads)" : ""));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

std::FILE* open_for_writing(const std::string& what, const std::string& path) {
  const int fd = open_without_waiting(what, path, O_TRUNC);
  std::FILE* file = ::fdopen(fd, "w");
  if (file == nullptr) {
    ::close(fd);
    throw CantWorkError(fmt::format("{}: cannot write '{}': {}", what, path, std::strerror(errno)));
  }
  return file;
}

void finish_file(std::FILE* file, const std::string& what, const std::string& path,
                 const std::string& text) {
  const bool written =
      std::fwrite(text.data(), 1, text.size(), file) == text.size() && std::fflush(file) == 0;
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    throw CantWorkError(fmt::format("{}: writing '{}' failed: {}", what, path,
                                    std::strerror(written ? errno : write_errno)));
  }
}

void check_writable(const std::string& what, const std::string& path) {
  struct stat info {};
  const bool existed = ::stat(path.c_str(), &info) == 0;
  ::close(open_without_waiting(what, path, O_APPEND));
  if (!existed) std::remove(path.c_str());
}

std::string default_corpus_path() {
  const std::filesystem::path in_tree =
      std::filesystem::path(MINIGRAPH_SOURCE_DIR) / "data" / "corpus.txt";
  if (std::filesystem::exists(in_tree)) return in_tree.string();
  return (std::filesystem::path(MINIGRAPH_INSTALL_DATADIR) / "corpus.txt").string();
}

void check_corpus(const std::string& option, const std::string& path, bool warn) {
  const std::string command = option.substr(0, option.find(' '));
  const std::string argument = option.substr(option.find(' ') + 1);
  const std::int64_t bytes = RegularFile(command, argument, path).size();
  require_memory(
      fmt::format("{} {} ({})", option, path, format_bytes(static_cast<double>(bytes))),
      train::corpus_memory_bytes(bytes), [&](std::int64_t available) {
        const double fixed = static_cast<double>(train::corpus_memory_bytes(0));
        const double per_byte = static_cast<double>(train::corpus_memory_bytes(1)) - fixed;
        const double fits = (static_cast<double>(available) - fixed) / per_byte;
        return fits < 1 ? std::string("not even a small corpus fits")
                        : fmt::format("at most about {} of corpus fits", format_bytes(fits));
      });
  const train::CorpusFacts facts = train::inspect_corpus(command, path);
  if (warn && facts.not_text_bytes > 0) {
    std::fflush(stdout);
    fmt::print(
        stderr,
        "warning: {} {}: {} of its {} bytes ({:.2g} %) are not text (invalid UTF-8 or "
        "NUL); is it a binary file?\n",
        option, path, andrea::group_thousands(facts.not_text_bytes),
        andrea::group_thousands(facts.bytes),
        100.0 * static_cast<double>(facts.not_text_bytes) / static_cast<double>(facts.bytes));
  }
}

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.size() < 9 &&
      text.find_first_not_of("0123456789", 5) == std::string::npos) {
    return Device::cuda(std::stoi(text.substr(5)));
  }
  throw UsageError(fmt::format("--device: expected cpu, cuda or cuda:N, got '{}'", text));
}

// ---- progress ----------------------------------------------------------------------------

Progress::Progress(bool wanted) : enabled_(wanted && ::isatty(::fileno(stderr)) == 1) {}

Progress::~Progress() { clear(); }

void Progress::show(const std::string& text) {
  if (!enabled_) return;
  // One terminal row at most, so \r returns to its start; the rest of the row is erased.
  std::fflush(stdout);
  fmt::print(stderr, "\r{}\x1b[K", text.substr(0, 78));
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!enabled_ || !shown_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

// ---- version and headers -----------------------------------------------------------------

std::string threads_line() {
  return fmt::format("threads: {} ({})", num_threads(), num_threads_origin());
}

std::string gemm_line() { return fmt::format("GEMM: {}", gemm_library()); }

std::string version_text() {
  const std::string commit = build_commit();
  std::string cuda;
  if (!backend_built(DeviceKind::cuda)) {
    cuda = "CUDA: off (backend not built)";
  } else {
    const int gpus = device_count(DeviceKind::cuda);
    cuda = fmt::format("CUDA: on, {} GPU{} visible", gpus, gpus == 1 ? "" : "s");
  }
  const std::string mpi = distributed::mpi_built()
                              ? fmt::format("MPI: on ({})", distributed::mpi_library_version())
                              : "MPI: off (not built: Debian's libopenmpi-dev was not found)";
  const std::string nccl =
      distributed::nccl_built() ? fmt::format("NCCL: on ({})", distributed::nccl_library_version())
      : backend_built(DeviceKind::cuda) ? "NCCL: off (not found with the CUDA toolkit)"
                                        : "NCCL: off (needs the CUDA backend)";
  return fmt::format("minigraph {}\ncommit: {}\n{}\nvector loops: {}\n{}\n{}\n{}\n{}",
                     MINIGRAPH_VERSION_STRING,
                     commit == "unknown" ? "unknown (not built from a git checkout)" : commit,
                     gemm_line(), cpu::capability(), cuda, mpi, nccl, threads_line());
}

}  // namespace mg::cli
