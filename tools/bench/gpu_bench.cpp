// gpu_bench: the ANDREA-120M input layer and output head on CUDA at B = 8, T = 1024, forward
// and backward, each with the bandwidth or TFLOP/s it reaches, next to this GPU's own limits
// measured the same way: a device-to-device copy and a bare cuBLAS GEMM of the head's shape.
// tools/gpu-check.sh runs it. Usage: gpu_bench [iterations]   (default 20; median reported)
//   B batch, T positions, D width, V vocabulary; ids [B, T], x [B, T, D], logits [B, T, V]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "minigraph/cuda.h"
#include "minigraph/minigraph.h"

namespace {

using namespace mg;

constexpr Device kGpu = Device::cuda(0);
constexpr int kWarmup = 3;

// The median wall time of `fn` in ms; `prepare` runs untimed before each call (e.g. building
// the graph a backward pass needs). Both are followed by a full device synchronisation.
double median_ms(
    int iterations, const std::function<void()>& fn, const std::function<void()>& prepare = [] {}) {
  std::vector<double> times;
  for (int i = 0; i < kWarmup + iterations; ++i) {
    prepare();
    cudaDeviceSynchronize();
    const auto start = std::chrono::steady_clock::now();
    fn();
    backend_for(kGpu).synchronize();
    cudaDeviceSynchronize();
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    if (i >= kWarmup) times.push_back(elapsed.count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

void row(const std::string& what, double ms, double bytes, double flops) {
  std::printf("%-48s %9.3f", what.c_str(), ms);
  if (bytes > 0)
    std::printf(" %10.1f", bytes / ms / 1e6);  // bytes per ms -> GB/s
  else
    std::printf(" %10s", "");
  if (flops > 0) std::printf(" %9.2f", flops / ms / 1e9);  // FLOP per ms -> TFLOP/s
  std::printf("\n");
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error("gpu_bench", call, "CUBLAS_STATUS_SUCCESS", cublasGetStatusString(status));
  }
}

// A bare cuBLAS product with this program's own handle: c [m, n] = a [m, k] b [k, n], row-major.
double bare_gemm_ms(int iterations, std::int64_t m, std::int64_t n, std::int64_t k,
                    cublasComputeType_t compute) {
  Tensor a = Tensor::normal({m, k}, 0, 1, 1, DType::f32, kGpu);
  Tensor b = Tensor::normal({k, n}, 0, 1, 2, DType::f32, kGpu);
  Tensor c = Tensor::empty({m, n}, DType::f32, kGpu);
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  const float one = 1, zero = 0;
  const double ms = median_ms(iterations, [&] {
    check_cublas(
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), &one, b.raw_data(), CUDA_R_32F, static_cast<int>(n),
                     a.raw_data(), CUDA_R_32F, static_cast<int>(k), &zero, c.raw_data(), CUDA_R_32F,
                     static_cast<int>(n), compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  });
  cublasDestroy(handle);
  return ms;
}

// ANDREA-120M's sizes at batch 8.
struct Sizes {
  std::int64_t B, T, D, V;
  double tokens;      // B·T
  double gemm_flops;  // of the head's [B·T, D] x [D, V]
};

// The machine's limits: memory bandwidth and cuBLAS's own GEMM.
void measure_limits(int iterations, const Sizes& s) {
  {
    const std::size_t bytes = std::size_t{1} << 30;
    Tensor src = Tensor::zeros({static_cast<std::int64_t>(bytes / 4)}, DType::f32, kGpu);
    Tensor dst = Tensor::empty(src.shape(), DType::f32, kGpu);
    const double ms = median_ms(
        iterations, [&] { backend_for(kGpu).copy(dst.raw_data(), src.raw_data(), bytes); });
    row("limit: device memcpy 1 GiB (read + write)", ms, 2.0 * bytes, 0);
  }
  row("limit: bare cuBLAS GEMM [B*T, D] x [D, V], f32",
      bare_gemm_ms(iterations, s.B * s.T, s.V, s.D, CUBLAS_COMPUTE_32F), 0, s.gemm_flops);
  row("limit: bare cuBLAS GEMM [B*T, D] x [D, V], TF32",
      bare_gemm_ms(iterations, s.B * s.T, s.V, s.D, CUBLAS_COMPUTE_32F_FAST_TF32), 0, s.gemm_flops);
}

// The model's forward and backward, then the input layer's gradient ops on their own.
void measure_model(int iterations, const Sizes& s, const andrea::AndreaConfig& config) {
  const std::int64_t B = s.B, T = s.T, D = s.D, V = s.V;
  const double f32 = 4, tokens = s.tokens, gemm_flops = s.gemm_flops;
  andrea::Andrea model(config);
  model.to(kGpu);
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> id_values(static_cast<std::size_t>(B * T));
  for (auto& id : id_values) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(V));
  Tensor ids = Tensor::from_vector(id_values, {B, T}, kGpu);
  Tensor x, logits;
  // Input forward: each position reads its token row and its position row, writes its x row.
  const double input_bytes = tokens * 8 + (2 * tokens + static_cast<double>(T)) * D * f32;
  row("input forward  tok[ids] + pos (fused, id check)",
      median_ms(iterations, [&] { x = model.input.forward(ids); }), input_bytes, 0);
  row("head forward   x @ W  (exact f32)",
      median_ms(iterations, [&] { logits = model.head.forward(x); }), 0, gemm_flops);
  cuda::set_allow_tf32(true);
  row("head forward   x @ W  (TF32)",
      median_ms(iterations, [&] { logits = model.head.forward(x); }), 0, gemm_flops);
  cuda::set_allow_tf32(false);

  // Backward from a fixed upstream gradient: dW = x^T g, dx = g W^T, then the embedding grads.
  Tensor upstream = Tensor::normal({B, T, V}, 0, 1, 8, DType::f32, kGpu);
  const double backward_ms = median_ms(
      iterations, [&] { logits.backward(upstream); },
      [&] {
        model.zero_grad();
        logits = model.forward(ids);
      });
  row("backward       head + input (2 GEMMs, scatter-add)", backward_ms, 0, 2 * gemm_flops);

  Tensor grad_x = Tensor::normal({B, T, D}, 0, 1, 9, DType::f32, kGpu);
  const double scatter_bytes = tokens * D * f32 + static_cast<double>(V * D) * f32 + tokens * 8;
  row("embedding_backward (deterministic scatter-add)",
      median_ms(iterations, [&] { embedding_backward(grad_x, ids, V); }), scatter_bytes, 0);
  row("sum_to [B, T, D] -> [T, D] (position grad)",
      median_ms(iterations,
                [&] {
                  sum_to(grad_x, {T, D});
                }),
      (tokens + T) * D * f32, 0);
}

int run(int iterations) {
  if (!device_available(kGpu)) {
    std::printf("gpu_bench: no CUDA device visible; nothing to measure\n");
    return 1;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  const andrea::AndreaConfig config = andrea::AndreaConfig::lesson();
  Sizes s{.B = 8, .T = 1024, .D = config.d_model, .V = config.vocab_size};
  s.tokens = static_cast<double>(s.B * s.T);
  s.gemm_flops = 2.0 * s.tokens * static_cast<double>(s.D * s.V);
  std::printf(
      "gpu_bench: %s (cuda:0), ANDREA-120M B=%lld T=%lld D=%lld V=%lld, f32, median of %d\n",
      properties.name, static_cast<long long>(s.B), static_cast<long long>(s.T),
      static_cast<long long>(s.D), static_cast<long long>(s.V), iterations);
  std::printf("%-48s %9s %10s %9s\n", "what", "ms", "GB/s", "TFLOP/s");
  measure_limits(iterations, s);
  measure_model(iterations, s, config);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  try {
    return run(iterations);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_bench: %s\n", e.what());
    return 1;
  }
}
