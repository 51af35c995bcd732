// The op registry and the dispatcher every op call goes through.
#include <algorithm>
#include <utility>

#include "minigraph/backend.h"
#include "minigraph/op.h"

namespace mg {

void register_builtin_ops(OpRegistry& registry);  // ops/register_builtin_ops.cpp

OpRegistry& OpRegistry::instance() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry;  // never destroyed: ops may run during static destruction
    std::string previous = r->exchange_origin("builtin");
    register_builtin_ops(*r);
    r->exchange_origin(std::move(previous));
    return r;
  }();
  return *registry;
}

const OpDef& OpRegistry::add(OpDef op) {
  MG_CHECK(!op.name.empty(), "register_op", "name", "a name", "an empty name");
  MG_CHECK(find(op.name) == nullptr, "register_op", "name", "a new op name",
           "'{}', which is registered already", op.name);
  MG_CHECK(static_cast<bool>(op.infer), "register_op", op.name + ".infer", "a shape rule", "none");
  MG_CHECK(op.kernel(DeviceKind::cpu) != nullptr, "register_op", op.name + ".kernels",
           "a CPU kernel", "none");
  op.origin = origin_;
  ops_.push_back(std::make_unique<OpDef>(std::move(op)));
  return *ops_.back();
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
    for (auto& o : ops_) names.push_back(o->name);
    throw Error("registry", "op", fmt::format("one of {}", fmt::join(names, ", ")),
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

Tensor apply_op(const OpDef& op, std::vector<Tensor> inputs, std::any attrs) {
  MG_CHECK(inputs.size() == op.inputs.size(), op.name, "inputs",
           fmt::format("{} ({})", op.inputs.size(), fmt::join(op.inputs, ", ")), "{}",
           inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    MG_CHECK(inputs[i].defined(), op.name, op.inputs[i], "a defined tensor", "an undefined one");
  }
  const Device device = common_device(op.name, op.inputs, inputs.size(),
                                      [&](std::size_t i) { return inputs[i].device(); });
  OutputSpec spec = op.infer(op, inputs, attrs);
  Kernel kernel = op.kernel(device.kind);
  MG_CHECK(kernel != nullptr, op.name, "device", "a device with a kernel for this op",
           "{} (no {} kernel for '{}')", device.str(), device_kind_name(device.kind), op.name);
  Tensor out = Tensor::empty(spec.shape, spec.dtype, device);
  if (PoisonOutputsScope::active()) [[unlikely]]
    fill_with_poison(out);  // the op harness: an element the kernel skips stays NaN
  kernel(KernelContext{inputs, attrs, out});
  if (g_op_observer != nullptr) [[unlikely]]
    (*g_op_observer)(op, inputs, attrs, out);

  bool record = grad_enabled() && std::any_of(inputs.begin(), inputs.end(),
                                              [](const Tensor& t) { return t.requires_grad(); });
  if (record) {
    auto node = std::make_shared<Node>();
    node->op = &op;
    node->inputs = std::move(inputs);
    node->attrs = std::move(attrs);
    node->out_shape = std::move(spec.shape);  // the output has its own copy
    node->out_dtype = spec.dtype;
    out.impl()->grad_fn = std::move(node);
    out.impl()->requires_grad = true;
  }
  return out;
}

namespace {
std::string arg(const OpDef& op, std::size_t input) {
  return input < op.inputs.size() ? op.inputs[input] : fmt::format("input {}", input);
}
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
