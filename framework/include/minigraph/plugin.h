// Op libraries: ops defined outside minigraph (examples/custom_op is one). A library exposes
//
//   extern "C" void minigraph_register_ops(mg::OpRegistry& registry);
//
// and a program takes its ops in one of two ways:
//   - it links the library and calls register_op_library(minigraph_register_ops, "name");
//   - it loads a shared build of it at run time: load_op_library("libminigraph_x.so"), as
//     `minigraph --plugin PATH` does.
// A loaded library carries no minigraph code of its own: it binds to the minigraph of the
// program that loads it (one registry, one grad mode, one allocator). That program must link
// all of minigraph and export it; cmake/MinigraphOpLibrary.cmake sets up both sides.
#pragma once

#include <string>

namespace mg {

class OpRegistry;

// The registration hook of an op library; it adds its ops with registry.add(...).
using RegisterOpsFn = void (*)(OpRegistry& registry);
inline constexpr const char* kRegisterOpsSymbol = "minigraph_register_ops";

// Runs an op library's hook on the process-wide registry and marks every op it adds with
// `origin` (OpDef::origin). Errors from the hook (a name taken, a part missing) propagate.
void register_op_library(RegisterOpsFn register_ops, const std::string& origin);

// Loads the shared library at `path` (dlopen) and registers its ops, marked with the path.
// Loading the same library again does nothing. Throws mg::Error naming the path and the
// loader's message when it cannot be loaded or does not define minigraph_register_ops.
// Libraries stay loaded for the life of the process: the registry points into them.
void load_op_library(const std::string& path);

}  // namespace mg

// Defined by each op library (not by minigraph).
extern "C" void minigraph_register_ops(mg::OpRegistry& registry);
