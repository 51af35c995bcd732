// The ANDREA input layer (token + position embedding) and its untied output head.
//
// Parameter names (Andrea::state_dict(), and the names in a safetensors file it saves), with
// V vocabulary, D = d_model, T = context:
//   input.tok_emb.weight  [V, D]  token embedding table, row v = token v
//   input.pos_emb.weight  [T, D]  position embedding table, row t = position t
//   head.weight           [D, V]  untied output head: logits = x @ head.weight
// GPT-2 style checkpoints (Hugging Face's GPT2LMHeadModel.state_dict()) name them
//   transformer.wte.weight [V, D], transformer.wpe.weight [T, D], lm_head.weight [V, D]:
// lm_head is an nn.Linear, stored as [out, in] = [V, D], the TRANSPOSE of ANDREA's head.
// to_gpt2_names / from_gpt2_names below rename and transpose between the two.
#pragma once

#include <map>
#include <string>

#include "minigraph/models/andrea/config.h"
#include "minigraph/models/layers/embedding.h"
#include "minigraph/module.h"
#include "minigraph/ops/linear_cross_entropy/linear_cross_entropy.h"

namespace mg::andrea {

// ids [B, T] -> x [B, T, D] with x[b, t] = tok_emb[ids[b, t]] + pos_emb[offset + t].
class InputLayer : public Module {
 public:
  explicit InputLayer(const AndreaConfig& config);
  // One fused op (token_position_embedding), the fast path.
  Tensor forward(const Tensor& ids, std::int64_t offset = 0) const;
  // The same values and gradients from the three graph nodes Embedding, PositionEmbedding and
  // Add: what the fused op is checked against, and the graph `minigraph graph` draws.
  Tensor forward_composed(const Tensor& ids, std::int64_t offset = 0) const;
  const Embedding& tok_emb() const { return tok_emb_; }
  const PositionEmbedding& pos_emb() const { return pos_emb_; }

 private:
  Embedding tok_emb_;
  PositionEmbedding pos_emb_;
};

// x [B, T, D] -> logits [B, T, V] through its own weight [D, V] (not tied to tok_emb).
class OutputHead : public Module {
 public:
  explicit OutputHead(const AndreaConfig& config);
  Tensor forward(const Tensor& x) const;
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

// Parameters named "input.tok_emb.weight", "input.pos_emb.weight", "head.weight".
class Andrea : public Module {
 public:
  explicit Andrea(const AndreaConfig& config = AndreaConfig::andrea_120m());
  Tensor forward(const Tensor& ids, std::int64_t offset = 0) const;  // -> logits [B, T, V]
  // The next-token loss of ids [B, T] against targets [B, T] (ids in [0, V) or ignore_index):
  // the input layer, then the head fused with the cross-entropy (linear_cross_entropy), which
  // never materialises the [B, T, V] logits. -> [] (mean or sum)
  Tensor loss(const Tensor& ids, const Tensor& targets,
              const LinearCrossEntropyOptions& options = {}) const;
  const AndreaConfig& config() const { return config_; }

 private:
  AndreaConfig config_;  // first: input and head are built from it

 public:
  InputLayer input;
  OutputHead head;
};

// ANDREA's state dict under GPT-2 names: input.tok_emb.weight -> transformer.wte.weight and
// input.pos_emb.weight -> transformer.wpe.weight (the same tensors, not copies), head.weight
// [D, V] -> lm_head.weight [V, D] (a transposed copy, on the CPU). Other names pass unchanged.
StateDict to_gpt2_names(const StateDict& dict);
// The reverse: transformer.wte.weight (or a hub file's bare wte.weight) -> input.tok_emb.weight,
// transformer.wpe.weight (or wpe.weight) -> input.pos_emb.weight, lm_head.weight [V, D] ->
// head.weight [D, V] (a transposed copy, on the CPU). Other names pass unchanged, so a strict
// load reports a full GPT-2 checkpoint's transformer blocks as unexpected. A checkpoint whose
// lm_head is tied to wte and not stored (the hub's gpt2 files) has no head.weight: a strict
// load reports it missing. Throws mg::Error when lm_head.weight is not 2-D.
StateDict from_gpt2_names(const StateDict& dict);
// A 2-D tensor's transpose as a new contiguous tensor on the CPU (any dtype): [R, C] -> [C, R].
Tensor transposed_copy(const Tensor& matrix, const std::string& name);
// The config as safetensors metadata: "model": "andrea", "vocab_size", "d_model", "context",
// "dtype" (what `demo --save` writes and `inspect` shows).
std::map<std::string, std::string> config_metadata(const AndreaConfig& config);

// The parameter table: token and position tables, their total, and the head on its own line.
std::string summary(const AndreaConfig& config);
// 6488832 -> "6,488,832"
std::string group_thousands(std::int64_t value);

}  // namespace mg::andrea
