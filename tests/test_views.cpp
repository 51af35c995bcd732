// Strided views (tensor.h, layout.h, ops/expand): layouts and values, writes through views,
// gradients that only move, the copies layout changes cost (layout_copy_bytes), and every bad
// view as an mg::Error naming the op and the argument.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

using testing::expect_error;
using testing::expect_error_containing;
constexpr auto kMax = std::numeric_limits<std::int64_t>::max();

Tensor iota(const Shape& shape, DType dtype = DType::f64) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  return Tensor::from_vector(values, shape).to(dtype);
}

std::vector<double> values(const Tensor& t) { return t.to_f64_vector(); }

// The largest absolute difference of two tensors of one shape (infinity for other shapes).
double max_difference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  const auto va = values(a), vb = values(b);
  for (std::size_t i = 0; i < va.size(); ++i) worst = std::max(worst, std::abs(va[i] - vb[i]));
  return worst;
}

TEST(Layouts, StridesAndContiguityFollowLibtorch) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_TRUE(is_contiguous_layout({2, 1, 4}, {4, 99, 1}));  // a size-1 axis's stride is free
  EXPECT_FALSE(is_contiguous_layout({2, 3}, {1, 2}));
  EXPECT_TRUE(is_contiguous_layout({0, 3}, {7, 7}));
  EXPECT_EQ(layout_extent({2, 3}, {1, 2}), 6);
  EXPECT_EQ(layout_extent({0, 3}, {3, 1}), 0);
  EXPECT_TRUE(has_internal_overlap({2, 3}, {0, 1}));
  EXPECT_FALSE(has_internal_overlap({2, 3}, {1, 2}));
  EXPECT_TRUE(has_internal_overlap({3, 3}, {1, 2}));  // interleaved: index (2,0) meets (0,1)
  EXPECT_EQ(view_strides({2, 3}, {3, 1}, {3, 2}), (Shape{2, 1}));
  EXPECT_EQ(view_strides({3, 2}, {1, 3}, {6}), std::nullopt);            // transposed, flat
  EXPECT_EQ(view_strides({3, 2}, {1, 3}, {3, 2, 1}), (Shape{1, 3, 3}));  // split off a 1
  EXPECT_EQ(wrap_dim(-1, 3, "op"), 2);
  expect_error_containing([] { wrap_dim(3, 3, "op"); }, "op: argument 'dim'");
}

// An empty tensor's sizes may multiply past INT64_MAX beside its 0: its strides saturate
// rather than wrap (undefined behaviour), and views of it stay empty.
TEST(Layouts, EmptyTensorsWithHugeSizesKeepDefinedStrides) {
  EXPECT_EQ(contiguous_strides({2, kMax, 0}), (Shape{kMax, 1, 1}));
  Tensor empty = Tensor::zeros({2, kMax, 0});
  EXPECT_EQ(empty.unsqueeze(0).numel(), 0);
  EXPECT_EQ(empty.unsqueeze(1).shape(), (Shape{2, 1, kMax, 0}));
  EXPECT_EQ(empty.permute({2, 0, 1}).numel(), 0);
  EXPECT_EQ(empty.transpose(0, 2).contiguous().shape(), (Shape{0, kMax, 2}));
}

TEST(Views, TransposePermuteAndTShareStorageUnderNewStrides) {
  Tensor x = iota({2, 3});
  Tensor t = x.t();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.impl()->storage, x.impl()->storage);
  EXPECT_EQ(values(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.at({2, 1}), 5);
  Tensor p = iota({2, 3, 4}).permute({2, 0, -2});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Shape{1, 12, 4}));
  EXPECT_EQ(p.at({3, 1, 2}), 1 * 12 + 2 * 4 + 3);
  EXPECT_EQ(iota({2, 3, 4}).transpose(0, -1).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(iota({5}).t().shape(), (Shape{5}));
  EXPECT_THROW(iota({5}).data<int>(), Error);
  expect_error_containing([&] { (void)t.data<double>(); }, "a contiguous tensor");
  EXPECT_EQ(t.data_ptr<double>(), x.data<double>());
}

TEST(Views, ContiguousCopiesOnlyAViewThatIsNotAndCountsTheBytes) {
  Tensor x = iota({3, 4});
  const auto before = layout_copy_bytes();
  EXPECT_TRUE(x.contiguous().is_same(x));
  EXPECT_EQ(layout_copy_bytes(), before);
  Tensor c = x.t().contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.impl()->storage, x.impl()->storage);
  EXPECT_EQ(values(c), values(x.t()));
  EXPECT_EQ(layout_copy_bytes(), before + 12 * sizeof(double));
  // An op whose kernels take contiguous inputs only (squared_norm) gets a copy from the
  // dispatcher; one that reads strides (sum) does not.
  EXPECT_EQ(squared_norm(x.t().narrow(0, 1, 2)).item(), 1 + 25 + 81 + 4 + 36 + 100);
  EXPECT_EQ(layout_copy_bytes(), before + 18 * sizeof(double));
  EXPECT_EQ(x.t().narrow(0, 1, 2).sum().item(), 1 + 5 + 9 + 2 + 6 + 10);
  EXPECT_EQ(x.t().mean({1}).to_f64_vector(), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(layout_copy_bytes(), before + 18 * sizeof(double));
}

TEST(Views, NarrowAndSelectOnAnyAxisAndFromTheEnd) {
  Tensor x = iota({2, 3, 4});
  Tensor n = x.narrow(-1, 1, 2);
  EXPECT_EQ(n.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(n.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_EQ(n.at({1, 2, 1}), 12 + 8 + 2);
  EXPECT_EQ(x.narrow(1, -1, 1).at({1, 0, 3}), 12 + 8 + 3);
  Tensor s = x.select(1, 2);
  EXPECT_EQ(s.shape(), (Shape{2, 4}));
  EXPECT_EQ(s.strides(), (Shape{12, 1}));
  EXPECT_EQ(values(s), (std::vector<double>{8, 9, 10, 11, 20, 21, 22, 23}));
  EXPECT_EQ(x.select(-1, -1).at({1, 1}), 12 + 4 + 3);
  EXPECT_EQ(x.narrow(2, 4, 0).numel(), 0);  // an empty part at the end
}

TEST(Views, UnsqueezeSqueezeViewReshapeFlatten) {
  Tensor x = iota({2, 3}).t();  // [3, 2], strides [1, 3]
  EXPECT_EQ(x.unsqueeze(0).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(x.unsqueeze(-1).strides(), (Shape{1, 3, 1}));
  EXPECT_EQ(x.unsqueeze(1).squeeze().shape(), (Shape{3, 2}));
  EXPECT_EQ(x.unsqueeze(1).squeeze(1).shape(), (Shape{3, 2}));
  EXPECT_EQ(x.squeeze(0).shape(), (Shape{3, 2}));  // not size 1: unchanged
  expect_error_containing([&] { x.view({6}); }, "reshape copies");
  Tensor r = x.reshape({6});
  EXPECT_NE(r.impl()->storage, x.impl()->storage);  // a copy: the strides cannot say it
  EXPECT_EQ(values(r), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor y = iota({2, 3});
  EXPECT_EQ(y.reshape({3, 2}).impl()->storage, y.impl()->storage);  // a view where it can
  EXPECT_EQ(y.flatten().shape(), (Shape{6}));
  EXPECT_EQ(x.view({3, 2, 1}).strides(), (Shape{1, 3, 3}));
}

TEST(Views, PositionEmbeddingIsTheTablesRowsWithoutACopy) {
  Tensor table = iota({6, 2}).set_requires_grad(true);
  const auto before = layout_copy_bytes();
  Tensor rows = position_embedding(table, 2, 3);
  EXPECT_EQ(rows.impl()->storage, table.impl()->storage);
  EXPECT_EQ(rows.storage_offset(), 6);
  EXPECT_EQ(values(rows), (std::vector<double>{6, 7, 8, 9}));
  rows.backward(Tensor::ones({2, 2}, DType::f64));
  EXPECT_EQ(values(table.grad()), (std::vector<double>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(layout_copy_bytes(), before);
  expect_error_containing([&] { position_embedding(table, 4, 3); }, "T + offset = 4 + 3");
}

TEST(Views, SplitAndChunkAsLibtorch) {
  Tensor x = iota({5, 2});
  auto pieces = x.split(2);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[2].shape(), (Shape{1, 2}));
  EXPECT_EQ(values(pieces[1]), (std::vector<double>{4, 5, 6, 7}));
  auto columns = x.split(1, -1);
  ASSERT_EQ(columns.size(), 2u);
  EXPECT_EQ(values(columns[1]), (std::vector<double>{1, 3, 5, 7, 9}));
  auto chunks = x.chunk(3);  // ceil(5 / 3) = 2 rows each: 2, 2, 1
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2].size(0), 1);
  EXPECT_EQ(iota({6}).chunk(4).size(), 3u);  // ceil(6 / 4) = 2: three pieces, as libtorch
  EXPECT_EQ(Tensor::zeros({0, 2}).chunk(3).size(), 1u);
  expect_error_containing([&] { x.split(0); }, "split: argument 'split_size'");
  expect_error_containing([&] { x.chunk(0); }, "chunk: argument 'chunks'");
}

TEST(Views, ExpandRepeatsWithStrideZero) {
  Tensor x = iota({3, 1});
  Tensor e = x.expand({2, 3, 4});
  EXPECT_EQ(e.strides(), (Shape{0, 1, 0}));
  EXPECT_EQ(e.impl()->storage, x.impl()->storage);
  EXPECT_EQ(e.at({1, 2, 3}), 2);
  EXPECT_EQ(x.expand({-1, 5}).shape(), (Shape{3, 5}));
  EXPECT_EQ(values(x.expand({3, 2})), (std::vector<double>{0, 0, 1, 1, 2, 2}));
  expect_error_containing([&] { x.expand({4, 2}); }, "expand: argument 'shape'");
  expect_error_containing([&] { x.expand({2}); }, "at least 2 sizes");
  expect_error_containing([&] { x.expand({-1, 3, 2}); }, "non-negative sizes on new leading");
  expect_error_containing(
      [&] {
        x.expand({kMax, 3, kMax});
      },
      "expand: argument 'shape'");  // the count passes 2^63 - 1
}

TEST(Views, WritesGoThroughStridedViewsAndBumpTheSharedVersion) {
  Tensor x = iota({3, 3});
  const auto v0 = x.version();
  x.t().select(0, 1).fill_(-1);  // column 1
  EXPECT_EQ(values(x), (std::vector<double>{0, -1, 2, 3, -1, 5, 6, -1, 8}));
  x.select(1, 0).zero_();
  EXPECT_EQ(values(x.select(1, 0)), (std::vector<double>{0, 0, 0}));
  x.narrow(1, 2, 1).copy_(Tensor::from_vector<double>({7, 8, 9}, {3, 1}));
  EXPECT_EQ(values(x.select(1, 2)), (std::vector<double>{7, 8, 9}));
  x.t().narrow(0, 0, 1).add_(Tensor::ones({1, 3}, DType::f64));  // a column, through add_
  EXPECT_EQ(values(x.select(1, 0)), (std::vector<double>{1, 1, 1}));
  x.select(1, 1).mul_(Tensor::full({3}, 2.0, DType::f64));
  EXPECT_EQ(values(x.select(1, 1)), (std::vector<double>{-2, -2, -2}));
  EXPECT_EQ(x.version(), v0 + 5);
  Tensor y = Tensor::zeros({2, 3}, DType::f64);
  y.t().copy_(iota({3, 2}));  // a transposed destination
  EXPECT_EQ(values(y), (std::vector<double>{0, 2, 4, 1, 3, 5}));
  x.select(1, 1).copy_(x.select(1, 2));  // apart, though the spans interleave
  EXPECT_EQ(values(x.select(1, 1)), (std::vector<double>{7, 8, 9}));
}

TEST(Views, AWriteThroughAnExpandedViewIsRefusedAndChangesNothing) {
  Tensor x = iota({3, 1});
  Tensor e = x.expand({3, 4});
  const auto version = x.version();
  expect_error_containing([&] { e.fill_(1); }, "fill_: argument 'self'");
  expect_error_containing([&] { e.zero_(); }, "several indices reach one element");
  expect_error_containing([&] { e.copy_(Tensor::zeros({3, 4}, DType::f64)); }, "copy_");
  expect_error_containing([&] { e.add_(Tensor::ones({3, 4}, DType::f64)); }, "add");
  expect_error_containing([&] { e.set_flat(1, 2.0); }, "set_flat");
  EXPECT_EQ(x.version(), version);
  EXPECT_EQ(values(x), (std::vector<double>{0, 1, 2}));
}

TEST(Views, ASavedTensorChangedThroughAnotherViewIsCaught) {
  Tensor w = Tensor::normal({2, 3}, 0, 1, 1, DType::f64).set_requires_grad(true);
  Tensor base = iota({3, 3});
  Tensor y = (base.narrow(0, 0, 2) * w).sum();  // mul saves rows 0 and 1 of base
  base.select(0, 2).fill_(5);                   // row 2: another view of the same storage
  expect_error_containing([&] { y.backward(); }, "version");
}

// Every view recorded, checked against finite differences in f64.
TEST(Views, GradientsOfEveryViewPassGradcheck) {
  Tensor x = Tensor::normal({3, 4}, 0, 1, 3, DType::f64).set_requires_grad(true);
  Tensor b = Tensor::normal({4, 1}, 0, 1, 4, DType::f64).set_requires_grad(true);
  auto fn = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor moved = x.t().narrow(0, 1, 3).permute({1, 0}).unsqueeze(0).squeeze(0);  // [3, 3]
    Tensor picked = x.select(1, -1).reshape({3, 1}).expand({3, 3});
    Tensor halves = x.chunk(2, 1)[1] + x.split(2, 1)[0];  // [3, 2]
    Tensor broad = in[1].t().expand({3, 4});              // [3, 4]
    return (moved * picked).sum() + (halves * halves).sum() + (broad * x).sum() +
           x.t().matmul(x).sum();
  };
  auto report = gradcheck(fn, {x, b}, {"x", "b"});
  EXPECT_TRUE(report.passed()) << report.str();
}

TEST(Views, GradientsMoveWithoutLayoutCopiesAndLandContiguous) {
  Tensor x = Tensor::normal({4, 3}, 0, 1, 5, DType::f64).set_requires_grad(true);
  x.narrow(0, 1, 2).backward(Tensor::ones({2, 3}, DType::f64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0}));
  x.zero_grad();
  x.sum().backward();  // sum's backward is an expand of the scalar
  EXPECT_TRUE(x.grad().is_contiguous());
  EXPECT_EQ(values(x.grad()), std::vector<double>(12, 1.0));
  x.zero_grad();
  const auto before = layout_copy_bytes();
  x.select(1, 2).narrow(0, 1, 3).backward(Tensor::full({3}, 2.0, DType::f64));
  EXPECT_EQ(layout_copy_bytes(), before);  // placed into zeros, never a layout copy
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 0, 0, 0, 2, 0, 0, 2, 0, 0, 2}));
  x.zero_grad();
  x.t().select(0, 2).backward(Tensor::full({4}, 2.0, DType::f64));  // lands transposed: copied
  EXPECT_TRUE(x.grad().is_contiguous());
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2}));
}

// Kernels that read strides take views as they are: no layout copy, the same values.
TEST(Views, StridedEnginesAndMatmulTakeViewsWithoutACopy) {
  Tensor x = Tensor::normal({3, 4}, 0, 1, 7, DType::f64);
  Tensor w = Tensor::normal({5, 4}, 0, 1, 8, DType::f64);
  Tensor col = Tensor::normal({3, 1}, 0, 1, 9, DType::f64);
  const Tensor xt = x.t().contiguous(), wt = w.t().contiguous();
  const auto before = layout_copy_bytes();
  const Tensor sum = x.t() + col.t().expand({4, 3});
  const Tensor product = x.matmul(w.t());         // [3, 4] x [4, 5]
  const Tensor both = xt.t().matmul(wt.t().t());  // a transposed view, b contiguous again
  const Tensor batched = Tensor::normal({2, 4, 3}, 0, 1, 10, DType::f64);
  const Tensor batched_product = batched.transpose(-1, -2).matmul(w.t());  // shared b
  const Tensor e = x.t().exp();
  EXPECT_EQ(layout_copy_bytes(), before);
  EXPECT_EQ(max_difference(sum, xt + col.t().expand({4, 3}).contiguous()), 0);
  EXPECT_LE(max_difference(product, matmul(x, w, {false, true})), 1e-12);
  EXPECT_LE(max_difference(both, matmul(x, wt)), 1e-12);
  EXPECT_LE(max_difference(batched_product, batched.transpose(-1, -2).contiguous().matmul(wt)),
            1e-12);
  EXPECT_EQ(max_difference(e, xt.exp()), 0);
}

TEST(Views, AViewAKernelReadsIsVersionCheckedThroughItsStorage) {
  Tensor w = Tensor::normal({3, 3}, 0, 1, 1, DType::f64).set_requires_grad(true);
  Tensor base = iota({3, 3});
  Tensor y = (base.t() * w).sum();  // mul reads (and saves) the transposed view itself
  base.select(0, 0).fill_(5);       // another view of the same storage
  expect_error_containing([&] { y.backward(); }, "version");
}

TEST(Views, BadViewsNameTheOpAndTheArgumentEvenAtInt64Edges) {
  Tensor x = iota({2, 3});
  const struct {
    std::function<void()> call;
    std::string text;
  } cases[] = {
      {[&] { x.transpose(0, 2); }, "transpose: argument 'dim1'"},
      {[&] { x.transpose(-3, 0); }, "transpose: argument 'dim0'"},
      {[&] { x.permute({0}); }, "permute: argument 'dims': expected 2 axes"},
      {[&] {
         x.permute({1, 1});
       },
       "a permutation"},
      {[&] {
         x.permute({0, kMax});
       },
       "permute: argument 'dims'"},
      {[&] { x.narrow(2, 0, 1); }, "narrow: argument 'dim'"},
      {[&] { x.narrow(1, 4, 0); }, "narrow: argument 'start'"},
      {[&] { x.narrow(1, 2, 2); }, "narrow: argument 'length'"},
      {[&] { x.narrow(1, kMax, 1); }, "narrow: argument 'start'"},
      {[&] { x.narrow(1, 1, kMax); }, "narrow: argument 'length'"},
      {[&] { x.narrow(1, -kMax, 1); }, "narrow: argument 'start'"},
      {[&] { x.select(0, 2); }, "select: argument 'index'"},
      {[&] { x.select(0, -kMax); }, "select: argument 'index'"},
      {[&] { Tensor::zeros({}).select(0, 0); }, "select: argument 'self'"},
      {[&] { x.unsqueeze(3); }, "unsqueeze: argument 'dim'"},
      {[&] { x.squeeze(-3); }, "squeeze: argument 'dim'"},
      {[&] {
         x.view({4, -1});
       },
       "view: argument 'shape'"},
      {[&] {
         x.reshape({kMax, 2});
       },
       "reshape: argument 'shape'"},
      {[&] {
         iota({2, 2, 2}).t();
       },
       "t: argument 'self': expected a tensor of rank 0 to 2"},
      {[&] { x.split(-1); }, "split: argument 'split_size'"},
      {[&] { x.chunk(-kMax); }, "chunk: argument 'chunks'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    expect_error_containing(c.call, c.text);
  }
}

TEST(Views, HostAccessReadsViewsInTheirOwnOrder) {
  Tensor x = iota({2, 3}, DType::f32).t();
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values(x.to(DType::f64)), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values(x.clone()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(x.at_flat(1), 3);
  EXPECT_EQ(x.detach().strides(), x.strides());
  EXPECT_NE(x.str().find("values=[0, 3, 1, 4, 2, 5]"), std::string::npos) << x.str();
}

}  // namespace
}  // namespace mg
