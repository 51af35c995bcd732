// Data parallel training through the communicator interface. Run alone (one rank, the local
// communicator) or as every rank of an MPI job (`mpirun -np 2 distributed_tests`, ctest
// distributed_mpi_2_ranks): each test calls the same collectives in the same order on every rank.
// The checks: collectives' values and errors; the bucketed gradient reducer; N ranks with B / N
// rows each train exactly as one process with B, to the reduction-order tolerance stated in
// docs/distributed.md, with the ranks' parameters bit-identical to each other; checkpoints
// resumed with another number of ranks; bad configurations are errors on every rank.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg::distributed {
namespace {

namespace fs = std::filesystem;

Communicator* g_comm = nullptr;  // the job's communicator, made by main()
Communicator& comm() { return *g_comm; }
int rank() { return comm().rank(); }
int ranks() { return comm().world_size(); }

const std::string kCorpus = std::string(MINIGRAPH_SOURCE_DIR) + "/data/corpus.txt";

TEST(Communicator, AllReduceSumsAndAveragesEveryDtypeOnEveryRank) {
  const int n = ranks(), r = rank();
  Tensor f32 = Tensor::from_vector<float>({1.5f * static_cast<float>(r + 1), -1}, {2});
  Tensor f64 = Tensor::from_vector<double>({0.25 * (r + 1), 1e300 / n}, {2});
  Tensor i32 = Tensor::from_vector<std::int32_t>({r, 1}, {2});
  Tensor i64 = Tensor::from_vector<std::int64_t>({std::int64_t{1} << 40, r}, {2});
  comm().all_reduce(f32);
  comm().all_reduce(f64, ReduceOp::mean);
  comm().all_reduce(i32);
  comm().all_reduce(i64);
  const double sum_r1 = n * (n + 1) / 2.0;  // sum over ranks of (r + 1)
  EXPECT_EQ(f32.to_vector<float>(),
            (std::vector<float>{1.5f * static_cast<float>(sum_r1), -static_cast<float>(n)}));
  EXPECT_DOUBLE_EQ(f64.to_vector<double>()[0], 0.25 * sum_r1 / n);
  EXPECT_DOUBLE_EQ(f64.to_vector<double>()[1], 1e300 / n);
  EXPECT_EQ(i32.to_vector<std::int32_t>(), (std::vector<std::int32_t>{n * (n - 1) / 2, n}));
  EXPECT_EQ(i64.to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{(std::int64_t{1} << 40) * n, n * (n - 1) / 2}));
}

TEST(Communicator, AsyncCollectivesCompleteInOrderAndBroadcastTakesTheRootsValues) {
  const int root = ranks() - 1;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Work>> works;
  for (int i = 0; i < 4; ++i) {
    // 3 million elements: several MPI messages, enough to be in flight while the next starts.
    tensors.push_back(Tensor::full({3'000'000}, rank() + i, DType::f32));
    works.push_back(comm().all_reduce_async(tensors.back(), ReduceOp::sum));
  }
  Tensor b = Tensor::full({5}, rank() == root ? 7.0 : -1.0, DType::f64);
  auto bw = comm().broadcast_async(b, root);
  for (auto& w : works) w->wait();
  bw->wait();
  for (int i = 0; i < 4; ++i) {
    const double want = ranks() * (ranks() - 1) / 2.0 + ranks() * i;
    EXPECT_EQ(tensors[i].at_flat(0), want);
    EXPECT_EQ(tensors[i].at_flat(2'999'999), want);
  }
  EXPECT_EQ(b.to_vector<double>(), std::vector<double>(5, 7.0));
  comm().barrier();
}

TEST(Communicator, BadArgumentsAreErrorsBeforeAnyCollective) {
  testing::expect_error_containing([] { comm().all_reduce(Tensor()); },
                                   "all_reduce: argument 'tensor': expected a defined tensor");
  testing::expect_error_containing(
      [] { comm().all_reduce(Tensor::zeros({2}, DType::i64), ReduceOp::mean); },
      "all_reduce: argument 'op': expected sum for an integer tensor (mean: f32 or f64), got "
      "mean of an i64 tensor");
  testing::expect_error_containing([] { comm().broadcast(Tensor::zeros({2}), ranks()); },
                                   fmt::format("broadcast: argument 'root': expected a rank in "
                                               "[0, {}), got {}",
                                               ranks(), ranks()));
  testing::expect_error_containing([] { comm().broadcast(Tensor::zeros({2}), -1); }, "got -1");
  // The communicator still works: nothing was started by the refused calls.
  Tensor one = Tensor::ones({1}, DType::i64);
  comm().all_reduce(one);
  EXPECT_EQ(one.item(), ranks());
}

TEST(Communicator, BytesAndTheSameIdentityOnEveryRank) {
  const std::string text = rank() == 0 ? std::string("tokenizer\0bytes\xff", 16) : "";
  EXPECT_EQ(broadcast_bytes(comm(), text), std::string("tokenizer\0bytes\xff", 16));
  EXPECT_EQ(broadcast_bytes(comm(), rank() == 0 ? "" : "x"), "");
  check_same_on_every_rank(comm(), "test", "a = 1\nb = [2, 3]\n");
  if (ranks() == 1) return;
  const Error e = testing::expect_error([] {
    check_same_on_every_rank(comm(), "test",
                             rank() == 1 ? "a = 1\nb = [3, 2]\n" : "a = 1\nb = [2, 3]\n");
  });
  const std::string message = e.what();
  EXPECT_NE(message.find("test: argument 'ranks': expected the same model and run settings on "
                         "every rank"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("got ranks 1 differ from rank 0"), std::string::npos) << message;
  if (rank() == 1) {
    EXPECT_NE(message.find("'b = [3, 2]' here, 'b = [2, 3]' on rank 0"), std::string::npos)
        << message;
  }
}

// A collective some rank joins late: the others' wait gives up after the timeout with an error
// that says why, instead of hanging.
TEST(Communicator, AWaitGivesUpAfterTheTimeout) {
  if (!in_mpi_job() || ranks() < 2) GTEST_SKIP() << "needs an MPI job of 2 or more ranks";
  CommunicatorOptions quick;
  quick.timeout_s = 1;
  auto late = mpi_communicator(quick);
  Tensor t = Tensor::ones({4}, DType::f32);
  // Rank 1 joins once the others said, over the job's own communicator, that they gave up.
  Tensor gave_up = Tensor::zeros({1}, DType::f32);
  if (rank() == 1) {
    comm().broadcast(gave_up, 0);
    late->all_reduce(t);  // arrives after rank 0 gave up; rank 0's collective completes now
  } else {
    const auto start = std::chrono::steady_clock::now();
    testing::expect_error_containing(
        [&] { late->all_reduce(t); },
        fmt::format("all_reduce: argument 'ranks': expected all {} ranks in the collective "
                    "within 1 s (the timeout), got no answer: a rank died, stalled",
                    ranks()));
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GE(waited, 0.9);
    EXPECT_LT(waited, 2.5);
    comm().broadcast(gave_up, 0);
  }
  comm().barrier();
}

std::vector<std::pair<std::string, Tensor>> three_params(DType dtype) {
  std::vector<std::pair<std::string, Tensor>> params;
  params.emplace_back("a", Tensor::zeros({3, 4}, dtype).set_requires_grad(true));  // 48 B (f32)
  params.emplace_back("b", Tensor::zeros({5}, dtype).set_requires_grad(true));     // 20 B
  params.emplace_back("c", Tensor::zeros({2, 2}, dtype).set_requires_grad(true));  // 16 B
  return params;
}

TEST(GradientReducer, BucketsFollowTheReverseOrderAndTheByteBudget) {
  auto params = three_params(DType::f32);
  GradientReducer one_bucket(comm(), params);
  EXPECT_EQ(one_bucket.buckets(), (std::vector<std::vector<std::string>>{{"c", "b", "a"}}));
  GradientReducer small(comm(), params, 40);  // c + b = 36 B fit, a (48 B) alone
  EXPECT_EQ(small.buckets(), (std::vector<std::vector<std::string>>{{"c", "b"}, {"a"}}));
  testing::expect_error_containing([&] { GradientReducer(comm(), params, 0); },
                                   "argument 'bucket_bytes': expected at least 1, got 0");
  auto twice = params;
  twice.emplace_back("a_again", params[0].second);
  testing::expect_error_containing([&] { GradientReducer(comm(), twice); },
                                   "GradientReducer: argument 'a_again': expected each parameter "
                                   "once");
  auto ids = params;
  ids.emplace_back("ids", Tensor::zeros({2}, DType::i64));
  testing::expect_error_containing(
      [&] { GradientReducer(comm(), ids); },
      "argument 'ids': expected a defined f32 or f64 parameter, got i64");
}

TEST(GradientReducer, EveryRankEndsWithTheMeanOfTheRanksGradients) {
  for (std::int64_t bucket_bytes : {std::int64_t{1}, std::int64_t{64}, std::int64_t{1} << 20}) {
    auto params = three_params(DType::f64);
    GradientReducer reducer(comm(), params, bucket_bytes);
    for (int step = 0; step < 2; ++step) {
      for (auto& [name, p] : params) p.zero_grad();
      // loss = sum(a * (r + 1)) + sum(b * (r + step)) [+ sum(c * 7) at step 0 only].
      const double r = rank();
      Tensor loss = add((params[0].second * (r + 1)).sum(), (params[1].second * (r + step)).sum());
      if (step == 0) loss = add(loss, (params[2].second * 7.0).sum());
      backward(loss, Tensor(), false, reducer.hook());
      reducer.finish();
      const double n = ranks();
      EXPECT_EQ(params[0].second.grad().to_vector<double>(), std::vector<double>(12, (n + 1) / 2))
          << bucket_bytes;
      EXPECT_EQ(params[1].second.grad().to_vector<double>(),
                std::vector<double>(5, (n - 1) / 2 + step))
          << bucket_bytes;
      // At step 1 c takes no gradient on any rank: zeros, not step 0's values left in the bucket.
      EXPECT_EQ(params[2].second.grad().to_vector<double>(),
                std::vector<double>(4, step == 0 ? 7.0 : 0.0))
          << bucket_bytes;
    }
  }
}

// ---- training: N ranks with B / N rows against one process with B ----------------------------

// One tokenizer for the whole job, trained by rank 0 on first use (which every rank reaches at
// the same point: it is a collective).
std::unique_ptr<train::Tokenizer> tokenizer_copy() {
  static const std::string bytes = broadcast_bytes(
      comm(), rank() == 0 ? train::Tokenizer::train(kCorpus, 512).serialized() : "");
  return std::make_unique<train::Tokenizer>(train::Tokenizer::from_serialized(bytes));
}

train::TrainConfig small_run(std::int64_t steps, DType dtype, train::OptimizerKind optimizer) {
  train::TrainConfig c;
  c.corpus = kCorpus;
  c.vocab_size = 512;
  c.d_model = 16;
  c.context = 16;
  c.batch = 8;
  c.steps = steps;
  c.lr = 3e-2;
  c.min_lr = 1e-3;
  c.eval_every = steps;  // one validation loss, at the end
  c.seed = 5;
  c.dtype = dtype;
  c.optimizer = optimizer;
  c.bucket_bytes = 4096;  // several buckets, so the bucketing is part of what is compared
  return c;
}

// The largest |a - b| over the parameters, relative to the largest |a|.
double relative_difference(train::Trainer& a, train::Trainer& b) {
  double diff = 0, scale = 0;
  const auto pa = a.model().named_parameters(), pb = b.model().named_parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const auto va = pa[i].second.to_f64_vector(), vb = pb[i].second.to_f64_vector();
    for (std::size_t j = 0; j < va.size(); ++j) {
      diff = std::max(diff, std::abs(va[j] - vb[j]));
      scale = std::max(scale, std::abs(va[j]));
    }
  }
  return diff / scale;
}

// Whether every rank's parameters are bit for bit rank 0's.
bool identical_on_every_rank(train::Trainer& t) {
  std::int64_t differing = 0;
  for (const auto& [name, p] : t.model().named_parameters()) {
    Tensor root = p.clone();
    comm().broadcast(root, 0);
    differing += std::memcmp(root.raw_data(), p.raw_data(), p.nbytes()) != 0;
  }
  Tensor total = Tensor::full({1}, static_cast<double>(differing), DType::i64);
  comm().all_reduce(total);
  return total.item() == 0;
}

struct Case {
  DType dtype;
  train::OptimizerKind optimizer;
  double tolerance;  // docs/distributed.md: the bound, and what was measured
};

TEST(DataParallel, NRanksWithBOverNRowsTrainAsOneProcessWithB) {
  const Case cases[] = {{DType::f64, train::OptimizerKind::adamw, 1e-12},
                        {DType::f32, train::OptimizerKind::sgd, 1e-5},
                        {DType::f32, train::OptimizerKind::adamw, 1e-4}};
  for (const Case& k : cases) {
    const auto config = small_run(12, k.dtype, k.optimizer);
    train::Trainer parallel(config, tokenizer_copy(), &comm());
    train::StepMetrics last;
    while (!parallel.done()) last = parallel.step();
    EXPECT_TRUE(identical_on_every_rank(parallel)) << dtype_name(k.dtype);
    if (rank() == 0) {
      auto local = local_communicator();
      train::Trainer single(config, tokenizer_copy(), local.get());
      train::StepMetrics single_last;
      while (!single.done()) single_last = single.step();
      const double diff = relative_difference(parallel, single);
      std::printf(
          "%s %s: %d ranks vs 1 process after 12 steps: max |dθ| / max |θ| = %.3g, "
          "loss %.10f vs %.10f, validation %.10f vs %.10f\n",
          std::string(dtype_name(k.dtype)).c_str(),
          k.optimizer == train::OptimizerKind::sgd ? "sgd" : "adamw", ranks(), diff, last.loss,
          single_last.loss, last.val_loss, single_last.val_loss);
      EXPECT_LE(diff, k.tolerance) << dtype_name(k.dtype);
      EXPECT_NEAR(last.loss, single_last.loss, k.tolerance * 10);
      EXPECT_NEAR(last.val_loss, single_last.val_loss, k.tolerance * 10);
    }
    comm().barrier();
  }
}

TEST(DataParallel, ATransformerTrainsAsOneProcessAndDropoutKeepsTheRanksTogether) {
  auto config = small_run(8, DType::f64, train::OptimizerKind::adamw);
  config.layers = 2;
  config.heads = 2;
  train::Trainer parallel(config, tokenizer_copy(), &comm());
  while (!parallel.done()) parallel.step();
  EXPECT_TRUE(identical_on_every_rank(parallel));
  if (rank() == 0) {
    auto local = local_communicator();
    train::Trainer single(config, tokenizer_copy(), local.get());
    while (!single.done()) single.step();
    EXPECT_LE(relative_difference(parallel, single), 1e-12);
  }
  // With dropout each rank draws its own masks (keyed by step and rank): the ranks still take
  // the same update, and a second job repeats the first bit for bit.
  config.dropout = 0.1;
  double losses[2] = {0, 0};
  for (double& loss : losses) {
    train::Trainer job(config, tokenizer_copy(), &comm());
    while (!job.done()) loss = job.step().loss;
    EXPECT_TRUE(identical_on_every_rank(job));
  }
  EXPECT_EQ(losses[0], losses[1]);
  comm().barrier();
}

TEST(DataParallel, ACheckpointResumesWithAnotherNumberOfRanks) {
  // Runs of 8 steps (the schedule's length) stopped after 4 and saved.
  const auto config = small_run(8, DType::f64, train::OptimizerKind::adamw);
  // Folders named by rank 0's process id, the same on every rank: jobs running at the same
  // time (ctest -j, a mutation run) must not share them.
  const fs::path base = broadcast_bytes(
      comm(),
      rank() == 0
          ? (fs::temp_directory_path() / fmt::format("minigraph-dist-{}", ::getpid())).string()
          : "");
  const fs::path from_job = base / "from-job";
  const fs::path from_one = base / "from-one";
  auto local = local_communicator();
  std::unique_ptr<train::Trainer> straight;  // rank 0: one process, all 8 steps
  if (rank() == 0) {
    fs::remove_all(from_job);
    fs::remove_all(from_one);
    straight = std::make_unique<train::Trainer>(config, tokenizer_copy(), local.get());
    while (!straight->done()) straight->step();
    train::Trainer first_half(config, tokenizer_copy(), local.get());
    for (int i = 0; i < 4; ++i) first_half.step();
    first_half.save(from_one.string());
  }
  {
    train::Trainer job(config, tokenizer_copy(), &comm());  // 4 steps on every rank of the job
    for (int i = 0; i < 4; ++i) job.step();
    job.save(from_job.string());  // rank 0 writes, the others return
  }
  comm().barrier();
  // The job's checkpoint, continued by one process ...
  if (rank() == 0) {
    auto resumed = train::Trainer::resume(from_job.string(), config, local.get());
    EXPECT_EQ(resumed->steps_done(), 4);
    while (!resumed->done()) resumed->step();
    EXPECT_LE(relative_difference(*resumed, *straight), 1e-10);
  }
  // ... and one process's checkpoint, continued by the job.
  auto resumed = train::Trainer::resume(from_one.string(), config, &comm());
  while (!resumed->done()) resumed->step();
  EXPECT_TRUE(identical_on_every_rank(*resumed));
  if (rank() == 0) {
    EXPECT_LE(relative_difference(*resumed, *straight), 1e-10);
    fs::remove_all(base);
  }
  comm().barrier();
}

TEST(DataParallel, BadConfigurationsAreErrorsOnEveryRank) {
  if (ranks() < 2) GTEST_SKIP() << "needs 2 or more ranks";
  auto odd = small_run(2, DType::f32, train::OptimizerKind::adamw);
  odd.batch = 2 * ranks() + 1;
  testing::expect_error_containing(
      [&] { train::Trainer t(odd, tokenizer_copy(), &comm()); },
      fmt::format("train: argument 'batch': expected a multiple of the {} ranks (each takes B / "
                  "{} rows), got {}",
                  ranks(), ranks(), odd.batch));
  auto other = small_run(2, DType::f32, train::OptimizerKind::adamw);
  if (rank() == 1) other.d_model = 24;
  const Error e =
      testing::expect_error([&] { train::Trainer t(other, tokenizer_copy(), &comm()); });
  const std::string message = e.what();
  EXPECT_NE(message.find("got ranks 1 differ from rank 0"), std::string::npos) << message;
  if (rank() == 1) {
    EXPECT_NE(message.find("'train.d_model = 24' here, 'train.d_model = 16' on rank 0"),
              std::string::npos)
        << message;
  }
  // Settings that shape the collectives, not the model: another bucket size would all-reduce
  // buckets of other lengths.
  auto buckets = small_run(2, DType::f32, train::OptimizerKind::adamw);
  if (rank() == 1) buckets.bucket_bytes = 1 << 20;
  testing::expect_error_containing([&] { train::Trainer t(buckets, tokenizer_copy(), &comm()); },
                                   "got ranks 1 differ from rank 0");
  comm().barrier();
}

// ---- NCCL: the single-process, single-GPU path (ctest distributed_nccl_one_gpu;
// tools/gpu-check.sh) --

// A one-rank NCCL communicator on cuda:0 (bootstrapped by a local one), or a skip that says why.
std::unique_ptr<Communicator> nccl_on_gpu0() {
  if (!nccl_built()) return nullptr;
  if (!device_available(Device::cuda(0))) return nullptr;
  static auto bootstrap = local_communicator();
  return nccl_communicator(*bootstrap, Device::cuda(0));
}
#define MG_NCCL_OR_SKIP(comm)                                                              \
  auto comm = nccl_on_gpu0();                                                              \
  if (!comm) {                                                                             \
    GTEST_SKIP() << (nccl_built() ? "no CUDA device visible: the NCCL tests run on a GPU " \
                                    "machine (tools/gpu-check.sh)"                         \
                                  : "built without NCCL");                                 \
  }

TEST(Nccl, CollectivesOnOneGpuKeepTheValuesAndOrderWithTheComputeStream) {
  MG_NCCL_OR_SKIP(nccl);
  EXPECT_EQ(nccl->name(), "nccl");
  EXPECT_EQ(nccl->world_size(), 1);
  const Device gpu = Device::cuda(0);
  // Written by a kernel on the compute stream just before: the collective must see it.
  Tensor x = (Tensor::full({1 << 20}, 1.5, DType::f32).to(gpu) * 2.0);
  auto work = nccl->all_reduce_async(x, ReduceOp::mean);
  work->wait();
  Tensor y = x * 2.0;  // queued after the wait: reads the reduced values
  EXPECT_EQ(y.to(Device::cpu()).at_flat((1 << 20) - 1), 6.0);
  Tensor ids = Tensor::from_vector<std::int64_t>({1, 2, 3}, {3}).to(gpu);
  nccl->all_reduce(ids);
  nccl->broadcast(ids, 0);
  EXPECT_EQ(ids.to(Device::cpu()).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2, 3}));
  nccl->barrier();
  testing::expect_error_containing([&] { nccl->all_reduce(Tensor::zeros({2})); },
                                   "all_reduce: argument 'tensor': expected a tensor on cuda:0 "
                                   "(the nccl communicator's device), got one on cpu");
}

TEST(Nccl, TheGradientReducerAveragesGpuGradients) {
  MG_NCCL_OR_SKIP(nccl);
  std::vector<std::pair<std::string, Tensor>> params;
  for (auto& [name, p] : three_params(DType::f32)) {
    Tensor on_gpu = p.to(Device::cuda(0));
    on_gpu.set_requires_grad(true);
    params.emplace_back(name, on_gpu);
  }
  GradientReducer reducer(*nccl, params, 40);
  Tensor loss = add((params[0].second * 3.0).sum(), (params[1].second * 2.0).sum());
  backward(loss, Tensor(), false, reducer.hook());
  reducer.finish();
  EXPECT_EQ(params[0].second.grad().to(Device::cpu()).to_vector<float>(),
            std::vector<float>(12, 3.0f));
  EXPECT_EQ(params[1].second.grad().to(Device::cpu()).to_vector<float>(),
            std::vector<float>(5, 2.0f));
  EXPECT_EQ(params[2].second.grad().to(Device::cpu()).to_vector<float>(),
            std::vector<float>(4, 0.0f));
}

// Only rank 0 reports passes; another rank's failures are printed, prefixed with its rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, result.file_name(),
                   result.line_number(), result.summary());
    }
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace mg::distributed

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<mg::distributed::Communicator> comm = mg::distributed::in_mpi_job()
                                                            ? mg::distributed::mpi_communicator()
                                                            : mg::distributed::local_communicator();
  mg::distributed::g_comm = comm.get();
  if (comm->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new mg::distributed::RankFailurePrinter(comm->rank()));
  }
  const int failed = RUN_ALL_TESTS();
  // Every rank's verdict: a rank that failed fails the job.
  mg::Tensor failures = mg::Tensor::full({1}, failed != 0 ? 1 : 0, mg::DType::i64);
  comm->all_reduce(failures);
  return failures.item() == 0 ? 0 : 1;
}
