// fmt formatting for minigraph types: fmt::format("{}", tensor), "{}" for shapes via shape_str.
#pragma once

#include <fmt/format.h>

#include "minigraph/tensor.h"

template <>
struct fmt::formatter<mg::Tensor> : fmt::formatter<std::string> {
  auto format(const mg::Tensor& t, fmt::format_context& ctx) const {
    return fmt::formatter<std::string>::format(t.str(), ctx);
  }
};
template <>
struct fmt::formatter<mg::Device> : fmt::formatter<std::string> {
  auto format(const mg::Device& d, fmt::format_context& ctx) const {
    return fmt::formatter<std::string>::format(d.str(), ctx);
  }
};
template <>
struct fmt::formatter<mg::DType> : fmt::formatter<std::string_view> {
  auto format(mg::DType d, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(mg::dtype_name(d), ctx);
  }
};
