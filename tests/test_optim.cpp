// The optim floor: SGD (plain, momentum, dampening, Nesterov, weight decay) and AdamW against
// PyTorch's documented algorithms written here as plain double loops; no tensor memory
// allocated by a step after the first; clip_grad_norm; the warmup-cosine schedule; state
// dicts (a bit-identical continuation after a round trip, and errors that change nothing).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <numbers>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

using optim::AdamW;
using optim::AdamWOptions;
using optim::NamedParameters;
using optim::SGD;
using optim::SGDOptions;
using testing::expect_error_containing;
using Values = std::vector<double>;

Tensor make_param(const Values& v, DType dtype, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<std::int64_t>(v.size())};
  Tensor p = Tensor::from_vector(v, shape).to(dtype);
  p.set_requires_grad(true);
  return p;
}

// Gives p the gradient g exactly: d/dp sum(p * g) = g.
void set_grad(const Tensor& p, const Values& g) {
  Tensor c = Tensor::from_vector(g, p.shape()).to(p.dtype());
  (p * c).sum().backward();
}

// The gradients of step s (0, 1, ...) for n elements: varied signs and sizes.
Values grads_of_step(int s, std::size_t n) {
  Values g(n);
  for (std::size_t i = 0; i < n; ++i)
    g[i] = std::sin(1.3 * static_cast<double>(i + 1) + s) * (1 + s);
  return g;
}

// torch.optim.SGD's documented algorithm, in double.
struct SgdReference {
  SGDOptions o;
  Values p, buf;
  int t = 0;
  void step(const Values& g) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      double d = g[i] + o.weight_decay * p[i];
      if (o.momentum != 0) {
        buf[i] = t == 0 ? d : o.momentum * buf[i] + (1 - o.dampening) * d;
        d = o.nesterov ? d + o.momentum * buf[i] : buf[i];
      }
      p[i] -= o.lr * d;
    }
    ++t;
  }
};

// torch.optim.AdamW's documented algorithm, in double.
struct AdamWReference {
  AdamWOptions o;
  Values p, m, v;
  int t = 0;
  void step(const Values& g) {
    ++t;
    for (std::size_t i = 0; i < p.size(); ++i) {
      p[i] -= o.lr * o.weight_decay * p[i];
      m[i] = o.beta1 * m[i] + (1 - o.beta1) * g[i];
      v[i] = o.beta2 * v[i] + (1 - o.beta2) * g[i] * g[i];
      const double m_hat = m[i] / (1 - std::pow(o.beta1, t));
      const double v_hat = v[i] / (1 - std::pow(o.beta2, t));
      p[i] -= o.lr * m_hat / (std::sqrt(v_hat) + o.eps);
    }
  }
};

void expect_close(const Tensor& actual, const Values& expected, double rtol, const char* what) {
  const Values a = actual.to_f64_vector();
  ASSERT_EQ(a.size(), expected.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], expected[i], rtol * (1 + std::abs(expected[i]))) << what << " [" << i << "]";
  }
}

const Values kStart = {0.5, -1.25, 2.0, 0.0, -0.3, 1.7, 3.1};

struct SgdCase {
  const char* name;
  SGDOptions options;
};
const SgdCase kSgdCases[] = {
    {"plain", {0.1, 0, 0, 0, false}},      {"weight_decay", {0.1, 0, 0, 0.05, false}},
    {"momentum", {0.1, 0.9, 0, 0, false}}, {"dampening", {0.1, 0.9, 0.3, 0.01, false}},
    {"nesterov", {0.1, 0.9, 0, 0, true}},  {"nesterov_weight_decay", {0.05, 0.8, 0, 0.1, true}},
};

TEST(Optim, SgdMatchesPyTorchAlgorithm) {
  for (DType dtype : {DType::f64, DType::f32}) {
    const double rtol = dtype == DType::f64 ? 1e-13 : 1e-5;
    for (const SgdCase& c : kSgdCases) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(dtype)));
      Tensor w = make_param(kStart, dtype);
      SGD sgd({{"w", w}}, c.options);
      SgdReference ref{c.options, kStart, Values(kStart.size(), 0.0)};
      for (int s = 0; s < 4; ++s) {
        sgd.zero_grad();
        set_grad(w, grads_of_step(s, kStart.size()));
        sgd.step();
        ref.step(grads_of_step(s, kStart.size()));
        expect_close(w, ref.p, rtol, "param");
      }
      EXPECT_EQ(sgd.step_count(), 4);
      const StateDict sd = sgd.state_dict();
      EXPECT_EQ(sd.size(), c.options.momentum != 0 ? 3u : 2u);  // step, w.step (+ buffer)
      if (c.options.momentum != 0) expect_close(sd.back().second, ref.buf, rtol, "buffer");
    }
  }
}

TEST(Optim, AdamWMatchesPyTorchAlgorithm) {
  const AdamWOptions options[] = {
      {0.1, 0.9, 0.999, 1e-8, 0.01}, {0.01, 0.8, 0.99, 1e-3, 0.0}, {1e-3, 0.9, 0.999, 1e-8, 0.5}};
  for (DType dtype : {DType::f64, DType::f32}) {
    const double rtol = dtype == DType::f64 ? 1e-12 : 1e-5;
    for (const AdamWOptions& o : options) {
      SCOPED_TRACE(fmt::format("lr {} wd {} {}", o.lr, o.weight_decay, dtype_name(dtype)));
      Tensor w = make_param(kStart, dtype);
      AdamW adamw({{"w", w}}, o);
      const std::size_t n = kStart.size();
      AdamWReference ref{o, kStart, Values(n, 0.0), Values(n, 0.0)};
      for (int s = 0; s < 5; ++s) {
        adamw.zero_grad();
        set_grad(w, grads_of_step(s, n));
        adamw.step();
        ref.step(grads_of_step(s, n));
        expect_close(w, ref.p, rtol, "param");
      }
      const StateDict sd = adamw.state_dict();
      ASSERT_EQ(sd.size(), 4u);
      EXPECT_EQ(sd[1].first, "w.step");
      EXPECT_EQ(sd[1].second.item(), 5);
      EXPECT_EQ(sd[2].first, "w.exp_avg");
      expect_close(sd[2].second, ref.m, rtol, "exp_avg");
      EXPECT_EQ(sd[3].first, "w.exp_avg_sq");
      expect_close(sd[3].second, ref.v, rtol, "exp_avg_sq");
    }
  }
}

TEST(Optim, DefaultsArePyTorchs) {
  Tensor w = make_param({1.0}, DType::f32);
  const AdamW adamw({{"w", w}});
  EXPECT_EQ(adamw.lr(), 1e-3);
  EXPECT_EQ(adamw.options().beta1, 0.9);
  EXPECT_EQ(adamw.options().beta2, 0.999);
  EXPECT_EQ(adamw.options().eps, 1e-8);
  EXPECT_EQ(adamw.options().weight_decay, 1e-2);
  const SGD sgd({{"w", w}});
  EXPECT_EQ(sgd.lr(), 1e-3);
  EXPECT_EQ(sgd.options().momentum, 0.0);
  EXPECT_EQ(sgd.options().weight_decay, 0.0);
  EXPECT_FALSE(sgd.options().nesterov);
}

// A parameter without a gradient is skipped: unchanged, no state, no per-parameter step.
TEST(Optim, ParametersWithoutGradientAreSkipped) {
  Tensor a = make_param({1.0, 2.0}, DType::f64), b = make_param({3.0}, DType::f64);
  AdamW adamw({{"a", a}, {"b", b}}, {0.1});
  set_grad(a, {0.5, -0.5});
  adamw.step();
  adamw.step();
  EXPECT_EQ(b.to_f64_vector(), Values({3.0}));
  EXPECT_NE(a.to_f64_vector(), Values({1.0, 2.0}));
  std::map<std::string, double> steps;
  for (const auto& [name, t] : adamw.state_dict()) {
    if (name.ends_with("step")) steps[name] = t.item();
    EXPECT_FALSE(name.starts_with("b.")) << name;
  }
  EXPECT_EQ(steps, (std::map<std::string, double>{{"step", 2}, {"a.step", 2}}));
}

// After the first step (which allocates the state), steps take no tensor memory at all: not
// even a temporary that the caching allocator would hand back (the peak of in-use bytes stays
// where it was).
TEST(Optim, StepsAfterTheFirstAllocateNothing) {
  Tensor a = make_param(grads_of_step(7, 1000), DType::f32);
  Tensor b = make_param(grads_of_step(8, 64), DType::f64);
  set_grad(a, grads_of_step(0, 1000));
  set_grad(b, grads_of_step(1, 64));
  NamedParameters params = {{"a", a}, {"b", b}};
  AdamW adamw(params);
  SGD sgd(params, {0.01, 0.9, 0.1, 0.01, false});
  SGD nesterov(params, {0.01, 0.9, 0.0, 0.0, true});
  SGD plain(params, {0.01});
  for (optim::Optimizer* o :
       std::initializer_list<optim::Optimizer*>{&adamw, &sgd, &nesterov, &plain}) {
    const std::size_t fresh = cpu::memory_stats().in_use_bytes;
    o->step();  // allocates the state, which the statistics see
    if (!o->state_names().empty()) {
      EXPECT_GT(cpu::memory_stats().in_use_bytes, fresh);
    }
    const cpu::MemoryStats before = cpu::memory_stats();
    cpu::reset_peak_memory_stats();
    for (int s = 0; s < 3; ++s) o->step();
    const cpu::MemoryStats after = cpu::memory_stats();
    EXPECT_EQ(after.peak_in_use_bytes, before.in_use_bytes);
    EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
    EXPECT_EQ(after.system_allocations, before.system_allocations);
  }
}

TEST(Optim, ClipGradNorm) {
  Tensor a = make_param({1.0, 1.0}, DType::f64), b = make_param({1.0}, DType::f32);
  Tensor none = make_param({1.0}, DType::f64);  // no gradient: skipped
  std::vector<Tensor> params = {a, b, none};
  set_grad(a, {3.0, 4.0});
  set_grad(b, {12.0});
  // Above max_norm: total 13, every gradient times 6.5 / (13 + 1e-6).
  EXPECT_DOUBLE_EQ(optim::clip_grad_norm(params, 6.5), 13.0);
  const double coef = 6.5 / (13.0 + 1e-6);
  EXPECT_EQ(a.grad().to_f64_vector(), Values({3.0 * coef, 4.0 * coef}));
  EXPECT_EQ(b.grad().to_f64_vector(),
            Values({static_cast<double>(12.0f * static_cast<float>(coef))}));
  // Now below max_norm: unchanged.
  const Values a_grad = a.grad().to_f64_vector();
  EXPECT_NEAR(optim::clip_grad_norm(params, 7.0), 6.5, 1e-6);
  EXPECT_EQ(a.grad().to_f64_vector(), a_grad);
  // Far below: unchanged; through an optimizer's parameters.
  AdamW adamw({{"a", a}, {"b", b}, {"none", none}});
  EXPECT_NEAR(optim::clip_grad_norm(adamw, 100.0), 6.5, 1e-6);
  EXPECT_EQ(a.grad().to_f64_vector(), a_grad);
  // No gradients at all: 0.
  adamw.zero_grad();
  EXPECT_EQ(optim::clip_grad_norm(params, 1.0), 0.0);
  expect_error_containing([&] { optim::clip_grad_norm(params, -1.0); }, "argument 'max_norm'");
  expect_error_containing([&] { optim::clip_grad_norm(params, NAN); }, "argument 'max_norm'");
}

TEST(Optim, WarmupCosine) {
  const optim::WarmupCosine s{1.0, 0.1, 10, 110};
  EXPECT_DOUBLE_EQ(s.lr(0), 0.1);  // warmup start: lr_max / warmup
  EXPECT_DOUBLE_EQ(s.lr(4), 0.5);
  EXPECT_DOUBLE_EQ(s.lr(9), 1.0);      // warmup end
  EXPECT_DOUBLE_EQ(s.lr(10), 1.0);     // cosine start
  EXPECT_NEAR(s.lr(60), 0.55, 1e-15);  // mid cosine: (lr_max + lr_min) / 2
  EXPECT_NEAR(s.lr(35), 0.1 + 0.9 * (1 + std::cos(std::numbers::pi / 4)) / 2, 1e-15);
  EXPECT_GT(s.lr(109), 0.1);
  EXPECT_NEAR(s.lr(109), 0.1, 1e-3);
  EXPECT_EQ(s.lr(110), 0.1);      // end
  EXPECT_EQ(s.lr(1000000), 0.1);  // after the end
  const optim::WarmupCosine no_warmup{2.0, 0.0, 0, 4};
  EXPECT_DOUBLE_EQ(no_warmup.lr(0), 2.0);
  EXPECT_NEAR(no_warmup.lr(2), 1.0, 1e-15);
  EXPECT_EQ(no_warmup.lr(4), 0.0);
  expect_error_containing([&] { (void)s.lr(-1); }, "argument 'step'");
  expect_error_containing([] { optim::WarmupCosine(0.0, 0.0, 1, 2); }, "argument 'lr_max'");
  expect_error_containing([] { optim::WarmupCosine(1.0, 2.0, 1, 2); }, "argument 'lr_min'");
  expect_error_containing([] { optim::WarmupCosine(1.0, -0.1, 1, 2); }, "argument 'lr_min'");
  expect_error_containing([] { optim::WarmupCosine(1.0, 0.0, -1, 2); }, "argument 'warmup_steps'");
  expect_error_containing([] { optim::WarmupCosine(1.0, 0.0, 5, 4); }, "argument 'total_steps'");
}

// Two parameters of different shapes and dtypes, and the optimizers to test state dicts on.
struct Params {
  Tensor w = make_param(grads_of_step(3, 6), DType::f64, {2, 3});
  Tensor b = make_param({0.25, -0.5, 1.0}, DType::f32);
  NamedParameters named() const { return {{"w", w}, {"b", b}}; }
  void grads(int s) {
    w.zero_grad();
    b.zero_grad();
    set_grad(w, grads_of_step(s, 6));
    set_grad(b, grads_of_step(s + 10, 3));
  }
  Params copy() const {
    Params p;
    NoGradGuard g;
    p.w.copy_(w);
    p.b.copy_(b);
    return p;
  }
};

template <typename Opt, typename Options>
void expect_round_trip_continues_identically(const Options& options) {
  Params pa;
  Opt a(pa.named(), options);
  for (int s = 0; s < 3; ++s) {
    pa.grads(s);
    a.step();
  }
  Params pb = pa.copy();
  Opt b(pb.named(), options);
  StateDict saved;
  for (const auto& [name, t] : a.state_dict()) saved.emplace_back(name, t.clone());
  b.load_state_dict(saved);
  EXPECT_EQ(b.step_count(), 3);
  for (int s = 3; s < 6; ++s) {
    pa.grads(s);
    pb.grads(s);
    a.step();
    b.step();
  }
  EXPECT_EQ(pa.w.to_vector<double>(), pb.w.to_vector<double>());
  EXPECT_EQ(pa.b.to_vector<float>(), pb.b.to_vector<float>());
}

TEST(Optim, StateDictRoundTripContinuesBitIdentically) {
  expect_round_trip_continues_identically<AdamW>(AdamWOptions{0.05});
  expect_round_trip_continues_identically<SGD>(SGDOptions{0.05, 0.9, 0.1, 0.01, false});
  expect_round_trip_continues_identically<SGD>(SGDOptions{0.05, 0.9, 0.0, 0.0, true});
}

// Step counts are whole numbers of 64 bits: read as such, not through a double, which rounds
// those past 2^53 (found by fuzz_checkpoint).
TEST(Optim, StepCountsLoadExactlyUpToInt64Max) {
  Params p;
  AdamW adamw(p.named(), {0.05});
  p.grads(0);
  adamw.step();
  StateDict dict;
  const std::int64_t big = (std::int64_t{1} << 53) + 1,
                     max = std::numeric_limits<std::int64_t>::max();
  for (const auto& [name, t] : adamw.state_dict()) {
    const bool count = name == "step" || name.ends_with(".step");
    dict.emplace_back(name, count ? Tensor::from_vector(
                                        std::vector<std::int64_t>{name == "step" ? max : big}, {1})
                                  : t.clone());
  }
  adamw.load_state_dict(dict);
  EXPECT_EQ(adamw.step_count(), max);
  for (const auto& [name, t] : adamw.state_dict()) {
    if (name.ends_with(".step")) {
      EXPECT_EQ(t.to_vector<std::int64_t>()[0], big) << name;
    }
  }
}

// Every bad dict throws naming the entry and leaves the optimizer exactly as it was.
TEST(Optim, LoadStateDictErrorsChangeNothing) {
  Params p;
  AdamW adamw(p.named(), {0.05});
  p.grads(0);
  adamw.step();
  adamw.step();
  const StateDict good = [&] {
    StateDict d;
    for (const auto& [name, t] : adamw.state_dict()) d.emplace_back(name, t.clone());
    return d;
  }();
  auto snapshot = [&] {
    std::vector<std::pair<std::string, Values>> s;
    for (const auto& [name, t] : adamw.state_dict()) s.emplace_back(name, t.to_f64_vector());
    return s;
  };
  const auto before = snapshot();
  auto edited = [&](auto&& edit) {
    StateDict d;  // copies: an edit in place must not reach `good`
    for (const auto& [name, t] : good) d.emplace_back(name, t.clone());
    edit(d);
    return d;
  };
  auto find = [](StateDict& d, const std::string& name) -> Tensor& {
    for (auto& [n, t] : d)
      if (n == name) return t;
    throw std::runtime_error("no entry " + name);
  };
  auto erase = [](StateDict& d, const std::string& name) {
    std::erase_if(d, [&](const auto& e) { return e.first == name; });
  };
  const std::vector<std::pair<StateDict, std::string>> bad = {
      {edited([&](StateDict& d) { erase(d, "w.exp_avg"); }), "argument 'w.exp_avg'"},
      {edited([&](StateDict& d) { erase(d, "step"); }), "argument 'step'"},
      {edited([&](StateDict& d) { erase(d, "b.step"); }), "argument 'b.step'"},
      {edited([&](StateDict& d) {
         find(d, "w.exp_avg_sq") = Tensor::zeros({3, 2}, DType::f64);
       }),
       "argument 'w.exp_avg_sq': expected shape [2, 3] and dtype f64"},
      {edited([&](StateDict& d) { find(d, "b.exp_avg") = Tensor::zeros({3}, DType::f64); }),
       "argument 'b.exp_avg'"},
      {edited([&](StateDict& d) { find(d, "step") = Tensor::zeros({1}, DType::f32); }),
       "an i64 tensor of shape [1]"},
      {edited([&](StateDict& d) { find(d, "w.step").fill_(0); }), "argument 'w.step'"},
      {edited([&](StateDict& d) {
         d.emplace_back("w.momentum_buffer", Tensor::zeros({2, 3}));
       }),
       "argument 'w.momentum_buffer'"},
  };
  for (const auto& [dict, expect] : bad) {
    SCOPED_TRACE(expect);
    expect_error_containing([&] { adamw.load_state_dict(dict); }, expect);
    EXPECT_EQ(snapshot(), before);
    EXPECT_EQ(adamw.step_count(), 2);
  }
  adamw.load_state_dict(good);  // and the good one loads
  EXPECT_EQ(snapshot(), before);
}

TEST(Optim, ConstructorAndLrErrors) {
  Tensor w = make_param({1.0}, DType::f32);
  expect_error_containing(
      [&] {
        SGD({{"w", w}}, {0.1, 0.0, 0.0, 0.0, true});
      },
      "argument 'nesterov'");
  expect_error_containing(
      [&] {
        SGD({{"w", w}}, {0.1, 0.9, 0.5, 0.0, true});
      },
      "argument 'nesterov'");
  expect_error_containing([&] { SGD({{"w", w}}, {-0.1}); }, "argument 'lr'");
  expect_error_containing([&] { SGD({{"w", w}}, {0.1, -0.9}); }, "argument 'momentum'");
  expect_error_containing([&] { AdamW({{"w", w}}, {0.1, 1.0}); }, "argument 'beta1'");
  expect_error_containing([&] { AdamW({{"w", w}}, {0.1, 0.9, -0.1}); }, "argument 'beta2'");
  expect_error_containing([&] { AdamW({{"w", w}, {"w", w}}); }, "'w' twice");
  expect_error_containing([&] { AdamW({{"step", w}}); }, "argument 'params'");
  expect_error_containing(
      [&] {
        AdamW({{"ids", Tensor::zeros({2}, DType::i64)}});
      },
      "floating-point");
  AdamW adamw({{"w", w}});
  adamw.set_lr(0.5);
  EXPECT_EQ(adamw.lr(), 0.5);
  expect_error_containing([&] { adamw.set_lr(NAN); }, "argument 'lr'");
  EXPECT_EQ(adamw.lr(), 0.5);
}

// A gradient of the wrong shape is refused by the update op's rule before anything is written.
TEST(Optim, MismatchedGradientIsAnError) {
  Tensor w = make_param({1.0, 2.0}, DType::f64);
  Tensor other = make_param({1.0, 2.0, 3.0}, DType::f64);
  set_grad(other, {1, 1, 1});
  w.impl()->grad = other.grad().impl_ptr();  // as a buggy custom backward could leave it
  SGD sgd({{"w", w}}, {0.1});
  expect_error_containing([&] { sgd.step(); }, "sgd_update");
  EXPECT_EQ(w.to_f64_vector(), Values({1.0, 2.0}));
}

}  // namespace
}  // namespace mg
