// Op libraries: registration marks origins, bad libraries give clear errors, and the
// custom-op example's shared build loads into this program and runs on its minigraph.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "expect_error.h"
#include "minigraph/minigraph.h"
#include "scaled_gelu/scaled_gelu.h"  // the attributes type only: the code comes from the plugin

namespace mg {
namespace {

using testing::expect_error;

void copy_kernel(const KernelContext& ctx) { ctx.out.set_flat(0, ctx.inputs[0].at_flat(0)); }

OpDef one_element_op(std::string name) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {"x"};
  op.infer = [](const OpDef&, std::span<const Tensor> in, const std::any&) {
    return OutputSpec{{1}, in[0].dtype()};
  };
  op.kernels = device_kernels(copy_kernel);
  return op;
}

TEST(OpLibrary, MissingFileNamesThePathAndTheLoaderMessage) {
  Error e = expect_error([] { load_op_library("/no/such/dir/libminigraph_nothing.so"); });
  EXPECT_EQ(e.op(), "load_op_library");
  EXPECT_EQ(e.argument(), "path");
  EXPECT_NE(std::string(e.what()).find("'/no/such/dir/libminigraph_nothing.so': "),
            std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
}

TEST(OpLibrary, LibraryWithoutTheHookIsRefused) {
  Error e = expect_error([] { load_op_library("libm.so.6"); });
  EXPECT_NE(e.expected().find("extern \"C\" minigraph_register_ops"), std::string::npos)
      << e.what();
  EXPECT_NE(e.actual().find("undefined symbol: minigraph_register_ops"), std::string::npos)
      << e.what();
}

TEST(OpLibrary, EmptyPathIsRefused) {
  Error e = expect_error([] { load_op_library(""); });
  EXPECT_EQ(e.actual(), "an empty path");
}

TEST(OpLibrary, RegisterMarksOriginAndRestoresItAfterAnError) {
  register_op_library([](OpRegistry& r) { r.add(one_element_op("plugin_test_marked")); },
                      "marked.so");
  EXPECT_EQ(OpRegistry::instance().get("plugin_test_marked").origin, "marked.so");

  Error e = expect_error([] {
    register_op_library([](OpRegistry& r) { r.add(one_element_op("plugin_test_marked")); },
                        "again.so");
  });
  EXPECT_NE(std::string(e.what()).find("'plugin_test_marked', which is registered already"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(OpRegistry::instance().add(one_element_op("plugin_test_direct")).origin, "program");
  register_builtin_ops();
  EXPECT_EQ(OpRegistry::instance().get("add").origin, "builtin");
}

TEST(OpLibrary, ALibraryWhoseSecondOpIsTakenRegistersNoneAndSaysWhichLibrary) {
  register_op_library([](OpRegistry& r) { r.add(one_element_op("plugin_test_taken")); },
                      "first.so");
  const std::size_t before = OpRegistry::instance().all().size();
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same result when loaded again
    Error e = expect_error([] {
      register_op_library(
          [](OpRegistry& r) {
            r.add(one_element_op("plugin_test_fresh"));
            r.add(one_element_op("plugin_test_taken"));
          },
          "second.so");
    });
    EXPECT_EQ(e.op(), "register_op_library") << e.what();
    EXPECT_NE(e.actual().find("'second.so': register_op: argument 'name': expected a new op name, "
                              "got 'plugin_test_taken', which is registered already (origin: "
                              "first.so)"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(OpRegistry::instance().find("plugin_test_fresh"), nullptr);
    EXPECT_EQ(OpRegistry::instance().all().size(), before);
  }
}

TEST(OpLibrary, ExamplePluginLoadsOnceAndRunsForwardAndBackward) {
  load_op_library(SCALED_GELU_PLUGIN);
  load_op_library(SCALED_GELU_PLUGIN);  // a second load is a no-op, not a duplicate-name error
  const OpDef& op = OpRegistry::instance().get("scaled_gelu");
  EXPECT_EQ(op.origin, SCALED_GELU_PLUGIN);
  EXPECT_EQ(OpRegistry::instance().get("scaled_gelu_backward").origin, SCALED_GELU_PLUGIN);

  Tensor x = Tensor::from_vector<double>({-1.0, 0.0, 1.0}, {3});
  x.set_requires_grad(true);
  Tensor y = apply_op(op, {x}, ScaledGeluAttrs{2.0});  // 2 x Phi(x)
  const double phi1 = 0.5 * (1 + std::erf(1 / std::sqrt(2.0)));
  EXPECT_NEAR(y.at({0}), -2 * (1 - phi1), 1e-12);
  EXPECT_NEAR(y.at({2}), 2 * phi1, 1e-12);
  sum(y).backward();  // the rule runs the plugin's scaled_gelu_backward through the host's engine
  const double pdf1 = std::exp(-0.5) / std::sqrt(2 * std::numbers::pi);
  EXPECT_NEAR(x.grad().at({2}), 2 * (phi1 + pdf1), 1e-12);
  EXPECT_NEAR(x.grad().at({1}), 1.0, 1e-12);
}

}  // namespace
}  // namespace mg
