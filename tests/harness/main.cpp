// The op harness over the built-in ops.
#include "minigraph/testing/op_harness.h"

int main(int argc, char** argv) { return mg::testing::run_op_harness(argc, argv); }
