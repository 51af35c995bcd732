// Files written whole or not at all. AtomicFile writes into `PATH.tmp-<pid>-<n>` beside the
// target, fsyncs it and renames it over PATH: a reader, or the machine after a crash, sees the
// old file or the new one, never a part (rename(2) replaces a name in one step, and the fsync
// before it puts the data on disk before the name points at them). A failure, or an AtomicFile
// destroyed before commit(), leaves no temporary file and the old file untouched.
//
// Errors are mg::Error naming the caller's op, the file and the system's reason, as in
// "No space left on device while writing 'DIR/model.safetensors'".
#pragma once

#include <cstddef>
#include <string>

namespace mg {

class AtomicFile {
 public:
  // Creates the temporary file; `op` names the caller in errors.
  AtomicFile(std::string op, std::string path);
  ~AtomicFile();  // not committed: the temporary file is closed and removed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t size);  // all of it, retrying short writes
  void commit();  // fsync, close, rename over the target; the directory is not synced
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const char* doing) const;  // errno's reason, with the target's name
  std::string op_, path_, tmp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// fsync of a directory: the names created, renamed or removed in it survive a crash.
void sync_directory(const std::string& op, const std::string& dir);

}  // namespace mg
