// A fresh folder under the test's temporary directory, removed with everything in it.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

namespace mg::testing {

struct ScratchDir {
  ScratchDir() {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "mg-test-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path)) {
      names.push_back(e.path().filename());
    }
    return names;
  }
  std::filesystem::path path;
};

}  // namespace mg::testing
