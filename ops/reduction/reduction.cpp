// The reduction family: sum and mean over chosen axes, one row each. A row names the op and
// whether it averages (the sum divided by the count of elements summed into each output); the
// family gives both their shape rule, kernels (sum_to's deterministic reductions written into
// the output viewed in the keepdim shape, which has out's elements in out's order), derivative
// (the upstream gradient expanded back, scaled by 1/count for mean), naive reference and cases.
//   x [..X], dims -> out [X without dims] (or with them as 1: keepdim)
#include "reduction/reduction.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "common/define_op.h"
#include "expand/expand.h"
#include "sum_to/sum_to_kernels.h"
#include "unary/unary.h"

namespace mg {

Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  static const OpDef& op = builtin_op("sum");
  return apply_op(op, {x}, ReduceAttrs{dims, keepdim});
}
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  static const OpDef& op = builtin_op("mean");
  return apply_op(op, {x}, ReduceAttrs{dims, keepdim});
}

namespace {

struct ReduceShapes {
  Shape keep;              // x's shape with the reduced axes as 1 (keepdim's output shape)
  Shape out;               // keep, or keep without the reduced axes when keepdim is false
  std::int64_t count = 1;  // the elements summed into each output (product of reduced sizes)
};

// Checks `dims` against x's shape (each in [-rank, rank), negative from the end, no axis twice;
// empty: every axis) and throws mg::Error naming the op and argument 'dims' otherwise. A scalar
// x takes 0 and -1 (as PyTorch), which reduce nothing.
ReduceShapes reduce_shapes(const std::string& op, const Shape& x, const ReduceAttrs& attrs) {
  const std::int64_t rank = static_cast<std::int64_t>(x.size());
  const std::int64_t range = std::max<std::int64_t>(rank, 1);  // a scalar takes 0 and -1
  std::vector<bool> reduced(range, attrs.dims.empty());
  for (std::size_t i = 0; i < attrs.dims.size(); ++i) {
    const std::int64_t axis = attrs.dims[i];
    MG_CHECK(axis >= -range && axis < range, op, "dims",
             fmt::format("axes in [{}, {}) for x of shape {}", -range, range, shape_str(x)),
             "{} at position {}", axis, i);
    const std::int64_t k = axis < 0 ? axis + range : axis;
    MG_CHECK(!reduced[k], op, "dims", "each axis at most once",
             "axis {} named again as {} at position {} of dims {{{}}}", k, axis, i,
             fmt::join(attrs.dims, ", "));
    reduced[k] = true;
  }
  ReduceShapes shapes;
  Shape reduced_sizes;
  for (std::int64_t k = 0; k < rank; ++k) {
    shapes.keep.push_back(reduced[k] ? 1 : x[k]);
    if (reduced[k]) reduced_sizes.push_back(x[k]);
    if (!reduced[k] || attrs.keepdim) shapes.out.push_back(shapes.keep.back());
  }
  // Checked: with a kept axis of size 0, x holds no element however large the reduced ones are.
  shapes.count = shape_numel(reduced_sizes);
  return shapes;
}

ReduceShapes reduce_shapes(const OpDef& op, const Shape& x, const std::any& attrs) {
  return reduce_shapes(op.name, x, attrs_as<ReduceAttrs>(op.name, attrs));
}

OutputSpec reduce_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  check_floating(self, 0, in[0]);
  return OutputSpec{reduce_shapes(self, in[0].shape(), attrs).out, in[0].dtype()};
}

using SumToInto = void (*)(const Tensor& x, const Tensor& out);

// The kernel on the device whose sum_to is `into`; mean then scales out by 1/count in place
// (the scale op runs on every device).
template <bool kAverage, SumToInto into>
void reduce_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const ReduceShapes shapes = reduce_shapes(ctx.op, x.shape(), ctx.attrs);
  if (kAverage && shapes.count == 0) {  // every output averages no element: NaN, as 0 / 0
    if (ctx.out.numel() > 0) ctx.out.fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  into(x, ctx.out.view(shapes.keep));
  if (kAverage && shapes.count > 1) {
    static const OpDef& scale_op = builtin_op("scale");
    apply_op_into(scale_op, {ctx.out}, ctx.out,
                  ScaleAttrs{1.0 / static_cast<double>(shapes.count)});
  }
}

template <bool kAverage>
std::vector<Tensor> reduce_backward(const BackwardContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  const ReduceShapes shapes = reduce_shapes(ctx.op, x, ctx.attrs);
  // n = 0: x has no element, so its gradient is empty whatever g holds (and 1/0 is no factor).
  const Tensor g = kAverage && shapes.count > 0
                       ? scale(ctx.grad_out, 1.0 / static_cast<double>(shapes.count))
                       : ctx.grad_out;
  return std::vector<Tensor>{expand(g.view(shapes.keep), x)};
}

// The naive reference, apart from the kernels (nothing from reduce_shapes or sum_to): mark the
// reduced axes, work the output shape out, then give each output element the sum, in x's
// row-major order, of the elements of x whose kept indices equal its own; mean divides it by
// the count each output got, x.numel() / out.numel() (0 / 0 = NaN where that count is 0).
template <bool kAverage>
Tensor reduce_reference(std::span<const Tensor> inputs, const ReduceAttrs& a) {
  const Tensor& x = inputs[0];
  const Shape& x_shape = x.shape();
  const std::int64_t rank = static_cast<std::int64_t>(x_shape.size());
  std::vector<bool> summed(x_shape.size(), a.dims.empty());
  for (std::int64_t axis : a.dims) {
    if (rank == 0) continue;  // a scalar's axis 0 or -1: nothing to sum over
    summed[axis < 0 ? axis + rank : axis] = true;
  }
  Shape shape;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (!summed[k]) {
      shape.push_back(x_shape[k]);
    } else if (a.keepdim) {
      shape.push_back(1);
    }
  }
  Tensor out = Tensor::empty(shape, x.dtype());
  const double count = out.numel() == 0 ? 1 : static_cast<double>(x.numel() / out.numel());
  std::vector<std::int64_t> x_index(x_shape.size()), out_index(shape.size());
  for (std::int64_t j = 0; j < out.numel(); ++j) {
    std::int64_t rest = j;  // row-major: the last axis varies fastest
    for (std::size_t k = shape.size(); k-- > 0;) {
      out_index[k] = rest % shape[k];
      rest /= shape[k];
    }
    double sum = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      rest = i;
      for (std::size_t k = x_shape.size(); k-- > 0;) {
        x_index[k] = rest % x_shape[k];
        rest /= x_shape[k];
      }
      // Walk x's axes and out's together: a summed axis has no out axis (or one of size 1).
      bool match = true;
      std::size_t o = 0;
      for (std::size_t k = 0; k < x_shape.size(); ++k) {
        if (summed[k]) {
          o += a.keepdim ? 1 : 0;
        } else {
          match = match && x_index[k] == out_index[o++];
        }
      }
      if (match) sum += x.at_flat(i);
    }
    out.set_flat(j, kAverage ? sum / count : sum);
  }
  return out;
}

// Every row's cases; a mean over a size-0 axis is left out: its NaN output is right, but the
// harness fails any NaN.
std::vector<OpCase> reduce_cases(bool average) {
  using I = InputSpec;
  using A = ReduceAttrs;
  std::vector<OpCase> cases{
      {"all", {I::real({3, 4})}, A{}},
      {"all_keepdim", {I::real({3, 4})}, A{{}, true}},
      {"rows", {I::real({3, 4})}, A{{0}}},
      {"rows_keepdim", {I::real({3, 4})}, A{{0}, true}},
      {"columns", {I::real({3, 4})}, A{{1}}},
      {"columns_keepdim", {I::real({3, 4})}, A{{1}, true}},
      {"last_negative", {I::real({3, 4})}, A{{-1}}},
      {"last_negative_keepdim", {I::real({3, 4})}, A{{-1}, true}},
      {"outer_and_inner", {I::real({2, 3, 4})}, A{{0, 2}}},
      {"outer_and_inner_keepdim", {I::real({2, 3, 4})}, A{{2, 0}, true}},
      {"middle", {I::real({2, 3, 4})}, A{{1}}},
      {"middle_keepdim", {I::real({2, 3, 4})}, A{{-2}, true}},
      {"leading_pair", {I::real({2, 3, 4})}, A{{0}}},  // count 2
      {"every_axis_listed", {I::real({2, 3, 4})}, A{{0, -2, 2}}},
      {"every_axis_listed_keepdim", {I::real({2, 3, 4})}, A{{2, 1, 0}, true}},
      {"size_one_axes", {I::real({1, 3, 1})}, A{{0, 2}}},  // count 1: the sum itself
      {"size_one_axis_kept", {I::real({3, 1, 4})}, A{{0}, true}},
      {"scalar_input", {I::real({})}, A{{-1}}},
      {"scalar_input_axis_zero", {I::real({})}, A{{0}}},
      {"empty_kept_axis", {I::real({3, 0})}, A{{0}, true}},  // count 3 for each of no outputs
      {"andrea_rows", {I::real({16, 8})}, A{{0}}},
      {"andrea_features", {I::real({16, 8})}, A{{-1}, true}},
  };
  if (!average) cases.push_back({"empty_summed_axis", {I::real({0, 3})}, A{{0}}});  // zeros
  return cases;
}

std::vector<ErrorCase> reduce_error_cases() {
  using I = InputSpec;
  using A = ReduceAttrs;
  return std::vector<ErrorCase>{
      {"axis_past_end", {I::real({3, 4})}, A{{2}}, "axes in [-2, 2)"},
      {"axis_before_start", {I::real({2, 3, 4})}, A{{0, -4}}, "axes in [-3, 3)"},
      {"axis_before_start_keepdim", {I::real({2, 3, 4})}, A{{-4}, true}, "axes in [-3, 3)"},
      {"repeated_axis", {I::real({3, 4})}, A{{1, 1}}, "each axis at most once"},
      {"repeated_negative_axis", {I::real({2, 3, 4})}, A{{2, -1}}, "each axis at most once"},
      {"repeated_negative_axis_first", {I::real({3, 4})}, A{{-2, 0}}, "each axis at most once"},
  };
}

template <bool kAverage>
OpDef reduce_op(const char* name, const char* summary) {
  OpDef op;
  op.name = name;
  op.summary = summary;
  op.inputs = {"x"};
  op.infer = reduce_infer;
  op.backward = reduce_backward<kAverage>;
  op.takes_layout = any_layout;  // sum_to_*_into reads x through its strides
  op.kernels = device_kernels(reduce_kernel<kAverage, sum_to_cpu_into>,
                              MG_CUDA_KERNEL((reduce_kernel<kAverage, sum_to_cuda_into>)));
  op.reference = [name](std::span<const Tensor> inputs, const std::any& attrs) {
    return reduce_reference<kAverage>(inputs, attrs_as<ReduceAttrs>(name, attrs));
  };
  op.describe_attrs = [name](const std::any& attrs) {
    const auto& a = attrs_as<ReduceAttrs>(name, attrs);
    return fmt::format("dims={{{}}}, keepdim={}", fmt::join(a.dims, ", "), a.keepdim);
  };
  op.cases = [] { return reduce_cases(kAverage); };
  op.error_cases = reduce_error_cases;
  return op;
}

}  // namespace

void register_reduction(OpRegistry& registry) {
  registry.add(reduce_op<false>(
      "sum", "x summed over chosen axes (all by default), optionally keeping them as size 1"));
  registry.add(reduce_op<true>(
      "mean", "x averaged over chosen axes (all by default), optionally keeping them as size 1"));
}

}  // namespace mg
