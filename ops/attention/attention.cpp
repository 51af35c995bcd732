// scaled_dot_product_attention, its masked form and their fused backward (attention.h).
//   B batch, H heads, T positions, hd head size
//   q, k, v [B, H, T, hd] (+ mask broadcast to [B, H, T, T]) -> out [B, H, T, hd];
//   saved: logsumexp [B, H, T]
// Four ops, one pair of kernels: the mask is a fourth input of its own op (an op's inputs are
// fixed), so the unmasked op reads none. Derivative: the backward op, which reads q, k, v,
// the result and the saved logsumexp, and recomputes the probabilities.
#include "attention/attention.h"

#include <cmath>

#include "attention/attention_cases.h"
#include "attention/attention_kernels.h"
#include "common/define_op.h"

namespace mg {

namespace {
constexpr const char* kForward = "scaled_dot_product_attention";
constexpr const char* kMaskedForward = "scaled_dot_product_attention_masked";
constexpr const char* kBackward = "scaled_dot_product_attention_backward";
constexpr const char* kMaskedBackward = "scaled_dot_product_attention_masked_backward";

AttentionAttrs resolve(const Tensor& query, const AttentionOptions& o) {
  const std::int64_t d = query.dim() == 4 ? query.size(3) : 1;
  return {o.is_causal, o.scale.value_or(1 / std::sqrt(static_cast<double>(d))), o.max_length};
}
}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionOptions& options) {
  static const OpDef& op = builtin_op(kForward);
  static const OpDef& masked = builtin_op(kMaskedForward);
  const AttentionAttrs attrs = resolve(query, options);
  if (options.attn_mask) return apply_op(masked, {query, key, value, *options.attn_mask}, attrs);
  return apply_op(op, {query, key, value}, attrs);
}

namespace {

AttentionGrads attention_backward(const Tensor& grad_out, const Tensor& query, const Tensor& key,
                                  const Tensor& value, const Tensor& out, const Tensor& logsumexp,
                                  const AttentionAttrs& attrs, const Tensor* mask) {
  static const OpDef& op = builtin_op(kBackward);
  static const OpDef& masked = builtin_op(kMaskedBackward);
  std::vector<Tensor> in{grad_out, query, key, value, out, logsumexp};
  if (mask != nullptr) in.push_back(*mask);
  const Tensor packed = apply_op(mask != nullptr ? masked : op, std::move(in), attrs);
  const std::int64_t n = query.numel();
  return {packed.narrow(0, 0, n).view(query.shape()), packed.narrow(0, n, n).view(query.shape()),
          packed.narrow(0, 2 * n, n).view(query.shape())};
}

}  // namespace

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& query,
                                                     const Tensor& key, const Tensor& value,
                                                     const Tensor& out, const Tensor& logsumexp,
                                                     const AttentionOptions& options) {
  const Tensor* mask = options.attn_mask ? &*options.attn_mask : nullptr;
  return attention_backward(grad_out, query, key, value, out, logsumexp, resolve(query, options),
                            mask);
}

MaskLayout mask_layout(const Tensor& mask, std::int64_t b, std::int64_t h, std::int64_t t) {
  // The mask's axes aligned to the right of [B, H, T, T]; an axis of size 1 (or missing)
  // broadcasts (stride 0).
  const std::int64_t full[4] = {b, h, t, t};
  std::int64_t strides[4] = {0, 0, 0, 0};
  const std::int64_t lead = 4 - mask.dim();
  for (std::int64_t a = lead; a < 4; ++a) {
    if (mask.size(a - lead) == full[a] && full[a] != 1) strides[a] = mask.stride(a - lead);
  }
  return {mask.raw_data(), mask.dtype() == DType::boolean, strides[0], strides[1], strides[2],
          strides[3]};
}

namespace {

using Grads = std::vector<Tensor>;
using I = InputSpec;
constexpr const char* kAxes[4] = {"batch entries", "heads", "positions", "head size"};

// Checks query, key, value (inputs first.. first + 2; of input 0's dtype) and the mask (at
// `mask_at`, if any); returns query's shape [B, H, T, hd].
Shape check_attention(const OpDef& self, std::span<const Tensor> in, std::size_t first,
                      const AttentionAttrs& a, std::optional<std::size_t> mask_at) {
  for (std::size_t i = first; i < first + 3; ++i) {
    check_floating(self, i, in[i]);
    check_same_dtype(self, i, in[i], in[0].dtype());
    check_rank(self, i, in[i], 4, 4);
  }
  const Shape& q = in[first].shape();
  for (std::size_t i = first + 1; i < first + 3; ++i) {
    for (std::size_t axis = 0; axis < 4; ++axis) {
      MG_CHECK(in[i].shape()[axis] == q[axis], self.name, self.inputs[i],
               fmt::format("{} {} (query's, query {})", q[axis], kAxes[axis], shape_str(q)),
               "{} ({} {})", in[i].shape()[axis], self.inputs[i], shape_str(in[i].shape()));
    }
  }
  MG_CHECK(q[3] >= 1, self.name, self.inputs[first], "a head size of at least 1", "{}",
           shape_str(q));
  MG_CHECK(a.max_length >= 0, self.name, "max_length", "0 (no limit) or the model's context", "{}",
           a.max_length);
  MG_CHECK(a.max_length == 0 || q[2] <= a.max_length, self.name, self.inputs[first],
           fmt::format("at most {} positions (the model's context, max_length)", a.max_length),
           "{} positions", q[2]);
  MG_CHECK(std::isfinite(a.scale), self.name, "scale", "a finite scale", "{}", a.scale);
  if (!mask_at) return q;
  const Tensor& m = in[*mask_at];
  const char* name = "mask";
  MG_CHECK(!a.is_causal, self.name, name, "no mask with is_causal (its mask is built in)",
           "a mask {}", shape_str(m.shape()));
  MG_CHECK(m.dtype() == DType::boolean || m.dtype() == in[first].dtype(), self.name, name,
           fmt::format("a bool mask or an additive one of dtype {}", dtype_name(in[first].dtype())),
           "{}", dtype_name(m.dtype()));
  MG_CHECK(!m.requires_grad(), self.name, name,
           "a mask that does not require grad (no gradient flows to it)", "one that does");
  const Shape full{q[0], q[1], q[2], q[2]};
  bool fits = m.dim() <= 4;
  for (std::int64_t a2 = 0; fits && a2 < m.dim(); ++a2) {
    const std::int64_t size = m.shape()[static_cast<std::size_t>(m.dim() - 1 - a2)];
    fits = size == 1 || size == full[static_cast<std::size_t>(3 - a2)];
  }
  MG_CHECK(fits, self.name, name,
           fmt::format("a shape that broadcasts to [B, H, T, T] = {}", shape_str(full)), "{}",
           shape_str(m.shape()));
  return q;
}

OutputSpec attention_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  const auto& a = attrs_as<AttentionAttrs>(self.name, attrs);
  const Shape q =
      check_attention(self, in, 0, a, in.size() > 3 ? std::optional<std::size_t>(3) : std::nullopt);
  return {q, in[0].dtype()};
}

void check_same_shape(const OpDef& self, std::size_t i, const Tensor& t, const Shape& expected,
                      const char* what) {
  MG_CHECK(t.shape() == expected, self.name, self.inputs[i],
           fmt::format("shape {} ({})", shape_str(expected), what), "{}", shape_str(t.shape()));
}

OutputSpec attention_backward_infer(const OpDef& self, std::span<const Tensor> in,
                                    const std::any& attrs) {
  const auto& a = attrs_as<AttentionAttrs>(self.name, attrs);
  check_floating(self, 0, in[0]);
  const Shape q =
      check_attention(self, in, 1, a, in.size() > 6 ? std::optional<std::size_t>(6) : std::nullopt);
  for (std::size_t i : {4, 5}) {
    check_floating(self, i, in[i]);
    check_same_dtype(self, i, in[i], in[0].dtype());
  }
  check_same_shape(self, 0, in[0], q, "query's");
  check_same_shape(self, 4, in[4], q, "query's");
  check_same_shape(self, 5, in[5], {q[0], q[1], q[2]}, "[B, H, T] of query");
  return {{3 * in[1].numel()}, in[1].dtype()};
}

// q, k, v and grad_out are read a head at a time, in any layout whose rows are unit-stride
// (the heads of one [B, T, 3D] projection); a mask in any layout.
bool unit_stride_rows(const Tensor& t) {
  return t.dim() == 4 && (t.stride(3) == 1 || t.size(3) == 1);
}
bool attention_layout(std::size_t input, const Tensor& t) {
  return input == 3 || unit_stride_rows(t);
}
// The backward's out and logsumexp contiguous.
bool attention_backward_layout(std::size_t input, const Tensor& t) {
  if (input == 4 || input == 5) return t.is_contiguous();
  return input == 6 || unit_stride_rows(t);
}

std::string describe_attention(const std::any& attrs) {
  const auto& a = attrs_as<AttentionAttrs>(kForward, attrs);
  return fmt::format("is_causal={}, scale={}, max_length={}", a.is_causal, a.scale, a.max_length);
}

Grads attention_grads(const BackwardContext& ctx) {
  MG_CHECK(ctx.saved.size() == 1, ctx.op.name, "saved tensors", "the rows' logsumexp", "{} tensors",
           ctx.saved.size());
  const bool masked = ctx.input_count() == 4;
  const AttentionGrads g = attention_backward(
      ctx.grad_out, ctx.input(0), ctx.input(1), ctx.input(2), ctx.result(), ctx.saved[0],
      ctx.attrs_as<AttentionAttrs>(), masked ? &ctx.input(3) : nullptr);
  Grads grads{ctx.needs_grad(0) ? g.query : Tensor(), ctx.needs_grad(1) ? g.key : Tensor(),
              ctx.needs_grad(2) ? g.value : Tensor()};
  if (masked) grads.emplace_back();  // the mask takes none (its shape rule refuses one that asks)
  return grads;
}

OpDef attention_op(const char* name, bool masked) {
  OpDef op;
  op.name = name;
  op.summary = masked ? "softmax(scale q kᵀ + mask) v per head, fused (FlashAttention)"
                      : "softmax(scale q kᵀ) v per head, causal or not, fused (FlashAttention)";
  op.inputs = {"query", "key", "value"};
  op.backward_reads = {"query", "key", "value", "result"};
  if (masked) {
    op.inputs.emplace_back("mask");
    op.backward_reads.emplace_back("mask");
  }
  op.infer = attention_infer;
  op.backward = attention_grads;
  op.saves_for_backward = true;  // logsumexp
  op.takes_layout = attention_layout;
  op.kernels = MG_KERNELS(scaled_dot_product_attention);
  op.reference = attention_reference;
  op.cases = masked ? masked_attention_cases : attention_cases;
  op.error_cases = masked ? masked_attention_error_cases : attention_error_cases;
  op.describe_attrs = describe_attention;
  return op;
}

OpDef attention_backward_op(const char* name, bool masked) {
  OpDef op;
  op.name = name;
  op.summary = "attention's dq, dk and dv, recomputing P tile by tile, packed [3 * B*H*T*hd]";
  op.inputs = {"grad_out", "query", "key", "value", "out", "logsumexp"};
  if (masked) op.inputs.emplace_back("mask");
  op.infer = attention_backward_infer;
  op.takes_layout = attention_backward_layout;
  op.kernels = MG_KERNELS(scaled_dot_product_attention_backward);
  op.reference = attention_backward_reference;
  op.cases = masked ? masked_attention_backward_cases : attention_backward_cases;
  op.error_cases = masked ? masked_attention_backward_error_cases : attention_backward_error_cases;
  op.describe_attrs = describe_attention;
  return op;
}

}  // namespace

void register_attention(OpRegistry& registry) {
  registry.add(attention_op(kForward, false));
  registry.add(attention_op(kMaskedForward, true));
  registry.add(attention_backward_op(kBackward, false));
  registry.add(attention_backward_op(kMaskedBackward, true));
}

}  // namespace mg
