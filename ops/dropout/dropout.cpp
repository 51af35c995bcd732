// dropout: inverted dropout with a counter-based mask (Philox4x32-10, philox.h), a pure
// function of (seed, counter, element index), so nothing is stored for the backward.
//   x [..X] -> out [..X]; out_i = x_i * keep_i / (1 - p), keep_i = (u_i >= p)
//   backward: grad_out [..X] -> grad_x [..X], the same op on grad_out (the same mask)
// The naive reference draws with its own plain copy of the ten rounds, checked against
// Random123's known answers at compile time, as the kernels' generator is in philox.h.
#include "dropout/dropout.h"

#include <array>
#include <cmath>
#include <limits>

#include "common/define_op.h"
#include "dropout/dropout_kernels.h"

namespace mg {

namespace {

// NaN fails both comparisons.
void dropout_check_p(double p) {
  MG_CHECK(p >= 0.0 && p < 1.0, "dropout", "p", "a probability in [0, 1)", "{}", p);
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, std::uint64_t seed,
               std::uint64_t counter) {
  dropout_check_p(p);
  if (!training || p == 0) return x;
  static const OpDef& op = builtin_op("dropout");
  return apply_op(op, {x}, DropoutAttrs{p, seed, counter});
}

DropoutDraw dropout_draw(const std::any& attrs) {
  const DropoutAttrs& a = attrs_as<DropoutAttrs>("dropout", attrs);
  DropoutDraw draw;
  draw.seed = a.seed;
  draw.counter = a.counter;
  draw.threshold = static_cast<std::uint32_t>(std::ceil(std::ldexp(a.p, 24)));
  draw.scale = 1.0 / (1.0 - a.p);
  return draw;
}

namespace {

using DropoutWords = std::array<std::uint32_t, 4>;

// Philox4x32-10 once more, for the reference alone: words (c0, c1, c2, c3), key (k0, k1).
constexpr DropoutWords dropout_reference_philox(DropoutWords c, std::uint32_t k0,
                                                std::uint32_t k1) {
  for (int round = 1; round <= 10; ++round) {
    const std::uint64_t a = std::uint64_t{0xD2511F53u} * c[0];
    const std::uint64_t b = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {std::uint32_t(b >> 32) ^ c[1] ^ k0, std::uint32_t(b), std::uint32_t(a >> 32) ^ c[3] ^ k1,
         std::uint32_t(a)};
    k0 += 0x9E3779B9u;  // the bump after the last round is never used
    k1 += 0xBB67AE85u;
  }
  return c;
}
static_assert(dropout_reference_philox({0, 0, 0, 0}, 0, 0) ==
              DropoutWords{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
static_assert(dropout_reference_philox({~0u, ~0u, ~0u, ~0u}, ~0u, ~0u) ==
              DropoutWords{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
static_assert(dropout_reference_philox({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                       0xa4093822u, 0x299f31d0u) ==
              DropoutWords{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});

// The naive reference: each element's uniform from scratch (its own Philox block, in double),
// compared with p itself, and the kept ones divided by 1 - p.
Tensor dropout_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& x = inputs[0];
  const DropoutAttrs& a = attrs_as<DropoutAttrs>("dropout", attrs);
  const std::uint64_t mask32 = 0xffffffffu;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const auto block = static_cast<std::uint64_t>(i / 4);
    const DropoutWords bits = dropout_reference_philox(
        {std::uint32_t(block & mask32), std::uint32_t(block >> 32),
         std::uint32_t(a.counter & mask32), std::uint32_t(a.counter >> 32)},
        std::uint32_t(a.seed & mask32), std::uint32_t(a.seed >> 32));
    const double u = static_cast<double>(bits[static_cast<std::size_t>(i % 4)] >> 8) / 16777216.0;
    const double v = x.at_flat(i);
    out.set_flat(i, u >= a.p ? v / (1.0 - a.p) : v * 0.0);
  }
  return out;
}

OutputSpec dropout_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  check_floating(self, 0, in[0]);
  dropout_check_p(attrs_as<DropoutAttrs>(self.name, attrs).p);
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

// Shapes with a partial last block (7, 15, 100005 elements), none, one, and sizes split across
// CPU threads; p small, even, large and 0 (the identity); seeds and counters with both 32-bit
// halves set (a half left out of the key or counter changes the mask).
std::vector<OpCase> dropout_cases() {
  using A = DropoutAttrs;
  using I = InputSpec;
  constexpr std::uint64_t kWideSeed = 0xfedcba9876543210u, kWideCounter = 0x0123456789abcdefu;
  std::vector<OpCase> cases{
      {"vector", {I::real({7})}, A{0.5, 0, 0}},
      {"matrix_p01", {I::real({3, 5})}, A{0.1, 1, 0}},
      {"rank3_p09", {I::real({2, 3, 4})}, A{0.9, 42, 7}},
      {"p_zero", {I::real({4, 5})}, A{0.0, 3, 1}},
      {"scalar", {I::real({})}, A{0.5, 5, 2}},
      {"empty", {I::real({0, 3})}, A{0.5, 0, 0}},
      {"other_seed", {I::real({3, 5})}, A{0.1, 2, 0}},
      {"other_counter", {I::real({3, 5})}, A{0.1, 1, 1}},
      {"wide_seed_and_counter", {I::real({5, 9})}, A{0.5, kWideSeed, kWideCounter}},
      {"high_counter_only", {I::real({5, 9})}, A{0.5, 1, std::uint64_t{1} << 32}},
      // 76,800 and 100,005 elements: past threads_for's 32K per thread, so several threads
      // each take a run of blocks, the second with a partial last block.
      {"threaded", {I::real({256, 300})}, A{0.5, 11, 0}, 16},
      {"threaded_ragged", {I::real({3, 33335})}, A{0.3, 12, 9}, 16},
  };
  // p equal to element 5's own draw (7715379 * 2^-24 for seed 7, counter 3): kept, since
  // u >= p keeps a tie; the other elements of that block fall on both sides.
  cases.push_back({"p_on_a_draw", {I::real({2, 4})}, A{7715379.0 / 16777216.0, 7, 3}});
  // Seed 7 keeps the first inf, -inf and NaN and drops the second (all NaN then), and keeps
  // and drops finite values of both signs.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  OpCase edges{"edges",
               {I::real({12}).with_values(
                   {inf, -inf, nan, 0.0, -0.0, 1e30, -1e30, 1e-30, inf, -inf, nan, -2.5})},
               A{0.5, 7, 0}};
  edges.edge_values = true;
  cases.push_back(std::move(edges));
  return cases;
}

std::vector<ErrorCase> dropout_error_cases() {
  using A = DropoutAttrs;
  using I = InputSpec;
  return std::vector<ErrorCase>{
      {"p_one", {I::real({3})}, A{1.0, 0, 0}, "argument 'p': expected a probability in [0, 1)"},
      {"p_negative", {I::real({3})}, A{-0.1, 0, 0}, "got -0.1"},
      {"p_nan", {I::real({3})}, A{std::nan(""), 0, 0}, "got nan"},
      {"p_huge", {I::real({3})}, A{1e300, 0, 0}, "got 1e+300"},
  };
}

std::string dropout_describe(const std::any& attrs) {
  const DropoutAttrs& a = attrs_as<DropoutAttrs>("dropout", attrs);
  return fmt::format("p={}, seed={}, counter={}", a.p, a.seed, a.counter);
}

}  // namespace

void register_dropout(OpRegistry& registry) {
  OpDef op;
  op.name = "dropout";
  op.summary = "x * keep / (1 - p), keep = Philox(seed, counter, index) >= p, elementwise";
  op.inputs = {"x"};
  op.infer = dropout_infer;
  // Dropout is linear in x: its gradient is the same mask on grad_out, drawn again.
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{apply_op(ctx.op, {ctx.grad_out}, ctx.attrs)};
  };
  op.kernels = device_kernels(dropout_cpu, MG_CUDA_KERNEL(dropout_cuda));
  op.reference = dropout_reference;
  op.cases = dropout_cases;
  op.error_cases = dropout_error_cases;
  op.describe_attrs = dropout_describe;
  registry.add(std::move(op));
}

}  // namespace mg
