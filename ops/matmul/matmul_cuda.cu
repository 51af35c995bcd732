// matmul on CUDA: one strided-batched cuBLAS GEMM through the row-major wrapper
// (backends/cuda/cublas_gemm.h). A shared b folds the batch into the rows of a, as on the CPU,
// so the input layer's [B, T, D] x [D, V] head is a single [B*T, D] x [D, V] product.
//   a [..., M, K] (transpose_a: [..., K, M]), b [K, N] or [..., K, N] -> out [..., M, N]
#include "backends/cuda/cublas_gemm.h"
#include "backends/cuda/cuda_backend.h"
#include "matmul/matmul.h"
#include "minigraph/op.h"

namespace mg {

void matmul_cuda(const KernelContext& ctx) {
  const auto& o = ctx.attrs_as<MatmulOptions>();
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  CudaBackend& backend = cuda::activate(out.device());
  const std::int64_t m = out.size(-2), n = out.size(-1), k = a.size(o.transpose_a ? -2 : -1);
  if (out.numel() == 0) return;
  if (k == 0) {  // an empty sum: cuBLAS would not write the zeros
    backend.fill_zero(out.raw_data(), out.nbytes());
    return;
  }
  const std::int64_t batch = out.numel() / (m * n);
  const bool shared_b = b.dim() == 2;
  // A non-contiguous input is a transposed contiguous one (the op's takes_layout): its flag
  // flips, and a transposed a with a shared b runs as a batch with b's stride 0.
  const bool transpose_a = o.transpose_a != !a.is_contiguous();
  const bool transpose_b = o.transpose_b != !b.is_contiguous();
  const bool fold_batch = shared_b && !transpose_a;
  cuda::RowMajorGemm gemm{.dtype = out.dtype(),
                          .transpose_a = transpose_a,
                          .transpose_b = transpose_b,
                          .m = fold_batch ? batch * m : m,
                          .n = n,
                          .k = k,
                          .batch = fold_batch ? 1 : batch,
                          .a = a.raw_data(),
                          .stride_a = m * k,
                          .b = b.raw_data(),
                          .stride_b = shared_b ? 0 : k * n,
                          .c = out.raw_data(),
                          .stride_c = m * n};
  cuda::gemm_row_major(backend.cublas(), gemm);
}

}  // namespace mg
