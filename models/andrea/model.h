// The ANDREA input layer (token + position embedding) and its untied output head.
#pragma once

#include <string>

#include "minigraph/models/andrea/config.h"
#include "minigraph/models/layers/embedding.h"
#include "minigraph/module.h"

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
  const AndreaConfig& config() const { return config_; }

 private:
  AndreaConfig config_;  // first: input and head are built from it

 public:
  InputLayer input;
  OutputHead head;
};

// The parameter table: token and position tables, their total, and the head on its own line.
std::string summary(const AndreaConfig& config);
// 6488832 -> "6,488,832"
std::string group_thousands(std::int64_t value);

}  // namespace mg::andrea
