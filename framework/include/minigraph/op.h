// The op-author API. An op is declared once, as an OpDef: its inputs, its shape and dtype rule
// (which throws mg::Error before anything is allocated), its backward rule written in other
// ops, one kernel per backend, a naive reference that computes the output on its own, and its
// test and error cases. The registry holds every OpDef; the test harness and the CLI read them
// from there.
#pragma once

#include <any>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "minigraph/autograd.h"
#include "minigraph/error.h"
#include "minigraph/tensor.h"

namespace mg {

struct OpDef;

// Reads an op's typed attributes; a mismatch (another type, or none) is an mg::Error naming the
// op and both types, not a bare std::bad_any_cast.
namespace detail {
[[noreturn]] void throw_bad_attrs(std::string_view op, const std::type_info& expected,
                                  const std::any& actual);
}  // namespace detail
template <typename Attrs>
const Attrs& attrs_as(std::string_view op, const std::any& attrs) {
  const Attrs* typed = std::any_cast<Attrs>(&attrs);
  if (typed == nullptr) [[unlikely]]
    detail::throw_bad_attrs(op, typeid(Attrs), attrs);
  return *typed;
}

struct KernelContext {
  const OpDef& op;
  std::span<const Tensor> inputs;
  const std::any& attrs;
  Tensor& out;  // shaped and typed by the rule: fresh from the dispatcher, or a tensor given
                // to apply_op_into (which may be one of the inputs, for ops that allow it)
  // Where the kernel of an op with OpDef::saves_for_backward puts tensors its backward rule
  // reads (BackwardContext::saved), such as gradients a fused op computes with its forward;
  // null when the output will not be recorded, so nothing is computed for a backward that
  // cannot come.
  std::vector<Tensor>* saved = nullptr;
  template <typename Attrs>
  const Attrs& attrs_as() const;
};
using Kernel = void (*)(const KernelContext&);

// One device's kernel and the dtypes it computes in (empty: all of the op's dtypes).
struct DeviceKernel {
  Kernel run = nullptr;
  std::vector<DType> dtypes;
};
using DeviceKernels = std::array<DeviceKernel, kNumDeviceKinds>;
// The kernels of an op by device kind; a null one is "no kernel on that device". Ops in this
// tree set them with MG_KERNELS (ops/common/define_op.h), which leaves CUDA null in CPU builds.
DeviceKernels device_kernels(Kernel cpu, Kernel cuda = nullptr);

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

// What a backward rule gets: the upstream gradient, the op's attributes, and what the node
// kept for it, which is what the op's backward_reads names.
struct BackwardContext {
  BackwardContext(const Node& node, const Tensor& grad_out);
  const OpDef& op;
  const std::any& attrs;
  const Tensor& grad_out;
  std::span<const Tensor> saved;  // what the forward kernel saved (KernelContext::saved)
  // Input i as the forward read it. Only an input that backward_reads names was kept: reading
  // another is an mg::Error saying to name it there.
  const Tensor& input(std::size_t i) const;
  // The op's output as the forward wrote it, when backward_reads names "result".
  const Tensor& result() const;
  // Input i's shape (its gradient's), known for every input.
  const Shape& input_shape(std::size_t i) const;
  bool needs_grad(std::size_t i) const;
  std::size_t input_count() const;  // the op's inputs: a variadic op's as many as were given
  template <typename Attrs>
  const Attrs& attrs_as() const;

 private:
  const Node& node_;
};

// OpDef::backward_reads resolved against the op's inputs (by OpRegistry::add).
struct BackwardReadSet {
  std::uint64_t inputs = 0;  // bit i: input i
  bool all_inputs = false;   // a variadic op's input: every tensor given
  bool result = false;
  bool reads_input(std::size_t i) const {
    return all_inputs || (i < 64 && ((inputs >> i) & 1) != 0);
  }
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
  // Values at the edges of the function (inf, NaN, a kink, past a saturation): the harness
  // checks the forward alone (finite differences mean nothing there), on outputs poisoned with
  // a finite sentinel so that a NaN the function gives must match a NaN the reference gives.
  bool edge_values = false;
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
  // Whether the op takes one or more tensors for its single declared input, as cat does
  // (inputs = {"tensors"}): input i is then "tensors[i]" (input_name), and backward_reads
  // naming it keeps them all.
  bool variadic = false;
  // The float dtypes of the op (the harness tests each); a device's kernel may take fewer
  // (DeviceKernel::dtypes), and apply_op refuses the others before any kernel runs.
  std::vector<DType> dtypes = {DType::f32, DType::f64};
  // The shape and dtype rule: checks the inputs (throwing mg::Error) and names the output.
  std::function<OutputSpec(const OpDef& self, std::span<const Tensor>, const std::any&)> infer;
  // Gradients for each input (undefined where none flows). Empty: not differentiable.
  std::function<std::vector<Tensor>(const BackwardContext&)> backward;
  // What the backward rule reads besides grad_out and the attributes, named as PyTorch's
  // derivatives.yaml names it: inputs (by their names above) and/or "result", the op's output.
  // A recorded node keeps these and nothing else, only until its rule has run
  // (BackwardContext::input, result), and only these are version-checked: an in-place write
  // into another input between the forward and the backward is legal. Empty: the rule reads
  // no values (add: input shapes only).
  std::vector<std::string> backward_reads;
  // backward_reads resolved, set by the registry (OpRegistry::add): what record_node keeps.
  BackwardReadSet backward_read_set;
  DeviceKernels kernels{};
  // Whether apply_op_into may write the output over an input (elementwise ops, whose kernels
  // read each element before writing it); otherwise an output sharing memory with an input
  // is refused.
  bool out_may_alias_input = false;
  // Which input layouts the kernels read (layout.h): null, contiguous ones only, and the
  // dispatcher hands the kernels contiguous copies of the others (counted by
  // layout_copy_bytes); otherwise a predicate saying which layouts input `i` may come in as,
  // such as any_layout for kernels that read every input through its strides. Outputs are
  // always contiguous.
  bool (*takes_layout)(std::size_t input, const Tensor& t) = nullptr;
  // Whether the kernels save tensors for the backward rule (KernelContext::saved): a fused op
  // whose forward computes the gradients at little extra cost, as linear_cross_entropy does.
  bool saves_for_backward = false;
  // Naive loops on the CPU: what the shape rule and every kernel are checked against.
  Reference reference;
  std::function<std::vector<OpCase>()> cases;
  std::function<std::vector<ErrorCase>()> error_cases;
  std::function<std::string(const std::any&)> describe_attrs;  // "T=4, offset=2"
  // Where the op came from, set by the registry: "builtin", "program" (code linked into the
  // program), or the op library that registered it (see plugin.h). Shown by `minigraph ops`.
  std::string origin;

  Kernel kernel(DeviceKind kind) const { return kernels[static_cast<int>(kind)].run; }
  // Input i's name in errors and pictures: inputs[i], "tensors[i]" for a variadic op, or
  // "input i" past the declared ones.
  std::string input_name(std::size_t i) const;
  std::vector<std::string> input_names(std::size_t count) const;
  // The dtypes the kernel for `kind` computes in.
  const std::vector<DType>& kernel_dtypes(DeviceKind kind) const;
};

template <typename Attrs>
const Attrs& KernelContext::attrs_as() const {
  return mg::attrs_as<Attrs>(op.name, attrs);
}
template <typename Attrs>
const Attrs& BackwardContext::attrs_as() const {
  return mg::attrs_as<Attrs>(op.name, attrs);
}

class OpRegistry {
 public:
  // The process-wide registry: the ops registered so far. The built-in ops join it from the
  // ops library (mg::register_builtin_ops, called on the first use of any built-in op); op
  // libraries join it through plugin.h.
  static OpRegistry& instance();
  // Adds an op; throws if the name is taken, a required part is missing or backward_reads
  // names something the op does not have (then resolves it: backward_read_set). The reference
  // stays valid for the life of the process.
  const OpDef& add(OpDef op);
  const OpDef& get(std::string_view name) const;  // throws mg::Error naming the known ops
  const OpDef* find(std::string_view name) const;
  std::vector<const OpDef*> all() const;
  // Marks the ops added from now on with `origin` (OpDef::origin); returns the previous mark
  // so the caller can restore it.
  std::string exchange_origin(std::string origin);
  // Removes the ops marked `origin` among those added after the first `count` (a library
  // whose registration failed part way: its ops join all together or not at all; ops another
  // library registered meanwhile, such as the built-in ops on first use, stay). Only for
  // register_op_library.
  void remove_added_by(const std::string& origin, std::size_t count);
  std::size_t size() const { return ops_.size(); }

 private:
  std::vector<std::unique_ptr<OpDef>> ops_;
  std::string origin_ = "program";
};

// OpDef::takes_layout for kernels that read every input through its strides.
inline bool any_layout(std::size_t, const Tensor&) { return true; }

// Runs an op: checks devices, applies the shape rule, checks the dtypes against the device's
// kernel, allocates the output, runs the kernel, and records a node when autograd needs one.
Tensor apply_op(const OpDef& op, std::vector<Tensor> inputs, std::any attrs = {});

// Runs an op into an existing tensor: the same checks, then the kernel writes `out` (which must
// have the rule's shape and dtype and the inputs' device) without allocating and without
// recording. The write path of optimizers, gradient buffers, chunked ops and loaded weights.
// Refused, before anything is written: an `out` that autograd needs (see check_writable), and
// an `out` overlapping an input unless the op allows it (OpDef::out_may_alias_input). Bumps
// out's version (tensor.h).
void apply_op_into(const OpDef& op, std::vector<Tensor> inputs, const Tensor& out,
                   std::any attrs = {});

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
// Tells this thread's observer, if any, that `op` ran outside apply_op: contiguous() and the
// placement of narrow's gradient call it, so that graph pictures show what they make (views
// share storage, which the pictures see through).
void notify_op_observer(const OpDef& op, std::span<const Tensor> inputs, const std::any& attrs,
                        const Tensor& out);
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

// Every error case of an op: its own (OpDef::error_cases), after those its declared inputs
// imply, made from its first case: each float input given integer ids
// ("dtype_integer_<input>", expecting "argument '<input>': expected a floating-point tensor"),
// each id input given floats ("dtype_float_<input>", "expected integer ids") and, where the op
// declares more than one float dtype, each float input after the first in another dtype than
// the first ("dtype_mixed_<input>", "expected dtype"). Inputs whose case names a dtype of its
// own are left alone. What the harness checks and `minigraph ops` counts.
std::vector<ErrorCase> all_error_cases(const OpDef& op);

// Checks shared by shape rules; each throws mg::Error naming op and argument.
void check_floating(const OpDef& op, std::size_t input, const Tensor& t);
void check_integer(const OpDef& op, std::size_t input, const Tensor& t);
void check_same_dtype(const OpDef& op, std::size_t input, const Tensor& t, DType expected);
void check_rank(const OpDef& op, std::size_t input, const Tensor& t, std::int64_t min_rank,
                std::int64_t max_rank);
namespace detail {
[[noreturn]] void throw_bad_dispatch(std::string_view expected, DType actual);
}  // namespace detail
// Calls fn.template operator()<T>() with T = float for f32 and double for f64; any other dtype
// is an mg::Error (never "run it as float"). apply_op checks dtypes first, so this only fires
// for a kernel called around it.
template <typename Fn>
decltype(auto) dispatch_float(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32:
      return fn.template operator()<float>();
    case DType::f64:
      return fn.template operator()<double>();
    default:
      detail::throw_bad_dispatch("a float dtype (f32, f64)", dtype);
  }
}
// Same for integer ids: int32_t for i32, int64_t for i64.
template <typename Fn>
decltype(auto) dispatch_ids(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::i32:
      return fn.template operator()<std::int32_t>();
    case DType::i64:
      return fn.template operator()<std::int64_t>();
    default:
      detail::throw_bad_dispatch("integer ids (i32, i64)", dtype);
  }
}

}  // namespace mg
