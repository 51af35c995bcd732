#pragma once

#include "minigraph/tensor.h"

namespace mg {

// Row lookup: out[..., :] = table[ids[...], :]. An embedding is a lookup, not a function of
// the id's value: table [V, D], integer ids [...] -> [..., D]. Ids outside [0, V) throw.
Tensor embedding(const Tensor& table, const Tensor& ids);

}  // namespace mg
