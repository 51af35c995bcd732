// Expands op_list.h into one explicit registration call per op (no static self-registration:
// the linker may drop such objects and their order is unspecified), and installs the add op
// as the autograd engine's gradient sum: the core has no arithmetic of its own.
#include <mutex>

#include "binary/binary.h"
#include "builtin_ops.h"
#include "common/define_op.h"
#include "minigraph/autograd.h"

namespace mg {

#define MG_VIEW(name)
#define MG_FAMILY(name) MG_OP(name)
#define MG_OP(name) void register_##name(OpRegistry& registry);
#include "op_list.h"
#undef MG_OP

void register_builtin_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry& registry = OpRegistry::instance();
    std::string previous = registry.exchange_origin("builtin");
    try {
#define MG_OP(name) register_##name(registry);
#include "op_list.h"
#undef MG_OP
#undef MG_FAMILY
#undef MG_VIEW
    } catch (...) {
      registry.exchange_origin(std::move(previous));
      throw;
    }
    registry.exchange_origin(std::move(previous));
    set_gradient_sum([](const Tensor& a, const Tensor& b) { return add(a, b); });
  });
}

const OpDef& builtin_op(std::string_view name) {
  register_builtin_ops();
  return OpRegistry::instance().get(name);
}

}  // namespace mg
