#include "minigraph/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "minigraph/error.h"

namespace mg {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return fmt::format("a special file (mode 0{:o})", static_cast<unsigned>(mode & S_IFMT));
}

}  // namespace

RegularFile::RegularFile(std::string op, std::string argument, std::string path)
    : op_(std::move(op)), argument_(std::move(argument)), path_(std::move(path)) {
  MG_CHECK(!path_.empty(), op_, argument_, "the path of a regular file", "an empty path");
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  MG_CHECK(fd_ >= 0, op_, argument_, "a readable file", "'{}': {}", path_, std::strerror(errno));
  struct stat info {};
  const bool known = ::fstat(fd_, &info) == 0;
  const int error = errno;
  if (!known || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    MG_CHECK(known, op_, argument_, "a file whose size can be read", "'{}': {}", path_,
             std::strerror(error));
    throw Error(op_, argument_, "a regular file",
                fmt::format("'{}': {}", path_, kind_of(info.st_mode)));
  }
  // Blocking again: reads of a regular file do not block anyway, but a caller's own reads
  // (mmap, a library) expect the usual flags.
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  size_ = static_cast<std::int64_t>(info.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : op_(std::move(other.op_)),
      argument_(std::move(other.argument_)),
      path_(std::move(other.path_)),
      fd_(other.fd_),
      size_(other.size_) {
  other.fd_ = -1;
}

std::string RegularFile::read_all(std::int64_t max_bytes) const {
  MG_CHECK(size_ <= max_bytes, op_, argument_, fmt::format("a file of at most {} bytes", max_bytes),
           "'{}' of {} bytes", path_, size_);
  std::string bytes(static_cast<std::size_t>(size_), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::size_t n =
        read_at(static_cast<std::int64_t>(done), bytes.data() + done, bytes.size() - done);
    MG_CHECK(n > 0, op_, argument_, "a file that keeps its size while read",
             "'{}' shrank from {} to {} bytes", path_, size_, done);
    done += n;
  }
  return bytes;
}

std::size_t RegularFile::read_at(std::int64_t offset, char* data, std::size_t size) const {
  ssize_t n = 0;
  do {
    n = ::pread(fd_, data, size, static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  MG_CHECK(n >= 0, op_, argument_, "a readable file", "'{}': {}", path_, std::strerror(errno));
  return static_cast<std::size_t>(n);
}

std::string read_regular_file(const std::string& op, const std::string& argument,
                              const std::string& path, std::int64_t max_bytes) {
  return RegularFile(op, argument, path).read_all(max_bytes);
}

}  // namespace mg
