// What the training tests share: the shipped corpus, a tokenizer trained once per binary for
// each vocabulary size (training it is the slow part of a small run), scratch folders.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "minigraph/train/data/tokenizer.h"

namespace mg::train::test_support {

inline const std::string kCorpus = std::string(MINIGRAPH_SOURCE_DIR) + "/data/corpus.txt";

// A copy of the corpus's `vocab`-piece tokenizer, for a Trainer to own.
inline std::unique_ptr<Tokenizer> corpus_tokenizer(int vocab) {
  static std::map<int, std::string> trained;
  auto [it, fresh] = trained.try_emplace(vocab);
  if (fresh) it->second = Tokenizer::train(kCorpus, vocab).serialized();
  return std::make_unique<Tokenizer>(Tokenizer::from_serialized(it->second));
}

// A path of this process under the system's temporary folder, removed if it exists.
inline std::filesystem::path scratch(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("minigraph-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace mg::train::test_support
