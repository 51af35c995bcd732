// minigraph similar WORD...: what the token table says about words. For each word: its id,
// the length of its row (magnitude), its nearest tokens by cosine and by dot product; then the
// pairwise cosine and dot-product tables of the words given. From a checkpoint written by
// `minigraph train`, or (without --checkpoint) from a model freshly initialised from --seed
// with a tokenizer trained on --corpus: the "before training" picture.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "minigraph/minigraph.h"

namespace mg::cli {

namespace {

struct SimilarOptions {
  std::vector<std::string> words;
  std::int64_t k = 8;
  std::string checkpoint;
  train::TrainConfig config;  // the untrained model: corpus, sizes, seed
  bool json = false;
};

// Words one command takes: its tables hold words² numbers each, streamed row by row.
constexpr std::size_t kMaxWords = 1000;

std::string piece_text(const train::Tokenizer& tok, std::int64_t id) {
  return tok.piece(static_cast<int>(id));
}

nlohmann::json neighbours_json(const train::Tokenizer& tok,
                               const std::vector<train::Neighbour>& ns) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& n : ns)
    a.push_back({{"token", piece_text(tok, n.id)}, {"id", n.id}, {"score", n.score}});
  return a;
}

std::string neighbours_text(const train::Tokenizer& tok, const std::vector<train::Neighbour>& ns) {
  std::string text;
  for (const auto& n : ns) text += fmt::format("  {} {:.3f}", piece_text(tok, n.id), n.score);
  return text;
}

// The cosine or dot-product table of the words, one row at a time (never words² in memory):
// as text columns, or as the JSON array of rows that follows a key.
void print_table(const SimilarOptions& o, const train::EmbeddingTable& table,
                 const std::vector<std::int64_t>& ids, bool cosine) {
  auto value = [&](std::int64_t a, std::int64_t b) {
    return cosine ? table.cosine(a, b) : table.dot(a, b);
  };
  if (o.json) {
    fmt::print(",\n  \"{}\": [", cosine ? "cosine" : "dot");
    for (std::size_t a = 0; a < ids.size(); ++a) {
      nlohmann::json row = nlohmann::json::array();
      for (const std::int64_t b : ids) row.push_back(value(ids[a], b));
      fmt::print("{}\n    {}", a == 0 ? "" : ",", row.dump());
    }
    fmt::print("\n  ]");
    return;
  }
  std::size_t width = 8;
  for (const auto& w : o.words) width = std::max(width, w.size() + 1);
  fmt::print("\n{:<{}}", cosine ? "cosine" : "dot", width);
  for (const auto& w : o.words) fmt::print("{:>{}}", w, width);
  fmt::print("\n");
  for (std::size_t a = 0; a < ids.size(); ++a) {
    fmt::print("{:<{}}", o.words[a], width);
    for (const std::int64_t b : ids) fmt::print("{:>{}.3f}", value(ids[a], b), width);
    fmt::print("\n");
  }
}

// Each word's id, norm and neighbours, printed as it is computed.
void print_words(const SimilarOptions& o, const train::Snapshot& snap,
                 const train::EmbeddingTable& table, const std::vector<std::int64_t>& ids) {
  const train::Tokenizer& tok = *snap.tokenizer;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto by_cos = table.nearest_by_cosine(ids[i], o.k);
    const auto by_dot = table.nearest_by_dot(ids[i], o.k);
    if (o.json) {
      const nlohmann::json w{{"word", o.words[i]},
                             {"id", ids[i]},
                             {"norm", table.norm(ids[i])},
                             {"nearest_by_cosine", neighbours_json(tok, by_cos)},
                             {"nearest_by_dot", neighbours_json(tok, by_dot)}};
      fmt::print("{}\n    {}", i == 0 ? "" : ",", w.dump());
    } else {
      fmt::print("{} (id {}, norm {:.3f})\n  by cosine:{}\n  by dot:   {}\n", o.words[i], ids[i],
                 table.norm(ids[i]), neighbours_text(tok, by_cos), neighbours_text(tok, by_dot));
    }
  }
}

// Opens the JSON object (up to its "words" array), or prints the header naming the table's
// source.
void print_source(const SimilarOptions& o, const train::Snapshot& snap) {
  if (o.json) {
    fmt::print("{{\n  \"source\": {},\n  \"words\": [",
               nlohmann::json(o.checkpoint.empty() ? "untrained" : o.checkpoint).dump());
  } else {
    fmt::print("token table {} from {}\n\n", shape_str(snap.token_table.shape()),
               o.checkpoint.empty()
                   ? fmt::format("a fresh model (seed {}), before training", o.config.seed)
                   : fmt::format("{} (step {})", o.checkpoint, snap.step));
  }
}

void print_similar(const SimilarOptions& o) {
  if (o.checkpoint.empty()) check_corpus("similar --corpus", o.config.corpus, true);
  Progress progress(!o.json);
  progress.show(o.checkpoint.empty() ? "similar: training the tokenizer ..."
                                     : "similar: loading the checkpoint ...");
  train::Snapshot snap = o.checkpoint.empty() ? train::untrained_snapshot(o.config)
                                              : train::load_snapshot(o.checkpoint);
  progress.clear();
  const train::EmbeddingTable table(snap.token_table);
  std::vector<std::int64_t> ids;
  for (const std::string& w : o.words) ids.push_back(snap.tokenizer->id_of_word(w));
  print_source(o, snap);
  print_words(o, snap, table, ids);
  if (o.json) fmt::print("\n  ]");
  print_table(o, table, ids, /*cosine=*/true);
  print_table(o, table, ids, /*cosine=*/false);
  if (o.json) fmt::print("\n}}\n");
}

void add_similar_options(CLI::App& cmd, SimilarOptions& o) {
  o.config.corpus = default_corpus_path();
  cmd.add_option("WORD", o.words, "words to look up")->required();
  cmd.add_option("--k", o.k, "nearest tokens to list")
      ->check(whole_number(0, 1000))
      ->capture_default_str();
  cmd.add_option("--checkpoint", o.checkpoint, "a directory written by minigraph train")
      ->check(a_path());
  cmd.add_option("--corpus", o.config.corpus, "without --checkpoint: the tokenizer's corpus")
      ->check(a_path())
      ->capture_default_str();
  cmd.add_option("--vocab-size", o.config.vocab_size, "without --checkpoint: V")
      ->check(whole_number(train::Tokenizer::kMinVocabSize, kMaxVocab))
      ->capture_default_str();
  cmd.add_option("--d-model", o.config.d_model, "without --checkpoint: D")
      ->check(whole_number(1, kMaxWidth))
      ->capture_default_str();
  cmd.add_option("--seed", o.config.seed, "without --checkpoint: the initialisation")
      ->check(whole_number_u64())
      ->capture_default_str();
  cmd.add_flag("--json", o.json, "a JSON object instead of the tables");
}

}  // namespace

void add_similar_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "similar", "nearest tokens, norms, dot products and cosines of words in the token table");
  cmd->footer(std::string("Each WORD must be one token of the tokenizer (as it appears after a "
                          "space). Without --checkpoint: a fresh model from --seed, with a "
                          "tokenizer trained on --corpus to --vocab-size (before training, "
                          "unrelated and related words alike are near orthogonal).\n") +
              kExitCodesHelp);
  // Owned by the callback, which outlives the parse that writes the options into it.
  auto o = std::make_shared<SimilarOptions>();
  add_similar_options(*cmd, *o);
  cmd->callback([cmd, o, &exit_code] {
    for (const char* option : {"--corpus", "--vocab-size", "--d-model", "--seed"}) {
      refuse_together(*cmd, option, "--checkpoint", "the checkpoint holds the model it describes");
    }
    if (o->words.size() > kMaxWords) {
      throw UsageError(fmt::format("similar WORD: expected at most {} words, got {}", kMaxWords,
                                   o->words.size()));
    }
    print_similar(*o);
    exit_code = kExitOk;
  });
}

}  // namespace mg::cli
