// Tokenizer over SentencePiece: training with fixed options, loading, encoding and decoding,
// with every SentencePiece status turned into an mg::Error. Legend: V vocabulary size.
#include "data/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <exception>
#include <iterator>
#include <unordered_map>

#include "minigraph/atomic_file.h"
#include "minigraph/error.h"
#include "minigraph/regular_file.h"
#include "minigraph/threads.h"

namespace mg::train {

struct Tokenizer::Impl {
  sentencepiece::SentencePieceProcessor processor;
  std::string serialized;
};

namespace {

// A SentencePiece model is one protobuf message, which protobuf caps at 2 GiB.
constexpr std::int64_t kMaxModelBytes = (std::int64_t{1} << 31) - 1;

// Feeds the trainer the corpus's lines from memory. The trainer then records no input path in
// the model, so the same corpus bytes give the same model bytes wherever the file lies.
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(const std::string& text) : text_(text) { Next(); }
  bool done() const override { return done_; }
  void Next() override {
    if (position_ >= text_.size()) {
      done_ = true;
      return;
    }
    std::size_t end = text_.find('\n', position_);
    if (end == std::string::npos) end = text_.size();
    line_.assign(text_, position_, end - position_);
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    position_ = end + 1;
  }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::string& text_;
  std::size_t position_ = 0;
  std::string line_;
  bool done_ = false;
};

}  // namespace

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Tokenizer Tokenizer::train(const std::string& corpus_path, int vocab_size,
                           const std::string& out_path, const TokenizerTrainOptions& options) {
  const std::string op = "Tokenizer::train";
  MG_CHECK(vocab_size >= kMinVocabSize, op, "vocab_size",
           fmt::format("at least {} (3 special pieces, the word-start mark, a character)",
                       kMinVocabSize),
           "{}", vocab_size);
  MG_CHECK(options.model_type == "bpe" || options.model_type == "unigram" ||
               options.model_type == "word" || options.model_type == "char",
           op, "options.model_type", "bpe, unigram, word or char", "{}", options.model_type);
  MG_CHECK(options.character_coverage > 0.0 && options.character_coverage <= 1.0, op,
           "options.character_coverage", "in (0, 1]", "{}", options.character_coverage);
  static constexpr std::string_view kNormalizations[] = {"nmt_nfkc", "nfkc", "nmt_nfkc_cf",
                                                         "nfkc_cf", "identity"};
  MG_CHECK(std::find(std::begin(kNormalizations), std::end(kNormalizations),
                     options.normalization) != std::end(kNormalizations),
           op, "options.normalization", "nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf or identity", "{}",
           options.normalization);
  const std::string text = read_regular_file(op, "corpus_path", corpus_path);
  MG_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, op, "corpus_path",
           "a file with some text", "{}: {} bytes of whitespace only", corpus_path, text.size());

  // One thread, every sentence (no sampling, no shuffling), a fixed seed for anything random:
  // the model is a function of the corpus and these options only.
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", options.model_type},
      {"vocab_size", std::to_string(vocab_size)},
      {"hard_vocab_limit", options.hard_vocab_limit ? "true" : "false"},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"normalization_rule_name", options.normalization},
      {"num_threads", "1"},
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"model_prefix", ""},
      {"minloglevel", "2"},  // SentencePiece logs to stderr; errors come back as statuses
  };
  sentencepiece::SetRandomGeneratorSeed(14);
  LineIterator lines(text);
  std::string serialized;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines, &serialized);
  if (!status.ok()) {
    throw Error(
        op, "vocab_size, corpus_path",
        "a vocabulary size the corpus supports and a corpus SentencePiece can train on",
        fmt::format("{} with vocab_size {}: {}", corpus_path, vocab_size, status.ToString()));
  }
  Tokenizer tokenizer = from_serialized(serialized);
  if (!out_path.empty()) tokenizer.save(out_path);
  return tokenizer;
}

namespace {

// "" when the processor took the model, else why not. SentencePiece reports most bad models as
// a status, but some (a piece of zero length, found by fuzz_tokenizer) as a C++ exception from
// its trie builder: both become the same mg::Error.
std::string load_into(sentencepiece::SentencePieceProcessor& processor, std::string_view bytes) {
  try {
    const auto status = processor.LoadFromSerializedProto(bytes);
    return status.ok() ? "" : status.ToString();
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  const std::string bytes = read_regular_file("Tokenizer::load", "path", path, kMaxModelBytes);
  auto impl = std::make_shared<Impl>();
  const std::string why = load_into(impl->processor, bytes);
  MG_CHECK(why.empty(), "Tokenizer::load", "path", "a SentencePiece .model file", "{}: {}", path,
           why);
  impl->serialized = bytes;
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::from_serialized(std::string_view bytes) {
  auto impl = std::make_shared<Impl>();
  const std::string why = load_into(impl->processor, bytes);
  MG_CHECK(why.empty(), "Tokenizer::from_serialized", "bytes", "the bytes of a SentencePiece model",
           "{} bytes: {}", bytes.size(), why);
  impl->serialized = std::string(bytes);
  return Tokenizer(std::move(impl));
}

const std::string& Tokenizer::serialized() const { return impl_->serialized; }

void Tokenizer::save(const std::string& path) const {
  AtomicFile file("Tokenizer::save", path);
  file.write(impl_->serialized.data(), impl_->serialized.size());
  file.commit();
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  const auto status = impl_->processor.Encode(text, &ids);
  MG_CHECK(status.ok(), "Tokenizer::encode", "text", "text SentencePiece can encode", "{}",
           status.ToString());
  return {ids.begin(), ids.end()};
}

std::vector<std::int32_t> Tokenizer::encode_file(const std::string& path) const {
  const std::string text = read_regular_file("Tokenizer::encode_file", "path", path);
  std::vector<std::string_view> lines;
  for (std::size_t position = 0; position < text.size();) {
    std::size_t end = text.find('\n', position);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text.data() + position, end - position);
    position = end + 1;
  }
  // Lines are encoded in parallel (Encode is const and thread-safe) into per-chunk vectors
  // joined in order, so the ids do not depend on the thread count. parallel_for runs them on
  // minigraph's threads (num_threads(): the count whose stacks were found to fit, where
  // OpenMP's default count can end the process under ulimit -v) and throws an exception of a
  // part (std::bad_alloc, say) after all have run; a status is kept per chunk and reported in
  // line order.
  const auto line_count = static_cast<std::int64_t>(lines.size());
  const std::int64_t chunks = std::min<std::int64_t>(line_count, 256);
  std::vector<std::vector<std::int32_t>> parts(static_cast<std::size_t>(chunks));
  std::vector<std::string> failures(static_cast<std::size_t>(chunks));
  const int workers = static_cast<int>(std::min<std::int64_t>(num_threads(), chunks));
  parallel_for(workers, [&](int worker) {
    std::vector<int> ids;
    for (std::int64_t c = worker; c < chunks; c += workers) {
      auto& part = parts[static_cast<std::size_t>(c)];
      for (std::int64_t l = line_count * c / chunks; l < line_count * (c + 1) / chunks; ++l) {
        const auto status = impl_->processor.Encode(lines[static_cast<std::size_t>(l)], &ids);
        if (!status.ok()) {
          failures[static_cast<std::size_t>(c)] =
              fmt::format("line {}: {}", l + 1, status.ToString());
          break;
        }
        part.insert(part.end(), ids.begin(), ids.end());
      }
    }
  });
  std::size_t total = 0;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    MG_CHECK(failures[c].empty(), "Tokenizer::encode_file", "path", "text SentencePiece can encode",
             "{}: {}", path, failures[c]);
    total += parts[c].size();
  }
  std::vector<std::int32_t> all;
  all.reserve(total);
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

std::string Tokenizer::decode(const std::vector<std::int32_t>& ids) const {
  const std::int64_t v = vocab_size();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    MG_CHECK(ids[i] >= 0 && ids[i] < v, "Tokenizer::decode", "ids",
             fmt::format("ids in [0, {})", v), "{} at position {}", ids[i], i);
  }
  std::string text;
  const auto status = impl_->processor.Decode(std::vector<int>(ids.begin(), ids.end()), &text);
  MG_CHECK(status.ok(), "Tokenizer::decode", "ids", "ids SentencePiece can decode", "{}",
           status.ToString());
  return text;
}

std::int64_t Tokenizer::vocab_size() const { return impl_->processor.GetPieceSize(); }

const std::string& Tokenizer::piece(std::int32_t id) const {
  MG_CHECK(id >= 0 && id < vocab_size(), "Tokenizer::piece", "id",
           fmt::format("an id in [0, {})", vocab_size()), "{}", id);
  return impl_->processor.IdToPiece(id);
}

std::int32_t Tokenizer::unk_id() const { return impl_->processor.unk_id(); }

std::int32_t Tokenizer::id_of_word(std::string_view word) const {
  MG_CHECK(!word.empty() && word.find_first_of(" \t\r\n") == std::string_view::npos,
           "Tokenizer::id_of_word", "word", "one word without whitespace", "\"{}\"", word);
  // SentencePiece adds the "▁" a word has after a space to the start of the text.
  const std::vector<std::int32_t> ids = encode(word);
  if (ids.size() == 1 && ids[0] != unk_id()) return ids[0];
  std::string pieces;
  for (const std::int32_t id : ids) {
    pieces += fmt::format("{}\"{}\"{}", pieces.empty() ? "" : ", ", piece(id),
                          id == unk_id() ? " (unknown)" : "");
  }
  throw Error("Tokenizer::id_of_word", "word", "a word that is a single piece of the vocabulary",
              fmt::format("\"{}\" is {} pieces: {}", word, ids.size(), pieces));
}

}  // namespace mg::train
