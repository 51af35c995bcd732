#include "minigraph/testing/op_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "minigraph/backend.h"
#include "minigraph/gradcheck.h"

namespace mg::testing {

namespace {

struct Tolerance {
  double atol, rtol;
  bool nan_matches_nan = false;  // an edge_values case's
};
// How close each dtype must come, in one table: a new dtype (bf16) is one more row.
//   forward: a kernel against the naive reference computed in f64;
//   vs_cpu:  another backend against the CPU, in this dtype;
//   vs_f64:  gradients in this dtype against the f64 ones (same inputs and upstream).
struct DTypeTolerance {
  DType dtype;
  Tolerance forward, vs_cpu, vs_f64;
};
constexpr DTypeTolerance kTolerances[] = {
    {DType::f32, {1e-5, 1e-4}, {1e-4, 1e-4}, {1e-4, 1e-4}},
    {DType::f64, {1e-12, 1e-10}, {1e-10, 1e-9}, {0, 0}},
};
const DTypeTolerance& tolerance(DType dtype) {
  for (const DTypeTolerance& t : kTolerances) {
    if (t.dtype == dtype) return t;
  }
  throw Error("op harness", "dtype", "a dtype with a row in kTolerances (op_harness.cpp)",
              std::string(dtype_name(dtype)));
}
// The tolerance, where a NaN of an edge_values case's outputs matches a NaN.
Tolerance for_case(Tolerance tol, const OpCase& c) {
  tol.nan_matches_nan = c.edge_values;
  return tol;
}

std::string compare(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  return compare_tensors(actual, expected, tol.atol, tol.rtol, tol.nan_matches_nan);
}

// Whether any input of the case takes a gradient (else there is nothing to check backward).
bool has_grad_input(const OpCase& c) {
  return std::any_of(c.inputs.begin(), c.inputs.end(), [](const InputSpec& s) {
    return s.kind == InputSpec::Kind::real && s.requires_grad;
  });
}

std::string where(const OpDef& op, const OpCase& c, Device device, DType dtype) {
  return fmt::format("{}/{} on {} {}", op.name, c.name, device.str(), dtype_name(dtype));
}

// The naive reference on f64 CPU copies of the inputs: it allocates its output itself, with
// the shape it computes on its own (never the shape rule's).
Tensor reference_output(const OpDef& op, const OpCase& c) {
  auto inputs = make_case_inputs(c.inputs, DType::f64, Device::cpu());
  Tensor out = op.reference(inputs, c.attrs);
  MG_CHECK(out.defined() && out.device().is_cpu(), op.name, "reference",
           "a defined CPU tensor from the naive reference", "{}",
           out.defined() ? out.device().str() : std::string("an undefined tensor"));
  // Its dtype is the rule's for the same inputs.
  const DType rule_dtype = op.infer(op, inputs, c.attrs).dtype;
  MG_CHECK(out.dtype() == rule_dtype, op.name, "reference",
           fmt::format("dtype {} (the shape rule's, for f64 inputs)", dtype_name(rule_dtype)), "{}",
           dtype_name(out.dtype()));
  return out;
}

// The devices an op is tested on: the CPU, and each other device this build has a backend for,
// that is present here, and that the op has a kernel for. Tests that cannot run are not
// registered at all (a CPU-only build lists no CUDA test; tests/test_cuda.cpp says once when
// a CUDA build finds no GPU).
std::vector<Device> devices_to_test(const OpDef& op) {
  std::vector<Device> devices;
  for (Device device : {Device::cpu(), Device::cuda(0)}) {
    if (op.kernel(device.kind) != nullptr && device_available(device)) devices.push_back(device);
  }
  return devices;
}

void check_forward(const OpDef& op, const OpCase& c, Device device, DType dtype) {
  auto inputs = make_case_inputs(c.inputs, dtype, device);
  OutputSpec spec = op.infer(op, inputs, c.attrs);
  Tensor expected = reference_output(op, c);
  ASSERT_EQ(spec.shape, expected.shape())
      << where(op, c, device, dtype) << ": the shape rule (infer) gives " << shape_str(spec.shape)
      << ", the naive reference computes " << shape_str(expected.shape());

  // The kernel writes into storage poisoned with NaN (an element it skips cannot pass), with
  // guard bytes after the output.
  constexpr std::size_t kGuard = 64;
  const std::size_t bytes =
      static_cast<std::size_t>(shape_numel(spec.shape)) * dtype_size(spec.dtype);
  auto storage = std::make_shared<Storage>(device, bytes + kGuard);
  std::vector<unsigned char> guard(kGuard, 0xA5), after(kGuard);
  auto& backend = backend_for(device);
  backend.copy_from_host(static_cast<char*>(storage->data()) + bytes, guard.data(), kGuard);
  Tensor out = Tensor::from_storage(storage, spec.shape, spec.dtype);
  // NaN, or a finite sentinel where the function's own NaN must match the reference's.
  if (c.edge_values && is_floating(spec.dtype)) {  // a mask or ids hold no NaN of their own
    out.fill_(1.2345e30);
  } else {
    fill_with_poison(out);
  }
  op.kernel(device.kind)(KernelContext{op, inputs, c.attrs, out});
  backend.copy_to_host(after.data(), static_cast<char*>(storage->data()) + bytes, kGuard);
  EXPECT_EQ(guard, after) << op.name << " wrote past the end of its output";

  std::string diff = compare(out, expected, for_case(tolerance(dtype).forward, c));
  EXPECT_EQ(diff, "") << where(op, c, device, dtype) << " forward vs the naive reference";
  // The dispatcher's path (allocation, rule, recording) gives the same values.
  PoisonOutputsScope poison;
  Tensor dispatched = apply_op(op, inputs, c.attrs);
  EXPECT_EQ(compare(dispatched, out, for_case({0, 0}, c)), "")
      << "apply_op disagrees with the kernel";
}

// The gradients of the inputs that take one, for the loss sum(out * upstream).
std::vector<Tensor> analytic_gradients(const OpDef& op, const OpCase& c,
                                       const std::vector<Tensor>& inputs, const Tensor& upstream) {
  Tensor out = apply_op(op, inputs, c.attrs);
  out.backward(upstream);
  std::vector<Tensor> grads;
  for (const Tensor& t : inputs)
    if (t.requires_grad()) grads.push_back(t.grad());
  return grads;
}

void check_gradients(const OpDef& op, const OpCase& c, Device device) {
  PoisonOutputsScope poison;  // every output the forward and backward ops write
  auto inputs = make_case_inputs(c.inputs, DType::f64, device);
  std::vector<std::string> names = op.input_names(inputs.size());
  GradcheckOptions options;
  options.atol = 1e-6;
  options.max_checks_per_input = c.max_checks;
  auto report = gradcheck([&](const std::vector<Tensor>& in) { return apply_op(op, in, c.attrs); },
                          inputs, names, options);
  EXPECT_TRUE(report.passed()) << where(op, c, device, DType::f64)
                               << ": analytic gradient differs from finite differences\n"
                               << report.str();
  // A NaN in the analytic gradient (poison an op left unwritten) fails every comparison, so
  // gradcheck's "error > tolerance" never sees it: look for one here.
  Tensor upstream = Tensor::normal(op.infer(op, inputs, c.attrs).shape, 0, 1, 77, DType::f64);
  auto grads = analytic_gradients(op, c, inputs, upstream.to(device));
  for (const Tensor& g : grads) {
    if (!g.defined()) continue;  // no gradient flows: zero
    const auto values = g.to_f64_vector();
    const auto bad =
        std::find_if(values.begin(), values.end(), [](double v) { return std::isnan(v); });
    EXPECT_EQ(bad, values.end()) << where(op, c, device, DType::f64) << ": gradient element #"
                                 << (bad - values.begin()) << " is NaN (left unwritten?)";
  }
}

// The f32 gradients on the CPU against the f64 ones: the same input values (f32 values widen
// exactly to f64), the same upstream gradient, so the two differ by f32 arithmetic alone.
// Finite differences in f32 mislead; this checks the f32 kernels the backward rule runs.
void check_f32_gradients(const OpDef& op, const OpCase& c) {
  PoisonOutputsScope poison;
  auto inputs32 = make_case_inputs(c.inputs, DType::f32, Device::cpu());
  std::vector<Tensor> inputs64;
  for (const Tensor& t : inputs32) {
    if (t.dtype() != DType::f32) {
      inputs64.push_back(t);  // ids
      continue;
    }
    Tensor wide = t.detach().to(DType::f64);
    if (t.requires_grad()) wide.set_requires_grad(true);
    inputs64.push_back(wide);
  }
  const Shape out_shape = op.infer(op, inputs32, c.attrs).shape;
  Tensor upstream32 = Tensor::normal(out_shape, 0, 1, 77, DType::f32);
  auto grads32 = analytic_gradients(op, c, inputs32, upstream32);
  auto grads64 = analytic_gradients(op, c, inputs64, upstream32.to(DType::f64));
  ASSERT_EQ(grads32.size(), grads64.size());
  std::size_t g = 0;
  for (std::size_t i = 0; i < inputs32.size(); ++i) {
    if (!inputs32[i].requires_grad()) continue;
    const bool flows = grads32[g].defined();
    ASSERT_EQ(flows, grads64[g].defined())
        << where(op, c, Device::cpu(), DType::f32) << ": a gradient for input '" << op.input_name(i)
        << "' in one dtype only";
    if (!flows) {
      ++g;
      continue;
    }
    EXPECT_EQ(grads32[g].dtype(), DType::f32) << "input '" << op.input_name(i) << "'";
    EXPECT_EQ(compare(grads32[g], grads64[g], tolerance(DType::f32).vs_f64), "")
        << where(op, c, Device::cpu(), DType::f32) << ": gradient of input '" << op.input_name(i)
        << "' vs the f64 gradient";
    ++g;
  }
}

// Forward and backward on `device` against the CPU, same inputs, same upstream gradient.
void check_against_cpu(const OpDef& op, const OpCase& c, Device device, DType dtype) {
  PoisonOutputsScope poison;
  auto run = [&](Device d) {
    auto inputs = make_case_inputs(c.inputs, dtype, d);
    Tensor out = apply_op(op, inputs, c.attrs);
    std::vector<Tensor> results{out.to(Device::cpu())};
    if (out.requires_grad() && op.backward) {
      out.backward(Tensor::normal(out.shape(), 0, 1, 77, dtype).to(d));
      for (auto& t : inputs)
        if (t.requires_grad()) results.push_back(t.grad().to(Device::cpu()));
    }
    return results;
  };
  auto on_device = run(device), on_cpu = run(Device::cpu());
  ASSERT_EQ(on_device.size(), on_cpu.size());
  const Tolerance tol = for_case(tolerance(dtype).vs_cpu, c);
  for (std::size_t i = 0; i < on_cpu.size(); ++i) {
    EXPECT_EQ(compare(on_device[i], on_cpu[i], tol), "")
        << op.name << "/" << c.name << (i == 0 ? " forward" : " gradient of input ")
        << (i == 0 ? "" : std::to_string(i)) << " on " << device.str() << " " << dtype_name(dtype)
        << " vs cpu";
  }
}

// Layout variants: every case again with its inputs in non-contiguous layouts, as ggml's
// test-backend-ops runs permuted inputs. apply_op must give the same values for any layout
// (it copies what a kernel does not take), and a kernel that reads strides (OpDef::takes_layout)
// must read them right.
//   transposed: the last two axes stored swapped (same values, strides swapped);
//   sliced:     the last axis stored 2 wider, read from index 1 (an offset, and a gap between
//               rows: NaN in a float input, which a kernel reading past a row picks up; 0 in ids,
//               so a misread id stays in range instead of reading out of bounds);
//   expanded:   axis 0 repeated from the input's first slice (stride 0). This changes the
//               values (real inputs only, so ids stay in range); the reference is a contiguous
//               copy of the same values, as for the other variants.
enum class Variant { transposed, sliced, expanded };
constexpr Variant kVariants[] = {Variant::transposed, Variant::sliced, Variant::expanded};

std::string variant_name(Variant v) {
  if (v == Variant::transposed) return "transposed";
  return v == Variant::sliced ? "sliced" : "expanded";
}

// Whether the variant puts an input of this spec in another layout (else the input stays as it
// is). Nothing changes the layout of a scalar or of an empty tensor, and a transposition only
// changes one when both last sizes exceed 1 (a size-1 axis's stride is never stepped).
bool changes_layout(Variant v, const InputSpec& spec) {
  const Shape& s = spec.shape;
  if (s.empty() || shape_numel(s) == 0) return false;
  switch (v) {
    case Variant::transposed:
      return s.size() >= 2 && s[s.size() - 1] > 1 && s[s.size() - 2] > 1;
    case Variant::sliced:
      return true;
    case Variant::expanded:
      return spec.kind == InputSpec::Kind::real && s[0] > 1;
  }
  return false;
}

bool changes_any_layout(Variant v, const OpCase& c) {
  return std::any_of(c.inputs.begin(), c.inputs.end(),
                     [v](const InputSpec& s) { return changes_layout(v, s); });
}

// A contiguous copy of t's values as a fresh leaf that requires grad as t does: inputs of their
// own for each run, so one run's backward does not add to the other's gradients.
Tensor fresh_leaf(const Tensor& t) {
  Tensor copy = t.clone();
  if (t.requires_grad()) copy.set_requires_grad(true);
  return copy;
}

// Input `src` (made for `spec`) in the variant's layout, over storage of its own. Made with
// grad mode off, so the view has no grad_fn: a leaf that set_requires_grad accepts.
Tensor variant_input(Variant v, const InputSpec& spec, const Tensor& src) {
  if (!changes_layout(v, spec)) return fresh_leaf(src);
  Tensor view;
  {
    NoGradGuard no_grad;
    Shape shape = src.shape();
    const std::size_t last = shape.size() - 1;
    if (v == Variant::transposed) {
      std::swap(shape[last], shape[last - 1]);
      view = Tensor::empty(shape, src.dtype(), src.device()).transpose(-1, -2);
      view.copy_(src);
    } else if (v == Variant::sliced) {
      shape[last] += 2;
      Tensor storage = Tensor::empty(shape, src.dtype(), src.device());
      if (is_floating(src.dtype())) {
        fill_with_poison(storage);
      } else {
        storage.zero_();
      }
      view = storage.narrow(-1, 1, src.size(-1));
      view.copy_(src);
    } else {
      shape[0] = 1;
      Tensor first = Tensor::empty(shape, src.dtype(), src.device());
      first.copy_(src.narrow(0, 0, 1));
      view = first.expand(src.shape());
    }
  }
  if (src.requires_grad()) view.set_requires_grad(true);
  return view;
}

struct Results {
  Tensor out;
  std::vector<Tensor> grads;  // one per input: undefined where none flows (or no backward)
};

// apply_op on `inputs`, then the gradients of the inputs for the loss sum(out * upstream), with
// the same upstream for every layout.
Results forward_and_gradients(const OpDef& op, const OpCase& c, const std::vector<Tensor>& inputs) {
  Results r{apply_op(op, inputs, c.attrs), std::vector<Tensor>(inputs.size())};
  if (!op.backward || !r.out.requires_grad()) return r;
  r.out.backward(Tensor::normal(r.out.shape(), 0, 1, 77, r.out.dtype()).to(r.out.device()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].requires_grad()) r.grads[i] = inputs[i].grad();
  }
  return r;
}

// The kernel called directly, as check_forward calls it, on the inputs in the layouts the op
// takes (OpDef::takes_layout), the others contiguous as apply_op would pass them: the check of
// a kernel that reads strides without the dispatcher's copy in between. Undefined when the op
// takes none of these layouts (apply_op then ran the kernel on contiguous copies alone).
Tensor kernel_on_layouts(const OpDef& op, const OpCase& c, Device device,
                         const std::vector<Tensor>& inputs) {
  if (op.takes_layout == nullptr) return Tensor();
  NoGradGuard no_grad;  // the copies below feed no backward
  std::vector<Tensor> given;
  bool takes_any = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const bool taken = !t.is_contiguous() && op.takes_layout(i, t);
    takes_any = takes_any || taken;
    given.push_back(t.is_contiguous() || taken ? t : t.contiguous());
  }
  if (!takes_any) return Tensor();
  const OutputSpec spec = op.infer(op, given, c.attrs);
  Tensor out = Tensor::empty(spec.shape, spec.dtype, device);
  fill_with_poison(out);
  op.kernel(device.kind)(KernelContext{op, given, c.attrs, out});
  return out;
}

// The case with its inputs in the variant's layout against the same values in contiguous
// inputs: the forward, the gradients of one upstream, and the kernel called directly where it
// takes the layout. Not bit for bit: a kernel reading strides may sum in another order.
void check_layout_variant(const OpDef& op, const OpCase& c, Device device, DType dtype, Variant v) {
  PoisonOutputsScope poison;
  const auto made = make_case_inputs(c.inputs, dtype, device);
  std::vector<Tensor> strided, dense;
  for (std::size_t i = 0; i < made.size(); ++i) {
    strided.push_back(variant_input(v, c.inputs[i], made[i]));
    dense.push_back(fresh_leaf(strided.back()));
  }
  const std::string at = where(op, c, device, dtype) + ", " + variant_name(v) + " inputs";
  const Tolerance tol = for_case(tolerance(dtype).vs_cpu, c);
  const Results s = forward_and_gradients(op, c, strided);
  const Results d = forward_and_gradients(op, c, dense);
  EXPECT_EQ(compare(s.out, d.out, tol), "") << at << ": forward vs contiguous inputs";
  for (std::size_t i = 0; i < strided.size(); ++i) {
    const Tensor& gs = s.grads[i];
    const Tensor& gd = d.grads[i];
    ASSERT_EQ(gs.defined(), gd.defined())
        << at << ": a gradient for input '" << op.input_name(i) << "' in one layout only";
    if (!gs.defined()) continue;
    EXPECT_EQ(gs.shape(), strided[i].shape())
        << at << ": gradient of input '" << op.input_name(i) << "' is not shaped as the input";
    EXPECT_EQ(compare(gs, gd, tol), "")
        << at << ": gradient of input '" << op.input_name(i) << "' vs contiguous inputs";
  }
  const Tensor direct = kernel_on_layouts(op, c, device, strided);
  if (direct.defined()) {
    EXPECT_EQ(compare(direct, d.out, tol), "")
        << at << ": the kernel called directly (it takes this layout) vs contiguous inputs";
  }
}

void check_error(const OpDef& op, const ErrorCase& c, Device device) {
  auto inputs = make_case_inputs(c.inputs, DType::f32, device);
  std::vector<std::vector<double>> before;
  for (auto& t : inputs) before.push_back(t.to_f64_vector());
  try {
    apply_op(op, inputs, c.attrs);
    ADD_FAILURE() << op.name << "/" << c.name << ": expected mg::Error containing '" << c.expect
                  << "', nothing was thrown";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(e.op(), op.name) << message;
    EXPECT_NE(message.find(c.expect), std::string::npos)
        << "message: " << message << "\nexpected it to contain: " << c.expect;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(inputs[i].to_f64_vector(), before[i]) << "input " << i << " changed after an error";
    EXPECT_FALSE(inputs[i].grad().defined()) << "input " << i << " got a gradient";
  }
}

class HarnessTest : public ::testing::Test {
 public:
  explicit HarnessTest(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

void add_test(const std::string& name, const char* file, std::function<void()> body) {
  ::testing::RegisterTest("ops", name.c_str(), nullptr, nullptr, file, __LINE__,
                          [body]() -> ::testing::Test* { return new HarnessTest(body); });
}

// One test per layout variant that puts an input of the case in another layout (a variant
// that changes none would repeat the _forward test): <prefix>_<variant>.
void add_layout_variant_tests(const OpDef* op, const OpCase& c, Device device, DType dtype,
                              const std::string& prefix) {
  for (Variant v : kVariants) {
    if (!changes_any_layout(v, c)) continue;
    add_test(prefix + "_" + variant_name(v), __FILE__,
             [op, c, device, dtype, v] { check_layout_variant(*op, c, device, dtype, v); });
  }
}

}  // namespace

std::vector<std::string> missing_parts(const OpDef& op) {
  std::vector<std::string> gaps;
  if (!op.cases || op.cases().empty()) gaps.push_back("no cases: nothing would test it");
  if (!op.reference) gaps.push_back("no naive reference to check its kernels against");
  if (op.dtypes.empty()) gaps.push_back("no dtype declared");
  for (DType dtype : op.dtypes) {
    if (!is_floating(dtype)) gaps.push_back(fmt::format("declares {}", dtype_name(dtype)));
  }
  for (int k = 0; k < kNumDeviceKinds; ++k) {
    const auto kind = static_cast<DeviceKind>(k);
    if (op.kernel(kind) == nullptr) {
      if (op.origin == "builtin" && backend_built(kind))
        gaps.push_back(
            fmt::format("no {} kernel in a build with that backend", device_kind_name(kind)));
      continue;
    }
    for (DType dtype : op.kernel_dtypes(kind)) {
      if (std::find(op.dtypes.begin(), op.dtypes.end(), dtype) == op.dtypes.end())
        gaps.push_back(fmt::format("its {} kernel takes {}, which the op does not declare",
                                   device_kind_name(kind), dtype_name(dtype)));
    }
  }
  return gaps;
}

std::string compare_tensors(const Tensor& actual, const Tensor& expected, double atol, double rtol,
                            bool nan_matches_nan) {
  if (actual.shape() != expected.shape())
    return fmt::format("shape {} != expected {}", shape_str(actual.shape()),
                       shape_str(expected.shape()));
  auto a = actual.to_f64_vector(), e = expected.to_f64_vector();
  std::int64_t worst = -1;
  double worst_excess = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double excess;
    if (std::isfinite(a[i]) && std::isfinite(e[i])) {
      excess = std::abs(a[i] - e[i]) - (atol + rtol * std::abs(e[i]));
      if (!(excess > 0)) continue;
    } else {
      // Equal infinities match; anything else is as bad as it gets. NaN matches nothing, not
      // even NaN: it is the poison of outputs a kernel should have written.
      if (a[i] == e[i] || (nan_matches_nan && std::isnan(a[i]) && std::isnan(e[i]))) continue;
      excess = INFINITY;
    }
    if (worst < 0 || excess > worst_excess) {
      worst_excess = excess;
      worst = static_cast<std::int64_t>(i);
    }
  }
  if (worst < 0) return "";
  return fmt::format("worst element #{}: got {:.10g}, expected {:.10g} (atol {}, rtol {})", worst,
                     a[worst], e[worst], atol, rtol);
}

void register_op_tests(std::string_view origin) {
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (!origin.empty() && op->origin != origin) continue;
    add_test(op->name + "_complete", __FILE__, [op] {
      const auto gaps = missing_parts(*op);
      EXPECT_TRUE(gaps.empty()) << op->name << ": " << fmt::format("{}", fmt::join(gaps, "; "));
    });
    if (!op->reference) continue;  // the test above fails; the others would only crash
    const std::vector<Device> devices = devices_to_test(*op);
    for (const OpCase& c : op->cases ? op->cases() : std::vector<OpCase>{}) {
      for (Device device : devices) {
        const std::string base =
            fmt::format("{}_{}_{}", op->name, c.name, device_kind_name(device.kind));
        for (DType dtype : op->kernel_dtypes(device.kind)) {
          add_test(base + "_" + std::string(dtype_name(dtype)) + "_forward", __FILE__,
                   [op, c, device, dtype] { check_forward(*op, c, device, dtype); });
          if (!device.is_cpu()) {
            add_test(base + "_" + std::string(dtype_name(dtype)) + "_vs_cpu", __FILE__,
                     [op, c, device, dtype] { check_against_cpu(*op, c, device, dtype); });
          }
          add_layout_variant_tests(op, c, device, dtype,
                                   base + "_" + std::string(dtype_name(dtype)));
        }
        const auto& dtypes = op->kernel_dtypes(device.kind);
        auto takes = [&](DType d) {
          return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
        };
        if (op->backward && has_grad_input(c) && !c.edge_values && takes(DType::f64)) {
          add_test(base + "_f64_gradcheck", __FILE__,
                   [op, c, device] { check_gradients(*op, c, device); });
          if (device.is_cpu() && takes(DType::f32)) {
            add_test(base + "_f32_grad_vs_f64", __FILE__, [op, c] { check_f32_gradients(*op, c); });
          }
        }
      }
    }
    for (const ErrorCase& c : all_error_cases(*op)) {
      for (Device device : devices) {
        std::string name =
            fmt::format("{}_error_{}_{}", op->name, c.name, device_kind_name(device.kind));
        add_test(name, __FILE__, [op, c, device] { check_error(*op, c, device); });
      }
    }
  }
}

int run_op_harness(int argc, char** argv, std::string_view origin) {
  ::testing::InitGoogleTest(&argc, argv);
  register_op_tests(origin);
  return RUN_ALL_TESTS();
}

}  // namespace mg::testing
