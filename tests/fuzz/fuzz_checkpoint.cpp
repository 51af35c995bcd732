// libFuzzer target for loading weights and optimizer state: the other half of every checkpoint
// (`train --resume`, `demo --weights`, `similar`) after the safetensors parse that
// fuzz_safetensors covers. Each input is a safetensors file's bytes, after one byte that picks
// where the tensors go:
//   0  a small ANDREA's load_state_dict, strict
//   1  the same, not strict (missing and unexpected names skipped and reported)
//   2  from_gpt2_names first (GPT-2 names, lm_head transposed), then a non-strict load
//   3  an AdamW optimizer's load_state_dict (its parameters updated once, so it has state)
// A refusal (mg::Error) is expected for most inputs and must leave every parameter and every
// state tensor bit-identical to what it was; an accepted load must hold exactly the file's
// values (converted to the parameter's dtype) and report every name it skipped. Anything else
// is a finding: another exception, a crash, a sanitizer report or a broken promise, printed as
// FINDING: before an abort so that libFuzzer keeps the input.
//
// Building and running it: docs/fuzzing.md.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "minigraph/error.h"
#include "minigraph/models/andrea/model.h"
#include "minigraph/optim/adamw.h"
#include "minigraph/safetensors.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

void expect(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

// The seeds' model (tests/fuzz/corpus/make_checkpoint_seeds.py writes files of these sizes).
mg::andrea::AndreaConfig small_config() {
  mg::andrea::AndreaConfig c;
  c.vocab_size = 6;
  c.d_model = 4;
  c.context = 3;
  return c;
}

struct Fixture {
  mg::andrea::Andrea model{small_config()};
  mg::optim::AdamW optimizer{model.named_parameters()};
  Fixture() {
    for (auto& [name, p] : model.named_parameters()) {
      p.zero_grad();
      (void)p.sum().backward();
    }
    optimizer.step();
    optimizer.zero_grad();
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// Every byte of every parameter and state tensor, in a fixed order.
std::vector<std::vector<std::byte>> snapshot(const Fixture& f) {
  std::vector<std::vector<std::byte>> out;
  auto add = [&](const mg::Tensor& t) {
    const auto* p = static_cast<const std::byte*>(t.raw_data());
    out.emplace_back(p, p + t.nbytes());
  };
  for (const auto& [name, p] : f.model.named_parameters()) add(p);
  for (const auto& [name, t] : f.optimizer.state_dict()) add(t);
  return out;
}

// A parameter holds the entry's values after an accepted load.
void expect_loaded(const mg::Tensor& param, const mg::Tensor& entry, const std::string& name) {
  const mg::Tensor want = entry.to(param.dtype());
  expect(want.shape() == param.shape(), "loaded '" + name + "' with another shape");
  expect(std::memcmp(want.raw_data(), param.raw_data(), param.nbytes()) == 0,
         "'" + name + "' does not hold the file's values after the load");
}

void load_model(Fixture& f, const mg::StateDict& dict, bool strict) {
  const mg::LoadReport report = f.model.load_state_dict(dict, strict);
  if (strict) expect(report.missing.empty() && report.unexpected.empty(), "strict load skipped");
  const auto params = f.model.named_parameters();
  for (const auto& [name, entry] : dict) {
    bool found = false;
    for (const auto& [pname, p] : params) {
      if (pname != name) continue;
      found = true;
      expect_loaded(p, entry, name);
    }
    if (!found) {
      bool reported = false;
      for (const auto& u : report.unexpected) reported |= u == name;
      expect(reported, "entry '" + name + "' neither loaded nor reported unexpected");
    }
  }
}

void run(std::uint8_t mode, std::span<const std::byte> file) {
  mg::StateDict dict;
  try {
    dict = mg::SafetensorsFile::parse(file, "fuzz-checkpoint.safetensors").tensors();
  } catch (const mg::Error&) {
    return;  // the loader's own refusals are fuzz_safetensors' part
  }
  Fixture& f = fixture();
  const auto before = snapshot(f);
  try {
    switch (mode % 4) {
      case 0:
        load_model(f, dict, true);
        break;
      case 1:
        load_model(f, dict, false);
        break;
      case 2:
        load_model(f, mg::andrea::from_gpt2_names(dict), false);
        break;
      default: {
        f.optimizer.load_state_dict(dict);
        const mg::StateDict state = f.optimizer.state_dict();
        for (const auto& [name, entry] : dict) {
          bool found = false;
          for (const auto& [sname, t] : state) {
            if (sname != name) continue;
            found = true;
            expect_loaded(t, entry, name);
          }
          expect(found, "optimizer accepted entry '" + name + "' it does not keep");
        }
      }
    }
  } catch (const mg::Error&) {
    expect(snapshot(f) == before, "a refused load changed a parameter or a state tensor");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  run(data[0], std::span(reinterpret_cast<const std::byte*>(data) + 1, size - 1));
  return 0;
}
