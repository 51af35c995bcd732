// libFuzzer target for the tokenizer's loader and codec (minigraph/train/data/tokenizer.h): the
// file a checkpoint's tokenizer.model or `train --tokenizer` hands it, and the text a corpus
// hands it.
//
// The first byte picks the mode. Model mode: the rest is a `.model` file's bytes (or, in
// edit mode, edits to a small valid model: a length to cut it to, then (offset, byte) pairs,
// so the fuzzer reaches deep into a real model's structure), given to
// Tokenizer::from_serialized; a refusal (mg::Error) is expected for most inputs, and an
// accepted model must have V >= 1, a piece for every id, encode fixed texts into ids in
// [0, V) and decode them, and refuse the ids -1 and V with an mg::Error. Text mode: the rest
// is UTF-8 (or not) text for a small model trained once at start-up; its ids must lie in
// [0, V), decode must take them back, and id_of_word must answer with an id or an mg::Error.
// Anything else is a finding: another exception, a crash, a sanitizer report (in minigraph's
// code; SentencePiece itself is not instrumented) or a broken promise, printed as FINDING:.
//
// Building and running it: docs/fuzzing.md.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minigraph/error.h"
#include "minigraph/train/data/tokenizer.h"

namespace {

using mg::train::Tokenizer;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

void expect(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

// The ids of `text` lie in [0, V) and decode without an error.
void check_codec(const Tokenizer& t, std::string_view text) {
  const std::vector<std::int32_t> ids = t.encode(text);
  for (std::int32_t id : ids) {
    expect(id >= 0 && id < t.vocab_size(), "encode gave id " + std::to_string(id) +
                                               " outside [0, " + std::to_string(t.vocab_size()) +
                                               ")");
  }
  (void)t.decode(ids);
}

template <typename Fn>
void expect_mg_error(Fn&& fn, const std::string& what) {
  try {
    fn();
  } catch (const mg::Error&) {
    return;
  }
  finding(what + " was accepted");
}

// A small model, trained once from a few lines written for it (deterministic: one thread).
const Tokenizer& small_model() {
  static const Tokenizer model = [] {
    const std::string path = "fuzz_tokenizer_corpus.txt";
    {
      std::ofstream out(path);
      for (int i = 0; i < 50; ++i) {
        out << "the cat sleeps on the sofa. my dog eats after lunch on Tuesday morning.\n"
               "our rabbit plays near the window; the piano lessons start at 8.\n"
               "Ünïcödé wörds, 数字 and emoji 🙂 appear too.\n";
      }
    }
    mg::train::TokenizerTrainOptions options;
    options.normalization = "identity";  // a model of a few KB, not ~240 KB
    Tokenizer t = Tokenizer::train(path, 96, "", options);
    std::remove(path.c_str());
    return t;
  }();
  return model;
}

void model_mode(std::string_view bytes) {
  std::optional<Tokenizer> t;
  try {
    t.emplace(Tokenizer::from_serialized(bytes));
  } catch (const mg::Error&) {
    return;  // refused: the expected outcome for most bytes
  }
  const std::int64_t v = t->vocab_size();
  expect(v >= 1, "an accepted model with vocabulary " + std::to_string(v));
  for (std::int64_t id = 0; id < v && id < 1000; ++id)
    (void)t->piece(static_cast<std::int32_t>(id));
  check_codec(*t, "the cat sleeps on Tuesday");
  check_codec(*t, "");
  check_codec(*t, "\xff\xfe not UTF-8");
  expect_mg_error([&] { (void)t->piece(-1); }, "piece(-1)");
  expect_mg_error([&] { (void)t->decode({static_cast<std::int32_t>(v)}); }, "decode of id V");
}

void text_mode(std::string_view text) {
  const Tokenizer& t = small_model();
  check_codec(t, text);
  try {
    const std::int32_t id = t.id_of_word(text);
    expect(id >= 0 && id < t.vocab_size(), "id_of_word gave " + std::to_string(id));
  } catch (const mg::Error&) {
  }
}

// The small model's bytes cut to the length in the first two bytes of `edits` (when shorter),
// then byte edits[i + 2] written at offset edits[i .. i + 1] (modulo the size) for each triple.
std::string edited_model(std::string_view edits) {
  std::string bytes = small_model().serialized();
  if (edits.size() >= 2) {
    const std::size_t cut = static_cast<unsigned char>(edits[0]) |
                            static_cast<std::size_t>(static_cast<unsigned char>(edits[1])) << 8;
    if (cut < bytes.size()) bytes.resize(cut);
    edits.remove_prefix(2);
  }
  for (std::size_t i = 0; i + 2 < edits.size() && !bytes.empty(); i += 3) {
    const std::size_t at =
        (static_cast<unsigned char>(edits[i]) |
         static_cast<std::size_t>(static_cast<unsigned char>(edits[i + 1])) << 8) %
        bytes.size();
    bytes[at] = edits[i + 2];
  }
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      model_mode(rest);
      break;
    case 1:
      text_mode(rest);
      break;
    default:
      model_mode(edited_model(rest));
  }
  return 0;
}
