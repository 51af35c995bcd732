// A layer built from the custom op and a built-in layer: the ANDREA input layer followed by
// a scaled GELU, x = scale * gelu(tok_emb[ids] + pos_emb[t]).
#pragma once

#include "minigraph/models/andrea/model.h"
#include "minigraph/module.h"

namespace mg::example {

class GeluInputLayer : public Module {
 public:
  // Parameters "input.tok_emb.weight" and "input.pos_emb.weight", as in andrea::Andrea.
  GeluInputLayer(const andrea::AndreaConfig& config, double scale);
  Tensor forward(const Tensor& ids) const;  // ids [B, T] -> x [B, T, D]

 private:
  double scale_;

 public:
  andrea::InputLayer input;
};

}  // namespace mg::example
