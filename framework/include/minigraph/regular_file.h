// Reading a file a user named, which may be anything: a FIFO with no writer (open(2) would
// wait for one forever), a terminal, a device that never ends (/dev/zero), a directory.
// RegularFile opens without blocking (O_NONBLOCK) and refuses all but a regular file before a
// byte is read, so a read can neither hang nor run without bound: its size is known up front.
// Errors are mg::Error naming the caller's op and argument, the file and what it is, as in
// "expected a regular file, got '/dev/stdin': a FIFO or pipe".
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace mg {

class RegularFile {
 public:
  RegularFile(std::string op, std::string argument, std::string path);
  ~RegularFile();
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&&) = delete;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }               // blocking again, read from offset 0
  std::int64_t size() const { return size_; }  // in bytes, when opened
  const std::string& path() const { return path_; }

  // The file's size() bytes. mg::Error when size() is over `max_bytes` (both named), when a
  // read fails, or when the file shrank while being read; a file that grows is read as it was.
  std::string read_all(std::int64_t max_bytes = std::numeric_limits<std::int64_t>::max()) const;
  // Up to `size` bytes at `offset` into `data` (retrying interrupted reads): how many, 0 at the
  // end. mg::Error when the read fails.
  std::size_t read_at(std::int64_t offset, char* data, std::size_t size) const;

 private:
  std::string op_, argument_, path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

// RegularFile(op, argument, path).read_all(max_bytes).
std::string read_regular_file(const std::string& op, const std::string& argument,
                              const std::string& path,
                              std::int64_t max_bytes = std::numeric_limits<std::int64_t>::max());

}  // namespace mg
