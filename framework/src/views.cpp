// Views: tensors sharing another's storage under a new shape (view) or as a block of rows
// (narrow). Both are recorded by autograd like ops, with backward rules that need memory
// operations only (a reshape; a zero tensor with the rows copied in), so they live in the
// core, not the op registry.
#include <algorithm>

#include "minigraph/autograd.h"
#include "minigraph/op.h"
#include "minigraph/tensor.h"

namespace mg {

namespace {

struct NarrowAttrs {
  std::int64_t start = 0, length = 0;
};

OpDef make_view_def() {
  OpDef op;
  op.name = "view";
  op.summary = "the same elements under another shape";
  op.inputs = {"self"};
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{ctx.grad_out.view(ctx.inputs[0].shape())};
  };
  return op;
}

OpDef make_narrow_def() {
  OpDef op;
  op.name = "narrow";
  op.summary = "rows [start, start + length) of the first dimension";
  op.inputs = {"self"};
  op.backward = [](const BackwardContext& ctx) {
    const auto& a = ctx.attrs_as<NarrowAttrs>();
    const Tensor& self = ctx.inputs[0];
    Tensor grad = Tensor::zeros(self.shape(), ctx.grad_out.dtype(), ctx.grad_out.device());
    grad.narrow(a.start, a.length).copy_(ctx.grad_out);
    return std::vector<Tensor>{grad};
  };
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<NarrowAttrs>("narrow", attrs);
    return fmt::format("start={}, length={}", a.start, a.length);
  };
  return op;
}

const OpDef& view_def() {
  static const OpDef def = make_view_def();
  return def;
}
const OpDef& narrow_def() {
  static const OpDef def = make_narrow_def();
  return def;
}

// A shape with one -1 gets that size from the element count.
Shape resolve_shape(const Shape& requested, std::int64_t numel, const Shape& from) {
  Shape shape = requested;
  auto inferred = std::find(shape.begin(), shape.end(), -1);
  if (inferred != shape.end()) {
    MG_CHECK(std::count(shape.begin(), shape.end(), -1) == 1, "view", "shape",
             "at most one size of -1", "{}", shape_str(requested));
    *inferred = 1;
    const std::int64_t known = shape_numel(shape);
    MG_CHECK(
        known > 0 && numel % known == 0, "view", "shape",
        fmt::format("sizes whose product divides {} elements (from {})", numel, shape_str(from)),
        "{}", shape_str(requested));
    *inferred = numel / known;
  }
  MG_CHECK(shape_numel(shape) == numel, "view", "shape",
           fmt::format("{} elements (from {})", numel, shape_str(from)), "{}",
           shape_str(requested));
  return shape;
}

}  // namespace

Tensor Tensor::view(const Shape& requested) const {
  const Shape shape = resolve_shape(requested, numel(), this->shape());
  Tensor out = from_storage(checked_impl().storage, shape, dtype(), storage_offset());
  record_node(view_def(), {*this}, {}, out, shape);
  return out;
}

Tensor Tensor::narrow(std::int64_t start, std::int64_t length) const {
  MG_CHECK(dim() >= 1, "narrow", "self", "a tensor of rank 1 or more", "rank 0");
  const std::int64_t rows = shape()[0];
  MG_CHECK(start >= 0 && start <= rows, "narrow", "start", fmt::format("in [0, {}]", rows), "{}",
           start);
  // Compared as length <= rows - start: start + length could pass INT64_MAX.
  MG_CHECK(length >= 0 && length <= rows - start, "narrow", "length",
           fmt::format("in [0, {}] (rows {} from start {})", rows - start, rows, start), "{}",
           length);
  Shape shape = this->shape();
  shape[0] = length;
  const std::int64_t row_elements = rows == 0 ? 0 : numel() / rows;
  Tensor out =
      from_storage(checked_impl().storage, shape, dtype(), storage_offset() + start * row_elements);
  record_node(narrow_def(), {*this}, NarrowAttrs{start, length}, out, shape);
  return out;
}

}  // namespace mg
