// ANDREA: the input layer (token + position embedding), N GPT-2 blocks, a final LayerNorm, and
// the output head.
//
// Parameter names (Andrea::state_dict(), and the names in a safetensors file it saves), with
// V vocabulary, D = d_model, T = context, F the MLP's hidden width, i = 0 .. N-1:
//   input.tok_emb.weight          [V, D]  token embedding table, row v = token v
//   input.pos_emb.weight          [T, D]  position embedding table, row t = position t
//   blocks.i.ln_1.weight, .bias   [D]
//   blocks.i.attn.c_attn.weight   [3D, D] (and .bias [3D]): q, k, v rows, torch.nn.Linear's
//   blocks.i.attn.c_proj.weight   [D, D]  (and .bias [D])
//   blocks.i.ln_2.weight, .bias   [D]
//   blocks.i.mlp.c_fc.weight      [F, D]  (and .bias [F])
//   blocks.i.mlp.c_proj.weight    [D, F]  (and .bias [D])
//   ln_f.weight, ln_f.bias        [D]     only when N > 0
//   head.weight                   [D, V]  untied output head: logits = x @ head.weight;
//                                         none when tied (logits = x @ tok_emb.weightᵀ)
// GPT-2 style checkpoints (Hugging Face's GPT2LMHeadModel.state_dict()) name them
//   transformer.wte.weight [V, D], transformer.wpe.weight [T, D], lm_head.weight [V, D]:
// lm_head is an nn.Linear, stored as [out, in] = [V, D], the TRANSPOSE of ANDREA's head.
// to_gpt2_names / from_gpt2_names below rename and transpose between the two.
#pragma once

#include <map>
#include <string>

#include "minigraph/models/andrea/config.h"
#include "minigraph/models/layers/dropout.h"
#include "minigraph/models/layers/embedding.h"
#include "minigraph/models/layers/linear.h"
#include "minigraph/models/layers/transformer.h"
#include "minigraph/module.h"
#include "minigraph/module_list.h"
#include "minigraph/module_summary.h"
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

// x [B, T, D] -> logits [B, T, V] through its own weight [D, V] (not tied to tok_emb). With a
// tied head (config.tied_head) it has no weight: Andrea uses the token table instead.
class OutputHead : public Module {
 public:
  explicit OutputHead(const AndreaConfig& config);
  Tensor forward(const Tensor& x) const;
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

// The whole model, its parameters named as above. Block i is initialised from seed 3 + 6i past
// config.seed; the Dropouts after it draw with keys past the last block's.
class Andrea : public Module {
 public:
  explicit Andrea(const AndreaConfig& config = AndreaConfig::andrea_120m());
  // ids [B, T] -> the final LayerNorm's output [B, T, D] (the input layer's with no blocks).
  Tensor hidden_states(const Tensor& ids, std::int64_t offset = 0) const;
  Tensor forward(const Tensor& ids, std::int64_t offset = 0) const;  // -> logits [B, T, V]
  // The next-token loss of ids [B, T] against targets [B, T] (ids in [0, V) or ignore_index):
  // hidden_states, then the head fused with the cross-entropy (linear_cross_entropy), which
  // never materialises the [B, T, V] logits. -> [] (mean or sum)
  Tensor loss(const Tensor& ids, const Tensor& targets,
              const LinearCrossEntropyOptions& options = {}) const;
  // The head's [D, V] matrix: head.weight, or the token table transposed (a view) when tied.
  Tensor head_weight() const;
  // The dropout masks' counter (the training step): every Dropout of the model draws with it.
  void set_dropout_counter(std::uint64_t counter) { mg::set_dropout_counter(*this, counter); }
  const AndreaConfig& config() const { return config_; }
  // ln_f, the final LayerNorm: null with no blocks. Owned on the heap, so it moves with the model.
  const LayerNorm* ln_f() const { return ln_f_; }

 private:
  AndreaConfig config_;  // first: the layers are built from it
  LayerNorm* ln_f_ = nullptr;

 public:
  InputLayer input;
  Dropout drop;  // of the embeddings' sum
  ModuleList<Block> blocks;
  OutputHead head;
};

// The options of block `index` of the model `config` describes: its sizes, dropout, dtype, and
// its seeds (config.seed + 3 + 6 × index onwards).
BlockOptions block_options(const AndreaConfig& config, std::int64_t index);

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

// The parameter table: token and position tables, their total, each block, the final
// LayerNorm, the head, and the whole model with the shares of the token table and embeddings.
std::string summary(const AndreaConfig& config);
// The model's layers in torchinfo's layout (module_summary): each one's output shape in a
// forward pass of ids [batch, length] (no gradients), its parameters, down to `depth`.
std::string layer_table(const Andrea& model, std::int64_t batch, std::int64_t length,
                        int depth = 2);
using mg::group_thousands;  // 6488832 -> "6,488,832" (module_summary.h)

}  // namespace mg::andrea
