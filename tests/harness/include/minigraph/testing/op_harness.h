// The table-driven op harness: for every registered op x case x backend x dtype it registers
// GoogleTest tests (backends: the CPU, and CUDA where the build has it, a GPU is present and
// the op has a CUDA kernel; tests that could only skip are not registered),
// named ops.<op>_<case>_<device>_<dtype>_<check>, that check
//   - the output shape against the op's rule, and the forward against its naive reference;
//   - guard bytes after the output (no out-of-bounds writes);
//   - gradients against finite differences (f64), and every backend against the CPU;
//   - every error case throws mg::Error naming the op, and leaves the inputs untouched.
// An op registered with cases is covered without any test code of its own.
#pragma once

#include <string_view>

#include "minigraph/op.h"

namespace mg::testing {

// Registers the tests for the ops now in the registry: every op, or only those whose
// OpDef::origin is `origin` (an op library's harness tests its own ops, not the built-ins
// again). Call before RUN_ALL_TESTS.
void register_op_tests(std::string_view origin = {});

// The harness's main: registers the tests and runs them.
int run_op_harness(int argc, char** argv, std::string_view origin = {});

}  // namespace mg::testing
