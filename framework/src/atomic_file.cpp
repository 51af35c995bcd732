#include "minigraph/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "minigraph/error.h"

namespace mg {

AtomicFile::AtomicFile(std::string op, std::string path) : op_(std::move(op)), path_(std::move(path)) {
  MG_CHECK(!path_.empty(), op_, "path", "the path of the file to write", "an empty path");
  static std::atomic<unsigned> counter{0};
  tmp_path_ = fmt::format("{}.tmp-{}-{}", path_, ::getpid(), counter++);
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("creating");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

void AtomicFile::fail(const char* doing) const {
  throw Error(op_, "path", "a file that can be written",
              fmt::format("{} while {} '{}'", std::strerror(errno), doing, path_));
}

void AtomicFile::write(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;  // no progress: never spin
      fail("writing");
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  // Without the fsync a crash can leave the new name on an empty or partial file.
  if (::fsync(fd_) != 0) fail("writing");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("writing");
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) fail("renaming into place");
  committed_ = true;
}

void sync_directory(const std::string& op, const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  const int error = errno;
  if (fd >= 0) ::close(fd);
  MG_CHECK(synced, op, "path", "a directory that can be synced", "{} while syncing '{}'",
           std::strerror(error), dir);
}

}  // namespace mg
