// Every op's forward (through apply_op, as a model calls it) and backward (its backward rule,
// as the autograd engine calls it) at ANDREA's shapes. Legend: n = B*T positions, D width,
// V vocabulary, T positions. Raw work: one memcpy moving the same bytes, or the same bare
// GEMMs.
#include <any>
#include <functional>

#include "machine.h"
#include "suite_common.h"

namespace mg::bench {

namespace {

struct OpBench {
  std::string op;
  std::function<std::vector<Tensor>()> make_inputs;  // made only when the op is measured
  std::any attrs;
  Work work;
  double forward_amount, backward_amount;  // bytes or flops
  std::string forward_note, backward_note;
  // A view, which is a function rather than a registered op: its forward is the call, its
  // backward the rule of the node it records.
  std::function<Tensor(const std::vector<Tensor>&)> view = nullptr;
};

// long function: one row per benchmarked op, a table read top to bottom.
std::vector<OpBench> op_benches(std::int64_t batch) {
  const double n = static_cast<double>(batch * kContext), D = kWidth, V = kVocab, T = kContext;
  const double f = kFloatBytes;
  const Shape x_shape{batch, kContext, kWidth};
  Tensor tok = random_tensor({kVocab, kWidth}, true);
  Tensor pos = random_tensor({kContext, kWidth}, true);
  Tensor ids = random_ids(batch);
  Tensor x = random_tensor(x_shape, true);
  Tensor w = random_tensor({kWidth, kVocab}, true);
  using PEB = PositionEmbeddingBackwardAttrs;
  constexpr std::int64_t kHeads = 12;  // ANDREA's attention heads: softmax's rows
  return {
      {"embedding",
       [=] {
         return std::vector{tok, ids};
       },
       {},
       Work::bytes,
       2 * n * D * f,
       (n * D + V * D) * f,
       "gather",
       "scatter-add into [V,D]"},
      {"token_position_embedding",
       [=] {
         return std::vector{tok, pos, ids};
       },
       TokenPositionEmbeddingAttrs{}, Work::bytes, (2 * n * D + T * D) * f,
       (2 * n * D + V * D + 3 * T * D) * f, "tok[ids] + pos, one pass", "scatter-add + batch sum"},
      {"position_embedding",
       [=] { return std::vector{pos}; },
       {},
       Work::bytes,
       2 * T * D * f,
       2 * T * D * f,
       "a view (narrow): no copy",
       "placed in [T_max,D]",
       [](const std::vector<Tensor>& in) { return position_embedding(in[0], kContext); }},
      {"add",
       [=] {
         return std::vector{x, pos};
       },
       {},
       Work::bytes,
       (2 * n * D + T * D) * f,
       (n * D + T * D) * f,
       "[B,T,D] + [T,D]",
       "batch sum for [T,D]"},
      {"matmul",
       [=] {
         return std::vector{x, w};
       },
       MatmulOptions{}, Work::flops, 2 * n * D * V, 4 * n * D * V, "[B,T,D] x [D,V]",
       "dA = dC Bt, dB = At dC"},
      {"sum_to",
       [=] {
         return std::vector{random_tensor({batch, kContext, kVocab}, true)};
       },
       SumToAttrs{{}}, Work::bytes, n * V * f, n * V * f, "sum of [B,T,V]", "expand: no copy"},
      {"embedding_backward",
       [=] {
         return std::vector{random_tensor(x_shape, true), ids};
       },
       EmbeddingBackwardAttrs{kVocab}, Work::bytes, (n * D + V * D) * f, 2 * n * D * f,
       "scatter-add into [V,D]", "gather"},
      {"position_embedding_backward",
       [=] {
         return std::vector{random_tensor({kContext, kWidth}, true)};
       },
       PEB{kContext, 0}, Work::bytes, 2 * T * D * f, 2 * T * D * f, "placed in [T,D]",
       "copy of [T,D] rows"},
      // A transformer block's own ops: bytes of x and y (forward); of grad_out, x or the
      // result, and dx (backward).
      {"layer_norm",
       [=] {
         return std::vector{random_tensor(x_shape, true), random_tensor({kWidth}, true),
                            random_tensor({kWidth}, true)};
       },
       LayerNormAttrs{{kWidth}}, Work::bytes, 2 * n * D * f, 3 * n * D * f,
       "over D, saves mean, rstd", "dx, dw, db in one pass"},
      {"gelu_tanh",
       [=] { return std::vector{random_tensor(x_shape, true)}; },
       {},
       Work::bytes,
       2 * n * D * f,
       3 * n * D * f,
       "GPT-2's tanh form",
       "gelu_tanh_backward"},
      {"softmax",
       [=] {
         return std::vector{random_tensor({batch, kHeads, kContext, kContext}, true)};
       },
       SoftmaxAttrs{-1}, Work::bytes, 2 * n * kHeads * T * f, 3 * n * kHeads * T * f,
       "[B,12,T,T] rows of T", "from the result"},
  };
}

// The same bare GEMMs as matmul's forward ([n, D] x [D, V]) or backward (dA = dC Bᵀ, and
// dB = Aᵀ dC with the batch folded into rows).
double raw_gemm_ms(std::int64_t n, bool backward, int reps) {
  if (!backward) {
    RawGemm forward(n, kVocab, kWidth, false, false);
    return time_reps([&] { forward.run(); }, reps).median_ms;
  }
  RawGemm grad_a(n, kWidth, kVocab, false, true), grad_b(kWidth, kVocab, n, true, false);
  return time_reps([&] { grad_a.run(), grad_b.run(); }, reps).median_ms;
}

double raw_copy_ms(double bytes_moved, int reps) {
  const RawCopy copy(static_cast<std::size_t>(bytes_moved / 2), num_threads());
  return time_reps([&] { copy.run(); }, reps).median_ms;
}

}  // namespace

// The forward through apply_op (or the view's call), and the backward rule alone, given a
// random upstream: what the autograd engine runs.
void run_op_suite(int batch, const Limits& limits, const SuiteOptions& options) {
  for (OpBench& b : op_benches(batch)) {
    const OpDef* op = b.view ? nullptr : &OpRegistry::instance().get(b.op);
    const std::string forward_name = "op." + b.op + ".forward";
    const std::string backward_name = "op." + b.op + ".backward";
    auto raw_ms = [&](bool backward) {
      const double amount = backward ? b.backward_amount : b.forward_amount;
      return b.work == Work::flops ? raw_gemm_ms(batch * kContext, backward, options.reps)
                                   : raw_copy_ms(amount, options.reps);
    };
    if (!options.wanted(forward_name) && !options.wanted(backward_name)) continue;
    const std::vector<Tensor> inputs = b.make_inputs();
    auto forward = [&] { return b.view ? b.view(inputs) : apply_op(*op, inputs, b.attrs); };
    if (options.wanted(forward_name)) {
      Timing t = time_reps(forward, options.reps);
      options.emit(rate_record(forward_name, batch, t, b.work, b.forward_amount, limits,
                               raw_ms(false), b.forward_note));
    }
    if (options.wanted(backward_name)) {
      const Tensor out = forward();
      MG_CHECK(out.grad_fn() != nullptr, "bench", b.op,
               "inputs that require grad (a recorded node)", "none");
      const Node& node = *out.grad_fn();
      NoGradGuard no_grad;
      Tensor grad_out = random_tensor(out.shape(), false, 13);
      Timing t =
          time_reps([&] { node.op->backward(BackwardContext(node, grad_out)); }, options.reps);
      options.emit(rate_record(backward_name, batch, t, b.work, b.backward_amount, limits,
                               raw_ms(true), b.backward_note));
    }
  }
}

}  // namespace mg::bench
