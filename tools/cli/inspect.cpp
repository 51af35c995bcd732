// minigraph inspect FILE: what a safetensors file holds, without loading its data: every
// tensor's name, dtype, shape and bytes (sorted by name, as the header lists them) and the
// metadata; --json for scripts. The file is opened and validated as a load would (an invalid
// file is one error line, exit 3).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "minigraph/minigraph.h"
#include "minigraph/safetensors.h"

namespace mg::cli {

namespace {

// Names and metadata come from the file: control characters (a newline, a terminal escape)
// are shown escaped, so one entry stays one line and cannot rewrite the terminal.
std::string printable(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void print_text(const std::string& path, const SafetensorsFile& file) {
  const auto& entries = file.entries();
  fmt::print("file: {}\n{} tensor{}, {} bytes of data\n", printable(path), entries.size(),
             entries.size() == 1 ? "" : "s", andrea::group_thousands(file.data_bytes()));
  if (!entries.empty()) {
    std::vector<std::vector<std::string>> rows{{"name", "dtype", "shape", "bytes"}};
    for (const SafetensorsEntry& e : entries) {
      rows.push_back({printable(e.name), e.dtype, shape_str(e.shape),
                      andrea::group_thousands(e.end - e.begin)});
    }
    std::vector<std::size_t> widths(4, 0);
    for (const auto& row : rows) {
      for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    fmt::print("\n");
    for (const auto& row : rows) {
      // Bytes right-aligned, so that their digits line up.
      fmt::print("{:<{}}  {:<{}}  {:<{}}  {:>{}}\n", row[0], widths[0], row[1], widths[1], row[2],
                 widths[2], row[3], widths[3]);
    }
  }
  const auto& metadata = file.metadata();
  if (metadata.empty()) {
    fmt::print("\nmetadata: none\n");
    return;
  }
  std::size_t key_width = 0;
  for (const auto& [key, value] : metadata) key_width = std::max(key_width, printable(key).size());
  fmt::print("\nmetadata:\n");
  for (const auto& [key, value] : metadata) {
    fmt::print("  {:<{}}  {}\n", printable(key), key_width, printable(value));
  }
}

void print_json(const std::string& path, const SafetensorsFile& file) {
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const SafetensorsEntry& e : file.entries()) {
    tensors.push_back({{"name", e.name},
                       {"dtype", e.dtype},
                       {"shape", e.shape},
                       {"bytes", e.end - e.begin},
                       {"data_offsets", {e.begin, e.end}}});
  }
  const nlohmann::ordered_json out = {{"file", path},
                                      {"data_bytes", file.data_bytes()},
                                      {"tensors", tensors},
                                      {"metadata", file.metadata()}};
  // Names from the file need not be valid UTF-8: replace bad bytes rather than throw.
  fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "inspect", "list a safetensors file's tensors (name, dtype, shape, bytes) and metadata");
  cmd->footer(std::string("Reads the header only, after validating the whole file as a load "
                          "would; an invalid or unreadable file is exit 3.\n") +
              kExitCodesHelp);
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("FILE", *path, "the safetensors file")->required()->check(a_path());
  cmd->add_flag("--json", *json, "print JSON instead of a table");
  cmd->callback([path, json, &exit_code] {
    const SafetensorsFile file = SafetensorsFile::open(*path);  // mg::Error: exit 3
    if (*json) {
      print_json(*path, file);
    } else {
      print_text(*path, file);
    }
    exit_code = kExitOk;
  });
}

}  // namespace mg::cli
