// Tensor construction, host access, sharing semantics and formatting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

TEST(Tensor, FromVectorKeepsValuesShapeAndDtype) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.size(-1), 3);
  EXPECT_EQ(t.at({1, 2}), 6.0);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Tensor, IdsKeepTheirIntegerType) {
  Tensor ids = Tensor::from_vector<std::int64_t>({3, 8448}, {2});
  EXPECT_EQ(ids.dtype(), DType::i64);
  EXPECT_EQ(ids.at({1}), 8448.0);
  EXPECT_EQ(Tensor::from_vector<std::int32_t>({7}, {1}).dtype(), DType::i32);
}

TEST(Tensor, ZerosOnesFullAndItem) {
  EXPECT_EQ(Tensor::zeros({2, 2}, DType::f64).to_vector<double>(), std::vector<double>(4, 0.0));
  EXPECT_EQ(Tensor::ones({3}).to_vector<float>(), std::vector<float>(3, 1.0f));
  EXPECT_EQ(Tensor::full({1}, 2.5, DType::f64).item(), 2.5);
}

TEST(Tensor, CopiesShareStorageAndCloneDoesNot) {
  Tensor a = Tensor::zeros({3});
  Tensor shared = a;
  Tensor copy = a.clone();
  shared.set_flat(1, 7.0);
  EXPECT_EQ(a.at({1}), 7.0);
  EXPECT_EQ(copy.at({1}), 0.0);
  EXPECT_TRUE(shared.is_same(a));
}

TEST(Tensor, ViewSharesDataUnderANewShape) {
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v = a.view({3, 2});
  EXPECT_EQ(v.at({2, 1}), 6.0);
  v.set_flat(0, 9.0);
  EXPECT_EQ(a.at({0, 0}), 9.0);
  testing::expect_error_containing(
      [&] { a.view({4}); }, "view: argument 'shape': expected 6 elements (from [2, 3]), got [4]");
}

TEST(Tensor, NormalIsSeededAndHasTheAskedMoments) {
  Tensor a = Tensor::normal({200, 100}, 0.0, 0.5, 42);
  Tensor b = Tensor::normal({200, 100}, 0.0, 0.5, 42);
  Tensor c = Tensor::normal({200, 100}, 0.0, 0.5, 43);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_NE(a.to_vector<float>(), c.to_vector<float>());
  double sum = 0, squares = 0;
  for (double v : a.to_f64_vector()) {
    sum += v;
    squares += v * v;
  }
  double mean = sum / a.numel(), stddev = std::sqrt(squares / a.numel() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(stddev, 0.5, 0.01);
}

TEST(Tensor, DtypeConversionRoundsToTheTarget) {
  Tensor a = Tensor::from_vector<double>({1.5, -2.0, 3.25}, {3});
  EXPECT_EQ(a.to(DType::f32).to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
  EXPECT_EQ(a.to(DType::i64).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, -2, 3}));
}

TEST(Tensor, FormatsShapeDtypeAndValues) {
  Tensor t = Tensor::from_vector<float>({1, 2}, {1, 2});
  EXPECT_EQ(fmt::format("{}", t), "Tensor(shape=[1, 2], dtype=f32, device=cpu, values=[1, 2])");
  EXPECT_EQ(shape_str({8, 1024, 768}), "[8, 1024, 768]");
  EXPECT_EQ(fmt::format("{} {}", Device::cuda(1), DType::i32), "cuda:1 i32");
}

TEST(Tensor, BadConstructionAndAccessThrowClearErrors) {
  try {
    Tensor::from_vector<float>({1, 2, 3}, {2, 2});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "from_vector: argument 'values': expected 4 values for shape [2, 2], got 3 values");
  }
  Tensor t = Tensor::zeros({2, 2});
  testing::expect_error_containing(
      [&] {
        t.at({2, 0});
      },
      "at: argument 'index': expected axis 0 in [0, 2), got 2");
  testing::expect_error_containing([&] { t.item(); }, "item: argument 'self'");
  testing::expect_error_containing([&] { t.to_vector<double>(); },
                                   "to_vector: argument 'T': expected f32, got f64");
  testing::expect_error_containing([] { Tensor().shape(); }, "an undefined tensor");
  testing::expect_error_containing(
      [] { Tensor::from_vector<std::int64_t>({1}, {1}).set_requires_grad(); },
      "set_requires_grad: argument 'self': expected a floating-point tensor, got i64");
}

TEST(Tensor, AskingForAMissingDeviceIsAClearError) {
  // cuda:1000 is absent everywhere (in a CPU-only build so is every CUDA device): one error.
  Error e = testing::expect_error([] { Tensor::zeros({2}, DType::f32, Device::cuda(1000)); });
  EXPECT_EQ(e.op(), "backend");
  EXPECT_NE(std::string(e.what()).find("an available device"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("cuda:1000"), std::string::npos) << e.what();
}

TEST(Tensor, NegativeSizesAreErrors) {
  for (const Shape& shape : {Shape{-1}, Shape{2, -1}, Shape{0, -1}, Shape{-2, 3}}) {
    Error e = testing::expect_error([&] { Tensor::zeros(shape); });
    EXPECT_EQ(std::string(e.what()),
              fmt::format("tensor: argument 'shape': expected non-negative sizes, got {}",
                          shape_str(shape)));
  }
}

TEST(Tensor, OnlyDevicesThatExistAreAvailable) {
  const int gpus = device_count(DeviceKind::cuda);
  EXPECT_TRUE(device_available(Device::cpu()));
  EXPECT_FALSE(device_available(Device{DeviceKind::cpu, 1}));
  EXPECT_FALSE(device_available(Device::cuda(gpus)));  // indices run 0 .. count - 1
  EXPECT_FALSE(device_available(Device::cuda(-1)));
  testing::expect_error_containing([&] { Tensor::zeros({2}, DType::f32, Device::cuda(gpus)); },
                                   fmt::format("got cuda:{}", gpus));
}

TEST(Tensor, ShapeProductsThatPassInt64AreErrorsNotWrappedSizes) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // 2^40 x 2^40 wraps to 0 elements in unchecked int64 arithmetic.
  Error e = testing::expect_error([] { Tensor::zeros({1LL << 40, 1LL << 40}); });
  EXPECT_STREQ(e.what(),
               "tensor: argument 'shape': expected at most 2^63 - 1 elements, got "
               "[1099511627776, 1099511627776] (the element count passes INT64_MAX)");
  EXPECT_THROW(Tensor::zeros({kMax, 2}), Error);
  EXPECT_THROW(Tensor::zeros({3, kMax / 2}), Error);
  // Elements fit, bytes do not: 2^62 floats are 2^64 bytes.
  e = testing::expect_error([] { Tensor::zeros({1LL << 62}); });
  EXPECT_EQ(e.expected(), "at most 2^63 - 1 bytes");
  EXPECT_EQ(shape_nbytes({(1LL << 61) - 1}, DType::f32), ((1LL << 61) - 1) * 4);
  EXPECT_THROW(shape_nbytes({1LL << 61}, DType::f32), Error);  // exactly 2^63 bytes
  // A zero size makes any shape empty, however large the other sizes.
  EXPECT_EQ(Tensor::zeros({0, kMax, kMax}).numel(), 0);
  EXPECT_EQ(checked_mul(kMax, 1, "t", "x"), kMax);
  EXPECT_EQ(checked_add(kMax - 1, 1, "t", "x"), kMax);
  e = testing::expect_error([] { checked_add(kMax, 1, "andrea", "parameters"); });
  EXPECT_STREQ(e.what(),
               "andrea: argument 'parameters': expected a sum of at most 2^63 - 1, got "
               "9223372036854775807 + 1 (passes INT64_MAX)");
  EXPECT_THROW(checked_mul(1LL << 32, 1LL << 31, "t", "x"), Error);
  EXPECT_THROW(checked_mul(-(1LL << 32), 1LL << 32, "t", "x"), Error);
}

TEST(Tensor, MemoryTheSystemCannotGiveIsAnErrorNamingTheBytes) {
  // 4 TiB of floats: more than any machine this runs on has available.
  Error e = testing::expect_error([] { Tensor::zeros({1LL << 40}); });
  EXPECT_EQ(e.op(), "cpu");
  EXPECT_NE(std::string(e.what()).find("a request for 4398046511104 bytes (4096.00 GiB)"),
            std::string::npos)
      << e.what();
  // Nothing was kept: the allocator still serves ordinary requests.
  EXPECT_EQ(Tensor::ones({4}).to_vector<float>(), std::vector<float>(4, 1.0f));
}

}  // namespace
}  // namespace mg
