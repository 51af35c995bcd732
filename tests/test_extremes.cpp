// Extreme and malformed inputs through the public API (issue 15): sizes whose products pass
// 2^63, offsets at INT64_MAX, empty inner sizes, undefined tensors and null storages, values
// an integer dtype cannot hold, wrong attributes, messages that name the right argument. Each
// is a clear mg::Error (or a correct result), and leaves the model's parameters and gradients
// bit for bit as they were.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

using testing::expect_error_containing;

constexpr std::int64_t k2to40 = std::int64_t{1} << 40, k2to61 = std::int64_t{1} << 61,
                       k2to62 = std::int64_t{1} << 62;

// A model's parameters and gradients as bytes, to compare before and after a refused call.
std::vector<std::vector<unsigned char>> state_of(const Module& m) {
  std::vector<std::vector<unsigned char>> out;
  for (const auto& [name, p] : m.named_parameters()) {
    for (const Tensor& t : {p, p.grad()}) {
      if (!t.defined()) {
        out.emplace_back();
        continue;
      }
      const Tensor host = t.to(Device::cpu());
      const auto* bytes = static_cast<const unsigned char*>(host.raw_data());
      out.emplace_back(bytes, bytes + host.nbytes());
    }
  }
  return out;
}

// A small model with gradients in place, so a refused call could visibly change either.
struct SmallModel {
  andrea::Andrea model{config()};
  SmallModel() {
    sum(model.forward(Tensor::from_vector<std::int64_t>({1, 2, 3}, {1, 3}))).backward();
  }
  static andrea::AndreaConfig config() {
    andrea::AndreaConfig c;
    c.vocab_size = 11, c.d_model = 4, c.context = 6;
    return c;
  }
};

TEST(Extremes, ShapeProductsPastInt64MaxAreErrorsNotSmallTensors) {
  expect_error_containing([] { Tensor::zeros({k2to40, k2to40}); }, "passes INT64_MAX");
  expect_error_containing([] { Tensor::normal({k2to40, k2to40}, 0, 1, 1); }, "passes INT64_MAX");
  expect_error_containing(
      [] {
        Tensor::from_vector<float>({}, {k2to40, k2to40});
      },
      "passes INT64_MAX");
  expect_error_containing([] { Tensor::zeros({k2to62}); },
                          "4611686018427387904 elements of 4 bytes");
  expect_error_containing([] { Tensor::ones({k2to62}); },
                          "4611686018427387904 elements of 4 bytes");
  expect_error_containing([] { Tensor::zeros({4}).view({k2to62 + 1, 4}); }, "passes INT64_MAX");
  expect_error_containing(
      [] {
        andrea::AndreaConfig c;
        c.vocab_size = k2to62, c.d_model = 1;
        andrea::Andrea m(c);
      },
      "AndreaConfig: argument 'vocab_size × d_model × element size'");
  expect_error_containing([] { broadcast_to(Tensor::zeros({1}), {k2to62}); },
                          "broadcast_to: argument 'output'");
}

TEST(Extremes, ShapeRulesNameTheirOwnOpForNegativeAndHugeOutputs) {
  expect_error_containing([] { broadcast_to(Tensor::zeros({1}), {-5}); },
                          "broadcast_to: argument 'shape': expected non-negative sizes, got [-5]");
  Tensor grad = Tensor::zeros({2, 4});
  Tensor ids = Tensor::from_vector<std::int64_t>({0, 1}, {2});
  expect_error_containing([&] { embedding_backward(grad, ids, k2to61); },
                          "embedding_backward: argument 'output'");
}

TEST(Extremes, OffsetsNearInt64MaxAreRefusedWithoutWrapping) {
  const Tensor table = Tensor::zeros({8, 4});
  expect_error_containing([&] { position_embedding(table, 2, kInt64Max); },
                          "T + offset = 2 + 9223372036854775807 (past 2^63 - 1)");
  expect_error_containing([&] { position_embedding(table, kInt64Max, 1); },
                          "T + offset = 9223372036854775807 + 1 (past 2^63 - 1)");
  expect_error_containing([&] { position_embedding(table, kInt64Max, 0); },
                          "T + offset = 9223372036854775807 + 0 = 9223372036854775807");
  expect_error_containing(
      [&] {
        position_embedding_backward(Tensor::zeros({2, 4}), 8, kInt64Max);
      },
      "T + offset = 2 + 9223372036854775807 (past 2^63 - 1)");
  const Tensor ids = Tensor::from_vector<std::int64_t>({1, 2}, {1, 2});
  expect_error_containing([&] { token_position_embedding(table, table, ids, kInt64Max); },
                          "T + offset = 2 + 9223372036854775807 (past 2^63 - 1)");
  expect_error_containing([&] { token_position_embedding(table, table, ids, kInt64Max - 1); },
                          "past 2^63 - 1");

  // Through the model, both paths: an error, and nothing changed.
  SmallModel small;
  andrea::Andrea& m = small.model;
  const auto before = state_of(m);
  expect_error_containing([&] { m.input.forward(ids, kInt64Max); }, "past 2^63 - 1");
  expect_error_containing([&] { m.input.forward_composed(ids, kInt64Max); }, "past 2^63 - 1");
  expect_error_containing([&] { m.forward(ids, kInt64Max - 1); }, "past 2^63 - 1");
  EXPECT_EQ(state_of(m), before);
}

TEST(Extremes, MatmulWithAnEmptyInnerSizeAndASharedWeightHasZeroGradients) {
  Tensor a = Tensor::zeros({2, 3, 0}).set_requires_grad(true);
  Tensor b = Tensor::zeros({0, 5}).set_requires_grad(true);
  Tensor out = matmul(a, b);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 5}));
  sum(out).backward();
  EXPECT_EQ(a.grad().shape(), (Shape{2, 3, 0}));
  EXPECT_EQ(b.grad().shape(), (Shape{0, 5}));
}

TEST(Extremes, UndefinedTensorsAndNullStoragesAreErrors) {
  expect_error_containing([] { Tensor().zero_grad(); }, "an undefined tensor");
  expect_error_containing([] { Tensor().set_requires_grad(true); }, "an undefined tensor");
  expect_error_containing(
      [] { Tensor::from_storage(nullptr, {2}, DType::f32); },
      "tensor: argument 'storage': expected a storage to view, got a null pointer");
}

TEST(Extremes, ValuesAnIntegerDtypeCannotHoldAreErrors) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {nan, inf, -inf, 1e10, -3e9}) {
    expect_error_containing([&] { Tensor::full({3}, bad).to(DType::i32); },
                            "to: argument 'value': expected a finite value inside i32's range");
    expect_error_containing([&] { Tensor::full({3}, bad, DType::i32); }, "full: argument 'value'");
  }
  expect_error_containing([&] { Tensor::full({2}, nan, DType::f64).to(DType::i64); },
                          "inside i64's range, got nan (element 0)");
  expect_error_containing([&] { Tensor::full({2}, 0x1p63, DType::f64).to(DType::i64); }, "i64");
  // In range: truncated toward zero, as static_cast and PyTorch do.
  EXPECT_EQ(Tensor::from_vector<double>({-2.7, 2.7, 2147483647.5}, {3})
                .to(DType::i32)
                .to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-2, 2, 2147483647}));
  // Integers convert exactly (a double would round ids past 2^53), i64 -> i32 is checked.
  const std::int64_t past53 = (std::int64_t{1} << 53) + 1;
  const Tensor ids = Tensor::from_vector<std::int64_t>({past53, kInt64Max}, {2});
  EXPECT_EQ(ids.to(DType::i64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{past53, kInt64Max}));
  expect_error_containing([&] { ids.to(DType::i32); },
                          "to: argument 'value': expected a value inside i32's range, got "
                          "9007199254740993 (element 0)");
  EXPECT_EQ(
      Tensor::from_vector<std::int32_t>({-7, 7}, {2}).to(DType::i64).to_vector<std::int64_t>(),
      (std::vector<std::int64_t>{-7, 7}));
  // A refused write leaves the tensor and its version as they were.
  Tensor t = Tensor::from_vector<std::int32_t>({1, 2}, {2});
  const auto version = t.impl()->storage->version();
  expect_error_containing([&] { t.set_flat(0, nan); }, "set_flat: argument 'value'");
  expect_error_containing([&] { t.fill_(inf); }, "fill_: argument 'value'");
  EXPECT_EQ(t.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(t.impl()->storage->version(), version);
}

TEST(Extremes, WrongOrMissingAttributesAreErrorsNamingTheOp) {
  register_builtin_ops();
  const OpDef& op = OpRegistry::instance().get("sum_to");
  const Tensor table = Tensor::zeros({8, 4});
  expect_error_containing([&] { apply_op(op, {table}, std::any{}); },
                          "sum_to: argument 'attrs'");
  expect_error_containing([&] { apply_op(op, {table}, std::any{3}); }, "attributes of type int");
  const OpDef& mm = OpRegistry::instance().get("matmul");
  expect_error_containing(
      [&] {
        apply_op(mm, {table, Tensor::zeros({4, 2})}, std::any{1.5});
      },
      "matmul: argument 'attrs'");
  for (const OpDef* any_op : OpRegistry::instance().all()) {  // every op, no attributes at all
    std::vector<Tensor> inputs(any_op->inputs.size(), Tensor::zeros({2, 2}));
    try {
      apply_op(*any_op, inputs, std::any{std::string("not attributes")});
    } catch (const Error&) {
    }  // a result or an mg::Error; anything else fails the test
  }
}

TEST(Extremes, MessagesBlameTheArgumentThatIsWrong) {
  SmallModel small;
  andrea::Andrea& m = small.model;
  const auto before = state_of(m);
  expect_error_containing(
      [&] {
        m.head.forward(Tensor::zeros({1, 2, 4}, DType::f64));
      },
      "OutputHead.forward: argument 'x': expected dtype f32 (the head's weight), got f64");
  EXPECT_EQ(state_of(m), before);
}

}  // namespace
}  // namespace mg
