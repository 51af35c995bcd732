// Expands op_list.h into one explicit registration call per op (no static self-registration:
// the linker may drop such objects and their order is unspecified).
#include "minigraph/op.h"

namespace mg {

#define MG_OP(name) void register_##name(OpRegistry& registry);
#include "op_list.h"
#undef MG_OP

void register_builtin_ops(OpRegistry& registry) {
#define MG_OP(name) register_##name(registry);
#include "op_list.h"
#undef MG_OP
}

}  // namespace mg
