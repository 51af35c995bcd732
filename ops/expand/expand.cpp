// expand: a view of x whose broadcast axes have stride 0.
//   x [..X], shape S (X broadcasts to S) -> out [S], no copy
// Backward: the upstream gradient summed to x's shape (sum_to): one reduction, which is why
// this view lives with the ops and not in the core.
#include "expand/expand.h"

#include "minigraph/autograd.h"
#include "minigraph/op.h"
#include "sum_to/sum_to.h"

namespace mg {

namespace {

struct ExpandAttrs {
  Shape shape;
};

const OpDef& expand_def() {
  static const OpDef def = [] {
    OpDef op;
    op.name = "expand";
    op.summary = "size-1 axes repeated without a copy (stride 0)";
    op.inputs = {"self"};
    op.backward = [](const BackwardContext& ctx) {
      return std::vector<Tensor>{sum_to(ctx.grad_out, ctx.input_shape(0))};
    };
    op.describe_attrs = [](const std::any& attrs) {
      return "shape=" + shape_str(attrs_as<ExpandAttrs>("expand", attrs).shape);
    };
    return op;
  }();
  return def;
}

}  // namespace

Tensor expand(const Tensor& x, const Shape& requested) {
  MG_CHECK(x.defined(), "expand", "self", "a defined tensor", "an undefined one");
  const auto rank = static_cast<std::int64_t>(requested.size());
  MG_CHECK(rank >= x.dim(), "expand", "shape",
           fmt::format("at least {} sizes (the rank of {})", x.dim(), shape_str(x.shape())), "{}",
           shape_str(requested));
  Shape shape(requested.size()), strides(requested.size());
  const Shape x_strides = x.strides();
  const std::int64_t lead = rank - x.dim();
  for (std::int64_t axis = 0; axis < rank; ++axis) {
    const std::int64_t want = requested[axis];
    if (axis < lead) {
      MG_CHECK(want >= 0, "expand", "shape",
               "non-negative sizes on new leading axes (-1 only on x's own axes)", "{}",
               shape_str(requested));
      shape[axis] = want;
      strides[axis] = 0;
      continue;
    }
    const std::int64_t have = x.shape()[axis - lead];
    MG_CHECK(
        want == have || want == -1 || (have == 1 && want >= 0), "expand", "shape",
        fmt::format("a shape x's {} broadcasts to (only size-1 axes grow)", shape_str(x.shape())),
        "{} (axis {}: {} to {})", shape_str(requested), axis, have, want);
    shape[axis] = want == -1 ? have : want;
    strides[axis] = shape[axis] == have ? x_strides[axis - lead] : 0;
  }
  std::int64_t numel = 1;
  for (std::int64_t size : shape) numel = checked_mul(numel, size, "expand", "shape");
  Tensor out =
      Tensor::from_storage(x.impl()->storage, shape, strides, x.dtype(), x.storage_offset());
  record_node(expand_def(), {x}, ExpandAttrs{shape}, out, shape);
  return out;
}

}  // namespace mg
