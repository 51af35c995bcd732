// A subword tokenizer for training: SentencePiece (BPE by default) behind minigraph's own
// types and errors. Legend: V vocabulary size, ids in [0, V).
//
// Training is deterministic: the same corpus bytes and options give the same model bytes (one
// thread, no sentence sampling, the corpus fed line by line so the model does not record where
// the file was). A model can be loaded from a `.model` file or from its serialized bytes, so a
// checkpoint can carry it. Every SentencePiece failure becomes an mg::Error naming the file and
// the reason. SentencePiece's headers stay out of this one: users of the package need only
// link the library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mg::train {

struct TokenizerTrainOptions {
  // "bpe" merges the most frequent pairs first, so whole frequent words become single pieces
  // at small vocabularies; "unigram" is SentencePiece's default.
  std::string model_type = "bpe";
  // false: a vocab_size larger than the corpus supports gives the largest vocabulary it does
  // support (read vocab_size() afterwards) instead of an error.
  bool hard_vocab_limit = true;
  // Characters covered by the vocabulary; 1.0 keeps every character of the corpus.
  double character_coverage = 1.0;
  // SentencePiece's text normalization: "nmt_nfkc" (its default: NFKC plus whitespace rules,
  // a ~240 KB table in every model), "nfkc", "nmt_nfkc_cf", "nfkc_cf" or "identity" (the text
  // as it is, and a model of a few KB).
  std::string normalization = "nmt_nfkc";
};

class Tokenizer {
 public:
  // The smallest vocabulary that can ever train: the 3 special pieces (<unk>, <s>, </s>), the
  // word-start mark "▁" and one character.
  static constexpr int kMinVocabSize = 5;
  // Trains a model on the UTF-8 text file `corpus_path` (one sentence or paragraph per line)
  // and, when `out_path` is not empty, writes it there as a `.model` file. Throws mg::Error for
  // a missing or empty file, vocab_size below kMinVocabSize or past what the corpus supports
  // (the message says the largest it supports), or any other SentencePiece failure.
  static Tokenizer train(const std::string& corpus_path, int vocab_size,
                         const std::string& out_path = "",
                         const TokenizerTrainOptions& options = {});
  // Loads a `.model` file; mg::Error naming the file and the reason when it cannot.
  static Tokenizer load(const std::string& path);
  // Loads a model from its serialized bytes (serialized() of a tokenizer, a `.model` file's
  // contents); mg::Error when they are not a SentencePiece model.
  static Tokenizer from_serialized(std::string_view bytes);

  // The model's bytes: what a `.model` file holds; from_serialized() takes them back.
  const std::string& serialized() const;
  // Writes serialized() to `path` whole or not at all (AtomicFile); mg::Error naming the file
  // and the reason when it cannot.
  void save(const std::string& path) const;

  std::vector<std::int32_t> encode(std::string_view text) const;
  // Every line of a text file, encoded and concatenated in order (lines add no separator
  // id: each starts with its first word's "▁" piece). mg::Error for a file it cannot read.
  std::vector<std::int32_t> encode_file(const std::string& path) const;
  // mg::Error for an id outside [0, V).
  std::string decode(const std::vector<std::int32_t>& ids) const;

  std::int64_t vocab_size() const;                  // V
  const std::string& piece(std::int32_t id) const;  // "▁cat"; mg::Error outside [0, V)
  std::int32_t unk_id() const;                      // the id of unknown characters
  // The one id of `word` as it appears inside a sentence, after a space ("cat" -> "▁cat").
  // mg::Error when the word is empty, holds whitespace, or is not a single piece (the
  // message lists the pieces it becomes).
  std::int32_t id_of_word(std::string_view word) const;

 private:
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;  // immutable, so copies share it safely across threads
};

}  // namespace mg::train
