// Op libraries: registration with an origin mark, and run-time loading through dlopen.
#include "minigraph/plugin.h"

#include <dlfcn.h>

#include <set>

#include "minigraph/op.h"
#include "minigraph/regular_file.h"

namespace mg {

namespace {

// The loader's last message; dlerror() returns null when it has none.
std::string loader_message() {
  const char* message = dlerror();
  return message != nullptr ? message : "unknown loader error";
}

}  // namespace

void register_op_library(RegisterOpsFn register_ops, const std::string& origin) {
  MG_CHECK(register_ops != nullptr, "register_op_library", "register_ops",
           "a registration function", "null (for '{}')", origin);
  OpRegistry& registry = OpRegistry::instance();
  const std::size_t before = registry.size();
  std::string previous = registry.exchange_origin(origin);
  try {
    register_ops(registry);
  } catch (const Error& e) {  // none of the library's ops stays: all or nothing
    registry.remove_added_by(origin, before);
    registry.exchange_origin(std::move(previous));
    throw Error("register_op_library", "register_ops",
                "a library whose ops all register (none of its ops was kept)",
                fmt::format("'{}': {}", origin, e.what()));
  } catch (...) {
    registry.remove_added_by(origin, before);
    registry.exchange_origin(std::move(previous));
    throw;
  }
  registry.exchange_origin(std::move(previous));
}

void load_op_library(const std::string& path) {
  // dlopen hands back the same handle for a library already loaded: register it once.
  static std::set<void*> registered;
  MG_CHECK(!path.empty(), "load_op_library", "path", "the path of a shared library",
           "an empty path");
  // dlopen would wait forever on a FIFO: a path (not a bare name the loader searches for) must
  // name a regular file.
  if (path.find('/') != std::string::npos) (void)RegularFile("load_op_library", "path", path);
  // RTLD_NOW: a missing symbol is reported here, not at the first call into the library.
  // RTLD_LOCAL: the library's own helpers stay out of the way of other libraries.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  MG_CHECK(handle != nullptr, "load_op_library", "path",
           "a loadable shared library (built against this program's minigraph)", "'{}': {}", path,
           loader_message());
  if (registered.contains(handle)) return;
  dlerror();  // clear any stale message, so the check below reads dlsym's own
  void* hook = dlsym(handle, kRegisterOpsSymbol);
  if (hook == nullptr) {
    std::string message = loader_message();
    dlclose(handle);  // nothing of it was registered
    throw Error("load_op_library", "path",
                fmt::format("a library defining extern \"C\" {}", kRegisterOpsSymbol),
                fmt::format("'{}': {}", path, message));
  }
  register_op_library(reinterpret_cast<RegisterOpsFn>(hook), path);
  registered.insert(handle);
}

}  // namespace mg
