// What the built-in ops promise (README, "Adding an op"): each has cases, so the harness covers
// it, a naive reference to check kernels against, and a kernel for every backend this build
// has. Op libraries need only a CPU kernel; those are checked by their own harness.
#include <gtest/gtest.h>

#include <set>

#include "minigraph/minigraph.h"

namespace mg {
namespace {

TEST(Registry, EveryBuiltinOpHasCasesAReferenceAndAKernelForEachBuiltBackend) {
  register_builtin_ops();
  std::set<std::string> builtins;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->origin != "builtin") continue;
    builtins.insert(op->name);
    EXPECT_TRUE(op->cases && !op->cases().empty()) << op->name << " has no cases";
    EXPECT_TRUE(op->reference) << op->name << " has no naive reference";
    for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda}) {
      if (!backend_built(kind)) continue;
      EXPECT_NE(op->kernel(kind), nullptr)
          << op->name << " has no " << device_kind_name(kind) << " kernel";
    }
  }
  for (const char* name : {"embedding", "token_position_embedding", "add", "matmul"}) {
    EXPECT_TRUE(builtins.contains(name)) << name << " is not registered as a built-in op";
  }
}

}  // namespace
}  // namespace mg
