// A training corpus checked before the work: a regular file (never a FIFO, /dev/stdin from a
// pipe or a device: the corpus is read more than once, and must have a size), the memory that
// training a tokenizer on it and tokenizing it take, and how much of it is not text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mg::train {

// Counts, in text fed in pieces, the bytes that are not text: those of invalid UTF-8
// sequences (each maximal invalid part: a stray continuation byte, an overlong form, a
// surrogate, a sequence cut short) and NUL bytes. A sequence may span two pieces.
class NotTextCounter {
 public:
  void add(std::string_view bytes);
  std::int64_t count() const { return count_ + pending_; }  // a sequence still open counts

 private:
  std::int64_t count_ = 0;
  int need_ = 0, pending_ = 0;           // continuation bytes still expected, bytes of the sequence
  unsigned char lo_ = 0x80, hi_ = 0xBF;  // the range of the next continuation byte
};

struct CorpusFacts {
  std::int64_t bytes = 0;           // the file's size
  std::int64_t not_text_bytes = 0;  // as NotTextCounter counts them
};

// Opens `path` as a RegularFile (mg::Error naming `op` and the argument 'corpus' otherwise)
// and reads it in pieces, never whole, to count what is not text.
CorpusFacts inspect_corpus(const std::string& op, const std::string& path);

// About the bytes of memory that training a tokenizer on a corpus of `bytes` and tokenizing it
// take at their peak, on top of the process and the model: 8 per byte of corpus (measured 6 on
// 16 MB of English text: the text, SentencePiece's sentences and pieces, the ids) and 64 MiB
// for SentencePiece's worker threads (their stacks and malloc arenas, which ulimit -v counts).
// SentencePiece's threads cannot report an allocation failure (std::terminate): this check up
// front is what keeps a run that does not fit from starting.
std::int64_t corpus_memory_bytes(std::int64_t bytes);

}  // namespace mg::train
