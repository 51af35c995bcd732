// A checkpoint directory that loses nothing: one writer at a time, saves that are atomic, and
// files that prove they belong to the same save. Layout (docs/training.md says why it is atomic):
//
//   DIR/lock                                  flock'd by the run that writes DIR; holds its pid
//   DIR/latest -> step-000000000010-<id>      a symbolic link: the last complete save
//   DIR/step-000000000010-<id>/               one save: tokenizer.model, optimizer.safetensors,
//                                             model.safetensors, each carrying the save's id
//
// A save writes a new step-* folder, fsyncs every file, the folder and DIR, then renames a new
// link over `latest`, and only then removes the previous folder. A save cut short at any
// instant leaves `latest` naming the previous complete save; the next writer removes what the
// cut left (any step-* folder `latest` does not name).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "minigraph/safetensors.h"
#include "minigraph/train/data/tokenizer.h"

namespace mg::train {

// Which save a file belongs to: its step and a random 64-bit number drawn for the save.
struct SaveId {
  std::int64_t step = 0;
  std::uint64_t id = 0;
  bool operator==(const SaveId&) const = default;
  std::string text() const;                             // "step 10, id 1f2e3d4c5b6a7988"
  std::map<std::string, std::string> metadata() const;  // checkpoint.step, checkpoint.id
};

// The directory a run writes its checkpoints into, held by this object for its whole life
// through an advisory flock on DIR/lock (the kernel releases it when the process dies).
class CheckpointDir {
 public:
  // Makes `dir` when missing, takes its lock, and removes what an interrupted save left. An
  // mg::Error when another process holds the lock (naming the lock file and the holder's pid)
  // or when the directory cannot be made or written.
  explicit CheckpointDir(std::string dir);
  // Releases the lock. When no save was ever committed here, what this object made goes again:
  // the lock file, and the directory if it made it and nothing else came into it. A run that
  // failed before its first save leaves nothing behind.
  ~CheckpointDir();
  CheckpointDir(const CheckpointDir&) = delete;
  CheckpointDir& operator=(const CheckpointDir&) = delete;

  const std::string& path() const { return path_; }
  // The save `latest` names, if any.
  std::optional<SaveId> latest() const;

 private:
  friend class CheckpointSave;
  void remove_leftovers() const;
  std::string path_;
  int lock_fd_ = -1;
  bool made_dir_ = false, made_lock_ = false;  // neither existed before
};

// One save in progress. Files are written into a new folder; commit() makes it the directory's
// `latest` in one rename. Destroyed before commit() (an error thrown while writing), it removes
// its folder: the previous save stays `latest`, untouched.
//
// Test hook: with MINIGRAPH_CHECKPOINT_KILL_AT=POINT in the environment, the process kills
// itself (SIGKILL) when the save reaches POINT: `start` (nothing written), `after-<file>` (for
// each file, in the order written), `synced` (every file, the folder and DIR fsync'd; `latest`
// still the previous save), `switched` (`latest` renamed to the new save; the previous folder
// still there) or `done`. Nothing else reads the variable.
class CheckpointSave {
 public:
  CheckpointSave(CheckpointDir& dir, std::int64_t step);
  ~CheckpointSave();
  CheckpointSave(const CheckpointSave&) = delete;
  CheckpointSave& operator=(const CheckpointSave&) = delete;

  const SaveId& id() const { return id_; }
  // Each file carries id(): in the tokenizer's model as a field of its own (see checkpoint.cpp),
  // in a safetensors file's metadata as checkpoint.step and checkpoint.id.
  void write_tokenizer(const std::string& name, const Tokenizer& tokenizer);
  void write_safetensors(const std::string& name, const StateDict& tensors,
                         std::map<std::string, std::string> metadata);
  void commit();

 private:
  std::string file(const std::string& name) const;
  CheckpointDir& dir_;
  SaveId id_;
  std::string folder_;  // DIR/step-<step>-<id>
  bool committed_ = false;
};

// The files of the save a checkpoint directory's `latest` names (or of a save folder given
// itself), checked to be one save's: every file's id must be the model's, else an mg::Error
// naming both ids and the file.
struct CheckpointFiles {
  std::string folder;
  SaveId id;
  SafetensorsFile model;
  std::optional<SafetensorsFile> optimizer;  // read when asked for
  Tokenizer tokenizer;
};
// `op` names the caller in errors ("train --resume", "similar").
CheckpointFiles read_checkpoint(const std::string& dir, bool with_optimizer, const char* op);

// A tokenizer's bytes with `id` stored in them, and the id read back (none when absent). The
// bytes stay a SentencePiece model that any SentencePiece loads unchanged.
std::string tag_tokenizer(const std::string& serialized, const SaveId& id);
std::optional<SaveId> tokenizer_tag(const std::string& serialized);

}  // namespace mg::train
