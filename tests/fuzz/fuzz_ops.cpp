// libFuzzer target for every registered op's rules: shapes, dtypes, attributes and offsets
// into apply_op, forward and backward.
//
// Each input is read as a little program (FuzzedDataProvider): which op; which of its cases to
// start from; for each input tensor, the case's shape with sizes perhaps replaced by other
// small sizes or by 0, its rank perhaps changed, its dtype perhaps swapped, and its values
// (ids perhaps replaced by out-of-range edges such as INT64_MIN or INT64_MAX, floats by NaN or
// an infinity); then the attributes: the case's, or for the ops whose attributes hold sizes
// and offsets (positions, rows, target shapes, reduction axes), those integers drawn from the
// edges 0, -1, 2^31, 2^62, INT64_MAX ..., or a value of the wrong type. apply_op must either
// throw mg::Error or return a defined tensor of the shape the op's rule declares; where the
// output is a float tensor that takes a gradient, a backward from it must do the same. A rule
// that declares more than 1 MiB of output is checked, but its kernel is not run: the subject
// is the rules, not the allocator or the kernels' loops (the harness checks those; at 64 MiB,
// the coverage counters in those loops took two thirds of the time). Anything else is a finding:
// another exception, a sanitizer report, a leak, or a broken promise (reported on stderr, then an
// abort).
//
// Building and running it: docs/fuzzing.md.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "minigraph/cpu.h"
#include "minigraph/error.h"
#include "minigraph/op.h"
#include "minigraph/ops.h"
#include "minigraph/tensor.h"
#include "minigraph/threads.h"

namespace {

using namespace mg;

constexpr std::int64_t kMaxInputElements = 4096;
constexpr std::int64_t kMaxOutputBytes = std::int64_t{1} << 20;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

// Sizes and offsets at the edges where arithmetic wraps, or a small one.
std::int64_t edge_or_small(FuzzedDataProvider& in) {
  static constexpr std::int64_t kEdges[] = {0,
                                            1,
                                            2,
                                            3,
                                            -1,
                                            -2,
                                            std::int64_t{1} << 20,
                                            std::numeric_limits<std::int32_t>::max(),
                                            std::int64_t{1} << 31,
                                            std::int64_t{1} << 32,
                                            std::int64_t{1} << 40,
                                            std::int64_t{1} << 61,
                                            std::int64_t{1} << 62,
                                            kInt64Max - 1,
                                            kInt64Max,
                                            std::numeric_limits<std::int64_t>::min()};
  return in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(0, 6)
                          : in.PickValueInArray(kEdges);
}

Shape fuzzed_shape(FuzzedDataProvider& in) {
  Shape shape(in.ConsumeIntegralInRange<std::size_t>(0, 4));
  for (auto& size : shape) size = edge_or_small(in);
  return shape;
}

// The case's shape, perhaps with sizes changed (small ones or 0) and its rank changed.
Shape mutated_shape(FuzzedDataProvider& in, Shape shape) {
  const int how = in.ConsumeIntegralInRange(0, 7);
  if (how == 1 && !shape.empty()) shape.pop_back();
  if (how == 2 && shape.size() < 6) shape.insert(shape.begin(), in.ConsumeIntegralInRange(1, 3));
  if (how >= 3 && how <= 4) {
    for (auto& size : shape) {
      if (in.ConsumeBool()) size = in.ConsumeIntegralInRange<std::int64_t>(0, 6);
    }
  }
  return shape;
}

DType mutated_dtype(FuzzedDataProvider& in, DType dtype) {
  static constexpr DType kAll[] = {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean};
  return in.ConsumeIntegralInRange(0, 7) == 0 ? in.PickValueInArray(kAll) : dtype;
}

double fuzzed_value(FuzzedDataProvider& in, bool ids, std::int64_t id_limit) {
  static constexpr double kFloatEdges[] = {0.0,
                                           -0.0,
                                           1e30,
                                           -1e30,
                                           std::numeric_limits<double>::quiet_NaN(),
                                           std::numeric_limits<double>::infinity(),
                                           1e-310};
  static constexpr double kIdEdges[] = {-1, -100, 2147483647.0, -2147483648.0, 0x1p62, -0x1p62};
  if (ids) {
    if (in.ConsumeIntegralInRange(0, 15) == 0) return in.PickValueInArray(kIdEdges);
    return static_cast<double>(
        in.ConsumeIntegralInRange<std::int64_t>(0, std::max<std::int64_t>(id_limit, 1) - 1));
  }
  if (in.ConsumeIntegralInRange(0, 31) == 0) return in.PickValueInArray(kFloatEdges);
  return in.ConsumeFloatingPointInRange(-3.0, 3.0);
}

Tensor fuzzed_input(FuzzedDataProvider& in, const InputSpec& spec, DType float_dtype) {
  const bool ids = spec.kind == InputSpec::Kind::ids;
  const DType dtype = mutated_dtype(in, spec.dtype.value_or(ids ? DType::i64 : float_dtype));
  Shape shape = mutated_shape(in, spec.shape);
  std::int64_t count = 1;
  for (std::int64_t size : shape) {
    if (size < 0 || __builtin_mul_overflow(count, size, &count) || count > kMaxInputElements) {
      return Tensor();  // not an op's input worth making; the tensor's own checks are elsewhere
    }
  }
  std::vector<double> values(static_cast<std::size_t>(count));
  for (double& v : values) v = fuzzed_value(in, ids || !is_floating(dtype), spec.id_limit);
  Tensor t;
  try {
    t = Tensor::from_vector(values, shape).to(dtype);
  } catch (const Error&) {
    return Tensor();  // a NaN for an integer dtype: refused by the conversion, as it must be
  }
  if (is_floating(dtype) && spec.requires_grad && in.ConsumeBool()) t.set_requires_grad(true);
  return t;
}

// Attributes: the case's own, integers at the edges for the ops whose attributes hold sizes
// and offsets, or a value of the wrong type.
std::any fuzzed_attrs(FuzzedDataProvider& in, const OpDef& op, const std::any& from_case) {
  const int how = in.ConsumeIntegralInRange(0, 15);
  if (how == 0) return std::any{};
  if (how == 1) return std::any{std::string("not attributes")};
  if (how < 8) return from_case;
  const std::string& name = op.name;
  if (name == "position_embedding_backward") {
    return PositionEmbeddingBackwardAttrs{edge_or_small(in), edge_or_small(in)};
  }
  if (name == "token_position_embedding") return TokenPositionEmbeddingAttrs{edge_or_small(in)};
  if (name == "embedding_backward") return EmbeddingBackwardAttrs{edge_or_small(in)};
  if (name == "broadcast_to") return BroadcastToAttrs{fuzzed_shape(in)};
  if (name == "sum_to") return SumToAttrs{fuzzed_shape(in)};
  if (name == "sum" || name == "mean") {
    std::vector<std::int64_t> dims(in.ConsumeIntegralInRange<std::size_t>(0, 3));
    for (auto& d : dims)
      d = in.ConsumeBool() ? in.ConsumeIntegralInRange(-5, 5) : edge_or_small(in);
    const bool keepdim = in.ConsumeBool();
    return name == "sum" ? std::any{SumAttrs{dims, keepdim}} : std::any{MeanAttrs{dims, keepdim}};
  }
  if (name == "matmul") return MatmulOptions{in.ConsumeBool(), in.ConsumeBool()};
  if (name == "cross_entropy") {
    CrossEntropyOptions o = std::any_cast<CrossEntropyOptions>(from_case);
    o.ignore_index = edge_or_small(in);
    return o;
  }
  if (name == "linear_cross_entropy") {
    LinearCrossEntropyOptions o = std::any_cast<LinearCrossEntropyOptions>(from_case);
    o.ignore_index = edge_or_small(in);
    o.chunk_bytes = edge_or_small(in);
    return o;
  }
  return from_case;
}

std::int64_t declared_bytes(const OutputSpec& spec) {
  std::int64_t bytes = static_cast<std::int64_t>(dtype_size(spec.dtype));
  for (std::int64_t size : spec.shape) {
    if (size < 0 || __builtin_mul_overflow(bytes, size, &bytes)) return kInt64Max;
  }
  return bytes;
}

void run_one(FuzzedDataProvider& in) {
  // Every op with its cases, made once (a case table per input would cost more than the op).
  struct OpWithCases {
    const OpDef* op;
    std::vector<OpCase> cases;
  };
  static const std::vector<OpWithCases> ops = [] {
    register_builtin_ops();
    std::vector<OpWithCases> all;
    for (const OpDef* op : OpRegistry::instance().all()) {
      if (op->cases) all.push_back({op, op->cases()});
    }
    return all;
  }();
  const auto& [op_ptr, cases] = ops[in.ConsumeIntegralInRange<std::size_t>(0, ops.size() - 1)];
  const OpDef& op = *op_ptr;
  if (cases.empty()) return;
  const OpCase& base = cases[in.ConsumeIntegralInRange<std::size_t>(0, cases.size() - 1)];
  const DType float_dtype = in.ConsumeBool() ? DType::f32 : DType::f64;
  std::vector<Tensor> inputs;
  for (const InputSpec& spec : base.inputs) {
    Tensor t = fuzzed_input(in, spec, float_dtype);
    if (!t.defined()) return;
    inputs.push_back(t);
  }
  const std::any attrs = fuzzed_attrs(in, op, base.attrs);

  OutputSpec spec;
  try {
    spec = op.infer(op, inputs, attrs);
  } catch (const Error&) {
    return;  // refused by the rule: apply_op's own run is the same rule
  }
  if (declared_bytes(spec) > kMaxOutputBytes) return;
  Tensor out;
  try {
    out = apply_op(op, inputs, attrs);
  } catch (const Error&) {
    return;  // a later check (devices, dtypes, a kernel's value check such as an id's range)
  }
  if (!out.defined() || out.shape() != spec.shape || out.dtype() != spec.dtype) {
    finding(op.name + ": the output is not the rule's " + shape_str(spec.shape));
  }
  if (!is_floating(out.dtype()) || !out.requires_grad() || out.numel() == 0) return;
  try {
    sum(out).backward();
  } catch (const Error&) {
    return;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor g = inputs[i].grad();
    if (g.defined() && g.shape() != inputs[i].shape()) {
      finding(op.name + ": the gradient of " + op.inputs[i] + " is " + shape_str(g.shape()) +
              ", the input " + shape_str(inputs[i].shape()));
    }
  }
}

}  // namespace

// One thread: the kernels' parallel paths are the harness's subject, and a thread pool per
// input would cost more than the input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  set_num_threads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    FuzzedDataProvider in(data, size);
    run_one(in);
  }
  cpu::empty_cache();  // the allocator's cache back to the system: ASan and LSan see it all
  return 0;
}
