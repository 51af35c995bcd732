// Inputs for op cases: what the harness, `minigraph gradcheck` and benchmarks feed an op; the
// error cases an op's inputs imply; and the harness's poisoned outputs (PoisonOutputsScope).
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "minigraph/backend.h"
#include "minigraph/op.h"

namespace mg {

std::vector<ErrorCase> all_error_cases(const OpDef& op) {
  const std::vector<OpCase> cases = op.cases ? op.cases() : std::vector<OpCase>{};
  std::vector<ErrorCase> errors;
  if (cases.empty()) return op.error_cases ? op.error_cases() : errors;
  const OpCase& first = cases.front();
  auto add_case = [&](std::string kind, std::size_t i, InputSpec spec, const std::string& what) {
    std::vector<InputSpec> inputs = first.inputs;
    inputs[i] = std::move(spec);
    const std::string name = op.input_name(i);
    std::string label = name;  // tensors[1] -> tensors_1: a test name's characters
    std::replace_if(
        label.begin(), label.end(), [](char c) { return c == '[' || c == ' '; }, '_');
    std::erase(label, ']');
    errors.push_back({fmt::format("dtype_{}_{}", kind, label), std::move(inputs), first.attrs,
                      fmt::format("argument '{}': expected {}", name, what)});
  };
  bool seen_real = false;
  for (std::size_t i = 0; i < first.inputs.size(); ++i) {
    const InputSpec& spec = first.inputs[i];
    if (spec.dtype) continue;
    if (spec.kind == InputSpec::Kind::ids) {
      add_case("float", i, InputSpec::real(spec.shape).no_grad(), "integer ids");
      continue;
    }
    add_case("integer", i, InputSpec::ids(spec.shape, 2), "a floating-point tensor");
    if (seen_real && op.dtypes.size() > 1) {
      // The harness makes the other real inputs f32 in an error case; this one another dtype.
      InputSpec other = spec;
      other.with_dtype(op.dtypes[0] == DType::f32 ? op.dtypes[1] : op.dtypes[0]);
      add_case("mixed", i, std::move(other), "dtype");
    }
    seen_real = true;
  }
  if (op.error_cases) {
    for (ErrorCase& c : op.error_cases()) errors.push_back(std::move(c));
  }
  return errors;
}

Tensor make_case_input(const InputSpec& spec, DType real_dtype, std::uint64_t seed, Device device) {
  const bool ids = spec.kind == InputSpec::Kind::ids;
  std::vector<double> values = spec.values;
  if (values.empty() && ids) {
    MG_CHECK(spec.id_limit > 0, "make_case_input", "id_limit", "a positive id limit", "{}",
             spec.id_limit);
    std::mt19937_64 rng(seed);
    values.resize(static_cast<std::size_t>(shape_numel(spec.shape)));
    for (auto& v : values)
      v = static_cast<double>(rng() % static_cast<std::uint64_t>(spec.id_limit));
  } else if (values.empty()) {
    values = Tensor::normal(spec.shape, 0, 1, seed, DType::f64).to_vector<double>();
  }
  DType dtype = spec.dtype.value_or(ids ? DType::i64 : real_dtype);
  Tensor t = Tensor::from_vector(values, spec.shape).to(dtype).to(device);
  if (!ids && spec.requires_grad && is_floating(dtype)) t.set_requires_grad(true);
  return t;
}

std::vector<Tensor> make_case_inputs(const std::vector<InputSpec>& specs, DType real_dtype,
                                     Device device) {
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < specs.size(); ++i)
    inputs.push_back(make_case_input(specs[i], real_dtype, 1000 + i, device));
  return inputs;
}

namespace {
thread_local bool g_poison_outputs = false;
}  // namespace

PoisonOutputsScope::PoisonOutputsScope() : previous_(g_poison_outputs) { g_poison_outputs = true; }
PoisonOutputsScope::~PoisonOutputsScope() { g_poison_outputs = previous_; }
bool PoisonOutputsScope::active() { return g_poison_outputs; }

void fill_with_poison(const Tensor& t) {
  const std::size_t bytes = t.nbytes();
  if (bytes == 0) return;
  // In place on the CPU; elsewhere through a host copy.
  std::vector<unsigned char> host;
  unsigned char* dst = static_cast<unsigned char*>(t.raw_data());
  if (!t.device().is_cpu()) {
    host.resize(bytes);
    dst = host.data();
  }
  if (t.dtype() == DType::f32) {
    std::fill_n(reinterpret_cast<float*>(dst), t.numel(), std::numeric_limits<float>::quiet_NaN());
  } else if (t.dtype() == DType::f64) {
    std::fill_n(reinterpret_cast<double*>(dst), t.numel(),
                std::numeric_limits<double>::quiet_NaN());
  } else {
    std::memset(dst, 0xA5, bytes);
  }
  if (!t.device().is_cpu()) backend_for(t.device()).copy_from_host(t.raw_data(), dst, bytes);
}

}  // namespace mg
