// cat, a variadic op: each input copied into its slice of the output through the backend's
// strided copy (Tensor::copy_), which reads any layout on any device, so one kernel serves
// every backend and views are never made contiguous first. stack is cat of unsqueezed views.
//   tensors[i] [..., N_i, ...] -> out [..., sum N_i, ...]
// Derivative: tensors[i]'s gradient is grad_out.narrow(dim, offset_i, N_i), a view; the rule
// reads only the inputs' shapes.
#include "cat/cat.h"

#include <cmath>
#include <limits>

#include "common/define_op.h"
#include "minigraph/autograd.h"

namespace mg {

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  static const OpDef& op = builtin_op("cat");
  return apply_op(op, tensors, CatAttrs{dim});
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  MG_CHECK(!tensors.empty(), "stack", "tensors", "one or more tensors", "none");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    MG_CHECK(tensors[i].defined(), "stack", fmt::format("tensors[{}]", i), "a defined tensor",
             "an undefined one");
    MG_CHECK(tensors[i].shape() == tensors[0].shape(), "stack", fmt::format("tensors[{}]", i),
             fmt::format("shape {} (as tensors[0])", shape_str(tensors[0].shape())), "{}",
             shape_str(tensors[i].shape()));
  }
  const std::int64_t rank = tensors[0].dim();
  MG_CHECK(dim >= -(rank + 1) && dim <= rank, "stack", "dim",
           fmt::format("a dim in [{}, {}] for tensors of rank {}", -(rank + 1), rank, rank), "{}",
           dim);
  if (dim < 0) dim += rank + 1;
  std::vector<Tensor> columns;
  columns.reserve(tensors.size());
  for (const Tensor& t : tensors) columns.push_back(t.unsqueeze(dim));
  return cat(columns, dim);
}

namespace {

std::int64_t cat_axis(const std::any& attrs, std::int64_t rank) {
  const std::int64_t dim = attrs_as<CatAttrs>("cat", attrs).dim;
  return dim < 0 ? dim + rank : dim;
}

OutputSpec cat_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  const Tensor& first = in[0];
  check_floating(self, 0, first);
  MG_CHECK(first.dim() >= 1, self.name, self.input_name(0),
           "a tensor of rank 1 or more (stack joins scalars)", "rank 0");
  const std::int64_t rank = first.dim();
  const std::int64_t dim = attrs_as<CatAttrs>(self.name, attrs).dim;
  MG_CHECK(dim >= -rank && dim < rank, self.name, "dim",
           fmt::format("a dim in [{}, {}) for tensors of rank {}", -rank, rank, rank), "{}", dim);
  const std::int64_t axis = cat_axis(attrs, rank);
  Shape out = first.shape();
  for (std::size_t i = 1; i < in.size(); ++i) {
    check_floating(self, i, in[i]);
    check_same_dtype(self, i, in[i], first.dtype());
    MG_CHECK(in[i].dim() == rank, self.name, self.input_name(i),
             fmt::format("a tensor of rank {} (as {})", rank, self.input_name(0)),
             "rank {} (shape {})", in[i].dim(), shape_str(in[i].shape()));
    for (std::int64_t k = 0; k < rank; ++k) {
      if (k == axis) continue;
      MG_CHECK(in[i].size(k) == first.size(k), self.name, self.input_name(i),
               fmt::format("size {} along axis {} (as {}; only axis {} may differ)", first.size(k),
                           k, self.input_name(0), axis),
               "shape {}", shape_str(in[i].shape()));
    }
    MG_CHECK(!__builtin_add_overflow(out[axis], in[i].size(axis), &out[axis]), self.name,
             self.input_name(i), "sizes along dim whose sum fits in int64", "a sum past 2^63 - 1");
  }
  return OutputSpec{out, first.dtype()};
}

void cat_copy_kernel(const KernelContext& ctx) {
  const std::int64_t axis = cat_axis(ctx.attrs, ctx.out.dim());
  NoGradGuard no_grad;  // slices of a fresh output: nothing to record
  std::int64_t offset = 0;
  for (const Tensor& t : ctx.inputs) {
    const std::int64_t n = t.size(axis);
    ctx.out.narrow(axis, offset, n).copy_(t);
    offset += n;
  }
}

std::vector<Tensor> cat_backward(const BackwardContext& ctx) {
  const std::int64_t axis = cat_axis(ctx.attrs, ctx.grad_out.dim());
  std::vector<Tensor> grads(ctx.input_count());
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const std::int64_t n = ctx.input_shape(i)[static_cast<std::size_t>(axis)];
    if (ctx.needs_grad(i)) grads[i] = ctx.grad_out.narrow(axis, offset, n);
    offset += n;
  }
  return grads;
}

// The naive reference: the output's shape by plain addition, then each output index split into
// (before, j, after) around the axis and read from the input whose range along it holds j.
Tensor cat_reference(std::span<const Tensor> in, const std::any& attrs) {
  const Shape& first = in[0].shape();
  const auto rank = static_cast<std::int64_t>(first.size());
  std::int64_t dim = attrs_as<CatAttrs>("cat", attrs).dim;
  const auto axis = static_cast<std::size_t>(dim < 0 ? dim + rank : dim);
  Shape shape = first;
  shape[axis] = 0;
  for (const Tensor& t : in) shape[axis] += t.shape()[axis];
  std::int64_t after = 1;
  for (std::size_t k = axis + 1; k < first.size(); ++k) after *= first[k];
  const std::int64_t total = shape[axis];
  Tensor out = Tensor::empty(shape, in[0].dtype());
  for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
    const std::int64_t inner = flat % after;
    std::int64_t j = flat / after % total;
    const std::int64_t before = flat / after / total;
    std::size_t k = 0;
    while (j >= in[k].shape()[axis]) j -= in[k++].shape()[axis];
    const std::int64_t n = in[k].shape()[axis];
    out.set_flat(flat, in[k].at_flat((before * n + j) * after + inner));
  }
  return out;
}

std::vector<OpCase> cat_cases() {
  using I = InputSpec;
  using A = CatAttrs;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  OpCase edges{"nan_and_inf_copied",
               {I::real({2, 2}).with_values({nan, inf, -inf, 0.0}),
                I::real({2, 1}).with_values({-0.0, 3e38})},
               A{1}};
  edges.edge_values = true;
  return std::vector<OpCase>{
      {"two_rows", {I::real({2, 3}), I::real({4, 3})}, A{0}},
      {"three_columns", {I::real({3, 1}), I::real({3, 4}), I::real({3, 2})}, A{1}},
      {"negative_dim", {I::real({2, 3, 2}), I::real({2, 3, 5})}, A{-1}},
      {"middle_axis", {I::real({2, 1, 3}), I::real({2, 4, 3}), I::real({2, 2, 3})}, A{1}},
      {"one_tensor", {I::real({3, 4})}, A{1}},
      {"vectors", {I::real({5}), I::real({1}), I::real({3})}, A{0}},
      {"an_empty_one", {I::real({2, 3}), I::real({0, 3}), I::real({1, 3})}, A{0}},
      {"all_empty", {I::real({2, 0}), I::real({2, 0})}, A{1}},
      // Attention's heads joined back: [B, T, Dh] x 4 -> [B, T, 4 Dh].
      {"heads",
       {I::real({2, 5, 4}), I::real({2, 5, 4}), I::real({2, 5, 4}), I::real({2, 5, 4})},
       A{2}},
      {"many", std::vector<InputSpec>(9, I::real({2, 3})), A{0}},
      {"threaded", {I::real({300, 200}), I::real({300, 100})}, A{1}, 16},
      edges,
  };
}

std::vector<ErrorCase> cat_error_cases() {
  using I = InputSpec;
  using A = CatAttrs;
  return std::vector<ErrorCase>{
      {"no_tensors", {}, A{0}, "cat: argument 'tensors': expected one or more tensors, got none"},
      {"ranks_differ",
       {I::real({2, 3}), I::real({2, 3, 1})},
       A{0},
       "argument 'tensors[1]': expected a tensor of rank 2 (as tensors[0]), got rank 3"},
      {"size_differs",
       {I::real({2, 3}), I::real({2, 3}), I::real({2, 4})},
       A{0},
       "argument 'tensors[2]': expected size 3 along axis 1 (as tensors[0]; only axis 0 may "
       "differ), got shape [2, 4]"},
      {"first_axis_differs",
       {I::real({2, 3}), I::real({3, 3})},
       A{1},
       "argument 'tensors[1]': expected size 2 along axis 0 (as tensors[0]; only axis 1 may "
       "differ), got shape [3, 3]"},
      {"dim_past_rank",
       {I::real({2, 3}), I::real({2, 3})},
       A{2},
       "argument 'dim': expected a dim in [-2, 2) for tensors of rank 2, got 2"},
      {"dim_below_rank", {I::real({2, 3})}, A{-3}, "got -3"},
      {"dim_int64_min",
       {I::real({2, 3})},
       A{std::numeric_limits<std::int64_t>::min()},
       "argument 'dim': expected a dim in [-2, 2)"},
      {"scalar",
       {I::real({}), I::real({})},
       A{0},
       "argument 'tensors[0]': expected a tensor of rank 1 or more"},
  };
}

std::string describe_cat(const std::any& attrs) {
  return fmt::format("dim={}", attrs_as<CatAttrs>("cat", attrs).dim);
}

}  // namespace

void register_cat(OpRegistry& registry) {
  OpDef op;
  op.name = "cat";
  op.summary = "the tensors joined along an axis (torch.cat)";
  op.inputs = {"tensors"};
  op.variadic = true;
  op.infer = cat_infer;
  op.backward = cat_backward;
  op.kernels = device_kernels(cat_copy_kernel, MG_CUDA_KERNEL(cat_copy_kernel));
  op.takes_layout = any_layout;  // the strided copy reads any layout
  op.reference = cat_reference;
  op.cases = cat_cases;
  op.error_cases = cat_error_cases;
  op.describe_attrs = describe_cat;
  registry.add(std::move(op));
}

}  // namespace mg
