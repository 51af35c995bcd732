// The framework floor's objects linked alone, with no ops or models: it links only if no
// framework file calls into a floor above (the linker names any such symbol), and then the
// core works on its own: tensors, views, writes, and an empty op registry.
#include <cstdio>
#include <string>

#include "minigraph/error.h"
#include "minigraph/op.h"
#include "minigraph/tensor.h"

int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "FAILED: %s\n", what);
      ++failures;
    }
  };
  mg::Tensor t = mg::Tensor::zeros({3, 2}, mg::DType::f64);
  t.narrow(0, 1, 1).fill_(2.5);
  check(t.at({1, 1}) == 2.5 && t.at({0, 0}) == 0 && t.at({2, 1}) == 0, "narrow + fill_");
  check(t.view({-1}).shape() == mg::Shape{6}, "view");
  check(mg::OpRegistry::instance().all().empty(), "the registry is empty without the ops floor");
  try {
    mg::OpRegistry::instance().get("add");
    check(false, "looking up an op that is not registered throws");
  } catch (const mg::Error& e) {
    check(std::string(e.what()).find("mg::register_builtin_ops()") != std::string::npos,
          "the lookup error says how the built-in ops join");
  }
  if (failures == 0) std::printf("the framework floor links and runs alone: ok\n");
  return failures == 0 ? 0 : 1;
}
