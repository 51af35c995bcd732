#include "andrea/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "layers/init.h"
#include "minigraph/autograd.h"
#include "minigraph/error.h"
#include "minigraph/module_summary.h"
#include "minigraph/ops/binary/binary.h"
#include "minigraph/ops/matmul/matmul.h"
#include "minigraph/ops/token_position_embedding/token_position_embedding.h"

namespace mg::andrea {

void AndreaConfig::validate() const {
  MG_CHECK(vocab_size > 0, "AndreaConfig", "vocab_size", "a positive size", "{}", vocab_size);
  MG_CHECK(d_model > 0, "AndreaConfig", "d_model", "a positive size", "{}", d_model);
  MG_CHECK(context > 0, "AndreaConfig", "context", "a positive size", "{}", context);
  MG_CHECK(is_floating(dtype), "AndreaConfig", "dtype", "f32 or f64", "{}", dtype_name(dtype));
  MG_CHECK(blocks >= 0 && blocks <= kMaxBlocks, "AndreaConfig", "blocks",
           fmt::format("a number of blocks in [0, {}]", kMaxBlocks), "{}", blocks);
  MG_CHECK(std::isfinite(dropout) && dropout >= 0 && dropout < 1, "AndreaConfig", "dropout",
           "a probability in [0, 1)", "{}", dropout);
  if (blocks > 0) block_options(*this, 0).validate();
  // The parameter counts below (and the tables' shapes and bytes) must not wrap.
  const auto element = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t tokens =
      checked_mul(vocab_size, d_model, "AndreaConfig", "vocab_size × d_model");
  checked_mul(tokens, element, "AndreaConfig", "vocab_size × d_model × element size");
  const std::int64_t positions = checked_mul(context, d_model, "AndreaConfig", "context × d_model");
  checked_mul(positions, element, "AndreaConfig", "context × d_model × element size");
  checked_add(tokens, positions, "AndreaConfig", "embedding parameters");
  if (blocks > 0) {
    const std::int64_t block = block_parameters();
    checked_mul(checked_mul(block, blocks, "AndreaConfig", "block parameters × blocks"), element,
                "AndreaConfig", "block parameters × blocks × element size");
  }
}

std::int64_t AndreaConfig::block_parameters() const {
  const std::int64_t d = d_model, f = block_options(*this, 0).hidden();
  const auto linear = [](std::int64_t in, std::int64_t out) {
    return checked_add(checked_mul(in, out, "AndreaConfig", "a Linear's weight"), out,
                       "AndreaConfig", "a Linear's parameters");
  };
  // ln_1 and ln_2, c_attn, attn.c_proj, c_fc, mlp.c_proj
  std::int64_t sum = 4 * d;
  for (std::int64_t p : {linear(d, 3 * d), linear(d, d), linear(d, f), linear(f, d)}) {
    sum = checked_add(sum, p, "AndreaConfig", "block parameters");
  }
  return sum;
}

std::int64_t AndreaConfig::parameters() const {
  const std::int64_t final_norm = blocks > 0 ? 2 * d_model : 0;
  return embedding_parameters() + blocks * block_parameters() + final_norm + head_parameters();
}

BlockOptions block_options(const AndreaConfig& config, std::int64_t index) {
  return {
      .width = config.d_model,
      .heads = config.heads,
      .mlp_ratio = config.mlp_ratio,
      .context = config.context,
      .depth = std::max<std::int64_t>(config.blocks, 1),
      .seed = config.seed + 3 + BlockOptions::kSeedsPerBlock * static_cast<std::uint64_t>(index),
      .dropout = config.dropout,
      .dtype = config.dtype};
}

namespace {
const AndreaConfig& validated(const AndreaConfig& config) {
  config.validate();
  return config;
}
}  // namespace

InputLayer::InputLayer(const AndreaConfig& config)
    : tok_emb_(validated(config).vocab_size, config.d_model, config.seed, config.dtype),
      pos_emb_(config.context, config.d_model, config.seed + 1, config.dtype, config.positions) {
  register_module("tok_emb", tok_emb_);
  register_module("pos_emb", pos_emb_);
}

namespace {
void check_ids(const Tensor& ids) {
  MG_CHECK(ids.defined() && ids.dim() == 2, "InputLayer", "ids", "ids of shape [B, T]", "{}",
           ids.defined() ? shape_str(ids.shape()) : "an undefined tensor");
}
}  // namespace

Tensor InputLayer::forward(const Tensor& ids, std::int64_t offset) const {
  check_ids(ids);
  // One fused pass, tok_emb[ids] + pos_emb[offset..offset+T), instead of a gather, a copy
  // of the position rows and a broadcasting add (three [B, T, D]-sized passes).
  return record_output(token_position_embedding(tok_emb_.weight(), pos_emb_.weight(), ids, offset));
}

Tensor InputLayer::forward_composed(const Tensor& ids, std::int64_t offset) const {
  check_ids(ids);
  // [B, T, D] + [T, D]: the add broadcasts positions over the batch.
  return record_output(add(tok_emb_.forward(ids), pos_emb_.forward(ids.size(1), offset)));
}

OutputHead::OutputHead(const AndreaConfig& config) {
  if (validated(config).tied_head) return;
  weight_ = init_normal_scaled({config.d_model, config.vocab_size}, config.d_model, config.seed + 2,
                               config.dtype);
  register_parameter("weight", weight_);
}

Tensor OutputHead::forward(const Tensor& x) const {
  MG_CHECK(weight_.defined(), "OutputHead.forward", "weight", "an untied head's weight",
           "a tied head (Andrea::forward multiplies by the token table)");
  // Checked here so the message blames x, not the weight that matmul sees second.
  MG_CHECK(x.defined() && x.dtype() == weight_.dtype(), "OutputHead.forward", "x",
           fmt::format("dtype {} (the head's weight)", dtype_name(weight_.dtype())), "{}",
           x.defined() ? dtype_name(x.dtype()) : "an undefined tensor");
  return record_output(matmul(x, weight_));
}

Andrea::Andrea(const AndreaConfig& config)
    : config_(validated(config)),
      input(config),
      drop(config.dropout, block_options(config, config.blocks).seed),
      head(config) {
  register_module("input", input);
  register_module("drop", drop);
  for (std::int64_t i = 0; i < config.blocks; ++i)
    blocks.push_back(Block(block_options(config, i)));
  register_module("blocks", blocks);
  if (config.blocks > 0) {
    ln_f_ = &static_cast<LayerNorm&>(
        register_module("ln_f", std::make_unique<LayerNorm>(config.d_model, 1e-5, config.dtype)));
  }
  register_module("head", head);
}

Tensor Andrea::hidden_states(const Tensor& ids, std::int64_t offset) const {
  Tensor x = drop.forward(input.forward(ids, offset));
  for (const Block& block : blocks) x = block.forward(x);
  return ln_f_ != nullptr ? ln_f_->forward(x) : x;
}

Tensor Andrea::head_weight() const {
  return config_.tied_head ? input.tok_emb().weight().transpose(0, 1) : head.weight();
}

Tensor Andrea::forward(const Tensor& ids, std::int64_t offset) const {
  const Tensor x = hidden_states(ids, offset);
  // A tied head multiplies by the token table as stored, [V, D], with BLAS's transpose flag.
  return record_output(config_.tied_head
                           ? matmul(x, input.tok_emb().weight(), {.transpose_b = true})
                           : head.forward(x));
}

Tensor Andrea::loss(const Tensor& ids, const Tensor& targets,
                    const LinearCrossEntropyOptions& options) const {
  return linear_cross_entropy(hidden_states(ids), head_weight(), targets, options);
}

Tensor transposed_copy(const Tensor& matrix, const std::string& name) {
  MG_CHECK(matrix.defined() && matrix.dim() == 2, "andrea::transposed_copy", name, "a 2-D tensor",
           "{}", matrix.defined() ? shape_str(matrix.shape()) : "an undefined tensor");
  const Tensor in = matrix.to(Device::cpu());  // itself when already on the CPU
  const std::int64_t rows = in.size(0), cols = in.size(1);
  Tensor out = Tensor::empty({cols, rows}, in.dtype());
  const std::size_t elem = dtype_size(in.dtype());
  const auto* src = static_cast<const unsigned char*>(in.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  // In square tiles, so that both the rows read and the rows written stay in cache.
  constexpr std::int64_t kTile = 32;
  for (std::int64_t r0 = 0; r0 < rows; r0 += kTile) {
    for (std::int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
          std::memcpy(dst + static_cast<std::size_t>(c * rows + r) * elem,
                      src + static_cast<std::size_t>(r * cols + c) * elem, elem);
        }
      }
    }
  }
  return out;
}

namespace {

// ANDREA name, GPT-2 name (as GPT2LMHeadModel.state_dict() spells it), transposed between them.
struct NamePair {
  const char* andrea;
  const char* gpt2;
  bool transposed;
};
constexpr NamePair kGpt2Names[] = {
    {"input.tok_emb.weight", "transformer.wte.weight", false},
    {"input.pos_emb.weight", "transformer.wpe.weight", false},
    {"head.weight", "lm_head.weight", true},
};

StateDict rename(const StateDict& dict, bool to_gpt2) {
  StateDict out;
  out.reserve(dict.size());
  for (const auto& [name, tensor] : dict) {
    // The hub's GPT-2 files drop the "transformer." prefix of GPT2Model's own weights.
    const std::string full =
        !to_gpt2 && (name == "wte.weight" || name == "wpe.weight") ? "transformer." + name : name;
    const NamePair* pair = nullptr;
    for (const NamePair& p : kGpt2Names) {
      if (full == (to_gpt2 ? p.andrea : p.gpt2)) pair = &p;
    }
    if (pair == nullptr) {
      out.emplace_back(name, tensor);
    } else {
      const char* target = to_gpt2 ? pair->gpt2 : pair->andrea;
      out.emplace_back(target, pair->transposed ? transposed_copy(tensor, name) : tensor);
    }
  }
  return out;
}

}  // namespace

StateDict to_gpt2_names(const StateDict& dict) { return rename(dict, true); }

StateDict from_gpt2_names(const StateDict& dict) { return rename(dict, false); }

std::map<std::string, std::string> config_metadata(const AndreaConfig& config) {
  return {{"model", "andrea"},
          {"vocab_size", std::to_string(config.vocab_size)},
          {"d_model", std::to_string(config.d_model)},
          {"context", std::to_string(config.context)},
          {"dtype", std::string(dtype_name(config.dtype))},
          {"positions", std::string(position_kind_name(config.positions))},
          {"blocks", std::to_string(config.blocks)},
          {"heads", std::to_string(config.heads)},
          {"mlp_ratio", fmt::format("{}", config.mlp_ratio)},
          {"tied_head", config.tied_head ? "true" : "false"}};
}

std::string layer_table(const Andrea& model, std::int64_t batch, std::int64_t length, int depth) {
  MG_CHECK(batch > 0, "andrea::layer_table", "batch", "a positive size", "{}", batch);
  MG_CHECK(length > 0 && length <= model.config().context, "andrea::layer_table", "length",
           fmt::format("a length in [1, context = {}]", model.config().context), "{}", length);
  NoGradGuard no_grad;
  ModuleShapes shapes;
  model.forward(
      Tensor::zeros({batch, length}, DType::i64, model.input.tok_emb().weight().device()));
  return module_summary(model, shapes, depth);
}

std::string summary(const AndreaConfig& config) {
  config.validate();
  auto g = group_thousands;
  auto dims = [&](std::int64_t a, std::int64_t b) { return fmt::format("{} × {}", g(a), g(b)); };
  auto row = [&](std::string_view what, const std::string& size, std::int64_t count) {
    return fmt::format("{:<28} {:>16} {} {:>11}\n", what, size, size.empty() ? ' ' : '=', g(count));
  };
  std::string s = row("token embedding table", dims(config.vocab_size, config.d_model),
                      config.token_embedding_parameters());
  if (config.positions == PositionKind::learned) {
    s += row("position embedding table", dims(config.context, config.d_model),
             config.position_embedding_parameters());
  } else {
    s += fmt::format("{:<28} {:>16}   {:>11}\n", "sinusoidal positions (fixed)",
                     dims(config.context, config.d_model), 0);
  }
  s += row("total embedding parameters", "", config.embedding_parameters());
  if (config.blocks > 0) {
    s += row(fmt::format("blocks (H {}, F {})", config.heads, block_options(config, 0).hidden()),
             dims(config.blocks, config.block_parameters()),
             config.blocks * config.block_parameters());
    s += row("final LayerNorm", dims(2, config.d_model), 2 * config.d_model);
  }
  if (config.tied_head) {
    s += fmt::format("{:<28} {:>16}   {:>11}\n", "output head tied to tokens", "", 0);
  } else {
    s += row("untied output head", dims(config.d_model, config.vocab_size),
             config.head_parameters());
  }
  const double total = static_cast<double>(config.parameters());
  s += row("total parameters", "", config.parameters());
  s += fmt::format("token table {:.2f} %, embeddings {:.2f} % of the parameters\n",
                   100.0 * static_cast<double>(config.token_embedding_parameters()) / total,
                   100.0 * static_cast<double>(config.embedding_parameters()) / total);
  return s;
}

}  // namespace mg::andrea
