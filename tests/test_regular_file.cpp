// RegularFile: a file a user named is opened without blocking and refused unless regular, so a
// FIFO with no writer cannot hang a read and a device cannot feed one without end.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "expect_error.h"
#include "minigraph/regular_file.h"
#include "scratch_dir.h"

namespace mg {
namespace {

namespace fs = std::filesystem;

TEST(RegularFile, ReadsAFileWholeAndKnowsItsSize) {
  testing::ScratchDir dir;
  std::ofstream(dir.file("a.txt")) << "one\ntwo\n";
  const RegularFile file("test", "path", dir.file("a.txt"));
  EXPECT_EQ(file.size(), 8);
  EXPECT_EQ(file.read_all(), "one\ntwo\n");
  EXPECT_EQ(file.read_all(8), "one\ntwo\n");  // twice: reads from offset 0 each time
  EXPECT_EQ(read_regular_file("test", "path", dir.file("a.txt")), "one\ntwo\n");
}

TEST(RegularFile, AFifoWithNoWriterIsRefusedAtOnceNotWaitedFor) {
  testing::ScratchDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Error e = testing::expect_error([&] { RegularFile("Tokenizer::load", "path", fifo); });
  EXPECT_EQ(e.op(), "Tokenizer::load");
  EXPECT_EQ(e.argument(), "path");
  EXPECT_EQ(e.expected(), "a regular file");
  EXPECT_EQ(e.actual(), fmt::format("'{}': a FIFO or pipe", fifo));
}

TEST(RegularFile, DevicesDirectoriesAndMissingFilesAreNamed) {
  testing::ScratchDir dir;
  EXPECT_EQ(testing::expect_error([] { RegularFile("op", "corpus", "/dev/zero"); }).actual(),
            "'/dev/zero': a character device");
  EXPECT_EQ(testing::expect_error([&] { RegularFile("op", "corpus", dir.path.string()); }).actual(),
            fmt::format("'{}': a directory", dir.path.string()));
  const Error missing =
      testing::expect_error([&] { RegularFile("op", "corpus", dir.file("none")); });
  EXPECT_EQ(missing.expected(), "a readable file");
  EXPECT_EQ(missing.actual(), fmt::format("'{}': No such file or directory", dir.file("none")));
  EXPECT_EQ(testing::expect_error([] { RegularFile("op", "corpus", ""); }).actual(),
            "an empty path");
}

TEST(RegularFile, AFileOverTheLimitIsRefusedBeforeItIsRead) {
  testing::ScratchDir dir;
  std::ofstream(dir.file("b.bin")) << std::string(100, 'x');
  const RegularFile file("Tokenizer::load", "path", dir.file("b.bin"));
  const Error e = testing::expect_error([&] { (void)file.read_all(99); });
  EXPECT_EQ(e.expected(), "a file of at most 99 bytes");
  EXPECT_EQ(e.actual(), fmt::format("'{}' of 100 bytes", dir.file("b.bin")));
  EXPECT_EQ(file.read_all(100).size(), 100u);
}

// A sparse file far larger than memory: refused by its size, nothing allocated.
TEST(RegularFile, ASparseFileLargerThanMemoryIsRefusedBySize) {
  testing::ScratchDir dir;
  const std::string huge = dir.file("huge");
  { std::ofstream(huge).close(); }
  fs::resize_file(huge, std::uintmax_t{1} << 40);  // 1 TiB of holes: no disk used
  const RegularFile file("op", "corpus", huge);
  EXPECT_EQ(file.size(), std::int64_t{1} << 40);
  EXPECT_EQ(testing::expect_error([&] { (void)file.read_all(std::int64_t{1} << 30); }).expected(),
            "a file of at most 1073741824 bytes");
}

}  // namespace
}  // namespace mg
