// The op-author API. An op is declared once, as an OpDef: its inputs, its shape and dtype rule
// (which throws mg::Error before anything is allocated), its backward rule written in other
// ops, one kernel per backend, a naive reference that computes the output on its own, and its
// test and error cases. The registry holds every OpDef; the test harness and the CLI read them
// from there.
#pragma once

#include <any>
#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "minigraph/autograd.h"
#include "minigraph/error.h"
#include "minigraph/tensor.h"

namespace mg {

struct KernelContext {
  std::span<const Tensor> inputs;
  const std::any& attrs;
  Tensor& out;  // allocated by the dispatcher with the shape and dtype of the rule
};
using Kernel = void (*)(const KernelContext&);

// The naive reference of an op: its output, computed from the inputs (on the CPU) and the
// attributes alone. It allocates the output itself (Tensor::empty / zeros) with a shape it
// works out with its own plain arithmetic, and fills it with plain loops over the full output
// index, sharing no helper with the kernels: the harness checks the shape rule and every
// kernel against it, so whatever they share, their errors would share too. It computes in the
// inputs' float dtype (the harness calls it on f64 copies).
using Reference = std::function<Tensor(std::span<const Tensor> inputs, const std::any& attrs)>;

struct OutputSpec {
  Shape shape;
  DType dtype;
};

struct BackwardContext {
  std::span<const Tensor> inputs;
  const std::any& attrs;
  const Tensor& grad_out;
  bool needs_grad(std::size_t input) const { return inputs[input].requires_grad(); }
};

// How the harness makes one input of a case.
struct InputSpec {
  enum class Kind { real, ids };
  Kind kind = Kind::real;
  Shape shape;
  std::int64_t id_limit = 0;   // ids are drawn from [0, id_limit), with repeats
  std::vector<double> values;  // explicit values instead of random ones
  std::optional<DType> dtype;  // default: the case's float dtype, or i64 for ids
  bool requires_grad = true;   // real inputs only

  static InputSpec real(Shape shape) {
    InputSpec s;
    s.shape = std::move(shape);
    return s;
  }
  static InputSpec ids(Shape shape, std::int64_t limit) {
    InputSpec s;
    s.kind = Kind::ids;
    s.shape = std::move(shape);
    s.id_limit = limit;
    return s;
  }
  InputSpec& with_values(std::vector<double> v) {
    values = std::move(v);
    return *this;
  }
  InputSpec& with_dtype(DType d) {
    dtype = d;
    return *this;
  }
  InputSpec& no_grad() {
    requires_grad = false;
    return *this;
  }
};

struct OpCase {
  std::string name;
  std::vector<InputSpec> inputs;
  std::any attrs;
  std::int64_t max_checks = 4096;  // gradcheck budget per input (big tables are sampled)
};

// Bad input that must throw mg::Error whose message contains `expect`.
struct ErrorCase {
  std::string name;
  std::vector<InputSpec> inputs;
  std::any attrs;
  std::string expect;
};

struct OpDef {
  std::string name;
  std::string summary;              // one line for `minigraph ops`
  std::vector<std::string> inputs;  // argument names, used in errors and graph pictures
  std::vector<DType> dtypes = {DType::f32, DType::f64};  // float dtypes the kernels take
  // The shape and dtype rule: checks the inputs (throwing mg::Error) and names the output.
  std::function<OutputSpec(const OpDef& self, std::span<const Tensor>, const std::any&)> infer;
  // Gradients for each input (undefined where none flows). Empty: not differentiable.
  std::function<std::vector<Tensor>(const BackwardContext&)> backward;
  std::array<Kernel, kNumDeviceKinds> kernels{};
  // Naive loops on the CPU: what the shape rule and every kernel are checked against.
  Reference reference;
  std::function<std::vector<OpCase>()> cases;
  std::function<std::vector<ErrorCase>()> error_cases;
  std::function<std::string(const std::any&)> describe_attrs;  // "T=4, offset=2"
  // Where the op came from, set by the registry: "builtin", "program" (code linked into the
  // program), or the op library that registered it (see plugin.h). Shown by `minigraph ops`.
  std::string origin;

  Kernel kernel(DeviceKind kind) const { return kernels[static_cast<int>(kind)]; }
};

class OpRegistry {
 public:
  // The process-wide registry, holding the built-in ops on first use.
  static OpRegistry& instance();
  // Adds an op; throws if the name is taken or a required part is missing. The reference
  // stays valid for the life of the process.
  const OpDef& add(OpDef op);
  const OpDef& get(std::string_view name) const;  // throws mg::Error naming the known ops
  const OpDef* find(std::string_view name) const;
  std::vector<const OpDef*> all() const;
  // Marks the ops added from now on with `origin` (OpDef::origin); returns the previous mark
  // so the caller can restore it.
  std::string exchange_origin(std::string origin);

 private:
  std::vector<std::unique_ptr<OpDef>> ops_;
  std::string origin_ = "program";
};

// Runs an op: checks devices, applies the shape rule, allocates the output, runs the kernel
// for the inputs' device, and records a node when autograd needs one.
Tensor apply_op(const OpDef& op, std::vector<Tensor> inputs, std::any attrs = {});

// Testing aid: while a PoisonOutputsScope is alive on this thread, apply_op fills every output
// with poison (NaN for floats, 0xA5 bytes otherwise) before its kernel runs, so an element a
// kernel forgets to write cannot pass as a correct one (Tensor::empty memory is often zero).
// The op harness runs its checks inside one; without one, apply_op pays a single branch.
class PoisonOutputsScope {
 public:
  PoisonOutputsScope();
  ~PoisonOutputsScope();
  static bool active();  // on this thread
  PoisonOutputsScope(const PoisonOutputsScope&) = delete;
  PoisonOutputsScope& operator=(const PoisonOutputsScope&) = delete;

 private:
  bool previous_;
};
// Fills t (on any device) with the poison above.
void fill_with_poison(const Tensor& t);

// Sees every op that apply_op runs on this thread while an OpObserverScope is alive, after
// its kernel ran. Graph pictures use it to record the ops a backward rule runs; with no
// observer, apply_op pays a single branch.
using OpObserver = std::function<void(const OpDef& op, std::span<const Tensor> inputs,
                                      const std::any& attrs, const Tensor& out)>;
class OpObserverScope {
 public:
  explicit OpObserverScope(OpObserver observer);  // replaces the current observer until destroyed
  ~OpObserverScope();
  OpObserverScope(const OpObserverScope&) = delete;
  OpObserverScope& operator=(const OpObserverScope&) = delete;

 private:
  OpObserver observer_;
  const OpObserver* previous_;
};

// The inputs of a case, made deterministically: real values ~ N(0, 1) drawn in f64 and then
// converted (so every dtype sees the same numbers), ids drawn from [0, id_limit) with repeats.
// Real inputs take `real_dtype` unless the spec names one, and require grad unless told not to.
Tensor make_case_input(const InputSpec& spec, DType real_dtype, std::uint64_t seed,
                       Device device = Device::cpu());
std::vector<Tensor> make_case_inputs(const std::vector<InputSpec>& specs, DType real_dtype,
                                     Device device = Device::cpu());

// Reads an op's typed attributes.
template <typename Attrs>
const Attrs& attrs_as(const std::any& attrs) {
  return std::any_cast<const Attrs&>(attrs);
}

// Checks shared by shape rules; each throws mg::Error naming op and argument.
void check_floating(const OpDef& op, std::size_t input, const Tensor& t);
void check_integer(const OpDef& op, std::size_t input, const Tensor& t);
void check_same_dtype(const OpDef& op, std::size_t input, const Tensor& t, DType expected);
void check_rank(const OpDef& op, std::size_t input, const Tensor& t, std::int64_t min_rank,
                std::int64_t max_rank);
// Calls fn.template operator()<T>() with T = float or double for a float dtype.
template <typename Fn>
decltype(auto) dispatch_float(DType dtype, Fn&& fn) {
  if (dtype == DType::f64) return fn.template operator()<double>();
  return fn.template operator()<float>();
}
// Same for integer ids (int32_t or int64_t).
template <typename Fn>
decltype(auto) dispatch_ids(DType dtype, Fn&& fn) {
  if (dtype == DType::i32) return fn.template operator()<std::int32_t>();
  return fn.template operator()<std::int64_t>();
}

}  // namespace mg
