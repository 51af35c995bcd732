// The attention ops' naive references and their test and error cases (attention_cases.cpp).
#pragma once

#include <vector>

#include "minigraph/op.h"

namespace mg {

// Plain loops in double over the full index: the scores of a row, its softmax, its output;
// the backward's formulas (attention.h) from the given out and logsumexp.
Tensor attention_reference(std::span<const Tensor> in, const std::any& attrs);
Tensor attention_backward_reference(std::span<const Tensor> in, const std::any& attrs);

std::vector<OpCase> attention_cases();
std::vector<OpCase> masked_attention_cases();
std::vector<OpCase> attention_backward_cases();
std::vector<OpCase> masked_attention_backward_cases();
std::vector<ErrorCase> attention_error_cases();
std::vector<ErrorCase> masked_attention_error_cases();
std::vector<ErrorCase> attention_backward_error_cases();
std::vector<ErrorCase> masked_attention_backward_error_cases();

}  // namespace mg
