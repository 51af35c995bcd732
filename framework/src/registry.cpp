// The op registry and the dispatcher every op call goes through.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

#include "minigraph/backend.h"
#include "minigraph/op.h"
#include "strided_copy.h"

namespace mg {

OpRegistry& OpRegistry::instance() {
  static auto* registry = new OpRegistry;  // never destroyed: ops may run in static destruction
  return *registry;
}

DeviceKernels device_kernels(Kernel cpu, Kernel cuda) {
  DeviceKernels kernels{};
  kernels[static_cast<int>(DeviceKind::cpu)].run = cpu;
  kernels[static_cast<int>(DeviceKind::cuda)].run = cuda;
  return kernels;
}

const std::vector<DType>& OpDef::kernel_dtypes(DeviceKind kind) const {
  const auto& own = kernels[static_cast<int>(kind)].dtypes;
  return own.empty() ? dtypes : own;
}

namespace detail {

namespace {
std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : type.name();
}
}  // namespace

void throw_bad_attrs(std::string_view op, const std::type_info& expected, const std::any& actual) {
  throw Error(std::string(op), "attrs", "attributes of type " + type_name(expected),
              actual.has_value() ? "attributes of type " + type_name(actual.type()) : "none");
}

void throw_bad_dispatch(std::string_view expected, DType actual) {
  throw Error("kernel dispatch", "dtype", std::string(expected), std::string(dtype_name(actual)));
}

}  // namespace detail

namespace {

// Each name in backward_reads is one of the op's inputs or "result", for an op with a rule.
BackwardReadSet resolve_backward_reads(const OpDef& op) {
  BackwardReadSet set;
  const std::string argument = op.name + ".backward_reads";
  for (const std::string& name : op.backward_reads) {
    MG_CHECK(static_cast<bool>(op.backward), "register_op", argument,
             "names only for an op with a backward rule", "'{}', and no rule", name);
    auto input = std::find(op.inputs.begin(), op.inputs.end(), name);
    MG_CHECK(input != op.inputs.end() || name == "result", "register_op", argument,
             fmt::format("names of the op's inputs ({}) or \"result\"", fmt::join(op.inputs, ", ")),
             "'{}'", name);
    if (input == op.inputs.end()) {
      set.result = true;
      continue;
    }
    const auto index = static_cast<std::size_t>(input - op.inputs.begin());
    MG_CHECK(name != "result", "register_op", argument,
             "\"result\" for the op's output, with no input of that name",
             "an input named 'result'");
    if (op.variadic) {
      set.all_inputs = true;
      continue;
    }
    MG_CHECK(index < 64, "register_op", argument, "inputs among the first 64", "'{}', input {}",
             name, index);
    set.inputs |= std::uint64_t{1} << index;
  }
  return set;
}

}  // namespace

const OpDef& OpRegistry::add(OpDef op) {
  MG_CHECK(!op.name.empty(), "register_op", "name", "a name", "an empty name");
  const OpDef* taken = find(op.name);
  MG_CHECK(taken == nullptr, "register_op", "name", "a new op name",
           "'{}', which is registered already (origin: {})", op.name,
           taken != nullptr ? taken->origin : "");
  MG_CHECK(static_cast<bool>(op.infer), "register_op", op.name + ".infer", "a shape rule", "none");
  MG_CHECK(op.kernel(DeviceKind::cpu) != nullptr, "register_op", op.name + ".kernels",
           "a CPU kernel", "none");
  MG_CHECK(!op.variadic || op.inputs.size() == 1, "register_op", op.name + ".inputs",
           "one name for a variadic op's tensors", "{} names", op.inputs.size());
  op.backward_read_set = resolve_backward_reads(op);
  op.origin = origin_;
  ops_.push_back(std::make_unique<OpDef>(std::move(op)));
  return *ops_.back();
}

void OpRegistry::remove_added_by(const std::string& origin, std::size_t count) {
  if (count >= ops_.size()) return;
  ops_.erase(std::remove_if(ops_.begin() + static_cast<std::ptrdiff_t>(count), ops_.end(),
                            [&](const auto& op) { return op->origin == origin; }),
             ops_.end());
}

std::string OpRegistry::exchange_origin(std::string origin) {
  return std::exchange(origin_, std::move(origin));
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](auto& op) { return op->name == name; });
  return it == ops_.end() ? nullptr : it->get();
}

const OpDef& OpRegistry::get(std::string_view name) const {
  const OpDef* op = find(name);
  if (op == nullptr) {
    std::vector<std::string> names;
    bool builtins = false;
    for (auto& o : ops_) {
      names.push_back(o->name);
      builtins = builtins || o->origin == "builtin";
    }
    // The built-in ops join on first use; a lookup before that is told how to add them.
    throw Error("registry", "op",
                fmt::format("one of the registered ops ({}){}", fmt::join(names, ", "),
                            builtins ? ""
                                     : "; the built-in ops are not registered yet: call "
                                       "mg::register_builtin_ops() first"),
                std::string(name));
  }
  return *op;
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> out;
  for (auto& op : ops_) out.push_back(op.get());
  return out;
}

namespace {
thread_local const OpObserver* g_op_observer = nullptr;
}  // namespace

OpObserverScope::OpObserverScope(OpObserver observer)
    : observer_(std::move(observer)), previous_(g_op_observer) {
  g_op_observer = &observer_;
}
OpObserverScope::~OpObserverScope() { g_op_observer = previous_; }

void notify_op_observer(const OpDef& op, std::span<const Tensor> inputs, const std::any& attrs,
                        const Tensor& out) {
  if (g_op_observer != nullptr) [[unlikely]]
    (*g_op_observer)(op, inputs, attrs, out);
}

namespace {

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::vector<std::string_view> names;
  for (DType d : dtypes) names.push_back(dtype_name(d));
  return fmt::format("{}", fmt::join(names, ", "));
}

// A shape rule's result, checked under the op's name before anything is allocated: a rule
// that let a negative size or an overflowing count through would otherwise be blamed on
// "tensor" (or wrap into a small buffer).
void check_output_shape(const OpDef& op, const OutputSpec& spec) {
  std::int64_t elements = 1, bytes = 0;
  bool fits = true;
  for (std::int64_t size : spec.shape) {
    fits = fits && size >= 0 && !__builtin_mul_overflow(elements, size, &elements);
  }
  fits = fits && !__builtin_mul_overflow(elements,
                                         static_cast<std::int64_t>(dtype_size(spec.dtype)), &bytes);
  MG_CHECK(fits, op.name, "output",
           "a shape of non-negative sizes and at most 2^63 - 1 bytes (from the op's shape rule)",
           "{} of {}", shape_str(spec.shape), dtype_name(spec.dtype));
}

// The checks before any kernel runs: input count, defined inputs, one device, the shape
// rule, a kernel for the device, and float dtypes that kernel computes in.
struct Prepared {
  Kernel kernel;
  Device device;
  OutputSpec spec;
};
Prepared prepare(const OpDef& op, const std::vector<Tensor>& inputs, const std::any& attrs) {
  if (op.variadic) {
    MG_CHECK(!inputs.empty(), op.name, op.inputs[0], "one or more tensors", "none");
  } else {
    MG_CHECK(inputs.size() == op.inputs.size(), op.name, "inputs",
             fmt::format("{} ({})", op.inputs.size(), fmt::join(op.inputs, ", ")), "{}",
             inputs.size());
  }
  const std::vector<std::string> names = op.input_names(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    MG_CHECK(inputs[i].defined(), op.name, names[i], "a defined tensor", "an undefined one");
  }
  const Device device = common_device(op.name, names, inputs.size(),
                                      [&](std::size_t i) { return inputs[i].device(); });
  OutputSpec spec = op.infer(op, inputs, attrs);
  check_output_shape(op, spec);
  Kernel kernel = op.kernel(device.kind);
  MG_CHECK(kernel != nullptr, op.name, "device", "a device with a kernel for this op",
           "{} (no {} kernel for '{}')", device.str(), device_kind_name(device.kind), op.name);
  const auto& dtypes = op.kernel_dtypes(device.kind);
  auto check_dtype = [&](DType dtype, const std::string& what) {
    MG_CHECK(std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end(), op.name, what,
             fmt::format("a dtype its {} kernel computes in ({})", device_kind_name(device.kind),
                         dtype_list(dtypes)),
             "{}", dtype_name(dtype));
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const DType dtype = inputs[i].dtype();
    if (is_floating(dtype)) check_dtype(dtype, names[i]);
  }
  if (is_floating(spec.dtype)) check_dtype(spec.dtype, "output");
  return {kernel, device, std::move(spec)};
}

// Inputs in a layout the op's kernels do not read become contiguous copies (recorded, so the
// gradient flows back through the copy to the view).
void make_layouts_readable(const OpDef& op, std::vector<Tensor>& inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (t.is_contiguous() || (op.takes_layout != nullptr && op.takes_layout(i, t))) continue;
    inputs[i] = t.contiguous();
  }
}

}  // namespace

Tensor apply_op(const OpDef& op, std::vector<Tensor> inputs, std::any attrs) {
  Prepared p = prepare(op, inputs, attrs);
  make_layouts_readable(op, inputs);
  Tensor out = Tensor::empty(p.spec.shape, p.spec.dtype, p.device);
  if (PoisonOutputsScope::active()) [[unlikely]]
    fill_with_poison(out);  // the op harness: an element the kernel skips stays NaN
  std::vector<Tensor> saved;
  const bool save = op.saves_for_backward && will_record(inputs);
  p.kernel(KernelContext{op, inputs, attrs, out, save ? &saved : nullptr});
  notify_op_observer(op, inputs, attrs, out);
  record_node(op, std::move(inputs), std::move(attrs), out, std::move(p.spec.shape),
              std::move(saved));
  return out;
}

void apply_op_into(const OpDef& op, std::vector<Tensor> inputs, const Tensor& target,
                   std::any attrs) {
  Tensor out = target;  // another handle: the kernel writes through it into target's memory
  MG_CHECK(out.defined(), op.name, "out", "a defined tensor to write into", "an undefined one");
  Prepared p = prepare(op, inputs, attrs);
  MG_CHECK(out.shape() == p.spec.shape && out.dtype() == p.spec.dtype, op.name, "out",
           fmt::format("shape {} and dtype {} (the op's output)", shape_str(p.spec.shape),
                       dtype_name(p.spec.dtype)),
           "shape {} and dtype {}", shape_str(out.shape()), dtype_name(out.dtype()));
  MG_CHECK(out.device() == p.device, op.name, "out",
           fmt::format("a tensor on {} (as the inputs)", p.device.str()), "{}", out.device().str());
  out.check_writable(op.name);
  out.check_no_overlap(op.name);
  make_layouts_readable(op, inputs);
  if (!out.is_contiguous()) {  // kernels write contiguous outputs: one, then copied into the view
    Tensor dense = Tensor::empty(out.shape(), out.dtype(), out.device());
    p.kernel(KernelContext{op, inputs, attrs, dense});
    out.impl()->storage->bump_version();
    copy_elements(out, dense);
    notify_op_observer(op, inputs, attrs, out);
    return;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!spans_meet(out, inputs[i])) continue;  // for a contiguous out: shared memory
    const bool same = same_elements(out, inputs[i]);
    MG_CHECK(same && op.out_may_alias_input, op.name, "out",
             same ? "a tensor apart from the inputs (this op's kernel reads them while it writes)"
                  : "a tensor apart from the inputs, or one of them exactly",
             "memory {} input '{}'", same ? "shared with" : "partly overlapping", op.input_name(i));
  }
  out.impl()->storage->bump_version();  // first: even a kernel that throws part-way wrote
  p.kernel(KernelContext{op, inputs, attrs, out});
  notify_op_observer(op, inputs, attrs, out);
}

std::string OpDef::input_name(std::size_t i) const {
  if (variadic) return fmt::format("{}[{}]", inputs[0], i);
  return i < inputs.size() ? inputs[i] : fmt::format("input {}", i);
}

std::vector<std::string> OpDef::input_names(std::size_t count) const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < count; ++i) names.push_back(input_name(i));
  return names;
}

namespace {
std::string arg(const OpDef& op, std::size_t input) { return op.input_name(input); }
}  // namespace

void check_floating(const OpDef& op, std::size_t input, const Tensor& t) {
  MG_CHECK(is_floating(t.dtype()), op.name, arg(op, input), "a floating-point tensor (f32, f64)",
           "{}", dtype_name(t.dtype()));
}

void check_integer(const OpDef& op, std::size_t input, const Tensor& t) {
  MG_CHECK(is_integer(t.dtype()), op.name, arg(op, input), "integer ids (i32, i64)", "{}",
           dtype_name(t.dtype()));
}

void check_same_dtype(const OpDef& op, std::size_t input, const Tensor& t, DType expected) {
  MG_CHECK(t.dtype() == expected, op.name, arg(op, input),
           fmt::format("dtype {} (as the other inputs)", dtype_name(expected)), "{}",
           dtype_name(t.dtype()));
}

void check_rank(const OpDef& op, std::size_t input, const Tensor& t, std::int64_t min_rank,
                std::int64_t max_rank) {
  MG_CHECK(t.dim() >= min_rank && t.dim() <= max_rank, op.name, arg(op, input),
           min_rank == max_rank ? fmt::format("rank {}", min_rank)
                                : fmt::format("rank {} to {}", min_rank, max_rank),
           "rank {} (shape {})", t.dim(), shape_str(t.shape()));
}

}  // namespace mg
