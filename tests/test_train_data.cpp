// The train floor's data: the SentencePiece tokenizer on the shipped corpus (data/corpus.txt),
// the token dataset's split and the batch sampler. Legend: N tokens, B rows, T context.
// The corpus tokenizer is trained once per process (about 4 s); the other tests train on a
// slice of the corpus or use made-up ids.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "expect_error.h"
#include "minigraph/train/data/corpus.h"
#include "minigraph/train/data/dataset.h"
#include "minigraph/train/data/tokenizer.h"

namespace {

using mg::testing::expect_error_containing;
using mg::train::Batch;
using mg::train::BatchSampler;
using mg::train::TokenDataset;
using mg::train::Tokenizer;
namespace fs = std::filesystem;

const std::string kCorpus = std::string(MINIGRAPH_SOURCE_DIR) + "/data/corpus.txt";

// A fresh folder per test under the system's temporary folder.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("minigraph_train_data_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The first `bytes` of the corpus, cut at a line end.
std::string corpus_head(std::size_t bytes) {
  std::string text = read_bytes(kCorpus).substr(0, bytes);
  return text.substr(0, text.rfind('\n') + 1);
}

const Tokenizer& corpus_tokenizer(const fs::path& model_path) {
  static const Tokenizer tokenizer = [&] {
    const auto start = std::chrono::steady_clock::now();
    Tokenizer t = Tokenizer::train(kCorpus, 1024, model_path.string());
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::printf("trained a 1024-piece BPE tokenizer on %s in %.2f s\n", kCorpus.c_str(),
                took.count());
    return t;
  }();
  return tokenizer;
}

std::vector<std::int64_t> values(const mg::Tensor& t) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(t.at_flat(i));
  }
  return out;
}

// Bytes of invalid UTF-8 and NUL bytes, each maximal invalid part counted as its bytes.
std::int64_t not_text(std::string_view bytes) {
  mg::train::NotTextCounter counter;
  counter.add(bytes);
  return counter.count();
}

TEST(TrainDataCorpus, CountsTheBytesThatAreNotText) {
  EXPECT_EQ(not_text("plain text\n"), 0);
  EXPECT_EQ(not_text("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
            0);                                    // é € 😀 U+10FFFF
  EXPECT_EQ(not_text(std::string("a\0b", 3)), 1);  // NUL
  EXPECT_EQ(not_text("\xff"), 1);                  // never in UTF-8
  EXPECT_EQ(not_text("\x80"
                     "abc"),
            1);                                // a continuation without a lead
  EXPECT_EQ(not_text("\xc0\xaf"), 2);          // overlong '/': C0, then a stray
  EXPECT_EQ(not_text("\xe0\x80\xaf"), 3);      // overlong three-byte form
  EXPECT_EQ(not_text("\xed\xa0\x80"), 3);      // a surrogate (U+D800)
  EXPECT_EQ(not_text("\xf4\x90\x80\x80"), 4);  // past U+10FFFF
  EXPECT_EQ(not_text("\xe2\x82x"), 2);         // cut short, then text
  EXPECT_EQ(not_text("\xe2\x82"), 2);          // cut short at the end
  EXPECT_EQ(not_text("\xf0\x9f\x98"), 3);
}

TEST(TrainDataCorpus, ASequenceSplitBetweenPiecesCountsAsWhole) {
  const std::string text = "\xe2\x82\xac caf\xc3\xa9 \xff \xf0\x9f\x98\x80 \xe2\x82";
  mg::train::NotTextCounter bytewise;
  for (const char c : text) bytewise.add(std::string_view(&c, 1));
  EXPECT_EQ(bytewise.count(), not_text(text));
  EXPECT_EQ(bytewise.count(), 3);  // \xff and the cut € at the end
}

TEST(TrainDataCorpus, InspectReadsTheFileAndRefusesWhatIsNotARegularFile) {
  const fs::path dir = fs::temp_directory_path() / ("mg-corpus-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_bytes(dir / "mixed.txt", std::string("text\xff\xfe\0\n", 8));
  const mg::train::CorpusFacts facts =
      mg::train::inspect_corpus("test", (dir / "mixed.txt").string());
  EXPECT_EQ(facts.bytes, 8);
  EXPECT_EQ(facts.not_text_bytes, 3);
  expect_error_containing([] { mg::train::inspect_corpus("train", "/dev/zero"); },
                          "train: argument 'corpus': expected a regular file, got '/dev/zero': a "
                          "character device");
  fs::remove_all(dir);
  EXPECT_EQ(mg::train::corpus_memory_bytes(1000), (std::int64_t{64} << 20) + 8000);
}

TEST(TrainDataTokenizer, CorpusWordsAreSinglePiecesAndRoundTripThroughFileAndBytes) {
  const fs::path dir = scratch("corpus");
  const fs::path model_path = dir / "corpus-1024.model";
  const Tokenizer& tok = corpus_tokenizer(model_path);
  EXPECT_EQ(tok.vocab_size(), 1024);
  EXPECT_EQ(read_bytes(model_path), tok.serialized());

  for (const std::string word : {"cat", "dog", "kitten", "hamster", "parrot", "Tuesday", "Friday",
                                 "Sunday", "piano", "violin", "saxophone", "London", "bread"}) {
    const std::int32_t id = tok.id_of_word(word);
    EXPECT_EQ(tok.piece(id), "\xE2\x96\x81" + word) << word;  // "▁" + word
  }
  EXPECT_NE(tok.id_of_word("cat"), tok.id_of_word("dog"));
  const std::vector<std::int32_t> fed = tok.encode("I fed my cat on Tuesday morning.");
  EXPECT_NE(std::find(fed.begin(), fed.end(), tok.id_of_word("cat")), fed.end());
  EXPECT_NE(std::find(fed.begin(), fed.end(), tok.id_of_word("Tuesday")), fed.end());
  // A word the corpus never saw as one piece: the error lists what it becomes.
  expect_error_containing([&] { tok.id_of_word("catTuesdayviolin"); }, "pieces: ");
  expect_error_containing([&] { tok.id_of_word("two words"); }, "without whitespace");
  expect_error_containing([&] { tok.id_of_word(""); }, "without whitespace");

  const std::vector<std::string> sentences = {
      "The meeting is on Tuesday afternoon.", "She plays the violin solo in London.",
      "My kitten sleeps on the sofa and the puppy naps by the door.",
      "\"Zorblat quux,\" said 12345: (a well-known word?) No!"};
  const Tokenizer from_file = Tokenizer::load(model_path.string());
  const Tokenizer from_bytes = Tokenizer::from_serialized(tok.serialized());
  EXPECT_EQ(from_file.serialized(), tok.serialized());
  for (const std::string& s : sentences) {
    const std::vector<std::int32_t> ids = tok.encode(s);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(tok.decode(ids), s);
    EXPECT_EQ(from_file.encode(s), ids);
    EXPECT_EQ(from_bytes.encode(s), ids);
  }
  // A character the corpus never has is the unknown id, and decodes to a mark.
  const std::vector<std::int32_t> euro = tok.encode("5 \xE2\x82\xAC");  // "5 €"
  EXPECT_NE(std::find(euro.begin(), euro.end(), tok.unk_id()), euro.end());
  EXPECT_NE(tok.decode(euro), "5 \xE2\x82\xAC");
  // Whole frequent words: a corpus sentence is about one piece a word (plus the full stop).
  EXPECT_EQ(tok.encode("The meeting is on Tuesday afternoon.").size(), 7u);

  expect_error_containing([&] { tok.piece(1024); }, "1024");
  expect_error_containing([&] { tok.piece(-1); }, "-1");
  expect_error_containing([&] { tok.decode({5, 1024}); }, "1024 at position 1");
}

TEST(TrainDataTokenizer, TheCorpusMakesADatasetWithIdsInTheVocabulary) {
  const Tokenizer& tok = corpus_tokenizer(scratch("dataset") / "corpus-1024.model");
  const auto start = std::chrono::steady_clock::now();
  const TokenDataset data = TokenDataset::from_file(tok, kCorpus, 64, 0.05);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf("encoded %s: %lld tokens in %.2f s\n", kCorpus.c_str(),
              static_cast<long long>(data.size()), took.count());
  EXPECT_GT(data.size(), 300000);  // 2 MB at about five bytes a token
  EXPECT_EQ(data.validation_size(), std::llround(static_cast<double>(data.size()) * 0.05));
  EXPECT_EQ(data.train_size() + data.validation_size(), data.size());
  const auto [lo, hi] = std::minmax_element(data.train_tokens().begin(), data.train_tokens().end());
  EXPECT_GE(*lo, 0);
  EXPECT_LT(*hi, tok.vocab_size());
  // The first line of the corpus, decoded from the dataset's first tokens.
  const std::string first_line = corpus_head(4096).substr(0, corpus_head(4096).find('\n'));
  const std::vector<std::int32_t> head = tok.encode(first_line);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), data.train_tokens().begin()));

  const BatchSampler sampler(data, 4, 7);
  const Batch b = sampler.batch(3);
  EXPECT_EQ(b.inputs.shape(), (mg::Shape{4, 64}));
  EXPECT_EQ(b.inputs.dtype(), mg::DType::i64);
  for (const std::int64_t v : values(b.targets)) EXPECT_LT(v, tok.vocab_size());
}

TEST(TrainDataTokenizer, SameCorpusAndSizeGiveTheSameModelBytesWhereverTheFileIs) {
  const fs::path dir = scratch("determinism");
  fs::create_directories(dir / "elsewhere");
  const std::string text = corpus_head(60000);
  write_bytes(dir / "a.txt", text);
  write_bytes(dir / "elsewhere" / "b.txt", text);
  const Tokenizer a = Tokenizer::train((dir / "a.txt").string(), 300, (dir / "a.model").string());
  const Tokenizer b = Tokenizer::train((dir / "elsewhere" / "b.txt").string(), 300);
  EXPECT_EQ(a.vocab_size(), 300);
  EXPECT_EQ(a.serialized(), b.serialized());
  EXPECT_EQ(read_bytes(dir / "a.model"), b.serialized());
  // A different size is a different model.
  const Tokenizer c = Tokenizer::train((dir / "a.txt").string(), 280);
  EXPECT_EQ(c.vocab_size(), 280);
  EXPECT_NE(c.serialized(), a.serialized());
}

TEST(TrainDataTokenizer, FailuresAreErrorsNamingTheFileAndTheReason) {
  const fs::path dir = scratch("errors");
  const std::string missing = (dir / "missing.txt").string();
  expect_error_containing([&] { Tokenizer::train(missing, 100); }, missing);
  expect_error_containing([&] { Tokenizer::load(missing); }, missing);
  write_bytes(dir / "blank.txt", " \n\n  \n");
  expect_error_containing([&] { Tokenizer::train((dir / "blank.txt").string(), 100); },
                          "whitespace only");
  write_bytes(dir / "junk.model", "this is not a SentencePiece model");
  expect_error_containing([&] { Tokenizer::load((dir / "junk.model").string()); }, "junk.model");
  expect_error_containing([&] { Tokenizer::from_serialized("junk"); }, "4 bytes");
  expect_error_containing([&] { Tokenizer::train(kCorpus, 0); }, "at least 5");
  expect_error_containing([&] { Tokenizer::train(kCorpus, 4); }, "at least 5 (3 special pieces");
  mg::train::TokenizerTrainOptions bad;
  bad.model_type = "wordpiece";
  expect_error_containing([&] { Tokenizer::train(kCorpus, 100, "", bad); }, "wordpiece");
  bad = {};
  bad.normalization = "nfd";
  expect_error_containing([&] { Tokenizer::train(kCorpus, 100, "", bad); },
                          "argument 'options.normalization': expected nmt_nfkc, nfkc, "
                          "nmt_nfkc_cf, nfkc_cf or identity, got nfd");

  // A vocabulary past what a small corpus supports: SentencePiece says the largest it can.
  const fs::path small = dir / "small.txt";
  write_bytes(small, corpus_head(20000));
  expect_error_containing([&] { Tokenizer::train(small.string(), 8449); }, small.string());
  expect_error_containing([&] { Tokenizer::train(small.string(), 8449); },
                          "Vocabulary size too high");
  // Without the hard limit it gives the largest vocabulary instead.
  mg::train::TokenizerTrainOptions soft;
  soft.hard_vocab_limit = false;
  const Tokenizer t = Tokenizer::train(small.string(), 8449, "", soft);
  std::printf("a 20 KB corpus supports %lld pieces of the 8449 asked\n",
              static_cast<long long>(t.vocab_size()));
  EXPECT_GT(t.vocab_size(), 100);
  EXPECT_LT(t.vocab_size(), 8449);
  expect_error_containing(
      [&] { Tokenizer::train(small.string(), 300, (dir / "no/such/dir/m").string()); },
      "no/such/dir/m");
}

TEST(TrainDataTokenizer, IdentityNormalizationKeepsTheTextAndASmallModel) {
  const fs::path dir = scratch("identity");
  const fs::path small = dir / "small.txt";
  write_bytes(small, corpus_head(20000));
  mg::train::TokenizerTrainOptions identity;
  identity.normalization = "identity";
  const Tokenizer plain = Tokenizer::train(small.string(), 300, "", identity);
  const Tokenizer nfkc = Tokenizer::train(small.string(), 300);
  std::printf("model bytes at V = 300: identity %zu, nmt_nfkc %zu\n", plain.serialized().size(),
              nfkc.serialized().size());
  EXPECT_LT(plain.serialized().size(), 20000u);
  EXPECT_GT(nfkc.serialized().size(), 200000u);
  // NFKC folds the full-width "Ａ" into "A"; identity keeps it as it is.
  EXPECT_EQ(nfkc.decode(nfkc.encode("\xef\xbc\xa1")), "A");
  EXPECT_NE(plain.decode(plain.encode("\xef\xbc\xa1")), "A");
}

// Ids equal to their positions, so a batch's values say where each window was cut.
TokenDataset positions(std::int64_t n, std::int64_t context, double fraction = 0.1) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  return TokenDataset(ids, context, fraction);
}

TEST(TrainDataSampler, SameSeedAndStepGiveTheSameBatchOthersDiffer) {
  const TokenDataset data = positions(10000, 16);
  const BatchSampler s(data, 8, 42);
  const BatchSampler again(data, 8, 42);  // a resumed run: a fresh sampler, the same seed
  const BatchSampler other_seed(data, 8, 43);
  EXPECT_EQ(values(s.batch(5).inputs), values(again.batch(5).inputs));
  EXPECT_EQ(values(s.batch(5).targets), values(again.batch(5).targets));
  EXPECT_EQ(values(s.batch(123456).inputs), values(again.batch(123456).inputs));
  EXPECT_NE(values(s.batch(5).inputs), values(s.batch(6).inputs));
  EXPECT_NE(values(s.batch(5).inputs), values(other_seed.batch(5).inputs));
  // Rows of one batch differ too (the row is part of the key).
  EXPECT_NE(s.window_start(5, 0), s.window_start(5, 1));
}

TEST(TrainDataSampler, TargetsAreInputsShiftedByOneAndWindowsStayInTheTrainingPart) {
  const std::int64_t t = 16;
  const TokenDataset data = positions(1000, t, 0.1);
  ASSERT_EQ(data.train_size(), 900);
  const BatchSampler s(data, 5, 1);
  std::set<std::int64_t> starts;
  for (std::int64_t step = 0; step < 800; ++step) {
    const Batch b = s.batch(step);
    ASSERT_EQ(b.inputs.shape(), (mg::Shape{5, t}));
    ASSERT_EQ(b.targets.shape(), (mg::Shape{5, t}));
    const std::vector<std::int64_t> in = values(b.inputs), target = values(b.targets);
    for (std::int64_t r = 0; r < 5; ++r) {
      const std::int64_t start = s.window_start(step, r);
      starts.insert(start);
      ASSERT_GE(start, 0);
      ASSERT_LE(start, data.train_size() - (t + 1));
      for (std::int64_t i = 0; i < t; ++i) {
        ASSERT_EQ(in[static_cast<std::size_t>(r * t + i)], start + i);
        ASSERT_EQ(target[static_cast<std::size_t>(r * t + i)], start + i + 1);
      }
    }
  }
  // 4000 draws over 884 starts hit about 884 (1 - e^-4.5) = 874 of them, the first and the
  // last included (for this seed): uniform over exactly [0, train_size - T - 1].
  EXPECT_GT(starts.size(), 850u);
  EXPECT_EQ(*starts.begin(), 0);
  EXPECT_EQ(*starts.rbegin(), data.train_size() - (t + 1));
  expect_error_containing([&] { s.batch(-1); }, "step");
}

TEST(TrainDataSampler, ValidationWindowsAreFixedHeldOutAndPredictEachTokenOnce) {
  const std::int64_t t = 8;
  const TokenDataset data = positions(1000, t, 0.1);  // validation: tokens 900..999
  const BatchSampler s(data, 4, 1), other(data, 4, 99);
  // 100 held-out tokens: windows at 0, 8, ..., 88 of the part (12 windows) in 3 batches.
  ASSERT_EQ(s.validation_batch_count(), 3);
  std::vector<std::int64_t> predicted;
  for (std::int64_t k = 0; k < 3; ++k) {
    const Batch b = s.validation_batch(k);
    EXPECT_EQ(b.inputs.shape(), (mg::Shape{4, t}));
    EXPECT_EQ(values(b.inputs), values(other.validation_batch(k).inputs));
    for (const std::int64_t v : values(b.inputs)) EXPECT_GE(v, data.train_size());
    for (const std::int64_t v : values(b.targets)) predicted.push_back(v);
  }
  std::vector<std::int64_t> expected(96);
  for (std::int64_t i = 0; i < 96; ++i) expected[static_cast<std::size_t>(i)] = 901 + i;
  EXPECT_EQ(predicted, expected);
  // Fewer rows in the last batch when the windows do not fill it.
  const BatchSampler five(data, 5, 1);
  ASSERT_EQ(five.validation_batch_count(), 3);
  EXPECT_EQ(five.validation_batch(2).inputs.shape(), (mg::Shape{2, t}));
  expect_error_containing([&] { s.validation_batch(3); }, "3");
}

TEST(TrainDataSampler, TooSmallDatasetsAndBadArgumentsAreErrors) {
  // 40 tokens, 10% held out: 4 for validation, fewer than a window of 17.
  expect_error_containing([&] { positions(40, 16); }, "40 tokens: 36 for training and 4 held out");
  expect_error_containing([&] { positions(40, 16); }, "at least 17 tokens in each part");
  EXPECT_NO_THROW(positions(170, 16));  // 153 + 17
  expect_error_containing([&] { positions(160, 16); }, "16 held out");
  expect_error_containing([&] { positions(1000, 0); }, "context");
  expect_error_containing([&] { positions(1000, 8, 0.0); }, "validation_fraction");
  expect_error_containing([&] { positions(1000, 8, 1.0); }, "validation_fraction");
  expect_error_containing([&] { TokenDataset({1, 2, -3, 4}, 1, 0.5); }, "-3 at position 2");
  expect_error_containing([&] { BatchSampler(positions(1000, 8), 0, 1); }, "batch_size");
}

}  // namespace
