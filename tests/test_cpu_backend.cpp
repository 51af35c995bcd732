// The CPU backend's runtime: the one thread setting, kernels whose bits do not depend on the
// thread count (the embedding scatter-add above all), and the caching allocator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "expect_error.h"
#include "minigraph/cpu.h"
#include "minigraph/minigraph.h"
#include "minigraph/threads.h"

namespace mg {
namespace {

// Restores the thread setting when a test ends.
class ThreadsTest : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(saved_); }

 private:
  int saved_ = num_threads();
};

// Ids [B, T] from [0, rows), with repeats: rows hit zero, one and many times.
Tensor random_ids(std::int64_t batch, std::int64_t length, std::int64_t rows, std::uint64_t seed) {
  Tensor draws = Tensor::normal({batch, length}, 0, 1, seed, DType::f64);
  std::vector<std::int64_t> ids;
  for (double x : draws.to_vector<double>()) {
    ids.push_back(static_cast<std::int64_t>(std::abs(x) * rows / 3) % rows);  // skewed
  }
  return Tensor::from_vector(ids, {batch, length});
}

// The float tensors' exact bits.
std::vector<std::uint32_t> bits(const Tensor& t) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(t.numel()));
  std::memcpy(out.data(), t.raw_data(), t.nbytes());
  return out;
}

// The thread counts determinism is checked at: one, the machine's two, and more parts than
// cores (OpenMP runs 7 parts on 2 cores), so a kernel whose order depends on the part index
// is caught.
const std::vector<int> kThreadCounts{1, 2, 3, 4, 7};

// Sequential reference of embedding_backward: zero, then add the rows in position order.
std::vector<float> scatter_add_in_order(const Tensor& grad, const Tensor& ids, std::int64_t rows) {
  const auto g = grad.to_vector<float>();
  const auto id = ids.to_vector<std::int64_t>();
  const std::int64_t width = grad.size(-1);
  std::vector<float> out(static_cast<std::size_t>(rows * width), 0.0f);
  for (std::size_t p = 0; p < id.size(); ++p) {
    for (std::int64_t d = 0; d < width; ++d) out[id[p] * width + d] += g[p * width + d];
  }
  return out;
}

std::vector<std::uint32_t> float_bits(const std::vector<float>& values) {
  std::vector<std::uint32_t> out(values.size());
  std::memcpy(out.data(), values.data(), values.size() * sizeof(float));
  return out;
}

// The default thread count follows OMP_NUM_THREADS when it holds a count; ctest runs this
// test also with OMP_NUM_THREADS=3 and =abc (tests/CMakeLists.txt). It must run before any
// set_num_threads in its process, as ctest runs each test in a process of its own.
TEST(Threads, DefaultFollowsOmpNumThreadsAndSaysWhichSettingWon) {
  const char* env = std::getenv("OMP_NUM_THREADS");
  const std::string value = env != nullptr ? env : "";
  const std::string origin = num_threads_origin();
  if (value == "3") {
    EXPECT_EQ(num_threads(), 3);
    EXPECT_EQ(origin, "OMP_NUM_THREADS=3");
  } else if (value == "abc") {
    EXPECT_NE(origin.find("OMP_NUM_THREADS='abc' ignored"), std::string::npos) << origin;
    EXPECT_NE(origin.find("core"), std::string::npos) << origin;
  } else if (value.empty()) {
    EXPECT_NE(origin.find("core"), std::string::npos) << origin;
  } else {
    GTEST_SKIP() << "OMP_NUM_THREADS=" << value << " set by the caller";
  }
  set_num_threads(2);
  EXPECT_EQ(num_threads_origin(), "set_num_threads(2)");
}

// The thread team starts when the count is set, while the room for its stacks was just checked:
// a team started at the first kernel, after the tensors took that room, would end the process
// (libgomp exits when it cannot start a thread). Runs before any parallel_for in its process.
TEST(Threads, TheTeamStartsWhenTheCountIsSet) {
  set_num_threads(2);
  std::int64_t tasks = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
    ++tasks;
  EXPECT_GE(tasks, 2) << "threads of this process right after set_num_threads(2)";
}

// No exception may leave an OpenMP region (std::terminate): a part that throws has its
// exception thrown again on the calling thread, after every other part has run.
TEST(Threads, AnExceptionInAPartReachesTheCallerAfterEveryPartRan) {
  set_num_threads(2);
  std::vector<int> ran(4, 0);
  try {
    parallel_for(4, [&](int part) {
      ran[static_cast<std::size_t>(part)] = 1;
      if (part == 2) throw Error("kernel", "part", "no failure", "part 2 failed");
    });
    ADD_FAILURE() << "the exception of part 2 was lost";
  } catch (const Error& e) {
    EXPECT_EQ(e.actual(), "part 2 failed");
  }
  EXPECT_EQ(ran, (std::vector<int>{1, 1, 1, 1}));
}

// A thread count whose stacks the memory cannot hold is refused, naming the most that fits
// (libgomp would end the process when it cannot start a thread).
TEST(Threads, ACountWhoseStacksDoNotFitIsRefused) {
  const cpu::AvailableMemory available = cpu::available_memory();
  if (!available.known) GTEST_SKIP() << "no bound on memory can be read here";
  const Error e = testing::expect_error([] { set_num_threads(1 << 30); });
  EXPECT_EQ(e.op(), "set_num_threads");
  EXPECT_NE(e.expected().find("of address space for its stack and heap"), std::string::npos)
      << e.what();
  EXPECT_EQ(num_threads() >= 1, true);
}

bool cpu_has_avx2_and_fma() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool cpu_has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

// A BLAS that picks kernels by CPU model falls back to generic SSE code on CPUs newer than
// itself; minigraph picks OpenBLAS's kernels by the CPU's features. With AVX2 or AVX-512
// present, no kernel family from before them may run, unless the user asked for it:
// ctest runs this test also with OPENBLAS_CORETYPE=prescott (tests/CMakeLists.txt).
TEST(Gemm, RunsTheKernelsTheCpusFeaturesAllowOrThoseTheUserSet) {
  const std::string kernels = gemm_kernels(), library = gemm_library();
  if (kernels == "Eigen") GTEST_SKIP() << "built without a BLAS: " << library;
  auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user != nullptr && *user != '\0') {
    EXPECT_EQ(lower(kernels), lower(user)) << library;
    EXPECT_NE(library.find("set by the user"), std::string::npos) << library;
    return;
  }
  const bool avx512 = cpu_has_avx512();
  const bool avx2 = cpu_has_avx2_and_fma();
  if (!avx2) GTEST_SKIP() << "no AVX2 on this CPU: its BLAS chooses alone: " << library;
  const std::vector<std::string> avx512_families{"skylakex", "cooperlake", "sapphirerapids",
                                                 "skx",      "zen4",       "zen5"};
  std::vector<std::string> avx2_families{"haswell", "zen", "zen2", "zen3", "excavator"};
  avx2_families.insert(avx2_families.end(), avx512_families.begin(), avx512_families.end());
  const auto& allowed = avx512 ? avx512_families : avx2_families;
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), lower(kernels)), allowed.end())
      << "GEMM runs " << kernels << " kernels on a CPU with " << (avx512 ? "AVX-512" : "AVX2")
      << ": " << library;
  if (library.starts_with("OpenBLAS")) {
    EXPECT_NE(library.find("chosen from the CPU's features"), std::string::npos) << library;
  }
}

// Restores the CPU capability when a test ends.
class CapabilityTest : public ::testing::Test {
 protected:
  void TearDown() override { cpu::set_capability(saved_); }

 private:
  std::string saved_ = cpu::capability();
};

// The widest ISA this CPU has, as capability() names it.
std::string widest_capability() {
  if (cpu_has_avx512()) return "avx512";
  return cpu_has_avx2_and_fma() ? "avx2" : "default";
}

// The loops compiled for each ISA the CPU has give the baseline's bits, for every case of
// every op with a CPU kernel (in f32: f64 loops run the same code, vectorised or not).
TEST_F(CapabilityTest, EveryIsaGivesTheBaselinesBits) {
  const std::string widest = widest_capability();
  if (widest == "default") GTEST_SKIP() << "no AVX2 on this CPU: one build runs";
  EXPECT_EQ(cpu::capability(), widest);  // the default: the widest the CPU has
  std::vector<std::string> wider{"avx2"};
  if (widest == "avx512") wider.emplace_back("avx512");
  register_builtin_ops();
  int compared = 0;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (!op->cases || op->kernel(DeviceKind::cpu) == nullptr) continue;
    for (const OpCase& c : op->cases()) {
      const std::vector<Tensor> inputs = make_case_inputs(c.inputs, DType::f32);
      NoGradGuard no_grad;
      cpu::set_capability("default");
      const Tensor baseline = apply_op(*op, inputs, c.attrs);
      for (const std::string& isa : wider) {
        cpu::set_capability(isa);
        const Tensor vectorized = apply_op(*op, inputs, c.attrs);
        ASSERT_EQ(baseline.nbytes(), vectorized.nbytes()) << op->name << " " << c.name;
        EXPECT_EQ(std::memcmp(baseline.raw_data(), vectorized.raw_data(), baseline.nbytes()), 0)
            << op->name << " case " << c.name << ": the " << isa << " loops give other bits";
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100);
}

TEST_F(CapabilityTest, OnlyAnIsaTheCpuHasIsTaken) {
  cpu::set_capability("default");
  EXPECT_EQ(cpu::capability(), "default");
  testing::expect_error_containing([] { cpu::set_capability("avx1024"); },
                                   "set_capability: argument 'capability': expected \"default\", "
                                   "\"avx2\" or \"avx512\", got \"avx1024\"");
  EXPECT_EQ(cpu::capability(), "default");
  for (const std::string isa : {"avx2", "avx512"}) {
    const bool has = isa == "avx2" ? cpu_has_avx2_and_fma() : cpu_has_avx512();
    if (has) {
      cpu::set_capability(isa);
      EXPECT_EQ(cpu::capability(), isa);
    } else {
      testing::expect_error_containing([&] { cpu::set_capability(isa); },
                                       "expected one this CPU has (its widest is \"" +
                                           widest_capability() + "\"), got \"" + isa + "\"");
    }
  }
}

TEST_F(ThreadsTest, SettingIsAppliedAndChecked) {
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  EXPECT_EQ(threads_for(10), 1);  // small tensors stay on one thread
  EXPECT_EQ(threads_for(std::int64_t{1} << 30), 3);
  testing::expect_error_containing(
      [] { set_num_threads(0); },
      "set_num_threads: argument 'threads': expected at least 1, got 0");
  EXPECT_EQ(num_threads(), 3);
  EXPECT_FALSE(gemm_library().empty());
}

TEST_F(ThreadsTest, EmbeddingBackwardBitsAreTheSequentialOnesAtAnyThreadCount) {
  const std::int64_t rows = 3000, width = 96;
  Tensor ids = random_ids(4, 1024, rows, 5);
  Tensor grad = Tensor::normal({4, 1024, width}, 0, 1, 6);
  // A row hit once, by an upstream row of -0: the sum 0 + (-0) is +0, a copy would keep -0.
  const auto id = ids.to_vector<std::int64_t>();
  std::vector<int> hits(rows, 0);
  for (auto i : id) ++hits[i];
  const auto once = std::find_if(id.begin(), id.end(), [&](auto i) { return hits[i] == 1; });
  ASSERT_NE(once, id.end());
  for (std::int64_t d = 0; d < width; ++d) grad.set_flat((once - id.begin()) * width + d, -0.0);
  const auto expected = float_bits(scatter_add_in_order(grad, ids, rows));
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    EXPECT_EQ(bits(embedding_backward(grad, ids, rows)), expected) << threads << " threads";
  }
}

TEST_F(ThreadsTest, InputLayerBitsAreTheSequentialOnesAtAnyThreadCount) {
  andrea::AndreaConfig config;
  config.vocab_size = 2000, config.d_model = 64, config.context = 512;
  andrea::Andrea model(config);
  const std::int64_t batch = 2, length = 512, width = config.d_model;
  Tensor ids = random_ids(batch, length, config.vocab_size, 7);
  Tensor upstream = Tensor::normal({batch, length, width}, 0, 1, 8);
  // Sequential references: x = tok[id] + pos[t]; d tok = rows added in position order; d pos =
  // the batch entries added in order.
  const auto tok = model.input.tok_emb().weight().to_vector<float>();
  const auto pos = model.input.pos_emb().weight().to_vector<float>();
  const auto id = ids.to_vector<std::int64_t>();
  const auto g = upstream.to_vector<float>();
  std::vector<float> x(g.size()), pos_grad(static_cast<std::size_t>(length * width), 0.0f);
  for (std::int64_t p = 0; p < batch * length; ++p) {
    const std::int64_t t = p % length;
    for (std::int64_t d = 0; d < width; ++d) {
      x[p * width + d] = tok[id[p] * width + d] + pos[t * width + d];
      pos_grad[t * width + d] += g[p * width + d];
    }
  }
  const auto tok_grad = scatter_add_in_order(upstream, ids, config.vocab_size);
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    model.zero_grad();
    Tensor out = model.input.forward(ids);
    out.backward(upstream);
    EXPECT_EQ(bits(out), float_bits(x)) << threads << " threads";
    EXPECT_EQ(bits(model.input.tok_emb().weight().grad()), float_bits(tok_grad))
        << threads << " threads";
    EXPECT_EQ(bits(model.input.pos_emb().weight().grad()), float_bits(pos_grad))
        << threads << " threads";
  }
}

// Kernels that repeat a block over leading axes split the output across threads; at 4 and 7
// threads the parts start in the middle of a block. Checked against loops written here.
TEST_F(ThreadsTest, RepeatedBlocksAreRightWhereAThreadsPartStartsMidBlock) {
  const std::int64_t batch = 3, rows = 100, width = 700;
  Tensor a = Tensor::normal({batch, rows, width}, 0, 1, 12);
  Tensor b = Tensor::normal({rows, width}, 0, 1, 13);
  const auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  std::vector<float> sum(av.size()), repeated(av.size());
  for (std::size_t i = 0; i < av.size(); ++i) {
    sum[i] = av[i] + bv[i % bv.size()];
    repeated[i] = bv[i % bv.size()];
  }
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    EXPECT_EQ(add(a, b).to_vector<float>(), sum) << threads << " threads";
    EXPECT_EQ(broadcast_to(b, {batch, rows, width}).to_vector<float>(), repeated)
        << threads << " threads";
  }
}

TEST(CpuMemory, SteadyStateStepTakesNoMemoryFromTheSystem) {
  andrea::AndreaConfig config;
  config.vocab_size = 500, config.d_model = 32, config.context = 64;
  andrea::Andrea model(config);
  Tensor ids = random_ids(2, 64, config.vocab_size, 9);
  auto step = [&] {
    model.zero_grad();
    sum(model.forward(ids)).backward();
  };
  step();
  step();
  const auto before = cpu::memory_stats();
  for (int i = 0; i < 3; ++i) step();
  const auto after = cpu::memory_stats();
  EXPECT_EQ(after.system_allocations, before.system_allocations);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_LE(after.in_use_bytes, after.reserved_bytes);
}

TEST(CpuMemory, PeaksHoldTheLargestUseSinceTheReset) {
  cpu::reset_peak_memory_stats();
  const auto start = cpu::memory_stats();
  { Tensor big = Tensor::zeros({1 << 20}); }  // 4 MiB, then freed
  Tensor small = Tensor::zeros({16});
  const auto stats = cpu::memory_stats();
  EXPECT_GE(stats.peak_in_use_bytes, start.in_use_bytes + (std::size_t{4} << 20));
  EXPECT_GE(stats.peak_reserved_bytes, stats.reserved_bytes);
  EXPECT_LT(stats.in_use_bytes, stats.peak_in_use_bytes);
  cpu::reset_peak_memory_stats();
  EXPECT_EQ(cpu::memory_stats().peak_in_use_bytes, cpu::memory_stats().in_use_bytes);
}

TEST(CpuMemory, LargeBlocksAreAlignedForHugePages) {
  Tensor big = Tensor::empty({1 << 20}, DType::f32);  // 4 MiB
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.raw_data()) % (std::uintptr_t{2} << 20), 0u);
  Tensor small = Tensor::empty({3}, DType::f32);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.raw_data()) % 64, 0u);
}

TEST(CpuMemory, EmptyCacheReturnsUnusedBlocks) {
  { Tensor big = Tensor::zeros({1 << 20}); }
  EXPECT_GT(cpu::memory_stats().reserved_bytes, cpu::memory_stats().in_use_bytes);
  cpu::empty_cache();
  const auto stats = cpu::memory_stats();
  EXPECT_EQ(stats.reserved_bytes, stats.in_use_bytes);
}

}  // namespace
}  // namespace mg
