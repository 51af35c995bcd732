#include "data/corpus.h"

#include <vector>

#include "minigraph/regular_file.h"

namespace mg::train {

void NotTextCounter::add(std::string_view bytes) {
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (need_ > 0) {
      if (b >= lo_ && b <= hi_) {
        lo_ = 0x80, hi_ = 0xBF;
        if (--need_ == 0)
          pending_ = 0;
        else
          ++pending_;
        continue;
      }
      count_ += pending_;  // the sequence so far is invalid; `b` may start the next one
      need_ = pending_ = 0;
    }
    // The lead byte decides the length and the range of the second byte (RFC 3629's table).
    if (b == 0) {
      ++count_;
    } else if (b < 0x80) {
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      need_ = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need_ = 2;
      if (b == 0xE0) lo_ = 0xA0;  // no overlong forms
      if (b == 0xED) hi_ = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      need_ = 3;
      if (b == 0xF0) lo_ = 0x90;
      if (b == 0xF4) hi_ = 0x8F;  // nothing past U+10FFFF
    } else {
      ++count_;  // a continuation byte without a lead, C0, C1 or F5..FF
    }
    if (need_ > 0) pending_ = 1;
  }
}

CorpusFacts inspect_corpus(const std::string& op, const std::string& path) {
  const RegularFile file(op, "corpus", path);
  NotTextCounter counter;
  std::vector<char> buffer(std::size_t{1} << 20);
  std::int64_t done = 0;
  while (done < file.size()) {  // a file shorter than at open is what the corpus is
    const std::size_t n = file.read_at(done, buffer.data(), buffer.size());
    if (n == 0) break;
    counter.add({buffer.data(), n});
    done += static_cast<std::int64_t>(n);
  }
  return {file.size(), counter.count()};
}

std::int64_t corpus_memory_bytes(std::int64_t bytes) {
  return (std::int64_t{64} << 20) + 8 * bytes;
}

}  // namespace mg::train
