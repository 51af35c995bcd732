#include "snapshot.h"

#include <fmt/format.h>

#include "checkpoint.h"
#include "minigraph/error.h"
#include "minigraph/models/layers/init.h"

namespace mg::train {

Snapshot load_snapshot(const std::string& dir) {
  CheckpointFiles files = read_checkpoint(dir, /*with_optimizer=*/false, "similar");
  Snapshot snap;
  snap.tokenizer = std::make_shared<Tokenizer>(std::move(files.tokenizer));
  snap.token_table = files.model.tensor("input.tok_emb.weight").to(DType::f32);
  snap.step = files.id.step;
  MG_CHECK(snap.token_table.dim() == 2 && snap.token_table.size(0) == snap.tokenizer->vocab_size(),
           "similar", "checkpoint",
           fmt::format("a token table of the tokenizer's {} rows", snap.tokenizer->vocab_size()),
           "{} in '{}'", shape_str(snap.token_table.shape()), files.model.source());
  return snap;
}

Snapshot untrained_snapshot(const TrainConfig& config) {
  config.validate();
  Snapshot snap;
  snap.tokenizer = std::make_shared<Tokenizer>(train_tokenizer(config));
  andrea::AndreaConfig c = config.model_config(snap.tokenizer->vocab_size());
  // The table a new run starts from (andrea::InputLayer's tok_emb): the same seed, the same rows.
  snap.token_table = init_normal_scaled({c.vocab_size, c.d_model}, c.d_model, c.seed, c.dtype);
  return snap;
}

}  // namespace mg::train
