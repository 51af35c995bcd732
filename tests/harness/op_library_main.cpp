// The op harness of one op library linked into this program (minigraph_add_op_harness in
// cmake/MinigraphOpLibrary.cmake): registers the library's ops and tests those alone.
// Installed with the package (lib/cmake/minigraph/), where the same function compiles it for
// op libraries outside this tree: it includes public <minigraph/...> headers only.
#include <fmt/format.h>

#include "minigraph/error.h"
#include "minigraph/plugin.h"
#include "minigraph/testing/op_harness.h"

int main(int argc, char** argv) {
  try {
    mg::register_op_library(minigraph_register_ops, MINIGRAPH_OP_LIBRARY);
  } catch (const mg::Error& e) {
    fmt::print(stderr, "registering the ops of {} failed: {}\n", MINIGRAPH_OP_LIBRARY, e.what());
    return 1;
  }
  return mg::testing::run_op_harness(argc, argv, MINIGRAPH_OP_LIBRARY);
}
