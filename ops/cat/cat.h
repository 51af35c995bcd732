#pragma once

#include <cstdint>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

// cat: the tensors joined along axis `dim`, as torch.cat. One or more float tensors of one
// dtype, device and rank (>= 1), equal in every size but dim's; dim in [-rank, rank). Empty
// tensors take part like any other (a size of 0 along dim adds nothing). Each input's gradient
// is its slice of the upstream gradient.
//   tensors[i] [..., N_i, ...] -> out [..., sum N_i, ...]
struct CatAttrs {
  std::int64_t dim = 0;
};
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);

// stack: the tensors, all of one shape, joined along a new axis `dim` in [-(rank + 1), rank],
// as torch.stack: cat of each one unsqueezed at dim.
//   tensors[i] [S...] -> out [S[:dim], count, S[dim:]]
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);

}  // namespace mg
