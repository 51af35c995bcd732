// The built-in ops' registration. Calling any built-in op registers them all first; call
// this where the registry must list them before that (a tool listing ops, a test harness).
#pragma once

namespace mg {

// Registers every op of ops/op_list.h in OpRegistry::instance(), once per process (later
// calls return at once); thread-safe. Their OpDef::origin is "builtin".
void register_builtin_ops();

}  // namespace mg
