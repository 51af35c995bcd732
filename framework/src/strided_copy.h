// The core's one copy between layouts: contiguous(), clone() of a view, and every write into a
// view go through it (tensor_writes.cpp), with the overlap test that writes share.
#pragma once

#include "minigraph/tensor.h"

namespace mg {

// Copies src's elements into dst's, index by index, through both layouts: the same shape,
// dtype and device; dst without internal overlap, and apart from src's memory (the callers
// check both). Axes are merged first, so the backend loops over as few as the layouts allow.
void copy_elements(const Tensor& dst, const Tensor& src);

// Whether the memory spans of a and b (first to last element reached) meet: conservative for
// views that interleave, exact for a contiguous one.
bool spans_meet(const Tensor& a, const Tensor& b);
// Whether a and b are the same elements in the same layout (one storage, offset and strides).
bool same_elements(const Tensor& a, const Tensor& b);

}  // namespace mg
