// Gradient checking, as torch.autograd.gradcheck: central finite differences in f64 against
// the analytic backward, for every input that requires grad. The loss is L = sum(out * R)
// with a fixed random R, because all-ones upstream gradients hide transpose and index bugs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  // Inputs with more elements than this are sampled: one random element of every row (so
  // repeated and untouched rows are always checked), then random elements up to the budget.
  std::int64_t max_checks_per_input = 4096;
  std::uint64_t seed = 0x5eed;
  // f32 checks the f32 kernels: the analytic gradient is computed on f32 copies of the inputs
  // and compared with f64 finite differences (loosen atol/rtol to about 1e-4 / 1e-3 for it).
  DType analytic_dtype = DType::f64;
};

struct GradcheckInputReport {
  std::string name;
  std::int64_t checked = 0;       // elements compared
  double max_abs_error = 0;       // |analytic - numeric| at its worst
  double max_rel_error = 0;       // the same over max(|numeric|, tiny)
  std::int64_t worst_index = -1;  // flat index of the worst element
  double worst_analytic = 0, worst_numeric = 0;
  bool passed = true;
};

struct GradcheckReport {
  std::vector<GradcheckInputReport> inputs;
  bool passed() const;
  std::string str() const;  // one line per input
};

using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;

// `inputs` must be f64; those that require grad are checked. They are restored afterwards.
// An element passes when |analytic - numeric| <= atol + rtol * |numeric|.
GradcheckReport gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                          const std::vector<std::string>& names = {},
                          const GradcheckOptions& options = {});

}  // namespace mg
