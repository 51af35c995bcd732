// Checkpoint directories (train/checkpoint.h): a save is one folder that `latest` names, every
// file carries the save's id and a mix of two saves is refused, one writer at a time, a failed
// save leaves the previous checkpoint and says so, and what an interrupted save left is removed.
// Kills at every point of a save, and at random, are tests/cli/checkpoint_faults.sh's.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "expect_error.h"
#include "minigraph/minigraph.h"
#include "train_support.h"

namespace mg::train {
namespace {

namespace fs = std::filesystem;
using test_support::kCorpus;
using testing::expect_error;
using testing::expect_error_containing;

TrainConfig tiny(std::int64_t steps) {
  TrainConfig c;
  c.corpus = kCorpus;
  c.vocab_size = 256;
  c.d_model = 8;
  c.context = 8;
  c.batch = 2;
  c.steps = steps;
  c.eval_every = 0;
  return c;
}

std::unique_ptr<Trainer> trainer(std::int64_t steps_done, std::int64_t steps = 8) {
  auto t = std::make_unique<Trainer>(tiny(steps), test_support::corpus_tokenizer(256));
  for (std::int64_t i = 0; i < steps_done; ++i) t->step();
  return t;
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string save_folder(const SaveId& id) {
  return fmt::format("step-{:012}-{:016x}", id.step, id.id);
}

TEST(Checkpoint, ASaveIsOneFolderThatLatestNamesEachFileCarryingTheSaveId) {
  const fs::path dir = test_support::scratch("checkpoint-layout");
  trainer(3)->save(dir.string());
  const CheckpointFiles files = read_checkpoint(dir.string(), true, "test");
  EXPECT_EQ(files.id.step, 3);
  EXPECT_NE(files.id.id, 0u);
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"latest", "lock", save_folder(files.id)}));
  EXPECT_EQ(fs::read_symlink(dir / "latest").string(), save_folder(files.id));
  EXPECT_EQ(
      listing(dir / "latest"),
      (std::vector<std::string>{"model.safetensors", "optimizer.safetensors", "tokenizer.model"}));
  EXPECT_EQ(files.model.metadata().at("checkpoint.step"), "3");
  EXPECT_EQ(files.model.metadata().at("checkpoint.id"), fmt::format("{:016x}", files.id.id));
  EXPECT_EQ(files.optimizer->metadata().at("checkpoint.id"), fmt::format("{:016x}", files.id.id));
  EXPECT_EQ(tokenizer_tag(files.tokenizer.serialized()), files.id);
  EXPECT_EQ(fs::path(files.folder).filename(), save_folder(files.id));
  // A save's folder may be given itself.
  EXPECT_EQ(read_checkpoint((dir / "latest").string(), false, "test").id, files.id);
  fs::remove_all(dir);
}

TEST(Checkpoint, ASecondSaveReplacesTheFirstAndRemovesItsFolder) {
  const fs::path dir = test_support::scratch("checkpoint-second");
  auto t = trainer(2);
  CheckpointDir held(dir.string());
  t->save(held);
  const SaveId first = *held.latest();
  t->step();
  t->save(held);
  const SaveId second = *held.latest();
  EXPECT_EQ(first.step, 2);
  EXPECT_EQ(second.step, 3);
  EXPECT_NE(first.id, second.id);
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"latest", "lock", save_folder(second)}));
  // The same step saved twice is two saves: another id, and still one folder.
  t->save(held);
  EXPECT_EQ(held.latest()->step, 3);
  EXPECT_NE(held.latest()->id, second.id);
  EXPECT_EQ(listing(dir).size(), 3u);
  fs::remove_all(dir);
}

TEST(Checkpoint, TheTaggedTokenizerLoadsAndEncodesAsTheUntagged) {
  const auto untagged = test_support::corpus_tokenizer(256);
  const std::string& bytes = untagged->serialized();
  EXPECT_EQ(tokenizer_tag(bytes), std::nullopt);
  const SaveId a{12, 0x0123456789abcdefull}, b{999999999999, 0xfedcba9876543210ull};
  const std::string tagged = tag_tokenizer(bytes, a);
  EXPECT_EQ(tokenizer_tag(tagged), a);
  // A new tag replaces the old one rather than adding a second.
  const std::string retagged = tag_tokenizer(tagged, b);
  EXPECT_EQ(tokenizer_tag(retagged), b);
  EXPECT_EQ(retagged.size(), tag_tokenizer(bytes, b).size());
  const Tokenizer loaded = Tokenizer::from_serialized(retagged);
  const std::string text = "The cat sat next to the dog on Tuesday.";
  EXPECT_EQ(loaded.encode(text), untagged->encode(text));
  EXPECT_EQ(loaded.vocab_size(), untagged->vocab_size());
}

TEST(Checkpoint, WhatAnInterruptedSaveLeftIsRemovedAndNothingElse) {
  const fs::path dir = test_support::scratch("checkpoint-leftovers");
  trainer(1)->save(dir.string());
  const std::string kept = fs::read_symlink(dir / "latest").string();
  fs::create_directories(dir / "step-000000000009-0123456789abcdef");
  std::ofstream(dir / "step-000000000009-0123456789abcdef" / "model.safetensors") << "partial";
  fs::create_symlink("step-000000000009-0123456789abcdef", dir / "latest.tmp-99");
  fs::create_directories(dir / "step-notes");  // not a save's name: the user's
  std::ofstream(dir / "notes.txt") << "mine";
  { CheckpointDir held(dir.string()); }
  EXPECT_EQ(listing(dir),
            (std::vector<std::string>{"latest", "lock", "notes.txt", kept, "step-notes"}));
  // Without `latest` no save was ever complete: every step-* folder is a leftover.
  fs::remove(dir / "latest");
  { CheckpointDir held(dir.string()); }
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"lock", "notes.txt", "step-notes"}));
  fs::remove_all(dir);
}

TEST(Checkpoint, ASecondWriterIsRefusedNamingTheLockAndTheHolder) {
  const fs::path dir = test_support::scratch("checkpoint-lock");
  {
    CheckpointDir held(dir.string());
    const Error e = expect_error([&] { CheckpointDir second(dir.string()); });
    EXPECT_EQ(e.expected(), "a checkpoint directory no other run writes");
    EXPECT_EQ(e.actual(), fmt::format("'{}' held by pid {} (lock '{}')", dir.string(), ::getpid(),
                                      (dir / "lock").string()));
    // Trainer::save takes the lock too.
    expect_error_containing([&] { trainer(1)->save(dir.string()); }, "held by pid");
    EXPECT_EQ(listing(dir), std::vector<std::string>{"lock"});
  }
  CheckpointDir again(dir.string());  // released with its holder
  fs::remove_all(dir);
}

TEST(Checkpoint, ADirectoryNoSaveCameIntoIsLeftAsItWasFound) {
  const fs::path dir = test_support::scratch("checkpoint-unused");
  {
    CheckpointDir held(dir.string());
    EXPECT_EQ(listing(dir), std::vector<std::string>{"lock"});
  }
  EXPECT_FALSE(fs::exists(dir));  // made for a run that saved nothing: gone again
  fs::create_directories(dir);
  { CheckpointDir held(dir.string()); }
  EXPECT_TRUE(fs::is_directory(dir));  // the user's own directory stays, without the lock
  EXPECT_TRUE(listing(dir).empty());
  {
    CheckpointDir held(dir.string());
    std::ofstream(dir / "notes.txt") << "mine";
  }
  EXPECT_EQ(listing(dir), std::vector<std::string>{"notes.txt"});
  fs::remove_all(dir);
  {
    CheckpointDir held(dir.string());
    trainer(1)->save(held);
  }
  EXPECT_EQ(listing(dir).size(), 3u);  // latest, lock, the save's folder
  EXPECT_TRUE(fs::exists(dir / "lock"));
  fs::remove_all(dir);
}

TEST(Checkpoint, FilesOfTwoSavesAreRefusedNamingBothIds) {
  const fs::path a = test_support::scratch("checkpoint-mix-a"),
                 b = test_support::scratch("checkpoint-mix-b"),
                 mix = test_support::scratch("checkpoint-mix");
  trainer(2)->save(a.string());
  trainer(2)->save(b.string());
  const SaveId id_a = read_checkpoint(a.string(), true, "test").id;
  const SaveId id_b = read_checkpoint(b.string(), true, "test").id;
  for (const std::string file : {"optimizer.safetensors", "tokenizer.model"}) {
    fs::copy(a / "latest", mix);
    fs::copy(b / "latest" / file, mix / file, fs::copy_options::overwrite_existing);
    const Error e = expect_error([&] { Trainer::resume(mix.string(), tiny(8)); });
    EXPECT_EQ(e.op(), "train --resume");
    EXPECT_NE(e.expected().find(id_a.text()), std::string::npos) << e.what();
    EXPECT_NE(e.actual().find(id_b.text() + " in '" + (mix / file).string() + "'"),
              std::string::npos)
        << e.what();
    fs::remove_all(mix);
  }
  // A file with no id at all (a model saved by Module::save).
  fs::copy(a / "latest", mix);
  trainer(2)->model().save((mix / "model.safetensors").string());
  expect_error_containing([&] { Trainer::resume(mix.string(), tiny(8)); },
                          "expected a save id in every file of a checkpoint, got none in '" +
                              (mix / "model.safetensors").string());
  for (const auto& d : {a, b, mix}) fs::remove_all(d);
}

TEST(Checkpoint, AFailedSaveLeavesThePreviousCheckpointAndSaysSo) {
  const fs::path dir = test_support::scratch("checkpoint-failed");
  auto t = trainer(2);
  CheckpointDir held(dir.string());
  t->save(held);
  const SaveId kept = *held.latest();
  t->step();
  // Files may grow to 4 KiB only: the first file, the tokenizer's 240 KB, fails (EFBIG).
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = 4096;
  auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const Error e = expect_error([&] { t->save(held); });
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_EQ(
      e.actual().rfind("File too large while writing '" + dir.string() + "/step-000000000003-", 0),
      0u)
      << e.what();
  EXPECT_NE(e.actual().find(fmt::format("; the save of step 3 is undone, '{}' still holds {}",
                                        dir.string(), kept.text())),
            std::string::npos)
      << e.what();
  EXPECT_EQ(held.latest(), kept);
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"latest", "lock", save_folder(kept)}));
  EXPECT_EQ(Trainer::resume(dir.string(), tiny(8))->steps_done(), 2);
  fs::remove_all(dir);
}

TEST(Checkpoint, ALatestThatNamesNoSaveFolderIsAClearError) {
  const fs::path dir = test_support::scratch("checkpoint-bad-latest");
  fs::create_directories(dir);
  fs::create_symlink("/etc", dir / "latest");
  expect_error_containing(
      [&] { CheckpointDir held(dir.string()); },
      "expected a 'latest' link to one of the directory's step-* folders, got '" +
          (dir / "latest").string() + "' -> '/etc'");
  expect_error_containing([&] { read_checkpoint(dir.string(), false, "similar"); },
                          "similar: argument 'checkpoint'");
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"latest", "lock"}));  // nothing removed
  fs::remove_all(dir);
  fs::create_directories(dir);
  expect_error_containing([&] { read_checkpoint(dir.string(), false, "similar"); },
                          fmt::format("'{}' holds neither", dir.string()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mg::train
