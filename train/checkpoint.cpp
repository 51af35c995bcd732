// Checkpoint directories (see checkpoint.h): the lock, the atomic save, the save ids.
#include "checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "minigraph/atomic_file.h"
#include "minigraph/error.h"

namespace mg::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* kOp = "checkpoint";
constexpr const char* kLatest = "latest";

std::string hex_id(std::uint64_t id) { return fmt::format("{:016x}", id); }

// The whole of `text` as a number in `base` (a step in decimal, an id in 16 hex digits).
template <typename T>
bool parse_whole(std::string_view text, T& value, int base = 10) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return !text.empty() && text.front() != '-' && ec == std::errc() &&
         end == text.data() + text.size();
}
bool parse_step(std::string_view text, std::int64_t& step) { return parse_whole(text, step); }
bool parse_id(std::string_view text, std::uint64_t& id) {
  return text.size() == 16 && parse_whole(text, id, 16);
}

// "step-000000000010-1f2e3d4c5b6a7988": the step zero-padded so that names sort by step.
std::string folder_name(const SaveId& id) {
  return fmt::format("step-{:012}-{}", id.step, hex_id(id.id));
}

std::optional<SaveId> parse_folder_name(std::string_view name) {
  const std::size_t dash = name.rfind('-');
  SaveId id;
  if (name.substr(0, 5) != "step-" || dash == std::string_view::npos || dash < 5 ||
      !parse_step(name.substr(5, dash - 5), id.step) || !parse_id(name.substr(dash + 1), id.id)) {
    return std::nullopt;
  }
  return id;
}

std::uint64_t random_id() {
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

// The test hook of checkpoint.h: SIGKILL at the named point of a save.
void kill_point(const std::string& point) {
  const char* wanted = std::getenv("MINIGRAPH_CHECKPOINT_KILL_AT");
  if (wanted == nullptr || point != wanted) return;
  std::fprintf(stderr, "MINIGRAPH_CHECKPOINT_KILL_AT: killed at '%s'\n", point.c_str());
  std::fflush(stderr);
  ::kill(::getpid(), SIGKILL);
}

// The save id in a safetensors file's metadata; none when either entry is missing or malformed.
std::optional<SaveId> metadata_id(const std::map<std::string, std::string>& metadata) {
  const auto step = metadata.find("checkpoint.step"), id = metadata.find("checkpoint.id");
  SaveId save;
  if (step == metadata.end() || id == metadata.end() || !parse_step(step->second, save.step) ||
      !parse_id(id->second, save.id)) {
    return std::nullopt;
  }
  return save;
}

// The save DIR/latest names; none without the link. An mg::Error for a link that names anything
// but one of DIR's step-* folders: nothing is read or removed through it.
std::optional<SaveId> latest_save(const std::string& dir, const char* op, const char* argument) {
  const fs::path link = fs::path(dir) / kLatest;
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(link, ec))) return std::nullopt;
  const std::string target = fs::read_symlink(link, ec).string();
  const std::optional<SaveId> id = ec ? std::nullopt : parse_folder_name(target);
  MG_CHECK(id.has_value(), op, argument, "a 'latest' link to one of the directory's step-* folders",
           "'{}' -> '{}'", link.string(), target);
  return id;
}

}  // namespace

std::string SaveId::text() const { return fmt::format("step {}, id {}", step, hex_id(id)); }

std::map<std::string, std::string> SaveId::metadata() const {
  return {{"checkpoint.step", std::to_string(step)}, {"checkpoint.id", hex_id(id)}};
}

// ---- the tokenizer's tag ------------------------------------------------------------------
// SentencePiece's ModelProto leaves field numbers 200 and up to third-party extensions
// (sentencepiece_model.proto: `extensions 200 to max`), and every protobuf reader skips a field
// it does not know. So the id goes into field 200 as the text "minigraph checkpoint step=N
// id=H", appended after the model's own fields (protobuf allows fields in any order); any
// SentencePiece loads the tagged file as it loads the untagged one.
namespace {

constexpr std::uint64_t kTagField = 200;
constexpr std::uint64_t kLengthDelimited = 2;

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

bool get_varint(std::string_view bytes, std::size_t& at, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes[at++]);
    value |= std::uint64_t{byte & 0x7Fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

struct Field {
  std::uint64_t number;
  std::size_t begin, end;    // the whole field, its tag included
  std::string_view payload;  // a length-delimited field's bytes
};

// The top-level fields of a protobuf message; false when the bytes are not one.
bool top_level_fields(std::string_view bytes, std::vector<Field>& fields) {
  for (std::size_t at = 0; at < bytes.size();) {
    Field f{0, at, at, {}};
    std::uint64_t tag = 0, length = 0;
    if (!get_varint(bytes, at, tag)) return false;
    f.number = tag >> 3;
    switch (tag & 7) {
      case 0:
        if (!get_varint(bytes, at, length)) return false;
        break;
      case 1:
        at += 8;
        break;
      case 2:
        if (!get_varint(bytes, at, length) || length > bytes.size() - at) return false;
        f.payload = bytes.substr(at, length);
        at += length;
        break;
      case 5:
        at += 4;
        break;
      default:
        return false;  // groups: ModelProto has none
    }
    if (at > bytes.size()) return false;
    f.end = at;
    fields.push_back(f);
  }
  return true;
}

}  // namespace

std::string tag_tokenizer(const std::string& serialized, const SaveId& id) {
  std::vector<Field> fields;
  std::string out;
  if (top_level_fields(serialized, fields)) {
    for (const Field& f : fields) {  // an earlier save's tag is replaced
      if (f.number != kTagField) out.append(serialized, f.begin, f.end - f.begin);
    }
  } else {
    out = serialized;
  }
  const std::string tag = fmt::format("minigraph checkpoint step={} id={}", id.step, hex_id(id.id));
  put_varint(out, kTagField << 3 | kLengthDelimited);
  put_varint(out, tag.size());
  return out + tag;
}

std::optional<SaveId> tokenizer_tag(const std::string& serialized) {
  std::vector<Field> fields;
  if (!top_level_fields(serialized, fields)) return std::nullopt;
  std::optional<SaveId> found;
  for (const Field& f : fields) {
    constexpr std::string_view kPrefix = "minigraph checkpoint step=";
    const std::string_view text = f.payload;
    const std::size_t id_at = text.find(" id=");
    SaveId id;
    if (f.number == kTagField && text.substr(0, kPrefix.size()) == kPrefix &&
        id_at != std::string_view::npos &&
        parse_step(text.substr(kPrefix.size(), id_at - kPrefix.size()), id.step) &&
        parse_id(text.substr(id_at + 4), id.id)) {
      found = id;  // the last one wins, as protobuf reads a repeated singular field
    }
  }
  return found;
}

// ---- the directory and its lock ------------------------------------------------------------

CheckpointDir::CheckpointDir(std::string dir) : path_(std::move(dir)) {
  MG_CHECK(!path_.empty(), kOp, "dir", "the path of a checkpoint directory", "an empty path");
  std::error_code ec;
  made_dir_ = fs::create_directories(path_, ec);
  const std::string lock = (fs::path(path_) / "lock").string();
  struct stat lock_info {};
  made_lock_ = !ec && ::lstat(lock.c_str(), &lock_info) != 0 && errno == ENOENT;
  // O_NONBLOCK: a FIFO found under the lock's name cannot make the open wait.
  lock_fd_ = ec ? -1 : ::open(lock.c_str(), O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  MG_CHECK(lock_fd_ >= 0, kOp, "dir", "a directory that can be made and written", "'{}': {}", path_,
           ec ? ec.message() : std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[32] = {};
    const ssize_t n = ::pread(lock_fd_, holder, sizeof holder - 1, 0);
    ::close(lock_fd_);
    std::string pid = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    if (error == EWOULDBLOCK) {
      throw Error(kOp, "dir", "a checkpoint directory no other run writes",
                  fmt::format("'{}' held by pid {} (lock '{}')", path_,
                              pid.empty() ? "unknown" : pid, lock));
    }
    throw Error(kOp, "dir", "a directory whose lock can be taken",
                fmt::format("'{}': {}", lock, std::strerror(error)));
  }
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(lock_fd_, 0) != 0 ||
      ::pwrite(lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(lock_fd_);
    throw Error(kOp, "dir", "a directory that can be written",
                fmt::format("{} while writing '{}'", std::strerror(error), lock));
  }
  try {
    remove_leftovers();
  } catch (...) {
    ::close(lock_fd_);
    throw;
  }
}

CheckpointDir::~CheckpointDir() {
  std::error_code ec;
  const bool unused = !fs::is_symlink(fs::path(path_) / kLatest, ec);
  if (unused && made_lock_) ::unlink((fs::path(path_) / "lock").c_str());  // still held
  ::close(lock_fd_);                                                       // releases the flock
  if (unused && made_dir_) ::rmdir(path_.c_str());  // fails, harmlessly, if not empty
}

std::optional<SaveId> CheckpointDir::latest() const { return latest_save(path_, kOp, "latest"); }

// Everything a save cut short can leave: step-* folders that `latest` does not name, and a
// link not yet renamed. Other files in the directory are the user's and stay.
void CheckpointDir::remove_leftovers() const {
  const std::optional<SaveId> kept = latest();
  std::vector<fs::path> leftovers;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path_, ec)) {
    const std::string name = entry.path().filename().string();
    const std::optional<SaveId> save = parse_folder_name(name);
    const bool partial = save.has_value() && save != kept;
    if (partial || name.starts_with("latest.tmp-")) leftovers.push_back(entry.path());
  }
  MG_CHECK(!ec, kOp, "dir", "a directory that can be listed", "'{}': {}", path_, ec.message());
  for (const fs::path& path : leftovers) {
    fs::remove_all(path, ec);
    MG_CHECK(!ec, kOp, "dir", "a directory whose interrupted saves can be removed", "'{}': {}",
             path.string(), ec.message());
  }
}

// ---- one save ------------------------------------------------------------------------------

namespace {

// A failed write's error, saying what stays: the save in progress is removed as the error leaves.
Error undone(const Error& e, const CheckpointDir& dir, std::int64_t step) {
  const std::optional<SaveId> kept = dir.latest();
  return Error(e.op(), e.argument(), e.expected(),
               fmt::format("{}; the save of step {} is undone, '{}' still holds {}", e.actual(),
                           step, dir.path(), kept ? kept->text() : "no checkpoint"));
}

}  // namespace

CheckpointSave::CheckpointSave(CheckpointDir& dir, std::int64_t step) : dir_(dir) {
  kill_point("start");
  id_ = {step, random_id()};
  folder_ = (fs::path(dir.path()) / folder_name(id_)).string();
  if (::mkdir(folder_.c_str(), 0755) != 0) {
    const Error e(kOp, "dir", "a directory that can be written",
                  fmt::format("{} while making '{}'", std::strerror(errno), folder_));
    throw undone(e, dir_, step);
  }
}

CheckpointSave::~CheckpointSave() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(folder_, ec);  // best effort: the next CheckpointDir removes what stays
}

std::string CheckpointSave::file(const std::string& name) const {
  return (fs::path(folder_) / name).string();
}

void CheckpointSave::write_tokenizer(const std::string& name, const Tokenizer& tokenizer) {
  try {
    AtomicFile out(kOp, file(name));
    const std::string bytes = tag_tokenizer(tokenizer.serialized(), id_);
    out.write(bytes.data(), bytes.size());
    out.commit();
  } catch (const Error& e) {
    throw undone(e, dir_, id_.step);
  }
  kill_point("after-" + name);
}

void CheckpointSave::write_safetensors(const std::string& name, const StateDict& tensors,
                                       std::map<std::string, std::string> metadata) {
  for (auto& [key, value] : id_.metadata()) metadata[key] = value;
  try {
    save_safetensors(file(name), tensors, metadata);
  } catch (const Error& e) {
    throw undone(e, dir_, id_.step);
  }
  kill_point("after-" + name);
}

void CheckpointSave::commit() {
  // The folder's entries, then the folder's own entry in DIR, on disk before `latest` names it.
  try {
    sync_directory(kOp, folder_);
    sync_directory(kOp, dir_.path());
  } catch (const Error& e) {
    throw undone(e, dir_, id_.step);
  }
  kill_point("synced");
  const fs::path dir(dir_.path());
  const std::optional<SaveId> previous = dir_.latest();
  const std::string link = (dir / fmt::format("latest.tmp-{}", ::getpid())).string();
  const std::string target = folder_name(id_);
  ::unlink(link.c_str());
  MG_CHECK(::symlink(target.c_str(), link.c_str()) == 0, kOp, "dir",
           "a directory that can hold a symbolic link", "{} while making '{}'",
           std::strerror(errno), link);
  if (std::rename(link.c_str(), (dir / kLatest).c_str()) != 0) {
    const int error = errno;
    ::unlink(link.c_str());
    throw Error(kOp, "dir", "a directory that can be written",
                fmt::format("{} while renaming '{}' to '{}'", std::strerror(error), link,
                            (dir / kLatest).string()));
  }
  committed_ = true;
  sync_directory(kOp, dir_.path());
  kill_point("switched");
  if (previous && *previous != id_) {
    std::error_code ec;  // a folder left here is removed by the next CheckpointDir
    fs::remove_all(dir / folder_name(*previous), ec);
  }
  kill_point("done");
}

// ---- reading -------------------------------------------------------------------------------

namespace {

// The save a checkpoint's files claim to be, checked against the model's.
void check_same_save(const SaveId& model_id, const std::string& model_path,
                     const std::optional<SaveId>& id, const std::string& path, const char* op) {
  MG_CHECK(id.has_value(), op, "checkpoint", "a save id in every file of a checkpoint",
           "none in '{}' (not written by a minigraph save, or from before saves had ids)", path);
  MG_CHECK(*id == model_id, op, "checkpoint",
           fmt::format("every file from one save: {} (as in '{}')", model_id.text(), model_path),
           "{} in '{}' (files of two saves mixed)", id->text(), path);
}

CheckpointFiles read_folder(const fs::path& folder, bool with_optimizer, const char* op) {
  const std::string model_path = (folder / "model.safetensors").string();
  SafetensorsFile model = SafetensorsFile::open(model_path);
  const std::optional<SaveId> id = metadata_id(model.metadata());
  MG_CHECK(id.has_value(), op, "checkpoint", "a save id in every file of a checkpoint",
           "none in '{}' (not written by a minigraph save, or from before saves had ids)",
           model_path);
  const std::string tokenizer_path = (folder / "tokenizer.model").string();
  Tokenizer tokenizer = Tokenizer::load(tokenizer_path);
  check_same_save(*id, model_path, tokenizer_tag(tokenizer.serialized()), tokenizer_path, op);
  std::optional<SafetensorsFile> optimizer;
  if (with_optimizer) {
    const std::string optimizer_path = (folder / "optimizer.safetensors").string();
    optimizer = SafetensorsFile::open(optimizer_path);
    check_same_save(*id, model_path, metadata_id(optimizer->metadata()), optimizer_path, op);
  }
  return {folder.string(), *id, std::move(model), std::move(optimizer), std::move(tokenizer)};
}

}  // namespace

CheckpointFiles read_checkpoint(const std::string& dir, bool with_optimizer, const char* op) {
  const fs::path root(dir);
  // A reader that races a save may find the folder gone (a save removes the previous one after
  // switching `latest`): an error naming the missing file, and a second read finds the new save.
  if (const std::optional<SaveId> id = latest_save(dir, op, "checkpoint")) {
    return read_folder(root / folder_name(*id), with_optimizer, op);
  }
  std::error_code ec;  // a save's folder given itself (DIR/latest, DIR/step-...)
  MG_CHECK(fs::exists(root / "model.safetensors", ec), op, "checkpoint",
           "a checkpoint directory (its 'latest' naming a save) or a save's folder",
           "'{}' holds neither", dir);
  return read_folder(root, with_optimizer, op);
}

}  // namespace mg::train
