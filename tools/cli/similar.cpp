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

std::string piece_text(const train::Tokenizer& tok, std::int64_t id) {
  return tok.piece(static_cast<int>(id));
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
  auto o = std::make_shared<SimilarOptions>();
  o->config.corpus = default_corpus_path();
  cmd->add_option("WORD", o->words, "words to look up")->required();
  cmd->add_option("--k", o->k, "nearest tokens to list")
      ->check(whole_number(0, 1000))
      ->capture_default_str();
  cmd->add_option("--checkpoint", o->checkpoint, "a directory written by minigraph train");
  cmd->add_option("--corpus", o->config.corpus, "without --checkpoint: the tokenizer's corpus")
      ->capture_default_str();
  cmd->add_option("--vocab-size", o->config.vocab_size, "without --checkpoint: V")
      ->check(whole_number(2, kMaxVocab))
      ->capture_default_str();
  cmd->add_option("--d-model", o->config.d_model, "without --checkpoint: D")
      ->check(whole_number(1, kMaxWidth))
      ->capture_default_str();
  cmd->add_option("--seed", o->config.seed, "without --checkpoint: the initialisation")
      ->check(whole_number_u64())
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "a JSON object instead of the tables");
  cmd->callback([o, &exit_code] {
    Progress progress(!o->json);
    progress.show(o->checkpoint.empty() ? "similar: training the tokenizer ..."
                                        : "similar: loading the checkpoint ...");
    train::Snapshot snap = o->checkpoint.empty() ? train::untrained_snapshot(o->config)
                                                 : train::load_snapshot(o->checkpoint);
    progress.clear();
    const train::EmbeddingTable table(snap.token_table);
    std::vector<std::int64_t> ids;
    for (const std::string& w : o->words) ids.push_back(snap.tokenizer->id_of_word(w));

    nlohmann::json out{{"source", o->checkpoint.empty() ? "untrained" : o->checkpoint},
                       {"words", nlohmann::json::array()}};
    if (!o->json) {
      fmt::print("token table {} from {}\n\n", shape_str(snap.token_table.shape()),
                 o->checkpoint.empty()
                     ? fmt::format("a fresh model (seed {}), before training", o->config.seed)
                     : fmt::format("{} (step {})", o->checkpoint, snap.step));
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto by_cos = table.nearest_by_cosine(ids[i], o->k);
      const auto by_dot = table.nearest_by_dot(ids[i], o->k);
      nlohmann::json w{{"word", o->words[i]}, {"id", ids[i]}, {"norm", table.norm(ids[i])}};
      auto list = [&](const std::vector<train::Neighbour>& ns) {
        nlohmann::json a = nlohmann::json::array();
        std::string text;
        for (const auto& n : ns) {
          a.push_back(
              {{"token", piece_text(*snap.tokenizer, n.id)}, {"id", n.id}, {"score", n.score}});
          text += fmt::format("  {} {:.3f}", piece_text(*snap.tokenizer, n.id), n.score);
        }
        return std::pair{a, text};
      };
      auto [cos_json, cos_text] = list(by_cos);
      auto [dot_json, dot_text] = list(by_dot);
      w["nearest_by_cosine"] = cos_json;
      w["nearest_by_dot"] = dot_json;
      out["words"].push_back(w);
      if (!o->json) {
        fmt::print("{} (id {}, norm {:.3f})\n  by cosine:{}\n  by dot:   {}\n", o->words[i], ids[i],
                   table.norm(ids[i]), cos_text, dot_text);
      }
    }
    nlohmann::json cos = nlohmann::json::array(), dot = nlohmann::json::array();
    for (std::int64_t a : ids) {
      nlohmann::json cr = nlohmann::json::array(), dr = nlohmann::json::array();
      for (std::int64_t b : ids) {
        cr.push_back(table.cosine(a, b));
        dr.push_back(table.dot(a, b));
      }
      cos.push_back(cr);
      dot.push_back(dr);
    }
    out["cosine"] = cos;
    out["dot"] = dot;
    if (o->json) {
      fmt::print("{}\n", out.dump(2));
    } else {
      std::size_t width = 8;
      for (const auto& w : o->words) width = std::max(width, w.size() + 1);
      for (const char* what : {"cosine", "dot"}) {
        fmt::print("\n{:<{}}", what, width);
        for (const auto& w : o->words) fmt::print("{:>{}}", w, width);
        fmt::print("\n");
        for (std::size_t a = 0; a < ids.size(); ++a) {
          fmt::print("{:<{}}", o->words[a], width);
          for (std::size_t b = 0; b < ids.size(); ++b) {
            fmt::print("{:>{}.3f}", out[what][a][b].get<double>(), width);
          }
          fmt::print("\n");
        }
      }
    }
    exit_code = kExitOk;
  });
}

}  // namespace mg::cli
