// The table-driven op harness: for every registered op x case x backend x dtype it registers
// GoogleTest tests (backends: the CPU, and CUDA where the build has it, a GPU is present and
// the op has a CUDA kernel; tests that could only skip are not registered),
// named ops.<op>_<case>_<device>_<dtype>_<check>, that check
//   - the output shape of the rule (infer) against the shape the naive reference computes on
//     its own, and the kernel's values against the reference's (f64, CPU);
//   - every output poisoned with NaN before a kernel writes it, so a skipped element fails,
//     and guard bytes after it (no out-of-bounds writes);
//   - gradients against finite differences (f64), f32 gradients against f64 ones (CPU), and
//     every other backend against the CPU;
//   - every case again with its inputs in non-contiguous layouts (_transposed, _sliced,
//     _expanded), forward and gradients against contiguous inputs of the same values, and each
//     kernel whose OpDef::takes_layout accepts a layout called directly on it;
//   - every error case throws mg::Error naming the op, and leaves the inputs untouched: the
//     op's own, and those its inputs imply (_error_dtype_integer_<input>: an integer tensor
//     for a float input; _dtype_float_<input>: floats for ids; _dtype_mixed_<input>: a float
//     input of another dtype than the first), made from its first case;
//   - the op has every part these checks need (missing_parts), as ops.<op>_complete.
// An op registered with cases is covered without any test code of its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "minigraph/op.h"

namespace mg::testing {

// Registers the tests for the ops now in the registry: every op, or only those whose
// OpDef::origin is `origin` (an op library's harness tests its own ops, not the built-ins
// again). Call before RUN_ALL_TESTS.
void register_op_tests(std::string_view origin = {});

// What an op lacks for the harness to check it, one line each (empty: nothing): cases, a naive
// reference, float dtypes, kernels only for declared dtypes, and for a built-in op a kernel
// for every backend the build has. An op with no cases would otherwise get no test at all.
std::vector<std::string> missing_parts(const OpDef& op);

// The harness's main: registers the tests and runs them.
int run_op_harness(int argc, char** argv, std::string_view origin = {});

// How the harness compares two tensors: "" when they match, else a line naming the worst
// element. Shapes must be equal. Finite elements match when |actual - expected| <= atol +
// rtol * |expected|; an infinity only matches the same infinity (inf against -inf or against
// a number is a mismatch), and NaN matches nothing, not even NaN: the harness poisons outputs
// with NaN before a kernel runs, so a NaN is an element no kernel wrote. With nan_matches_nan
// (cases of OpCase::edge_values, whose outputs are poisoned with a finite sentinel instead), a
// NaN matches a NaN.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, double atol, double rtol,
                            bool nan_matches_nan = false);

}  // namespace mg::testing
