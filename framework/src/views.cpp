// Views: tensors sharing another's storage under a new layout (layout.h). Each is recorded by
// autograd like an op, with a backward rule that only moves the gradient (a reshape, the
// inverse permutation, or the gradient placed in a tensor zero elsewhere), so they live in the
// core, not the op registry. expand is the one view whose backward sums: it lives in ops/expand.
#include <algorithm>
#include <atomic>
#include <numeric>

#include "minigraph/autograd.h"
#include "minigraph/layout.h"
#include "minigraph/op.h"
#include "minigraph/tensor.h"

namespace mg {

namespace {

std::atomic<std::uint64_t> g_layout_copy_bytes{0};

struct AxisRange {
  std::int64_t dim = 0, start = 0, length = 0;
};
struct Axes {
  std::vector<std::int64_t> dims;
};

// What graph pictures call the placement below (it is no registered op: memory moves only).
const OpDef& place_in_zeros_def() {
  static const OpDef def = [] {
    OpDef op;
    op.name = "place_in_zeros";
    op.summary = "a part's gradient placed in a tensor zero elsewhere";
    op.inputs = {"grad"};
    op.describe_attrs = [](const std::any& attrs) {
      const auto& a = attrs_as<AxisRange>("place_in_zeros", attrs);
      return fmt::format("dim={}, start={}", a.dim, a.start);
    };
    return op;
  }();
  return def;
}

// The gradient of a part of `shape` (the part at [start, start + grad's size) of axis dim):
// each element written once, the part from grad and the rest zero.
Tensor place_in_zeros(const Tensor& grad, const Shape& shape, std::int64_t dim,
                      std::int64_t start) {
  Tensor out = Tensor::empty(shape, grad.dtype(), grad.device());
  const std::int64_t length = grad.shape()[dim], end = start + length;
  out.narrow(dim, 0, start).zero_();
  out.narrow(dim, end, shape[dim] - end).zero_();
  out.narrow(dim, start, length).copy_(grad);
  notify_op_observer(place_in_zeros_def(), {&grad, 1}, AxisRange{dim, start, length}, out);
  return out;
}

std::vector<std::int64_t> inverse(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> inv(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) inv[dims[i]] = static_cast<std::int64_t>(i);
  return inv;
}

OpDef view_def(std::string name, std::string summary,
               std::function<Tensor(const BackwardContext&)> backward) {
  OpDef op;
  op.name = std::move(name);
  op.summary = std::move(summary);
  op.inputs = {"self"};
  op.backward = [backward = std::move(backward)](const BackwardContext& ctx) {
    return std::vector<Tensor>{backward(ctx)};
  };
  return op;
}

const OpDef& reshape_def() {
  static const OpDef def =
      view_def("view", "the same elements under another shape",
               [](const BackwardContext& ctx) { return ctx.grad_out.reshape(ctx.input_shape(0)); });
  return def;
}

const OpDef& contiguous_def() {
  static const OpDef def = view_def("contiguous", "a contiguous copy",
                                    [](const BackwardContext& ctx) { return ctx.grad_out; });
  return def;
}

const OpDef& narrow_def() {
  static const OpDef def = [] {
    OpDef op = view_def("narrow", "indices [start, start + length) of one axis",
                        [](const BackwardContext& ctx) {
                          const auto& a = ctx.attrs_as<AxisRange>();
                          return place_in_zeros(ctx.grad_out, ctx.input_shape(0), a.dim, a.start);
                        });
    op.describe_attrs = [](const std::any& attrs) {
      const auto& a = attrs_as<AxisRange>("narrow", attrs);
      return fmt::format("dim={}, start={}, length={}", a.dim, a.start, a.length);
    };
    return op;
  }();
  return def;
}

const OpDef& select_def() {
  static const OpDef def = [] {
    OpDef op = view_def(
        "select", "one index of one axis, the axis removed", [](const BackwardContext& ctx) {
          const auto& a = ctx.attrs_as<AxisRange>();
          return place_in_zeros(ctx.grad_out.unsqueeze(a.dim), ctx.input_shape(0), a.dim, a.start);
        });
    op.describe_attrs = [](const std::any& attrs) {
      const auto& a = attrs_as<AxisRange>("select", attrs);
      return fmt::format("dim={}, index={}", a.dim, a.start);
    };
    return op;
  }();
  return def;
}

const OpDef& permute_def() {
  static const OpDef def = [] {
    OpDef op = view_def("permute", "the axes reordered", [](const BackwardContext& ctx) {
      return ctx.grad_out.permute(inverse(ctx.attrs_as<Axes>().dims));
    });
    op.describe_attrs = [](const std::any& attrs) {
      return fmt::format("dims=[{}]", fmt::join(attrs_as<Axes>("permute", attrs).dims, ", "));
    };
    return op;
  }();
  return def;
}

// The element count of a requested shape, every size checked under the op's name.
std::int64_t requested_numel(const Shape& shape, std::string_view op) {
  std::int64_t numel = 1;
  for (std::int64_t size : shape) {
    MG_CHECK(size >= 0, std::string(op), "shape", "non-negative sizes (one may be -1)", "{}",
             shape_str(shape));
    numel = checked_mul(numel, size, op, "shape");
  }
  return numel;
}

// A shape with one -1 gets that size from the element count.
Shape resolve_shape(const Shape& requested, std::int64_t numel, const Shape& from,
                    std::string_view op) {
  Shape shape = requested;
  auto inferred = std::find(shape.begin(), shape.end(), -1);
  if (inferred != shape.end()) {
    MG_CHECK(std::count(shape.begin(), shape.end(), -1) == 1, std::string(op), "shape",
             "at most one size of -1", "{}", shape_str(requested));
    *inferred = 1;
    const std::int64_t known = requested_numel(shape, op);
    MG_CHECK(
        known > 0 && numel % known == 0, std::string(op), "shape",
        fmt::format("sizes whose product divides {} elements (from {})", numel, shape_str(from)),
        "{}", shape_str(requested));
    *inferred = numel / known;
  }
  MG_CHECK(requested_numel(shape, op) == numel, std::string(op), "shape",
           fmt::format("{} elements (from {})", numel, shape_str(from)), "{}",
           shape_str(requested));
  return shape;
}

// A view of t's storage, recorded as `def` with `attrs`.
Tensor make_view(const Tensor& t, const OpDef& def, std::any attrs, Shape shape, Shape strides,
                 std::int64_t offset) {
  Tensor out = Tensor::from_storage(t.impl()->storage, shape, strides, t.dtype(), offset);
  record_node(def, {t}, std::move(attrs), out, std::move(shape));
  return out;
}

}  // namespace

std::uint64_t layout_copy_bytes() { return g_layout_copy_bytes.load(std::memory_order_relaxed); }

Tensor Tensor::view(const Shape& requested) const {
  const Shape shape = resolve_shape(requested, numel(), this->shape(), "view");
  const auto strides = view_strides(this->shape(), this->strides(), shape);
  MG_CHECK(strides.has_value(), "view", "shape",
           fmt::format("a shape the strides {} of {} can say without a copy (reshape copies)",
                       shape_str(this->strides()), shape_str(this->shape())),
           "{}", shape_str(requested));
  return make_view(*this, reshape_def(), {}, shape, *strides, storage_offset());
}

Tensor Tensor::reshape(const Shape& requested) const {
  const Shape shape = resolve_shape(requested, numel(), this->shape(), "reshape");
  if (auto viewed = view_strides(this->shape(), this->strides(), shape)) {
    return make_view(*this, reshape_def(), {}, shape, *viewed, storage_offset());
  }
  return contiguous().view(shape);
}

Tensor Tensor::flatten() const { return reshape({-1}); }

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = clone();
  g_layout_copy_bytes.fetch_add(out.nbytes(), std::memory_order_relaxed);
  notify_op_observer(contiguous_def(), {this, 1}, {}, out);
  record_node(contiguous_def(), {*this}, {}, out, shape());
  return out;
}

Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  MG_CHECK(this->dim() >= 1, "narrow", "self", "a tensor of rank 1 or more", "rank 0");
  dim = wrap_dim(dim, this->dim(), "narrow");
  const std::int64_t size = shape()[dim];
  MG_CHECK(start >= -size && start <= size, "narrow", "start",
           fmt::format("in [{}, {}] (axis {} of size {})", -size, size, dim, size), "{}", start);
  if (start < 0) start += size;
  // Compared as length <= size - start: start + length could pass INT64_MAX.
  MG_CHECK(
      length >= 0 && length <= size - start, "narrow", "length",
      fmt::format("in [0, {}] (axis {} of size {} from start {})", size - start, dim, size, start),
      "{}", length);
  Shape shape = this->shape(), strides = this->strides();
  shape[dim] = length;
  // An empty part keeps the offset: one past the end of a strided axis may pass the storage.
  const std::int64_t offset = storage_offset() + (length == 0 ? 0 : start * strides[dim]);
  return make_view(*this, narrow_def(), AxisRange{dim, start, length}, shape, strides, offset);
}

Tensor Tensor::select(std::int64_t dim, std::int64_t index) const {
  MG_CHECK(this->dim() >= 1, "select", "self", "a tensor of rank 1 or more", "rank 0");
  dim = wrap_dim(dim, this->dim(), "select");
  const std::int64_t size = shape()[dim];
  MG_CHECK(index >= -size && index < size, "select", "index",
           fmt::format("in [{}, {}) (axis {} of size {})", -size, size, dim, size), "{}", index);
  if (index < 0) index += size;
  Shape shape = this->shape(), strides = this->strides();
  const std::int64_t offset = storage_offset() + index * strides[dim];
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(*this, select_def(), AxisRange{dim, index, 1}, shape, strides, offset);
}

Tensor Tensor::permute(const std::vector<std::int64_t>& dims) const {
  MG_CHECK(static_cast<std::int64_t>(dims.size()) == dim(), "permute", "dims",
           fmt::format("{} axes (the rank of {})", dim(), shape_str(shape())), "[{}]",
           fmt::join(dims, ", "));
  std::vector<std::int64_t> axes(dims.size());
  std::vector<bool> seen(dims.size(), false);
  const Shape from_strides = this->strides();
  Shape shape(dims.size()), strides(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t axis = wrap_dim(dims[i], dim(), "permute", "dims");
    MG_CHECK(!seen[axis], "permute", "dims", "a permutation (each axis once)", "[{}]",
             fmt::join(dims, ", "));
    seen[axis] = true;
    axes[i] = axis;
    shape[i] = this->shape()[axis];
    strides[i] = from_strides[axis];
  }
  return make_view(*this, permute_def(), Axes{axes}, shape, strides, storage_offset());
}

Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  dim0 = wrap_dim(dim0, dim(), "transpose", "dim0");
  dim1 = wrap_dim(dim1, dim(), "transpose", "dim1");
  std::vector<std::int64_t> dims(static_cast<std::size_t>(dim()));
  std::iota(dims.begin(), dims.end(), 0);
  if (dim() > 0) std::swap(dims[dim0], dims[dim1]);
  return permute(dims);
}

Tensor Tensor::t() const {
  MG_CHECK(dim() <= 2, "t", "self", "a tensor of rank 0 to 2 (transpose takes any two axes)",
           "rank {} (shape {})", dim(), shape_str(shape()));
  return dim() < 2 ? transpose(0, 0) : transpose(0, 1);
}

Tensor Tensor::unsqueeze(std::int64_t dim) const {
  dim = wrap_dim(dim, this->dim() + 1, "unsqueeze");
  Shape shape = this->shape(), strides = this->strides();
  std::int64_t stride = 1;  // one past the next axis; saturated for an empty tensor's strides
  if (dim < this->dim() && __builtin_mul_overflow(shape[dim], strides[dim], &stride)) {
    stride = kInt64Max;
  }
  shape.insert(shape.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return make_view(*this, reshape_def(), {}, shape, strides, storage_offset());
}

Tensor Tensor::squeeze() const {
  const Shape from_strides = this->strides();
  Shape shape, strides;
  for (std::int64_t axis = 0; axis < dim(); ++axis) {
    if (this->shape()[axis] == 1) continue;
    shape.push_back(this->shape()[axis]);
    strides.push_back(from_strides[axis]);
  }
  return make_view(*this, reshape_def(), {}, shape, strides, storage_offset());
}

Tensor Tensor::squeeze(std::int64_t dim) const {
  dim = wrap_dim(dim, this->dim(), "squeeze");
  Shape shape = this->shape(), strides = this->strides();
  if (this->dim() > 0 && shape[dim] == 1) {
    shape.erase(shape.begin() + dim);
    strides.erase(strides.begin() + dim);
  }
  return make_view(*this, reshape_def(), {}, shape, strides, storage_offset());
}

std::vector<Tensor> Tensor::split(std::int64_t split_size, std::int64_t dim) const {
  MG_CHECK(this->dim() >= 1, "split", "self", "a tensor of rank 1 or more", "rank 0");
  dim = wrap_dim(dim, this->dim(), "split");
  const std::int64_t size = shape()[dim];
  MG_CHECK(split_size > 0 || (split_size == 0 && size == 0), "split", "split_size",
           "a positive size (0 only for an axis of size 0)", "{}", split_size);
  std::vector<Tensor> pieces;
  if (size == 0) pieces.push_back(narrow(dim, 0, 0));
  for (std::int64_t start = 0; start < size; start += std::min(split_size, size - start)) {
    pieces.push_back(narrow(dim, start, std::min(split_size, size - start)));
  }
  return pieces;
}

std::vector<Tensor> Tensor::chunk(std::int64_t chunks, std::int64_t dim) const {
  MG_CHECK(chunks >= 1, "chunk", "chunks", "at least 1", "{}", chunks);
  MG_CHECK(this->dim() >= 1, "chunk", "self", "a tensor of rank 1 or more", "rank 0");
  const std::int64_t size = shape()[wrap_dim(dim, this->dim(), "chunk")];
  if (size == 0) return {narrow(dim, 0, 0)};  // one empty piece: "fewer when the size runs out"
  return split(size / chunks + (size % chunks != 0), dim);  // ceil without overflow
}

}  // namespace mg
