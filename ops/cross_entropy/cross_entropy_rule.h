// Shared by cross_entropy and cross_entropy_backward (private to the ops library): the checks
// of their (logits, targets) inputs and the text of their attributes.
#pragma once

#include <any>
#include <string>

#include "cross_entropy/cross_entropy.h"
#include "minigraph/op.h"

namespace mg {

// Checks logits (floating, rank >= 1) and targets (integer, logits' shape without its last
// axis), throwing mg::Error naming `op`; returns the targets' shape.
Shape cross_entropy_check_inputs(const OpDef& op, const Tensor& logits, const Tensor& targets);

// "reduction=mean, ignore_index=-100" for CrossEntropyOptions attributes.
std::string describe_cross_entropy_options(const std::any& attrs);

const char* reduction_name(Reduction reduction);

}  // namespace mg
