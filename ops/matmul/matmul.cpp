// matmul: out = op(a) op(b), batched over a's leading axes.
//   a [..., M, K] (transpose_a: [..., K, M]), b [K, N] or [..., K, N] (transpose_b: N, K swapped)
//   -> out [..., M, N]
// Backward (C = A B):  dA = dC Bᵀ,  dB = Aᵀ dC  (summed over the batch when b is shared);
// written with transpose flags, so no transpose is ever materialised. An input whose last two
// axes are swapped views of a contiguous tensor (x.transpose(-1, -2), w.t()) reaches the
// kernels as it is: they flip the GEMM's transpose flag for it instead of copying.
#include "matmul/matmul.h"

#include "common/define_op.h"
#include "minigraph/layout.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(matmul);
Tensor matmul_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor matmul(const Tensor& a, const Tensor& b, MatmulOptions options) {
  static const OpDef& op = builtin_op("matmul");
  return apply_op(op, {a, b}, options);
}

namespace {

// Whether t is a contiguous tensor with its last two axes swapped (what the kernels take).
bool is_transposed_matrix(const Tensor& t) {
  if (t.dim() < 2 || t.is_contiguous()) return false;
  Shape shape = t.shape(), strides = t.strides();
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  return is_contiguous_layout(shape, strides);
}

OutputSpec matmul_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  const auto& o = attrs_as<MatmulOptions>("matmul", attrs);
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  check_floating(self, 0, a);
  check_floating(self, 1, b);
  check_same_dtype(self, 1, b, a.dtype());
  check_rank(self, 0, a, 2, 8);
  const bool b_batched = b.dim() > 2;
  MG_CHECK(!b_batched || b.dim() == a.dim(), "matmul", "b",
           fmt::format("rank 2, or rank {} like a", a.dim()), "rank {} (shape {})", b.dim(),
           shape_str(b.shape()));
  check_rank(self, 1, b, 2, 8);
  if (b_batched) {
    MG_CHECK(
        std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin()), "matmul", "b",
        fmt::format("batch axes {} as in a {}",
                    shape_str(Shape(a.shape().begin(), a.shape().end() - 2)), shape_str(a.shape())),
        "shape {}", shape_str(b.shape()));
  }
  MG_CHECK(!(o.transpose_a && a.dim() > 2 && !b_batched), "matmul", "a",
           "a 2-D a when transpose_a is set and b is shared by the batch", "shape {}",
           shape_str(a.shape()));
  const std::int64_t m = a.size(o.transpose_a ? -1 : -2), k = a.size(o.transpose_a ? -2 : -1);
  const std::int64_t kb = b.size(o.transpose_b ? -1 : -2), n = b.size(o.transpose_b ? -2 : -1);
  MG_CHECK(k == kb, "matmul", "b",
           fmt::format("{} rows (a's inner size K{})", k, o.transpose_b ? ", b transposed" : ""),
           "{} (a {}, b {})", kb, shape_str(a.shape()), shape_str(b.shape()));
  Shape out(a.shape().begin(), a.shape().end() - 2);
  out.push_back(m);
  out.push_back(n);
  return {out, a.dtype()};
}

std::vector<Tensor> matmul_backward(const BackwardContext& ctx) {
  const auto& o = ctx.attrs_as<MatmulOptions>();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  // An expanded upstream (sum's gradient) is made contiguous once here, not once per GEMM.
  const bool both = ctx.needs_grad(0) && ctx.needs_grad(1);
  const Tensor g = both ? ctx.grad_out.contiguous() : ctx.grad_out;
  std::vector<Tensor> grads(2);
  if (ctx.needs_grad(0)) {
    // A = dC Bᵀ; with flags: ta ? op(B) dCᵀ : dC op(B)ᵀ.
    grads[0] =
        o.transpose_a ? matmul(b, g, {o.transpose_b, true}) : matmul(g, b, {false, !o.transpose_b});
  }
  if (ctx.needs_grad(1)) {
    const bool shared_b = b.dim() == 2 && a.dim() > 2;
    if (shared_b) {
      // Fold the batch into rows: dB = sum over batch of Aᵀ dC = A2ᵀ dC2 (A2 [B*M, K]).
      // rows from a's leading axes, not numel / K: K may be 0.
      const std::int64_t k = a.size(-1), n = g.size(-1),
                         rows = shape_numel(Shape(a.shape().begin(), a.shape().end() - 1));
      Tensor a2 = a.detach().reshape({rows, k});
      Tensor g2 = g.reshape({rows, n});
      grads[1] = o.transpose_b ? matmul(g2, a2, {true, false}) : matmul(a2, g2, {true, false});
    } else {
      grads[1] = o.transpose_b ? matmul(g, a, {true, o.transpose_a})
                               : matmul(a, g, {!o.transpose_a, false});
    }
  }
  return grads;
}

std::vector<OpCase> matmul_cases() {
  using I = InputSpec;
  using O = MatmulOptions;
  return std::vector<OpCase>{
      {"2d", {I::real({3, 4}), I::real({4, 5})}, O{}},
      {"shared_b", {I::real({2, 3, 4}), I::real({4, 5})}, O{}},
      {"batched_b", {I::real({2, 3, 4}), I::real({2, 4, 5})}, O{}},
      {"transpose_a", {I::real({4, 3}), I::real({4, 5})}, O{true, false}},
      {"transpose_b", {I::real({2, 3, 4}), I::real({5, 4})}, O{false, true}},
      {"transpose_both_batched", {I::real({2, 4, 3}), I::real({2, 5, 4})}, O{true, true}},
      {"size_one_dims", {I::real({1, 1, 1}), I::real({1, 1})}, O{}},
      // K = 0: an empty sum, so every element is 0, which the kernel must write itself.
      {"empty_inner", {I::real({3, 0}), I::real({0, 4})}, O{}},
      {"empty_inner_shared_b", {I::real({2, 3, 0}), I::real({0, 4})}, O{}},
      {"andrea_head", {I::real({2, 16, 12}), I::real({12, 40})}, O{}},
  };
}

std::vector<ErrorCase> matmul_error_cases() {
  using I = InputSpec;
  return std::vector<ErrorCase>{
      {"inner_mismatch", {I::real({3, 4}), I::real({5, 6})}, MatmulOptions{}, "a's inner size"},
      {"inner_a_longer", {I::real({3, 6}), I::real({5, 2})}, MatmulOptions{}, "a's inner size"},
      {"rank_one", {I::real({4}), I::real({4, 2})}, MatmulOptions{}, "rank 2 to 8"},
      {"batch_mismatch", {I::real({2, 3, 4}), I::real({3, 4, 5})}, MatmulOptions{}, "batch axes"},
  };
}

}  // namespace

void register_matmul(OpRegistry& registry) {
  OpDef op;
  op.name = "matmul";
  op.summary = "batched matrix product op(a) op(b), b shared or per batch";
  op.inputs = {"a", "b"};
  op.infer = matmul_infer;
  op.backward = matmul_backward;
  op.backward_reads = {"a", "b"};
  op.takes_layout = [](std::size_t, const Tensor& t) { return is_transposed_matrix(t); };
  op.kernels = MG_KERNELS(matmul);
  op.reference = matmul_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& o = attrs_as<MatmulOptions>("matmul", attrs);
    return fmt::format("transpose_a={}, transpose_b={}", o.transpose_a, o.transpose_b);
  };
  op.cases = matmul_cases;
  op.error_cases = matmul_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
