#include "minigraph/testing/op_harness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "minigraph/backend.h"
#include "minigraph/gradcheck.h"

namespace mg::testing {

namespace {

struct Tolerance {
  double atol, rtol;
};
Tolerance forward_tolerance(DType dtype) {
  return dtype == DType::f64 ? Tolerance{1e-12, 1e-10} : Tolerance{1e-5, 1e-4};
}

// Where two tensors differ beyond tolerance: the worst element, or "" when they agree.
std::string compare(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  if (actual.shape() != expected.shape())
    return fmt::format("shape {} != expected {}", shape_str(actual.shape()),
                       shape_str(expected.shape()));
  auto a = actual.to_f64_vector(), e = expected.to_f64_vector();
  std::int64_t worst = -1;
  double worst_excess = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double excess = std::abs(a[i] - e[i]) - (tol.atol + tol.rtol * std::abs(e[i]));
    if (excess > worst_excess || std::isnan(a[i]) != std::isnan(e[i])) {
      worst_excess = std::isnan(excess) ? INFINITY : excess;
      worst = static_cast<std::int64_t>(i);
    }
  }
  if (worst < 0) return "";
  return fmt::format("worst element #{}: got {:.10g}, expected {:.10g} (atol {}, rtol {})", worst,
                     a[worst], e[worst], tol.atol, tol.rtol);
}

// The naive reference on f64 CPU copies of the inputs.
Tensor reference_output(const OpDef& op, const OpCase& c) {
  auto inputs = make_case_inputs(c.inputs, DType::f64, Device::cpu());
  OutputSpec spec = op.infer(op, inputs, c.attrs);
  Tensor out = Tensor::empty(spec.shape, spec.dtype);
  op.reference(KernelContext{inputs, c.attrs, out});
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
  ASSERT_EQ(spec.shape, expected.shape()) << "shape rule disagrees with the reference";

  // The kernel writes into storage with guard bytes after the output.
  constexpr std::size_t kGuard = 64;
  const std::size_t bytes =
      static_cast<std::size_t>(shape_numel(spec.shape)) * dtype_size(spec.dtype);
  auto storage = std::make_shared<Storage>(device, bytes + kGuard);
  std::vector<unsigned char> guard(kGuard, 0xA5), after(kGuard);
  auto& backend = backend_for(device);
  backend.copy_from_host(static_cast<char*>(storage->data()) + bytes, guard.data(), kGuard);
  Tensor out = Tensor::from_storage(storage, spec.shape, spec.dtype);
  op.kernel(device.kind)(KernelContext{inputs, c.attrs, out});
  backend.copy_to_host(after.data(), static_cast<char*>(storage->data()) + bytes, kGuard);
  EXPECT_EQ(guard, after) << op.name << " wrote past the end of its output";

  std::string diff = compare(out, expected, forward_tolerance(dtype));
  EXPECT_EQ(diff, "") << op.name << "/" << c.name << " on " << device.str() << " "
                      << dtype_name(dtype) << " forward vs the naive reference";
  // The dispatcher's path (allocation, rule, recording) gives the same values.
  Tensor dispatched = apply_op(op, inputs, c.attrs);
  EXPECT_EQ(compare(dispatched, out, {0, 0}), "") << "apply_op disagrees with the kernel";
}

void check_gradients(const OpDef& op, const OpCase& c, Device device) {
  auto inputs = make_case_inputs(c.inputs, DType::f64, device);
  std::vector<std::string> names = op.inputs;
  GradcheckOptions options;
  options.atol = 1e-6;
  options.max_checks_per_input = c.max_checks;
  auto report = gradcheck([&](const std::vector<Tensor>& in) { return apply_op(op, in, c.attrs); },
                          inputs, names, options);
  EXPECT_TRUE(report.passed()) << op.name << "/" << c.name << " on " << device.str()
                               << " f64: analytic gradient differs from finite differences\n"
                               << report.str();
}

// Forward and backward on `device` against the CPU, same inputs, same upstream gradient.
void check_against_cpu(const OpDef& op, const OpCase& c, Device device, DType dtype) {
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
  Tolerance tol = dtype == DType::f64 ? Tolerance{1e-10, 1e-9} : Tolerance{1e-4, 1e-4};
  for (std::size_t i = 0; i < on_cpu.size(); ++i) {
    EXPECT_EQ(compare(on_device[i], on_cpu[i], tol), "")
        << op.name << "/" << c.name << (i == 0 ? " forward" : " gradient of input ")
        << (i == 0 ? "" : std::to_string(i)) << " on " << device.str() << " " << dtype_name(dtype)
        << " vs cpu";
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

}  // namespace

void register_op_tests(std::string_view origin) {
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (!origin.empty() && op->origin != origin) continue;
    const std::vector<Device> devices = devices_to_test(*op);
    for (const OpCase& c : op->cases ? op->cases() : std::vector<OpCase>{}) {
      for (Device device : devices) {
        const std::string base =
            fmt::format("{}_{}_{}", op->name, c.name, device_kind_name(device.kind));
        for (DType dtype : op->dtypes) {
          add_test(base + "_" + std::string(dtype_name(dtype)) + "_forward", __FILE__,
                   [op, c, device, dtype] { check_forward(*op, c, device, dtype); });
          if (!device.is_cpu()) {
            add_test(base + "_" + std::string(dtype_name(dtype)) + "_vs_cpu", __FILE__,
                     [op, c, device, dtype] { check_against_cpu(*op, c, device, dtype); });
          }
        }
        if (op->backward) {
          add_test(base + "_f64_gradcheck", __FILE__,
                   [op, c, device] { check_gradients(*op, c, device); });
        }
      }
    }
    for (const ErrorCase& c : op->error_cases ? op->error_cases() : std::vector<ErrorCase>{}) {
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
