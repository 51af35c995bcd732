// Tensors that can be written into: storage offsets and views (view, narrow) recorded by
// autograd, the write paths (copy_, fill_, zero_, apply_op_into), the version counters that
// make backward refuse a graph whose saved tensors were overwritten, and Module::to in place.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

using testing::expect_error;
using testing::expect_error_containing;

Tensor param(std::vector<double> values, Shape shape) {
  Tensor t = Tensor::from_vector(values, shape);
  t.set_requires_grad(true);
  return t;
}

TEST(Views, NarrowSharesRowsFromAnOffset) {
  Tensor t = Tensor::from_vector<double>({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2});
  Tensor rows = t.narrow(0, 1, 2);
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(rows.storage_offset(), 2);
  EXPECT_EQ(rows.to_vector<double>(), (std::vector<double>{2, 3, 4, 5}));
  Tensor inner = rows.narrow(0, 1, 1);  // offsets add up
  EXPECT_EQ(inner.storage_offset(), 4);
  EXPECT_EQ(inner.to_vector<double>(), (std::vector<double>{4, 5}));
  inner.fill_(9);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 9, 9, 6, 7}));
  EXPECT_EQ(t.narrow(0, 4, 0).numel(), 0);  // an empty block at the end is fine
  // Clones and detached views keep the offset's meaning.
  EXPECT_EQ(rows.clone().to_vector<double>(), (std::vector<double>{2, 3, 9, 9}));
  EXPECT_EQ(rows.detach().storage_offset(), 2);
}

TEST(Views, NarrowRefusesRowsOutsideTheTensorEvenNearInt64Max) {
  Tensor t = Tensor::zeros({4, 2});
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  expect_error_containing([&] { t.narrow(0, -5, 1); }, "start");
  EXPECT_EQ(t.narrow(0, -1, 1).storage_offset(), 6);  // from the end, as libtorch
  expect_error_containing([&] { t.narrow(0, 5, 0); }, "start");
  expect_error_containing([&] { t.narrow(0, 3, 2); }, "length");
  expect_error_containing([&] { t.narrow(0, 1, kMax); }, "length");  // 1 + INT64_MAX wraps
  expect_error_containing([&] { t.narrow(0, kMax, 1); }, "start");
  expect_error_containing([&] { t.narrow(0, 0, -1); }, "length");
  expect_error_containing([&] { Tensor::zeros({}).narrow(0, 0, 0); }, "rank");
  const Error e = expect_error([&] { t.narrow(0, 3, 2); });
  EXPECT_EQ(e.op(), "narrow");
}

TEST(Views, FromStorageChecksOffsetsWithoutWrapping) {
  auto storage = std::make_shared<Storage>(Device::cpu(), 64);
  EXPECT_EQ(Tensor::from_storage(storage, {4}, DType::f64, 4).storage_offset(), 4);
  expect_error_containing([&] { Tensor::from_storage(storage, {4}, DType::f64, 5); }, "bytes");
  expect_error_containing(
      [&] {
        Tensor::from_storage(storage, {2}, DType::f64, std::numeric_limits<std::int64_t>::max());
      },
      "offset");
  expect_error_containing([&] { Tensor::from_storage(storage, {2}, DType::f64, -1); }, "offset");
}

TEST(Views, ViewInfersOneSizeAndRefusesOthers) {
  Tensor t = Tensor::zeros({2, 3, 4});
  EXPECT_EQ(t.view({-1, 4}).shape(), (Shape{6, 4}));
  EXPECT_EQ(t.view({2, -1}).shape(), (Shape{2, 12}));
  expect_error_containing([&] { t.view({5, -1}); }, "divides");
  expect_error_containing([&] { t.view({-1, -1}); }, "at most one");
  expect_error_containing([&] { t.view({7}); }, "24 elements");
  EXPECT_EQ(Tensor::zeros({0, 3}).view({-1, 3}).shape(), (Shape{0, 3}));
}

// view and narrow of a tensor that requires grad are recorded: their gradients are the
// upstream one reshaped, and zero outside the rows, checked against finite differences.
TEST(Views, ViewAndNarrowAreRecordedAndPassGradcheck) {
  Tensor x = Tensor::normal({4, 3}, 0, 1, 5, DType::f64).set_requires_grad(true);
  Tensor w = Tensor::normal({6, 2}, 0, 1, 6, DType::f64).set_requires_grad(true);
  auto fn = [](const std::vector<Tensor>& in) {
    // rows 1..2 of x as [6], then [1, 6] x [6, 2]
    return matmul(in[0].narrow(0, 1, 2).view({1, -1}), in[1]);
  };
  auto report = gradcheck(fn, {x, w}, {"x", "w"});
  EXPECT_TRUE(report.passed()) << report.str();
  Tensor y = x.narrow(0, 1, 2);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->op->name, "narrow");
  y.view({-1}).backward(Tensor::ones({6}, DType::f64));
  EXPECT_EQ(x.grad().to_vector<double>(),
            (std::vector<double>{0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0}));
  NoGradGuard no_grad;
  EXPECT_EQ(x.view({12}).grad_fn(), nullptr);  // grad mode off: plain views
}

TEST(Writes, CopyFillZeroWriteValuesAndBumpTheVersion) {
  Tensor t = Tensor::zeros({2, 2}, DType::f64);
  const auto v0 = t.version();
  t.copy_(Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(t.version(), v0 + 1);
  t.fill_(-0.5);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>(4, -0.5)));
  t.zero_();
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>(4, 0.0)));
  EXPECT_EQ(t.version(), v0 + 3);
  Tensor i = Tensor::zeros({3}, DType::i64);
  i.fill_(7);
  EXPECT_EQ(i.to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 7, 7}));
  // A view shares the storage and so the version.
  Tensor row = t.narrow(0, 1, 1);
  row.fill_(3);
  EXPECT_EQ(t.version(), row.version());
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{0, 0, 3, 3}));
}

TEST(Writes, CopyRefusesOtherShapesAndDtypesAndReadsItsOwnMemoryFirst) {
  Tensor t = Tensor::from_vector<double>({1, 2, 3, 4}, {4});
  const auto version = t.version();
  expect_error_containing([&] { t.copy_(Tensor::zeros({3}, DType::f64)); }, "shape [4]");
  expect_error_containing([&] { t.copy_(Tensor::zeros({4}, DType::f32)); }, "dtype f64");
  expect_error_containing([&] { t.copy_(Tensor()); }, "defined");
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(t.version(), version);
  t.narrow(0, 0, 2).copy_(t.narrow(0, 2, 2));  // apart: fine
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{3, 4, 3, 4}));
  // A part of its own memory: src is read whole first, as if it were a copy.
  t.narrow(0, 1, 3).copy_(t.narrow(0, 0, 3));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{3, 3, 4, 3}));
}

// Writes are not recorded, so with grad mode on they refuse what a recording would need; under
// NoGradGuard they go through (an optimizer's step, loading weights).
TEST(Writes, RefuseTensorsAutogradNeedsUnlessGradModeIsOff) {
  Tensor w = param({1, 2}, {2});
  Tensor y = add(w, w);
  const Error leaf = expect_error([&] { w.fill_(0); });
  EXPECT_EQ(leaf.op(), "fill_");
  EXPECT_NE(std::string(leaf.what()).find("leaf that requires grad"), std::string::npos);
  expect_error_containing([&] { y.zero_(); }, "recorded op 'add'");
  expect_error_containing([&] { w.copy_(Tensor::zeros({2}, DType::f64)); }, "NoGradGuard");
  expect_error_containing([&] { w.set_flat(0, 5); }, "leaf that requires grad");
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{1, 2}));
  {
    NoGradGuard no_grad;
    w.copy_(Tensor::from_vector<double>({5, 6}, {2}));
  }
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{5, 6}));
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
}

// The PyTorch "modified by an inplace operation" error: matmul's backward reads its inputs, so
// a graph whose input was overwritten would give a wrong gradient. It fails instead, naming
// the op and the input, and leaves every gradient as it was.
TEST(Versions, BackwardRefusesAGraphWhoseSavedTensorWasOverwritten) {
  Tensor a = param({1, 2, 3, 4}, {2, 2});
  Tensor b = param({5, 6, 7, 8}, {2, 2});
  Tensor out = matmul(a, b);
  {
    NoGradGuard no_grad;
    b.fill_(0);  // an optimizer step before backward
  }
  const Error e = expect_error([&] { out.backward(Tensor::ones({2, 2}, DType::f64)); });
  EXPECT_EQ(e.op(), "matmul");
  EXPECT_EQ(e.argument(), "b");
  EXPECT_NE(std::string(e.what()).find("written in place"), std::string::npos) << e.what();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
  // A fresh forward after the write works.
  matmul(a, b).backward(Tensor::ones({2, 2}, DType::f64));
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{4, 4, 6, 6}));
}

TEST(Versions, AWriteThroughAViewCountsForTheWholeStorage) {
  Tensor x = param({1, 2, 3, 4}, {2, 2});
  Tensor w = Tensor::from_vector<double>({1, 0, 0, 1}, {2, 2});
  Tensor out = matmul(x, w);   // saves w
  w.narrow(0, 1, 1).fill_(2);  // w needs no grad: the write is allowed, the graph is stale
  expect_error_containing([&] { out.backward(Tensor::ones({2, 2}, DType::f64)); }, "version");
}

// The write-into kernel path: the op's kernel fills a given tensor, nothing allocated or
// recorded; elementwise ops may write over an input, others may not.
TEST(ApplyOpInto, WritesAGivenTensorWithoutRecording) {
  register_builtin_ops();
  const OpDef& add_op = OpRegistry::instance().get("add");
  const OpDef& matmul_op = OpRegistry::instance().get("matmul");
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<double>({10, 20}, {2});
  Tensor out = Tensor::zeros({2, 2}, DType::f64);
  const void* memory = out.raw_data();
  apply_op_into(add_op, {a, b}, out);
  EXPECT_EQ(out.raw_data(), memory);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{11, 22, 13, 24}));
  apply_op_into(add_op, {a, b}, a);  // a += b: elementwise, may alias
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{11, 22, 13, 24}));
  // With grad-requiring inputs, nothing is recorded.
  Tensor p = param({1, 1, 1, 1}, {2, 2});
  apply_op_into(add_op, {p, b}, out);
  EXPECT_EQ(out.grad_fn(), nullptr);
  EXPECT_FALSE(out.requires_grad());

  const auto version = a.version();
  const Error alias = expect_error([&] { apply_op_into(matmul_op, {a, out}, a, MatmulOptions{}); });
  EXPECT_EQ(alias.op(), "matmul");
  EXPECT_EQ(alias.argument(), "out");
  expect_error_containing([&] { apply_op_into(add_op, {a, b}, b); }, "shape [2, 2]");
  Tensor first_row = a.narrow(0, 0, 1);
  apply_op_into(add_op, {first_row, b}, first_row);  // exactly one of the inputs: allowed
  expect_error_containing(
      [&] {
        Tensor wide = Tensor::zeros({2, 2}, DType::f32);
        apply_op_into(add_op, {a, b}, wide);
      },
      "dtype f64");
  expect_error_containing([&] { apply_op_into(add_op, {a, b}, p); }, "leaf that requires grad");
  Tensor undefined;
  expect_error_containing([&] { apply_op_into(add_op, {a, b}, undefined); }, "defined");
  EXPECT_EQ(a.version(), version + 1);  // only the allowed write into the first row
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{21, 42, 13, 24}));
}

TEST(ApplyOpInto, RefusesAPartialOverlapWithAnInput) {
  register_builtin_ops();
  const OpDef& add_op = OpRegistry::instance().get("add");
  Tensor t = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor one = Tensor::ones({2}, DType::f64);
  expect_error_containing(
      [&] {
        apply_op_into(add_op, {t.narrow(0, 0, 2), one}, t.narrow(0, 1, 2));
      },
      "partly overlapping");
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

// A kernel that computes in fewer dtypes than its op declares on some device: apply_op refuses
// the others before the kernel runs, naming op, argument and the dtypes it takes.
TEST(Dtypes, ApplyOpChecksTheDevicesKernelDtypes) {
  static bool ran = false;
  OpDef def;
  def.name = "writes_test_f64_only";
  def.inputs = {"x"};
  def.infer = [](const OpDef&, std::span<const Tensor> in, const std::any&) {
    return OutputSpec{in[0].shape(), in[0].dtype()};
  };
  def.kernels = device_kernels([](const KernelContext&) { ran = true; });
  def.kernels[0].dtypes = {DType::f64};
  const OpDef& op = OpRegistry::instance().add(std::move(def));
  const Error e = expect_error([&] { apply_op(op, {Tensor::zeros({2}, DType::f32)}); });
  EXPECT_EQ(e.op(), "writes_test_f64_only");
  EXPECT_EQ(e.argument(), "x");
  EXPECT_NE(std::string(e.what()).find("cpu kernel computes in (f64)"), std::string::npos)
      << e.what();
  EXPECT_FALSE(ran);
  apply_op(op, {Tensor::zeros({2}, DType::f64)});
  EXPECT_TRUE(ran);

  // The output's dtype counts too: ids in, f32 out, from a kernel that computes in f64 only.
  ran = false;
  OpDef from_ids;
  from_ids.name = "writes_test_ids_to_f32";
  from_ids.inputs = {"ids"};
  from_ids.infer = [](const OpDef&, std::span<const Tensor> in, const std::any&) {
    return OutputSpec{in[0].shape(), DType::f32};
  };
  from_ids.kernels = device_kernels([](const KernelContext&) { ran = true; });
  from_ids.kernels[0].dtypes = {DType::f64};
  const OpDef& ids_op = OpRegistry::instance().add(std::move(from_ids));
  const Error out = expect_error([&] { apply_op(ids_op, {Tensor::zeros({2}, DType::i64)}); });
  EXPECT_EQ(out.argument(), "output");
  EXPECT_FALSE(ran);
}

TEST(Dtypes, DispatchIsExhaustive) {
  EXPECT_EQ(dispatch_float(DType::f32, []<typename T>() { return sizeof(T); }), 4u);
  EXPECT_EQ(dispatch_float(DType::f64, []<typename T>() { return sizeof(T); }), 8u);
  expect_error_containing([] { dispatch_float(DType::i32, []<typename T>() {}); }, "got i32");
  expect_error_containing([] { dispatch_float(DType::i64, []<typename T>() {}); }, "float dtype");
  EXPECT_EQ(dispatch_ids(DType::i32, []<typename T>() { return sizeof(T); }), 4u);
  expect_error_containing([] { dispatch_ids(DType::f32, []<typename T>() {}); }, "got f32");
}

TEST(Attrs, AMismatchNamesTheOpAndBothTypes) {
  const Error e = expect_error([] { attrs_as<SumToAttrs>("sum_to", std::any(42)); });
  EXPECT_EQ(e.op(), "sum_to");
  EXPECT_EQ(e.argument(), "attrs");
  EXPECT_NE(std::string(e.what()).find("mg::SumToAttrs"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("int"), std::string::npos) << e.what();
  expect_error_containing([] { attrs_as<SumToAttrs>("sum_to", std::any()); }, "got none");
  // Through the dispatcher: an op given another op's attributes.
  register_builtin_ops();
  const OpDef& sum_to_op = OpRegistry::instance().get("sum_to");
  expect_error_containing(
      [&] {
        apply_op(sum_to_op, {Tensor::zeros({2, 2})}, MatmulOptions{});
      },
      "mg::MatmulOptions");
}

// The engine sums gradients through the function the ops library installed, not an op it
// looks up by name.
TEST(GradientSum, TheEngineUsesTheInstalledSum) {
  register_builtin_ops();
  static int calls = 0;
  set_gradient_sum([](const Tensor& a, const Tensor& b) {
    ++calls;
    return add(a, b);
  });
  Tensor x = param({1, 2}, {2});
  add(x, x).backward(Tensor::ones({2}, DType::f64));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 2}));
  set_gradient_sum([](const Tensor& a, const Tensor& b) { return add(a, b); });
}

// Module::to moves parameters in place, so handles taken before see the move; a parameter
// shared with a view is refused before anything moves.
TEST(ModuleTo, RefusesParametersSharedWithViewsBeforeMovingAny) {
  Embedding table(4, 3, 1);
  Tensor handle = table.weight();
  table.to(Device::cpu());  // already there: nothing to do
  EXPECT_TRUE(handle.is_same(table.weight()));
  Tensor view = table.weight().detach().narrow(0, 0, 2);
  const Error e = expect_error([&] { table.to(Device::cuda(0)); });
  EXPECT_EQ(e.op(), "Module::to");
  EXPECT_EQ(e.argument(), "weight");
  EXPECT_TRUE(table.weight().device().is_cpu());
  // A recorded output cannot be moved in place, nor a tensor another one views.
  expect_error_containing([&] { add(handle, handle).to_(Device::cuda(0)); }, "leaf");
  Tensor base = Tensor::zeros({4, 2});
  Tensor rows = base.narrow(0, 1, 2);
  const Error shared = expect_error([&] { base.to_(Device::cuda(0)); });
  EXPECT_EQ(shared.op(), "to_");
  EXPECT_NE(std::string(shared.what()).find("sharing it with 1 other"), std::string::npos)
      << shared.what();
  EXPECT_TRUE(base.device().is_cpu());
}

}  // namespace
}  // namespace mg
