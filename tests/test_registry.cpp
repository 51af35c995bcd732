// What the built-in ops promise (README, "Adding an op"): each has cases, so the harness covers
// it, a naive reference to check kernels against, and a kernel for every backend this build
// has. Op libraries need only a CPU kernel; those are checked by their own harness.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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

// The dtype errors the harness derives from an op's inputs (all_error_cases): an integer tensor
// for each float input, floats for each id input, another float dtype for each float input after
// the first; then the op's own. Each expects the message of the check that should fire.
TEST(Registry, DtypeErrorCasesFollowFromAnOpsInputs) {
  register_builtin_ops();
  auto names = [](const char* op) {
    std::vector<std::string> out;
    for (const ErrorCase& c : all_error_cases(OpRegistry::instance().get(op))) {
      out.push_back(c.name + ": " + c.expect);
    }
    return out;
  };
  EXPECT_EQ(names("add"),
            (std::vector<std::string>{
                "dtype_integer_a: argument 'a': expected a floating-point tensor",
                "dtype_integer_b: argument 'b': expected a floating-point tensor",
                "dtype_mixed_b: argument 'b': expected dtype", "shape_mismatch: broadcastable"}));
  EXPECT_EQ(names("embedding").at(1), "dtype_float_ids: argument 'ids': expected integer ids");
  const ErrorCase mixed = all_error_cases(OpRegistry::instance().get("matmul")).at(2);
  EXPECT_EQ(mixed.inputs.at(0).dtype, std::nullopt);  // f32 in the harness's error cases
  EXPECT_EQ(mixed.inputs.at(1).dtype, DType::f64);
  EXPECT_EQ(names("exp").size(), 1u);  // one float input, nothing of its own
}

// Every case's name, derived error cases included (a variadic op's tensors[1] gives
// "dtype_integer_tensors_1"), is made of a test name's characters: the harness names its tests
// after them.
TEST(Registry, EveryCaseIsNamedAsATest) {
  register_builtin_ops();
  auto test_name = [](const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
  };
  int named = 0;
  for (const OpDef* op : OpRegistry::instance().all()) {
    for (const OpCase& c : op->cases ? op->cases() : std::vector<OpCase>{}) {
      EXPECT_TRUE(test_name(c.name)) << op->name << " case '" << c.name << "'";
      ++named;
    }
    for (const ErrorCase& c : all_error_cases(*op)) {
      EXPECT_TRUE(test_name(c.name)) << op->name << " error case '" << c.name << "'";
      ++named;
    }
  }
  EXPECT_GT(named, 300);
  std::vector<std::string> cat_cases;
  for (const ErrorCase& c : all_error_cases(OpRegistry::instance().get("cat"))) {
    cat_cases.push_back(c.name);
  }
  EXPECT_EQ(cat_cases.at(0), "dtype_integer_tensors_0");
}

}  // namespace
}  // namespace mg
