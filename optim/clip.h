// Gradient clipping by the global L2 norm, as torch.nn.utils.clip_grad_norm_.
#pragma once

#include <span>

#include "minigraph/optim/optimizer.h"
#include "minigraph/tensor.h"

namespace mg::optim {

// total = sqrt(sum over the parameters' gradients of their squared L2 norms), accumulated in
// double (op squared_norm per gradient); coef = max_norm / (total + 1e-6); when coef < 1
// every gradient is multiplied by coef in place (op scale through apply_op_into, so the
// gradients keep their memory). Returns total. Parameters without a gradient are skipped;
// none at all gives 0. A non-finite total (an inf or NaN gradient) is returned and the
// gradients are left as they are (PyTorch would multiply them by NaN): check it and skip the
// step. Throws mg::Error for a max_norm that is negative or not finite.
double clip_grad_norm(std::span<const Tensor> params, double max_norm);
// The same over an optimizer's parameters.
double clip_grad_norm(const Optimizer& optimizer, double max_norm);

}  // namespace mg::optim
