// embedding_backward on CUDA: check the ids on the device (the CPU's error for
// an out-of-range id), zero the gradient table, then the deterministic sorted scatter-add
// with scratch from the backend's pool: a deterministic scatter-add, without float atomics.
//   N ids, D width, V rows, K = kRowsPerChunk; grad [N, D], ids [N] -> out [V, D] (zeroed)
// 1. Sort (id, position) pairs by id. The radix sort is stable, so each id's positions stay in
//    increasing order: the sorted pairs are one segment per distinct id.
// 2. Find the segments: flag where the id changes, exclusive-scan the flags.
// 3. A segment of at most K rows is summed straight into its output row. A longer one (an id
//    repeated many times: all ids equal, Zipf-like text) is cut into chunks of K rows summed in
//    parallel into `partial`, and the chunk sums are then added in chunk order.
// Every output element is one thread's sum in a fixed order, so the bits do not depend on how
// the blocks are scheduled: the same on every run (as PyTorch's deterministic path).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "minigraph/op.h"

namespace mg::cuda {

namespace {

constexpr std::int64_t kRowsPerChunk = 32;

// Scratch buffers, carved from one allocation; with a null base it only adds up the bytes.
struct Scratch {
  std::uint64_t* keys_in;       // (N,) ids as sort keys
  std::uint64_t* keys;          // (N,) sorted ids
  std::int64_t* positions_in;   // (N,) 0..N-1
  std::int64_t* positions;      // (N,) positions, sorted by id
  std::int64_t* is_start;       // (N,) 1 where a segment starts
  std::int64_t* segment_index;  // (N,) exclusive scan of is_start
  std::int64_t* segment_begin;  // (N + 1,) first sorted index of each segment, then N
  std::uint64_t* segment_id;    // (N,) the id of each segment
  std::int64_t* chunk_count;    // (N,) chunks of a segment longer than K, else 0
  std::int64_t* chunk_begin;    // (N,) exclusive scan of chunk_count
  std::int64_t* num_segments;   // (1,)
  void* partial;                // (max_chunks, D) chunk sums
  void* cub_temp;
  std::size_t cub_temp_bytes;
  std::size_t total_bytes;
};

// Chunks of segments longer than K: each has ceil(len / K) < 2 len / K, so fewer than 2N / K.
std::int64_t max_chunks(std::int64_t count) { return 2 * count / kRowsPerChunk + 1; }

// Bits that hold every id below `rows`: the radix sort skips the rest.
int key_bits(std::int64_t rows) {
  int bits = 1;
  while (bits < 64 && (static_cast<std::uint64_t>(rows - 1) >> bits) != 0) ++bits;
  return bits;
}

Scratch carve(void* base, std::int64_t count, std::int64_t rows, std::int64_t width,
              std::size_t element_size) {
  Scratch s{};
  auto* next = static_cast<char*>(base);
  std::size_t used = 0;
  auto take = [&](std::size_t bytes) {
    void* at = base ? next + used : nullptr;
    used += (bytes + 255) / 256 * 256;
    return at;
  };
  const auto n = static_cast<std::size_t>(count);
  s.keys_in = static_cast<std::uint64_t*>(take(n * sizeof(std::uint64_t)));
  s.keys = static_cast<std::uint64_t*>(take(n * sizeof(std::uint64_t)));
  s.positions_in = static_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
  s.positions = static_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
  s.is_start = static_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
  s.segment_index = static_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
  s.segment_begin = static_cast<std::int64_t*>(take((n + 1) * sizeof(std::int64_t)));
  s.segment_id = static_cast<std::uint64_t*>(take(n * sizeof(std::uint64_t)));
  s.chunk_count = static_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
  s.chunk_begin = static_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
  s.num_segments = static_cast<std::int64_t*>(take(sizeof(std::int64_t)));
  s.partial = take(static_cast<std::size_t>(max_chunks(count) * width) * element_size);
  std::size_t sort_bytes = 0, scan_bytes = 0;
  MG_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, s.keys_in, s.keys,
                                                s.positions_in, s.positions, count, 0,
                                                key_bits(rows)));
  MG_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, s.is_start, s.segment_index, count));
  s.cub_temp_bytes = std::max(sort_bytes, scan_bytes);
  s.cub_temp = take(s.cub_temp_bytes);
  s.total_bytes = used;
  return s;
}

template <typename Id>
__global__ void make_sort_pairs_kernel(const Id* __restrict__ ids, std::int64_t count,
                                       std::uint64_t* keys, std::int64_t* positions) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    keys[i] = static_cast<std::uint64_t>(ids[i]);
    positions[i] = i;
  }
}

__global__ void mark_segment_starts_kernel(const std::uint64_t* __restrict__ keys,
                                           std::int64_t count, std::int64_t* is_start) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    is_start[i] = i == 0 || keys[i] != keys[i - 1];
  }
}

__global__ void record_segments_kernel(const std::uint64_t* __restrict__ keys,
                                       const std::int64_t* __restrict__ is_start,
                                       const std::int64_t* __restrict__ segment_index,
                                       std::int64_t count, std::int64_t* segment_begin,
                                       std::uint64_t* segment_id, std::int64_t* num_segments) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    if (is_start[i]) {
      segment_begin[segment_index[i]] = i;
      segment_id[segment_index[i]] = keys[i];
    }
    if (i == count - 1) {
      const std::int64_t segments = segment_index[i] + is_start[i];
      *num_segments = segments;
      segment_begin[segments] = count;
    }
  }
}

__global__ void count_chunks_kernel(const std::int64_t* __restrict__ segment_begin,
                                    const std::int64_t* __restrict__ num_segments,
                                    std::int64_t count, std::int64_t* chunk_count) {
  const std::int64_t segments = *num_segments;
  for (std::int64_t s = global_thread(); s < count; s += global_stride()) {
    const std::int64_t length = s < segments ? segment_begin[s + 1] - segment_begin[s] : 0;
    chunk_count[s] = length > kRowsPerChunk ? (length + kRowsPerChunk - 1) / kRowsPerChunk : 0;
  }
}

// sum of grad rows positions[first..last) at column d, in that order.
template <typename T>
__device__ T sum_rows(const T* __restrict__ grad, const std::int64_t* __restrict__ positions,
                      std::int64_t first, std::int64_t last, std::int64_t width, std::int64_t d) {
  T sum = 0;
  for (std::int64_t r = first; r < last; ++r) sum += grad[positions[r] * width + d];
  return sum;
}

// One block per chunk: partial[c, :] = its K (or fewer) rows.
template <typename T>
__global__ void sum_chunks_kernel(const T* __restrict__ grad,
                                  const std::int64_t* __restrict__ positions, Scratch s,
                                  std::int64_t width) {
  const std::int64_t segments = *s.num_segments;
  const std::int64_t chunks = s.chunk_begin[segments - 1] + s.chunk_count[segments - 1];
  T* partial = static_cast<T*>(s.partial);
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    // The segment owning chunk c: the last one whose chunks begin at or before c.
    std::int64_t lo = 0, hi = segments;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (s.chunk_begin[mid] <= c) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    const std::int64_t segment = lo - 1;
    const std::int64_t first =
        s.segment_begin[segment] + (c - s.chunk_begin[segment]) * kRowsPerChunk;
    const std::int64_t segment_end = s.segment_begin[segment + 1];
    const std::int64_t last =
        first + kRowsPerChunk < segment_end ? first + kRowsPerChunk : segment_end;
    for (std::int64_t d = threadIdx.x; d < width; d += blockDim.x) {
      partial[c * width + d] = sum_rows(grad, positions, first, last, width, d);
    }
  }
}

// One block per segment: its output row, from its rows or from its chunk sums in order.
template <typename T>
__global__ void write_segments_kernel(const T* __restrict__ grad,
                                      const std::int64_t* __restrict__ positions, Scratch s,
                                      std::int64_t width, T* __restrict__ out) {
  const std::int64_t segments = *s.num_segments;
  const T* partial = static_cast<const T*>(s.partial);
  for (std::int64_t segment = blockIdx.x; segment < segments; segment += gridDim.x) {
    T* dst = out + static_cast<std::int64_t>(s.segment_id[segment]) * width;  // (D,)
    const std::int64_t chunks = s.chunk_count[segment];
    const std::int64_t first_chunk = s.chunk_begin[segment];
    for (std::int64_t d = threadIdx.x; d < width; d += blockDim.x) {
      if (chunks == 0) {
        dst[d] = sum_rows(grad, positions, s.segment_begin[segment], s.segment_begin[segment + 1],
                          width, d);
      } else {
        T sum = 0;
        for (std::int64_t c = first_chunk; c < first_chunk + chunks; ++c) {
          sum += partial[c * width + d];
        }
        dst[d] = sum;
      }
    }
  }
}

}  // namespace

std::size_t scatter_add_scratch_bytes(std::int64_t count, std::int64_t rows, std::int64_t width,
                                      std::size_t element_size) {
  return carve(nullptr, count, rows, width, element_size).total_bytes;
}

template <typename T, typename Id>
void scatter_add_rows(const T* grad, const Id* ids, T* out, std::int64_t count, std::int64_t rows,
                      std::int64_t width, void* scratch, cudaStream_t stream) {
  if (count == 0 || width == 0) return;
  Scratch s = carve(scratch, count, rows, width, sizeof(T));
  const unsigned int blocks = blocks_for(count);
  make_sort_pairs_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(ids, count, s.keys_in,
                                                                  s.positions_in);
  MG_CUDA_CHECK(cudaGetLastError());
  MG_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(s.cub_temp, s.cub_temp_bytes, s.keys_in, s.keys,
                                                s.positions_in, s.positions, count, 0,
                                                key_bits(rows), stream));
  mark_segment_starts_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(s.keys, count, s.is_start);
  MG_CUDA_CHECK(cudaGetLastError());
  MG_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(s.cub_temp, s.cub_temp_bytes, s.is_start,
                                              s.segment_index, count, stream));
  record_segments_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(
      s.keys, s.is_start, s.segment_index, count, s.segment_begin, s.segment_id, s.num_segments);
  MG_CUDA_CHECK(cudaGetLastError());
  count_chunks_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(s.segment_begin, s.num_segments,
                                                               count, s.chunk_count);
  MG_CUDA_CHECK(cudaGetLastError());
  MG_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(s.cub_temp, s.cub_temp_bytes, s.chunk_count,
                                              s.chunk_begin, count, stream));
  const unsigned int threads = threads_for_row(width);
  sum_chunks_kernel<T>
      <<<blocks_for(max_chunks(count), 1), threads, 0, stream>>>(grad, s.positions, s, width);
  MG_CUDA_CHECK(cudaGetLastError());
  write_segments_kernel<T>
      <<<blocks_for(count, 1), threads, 0, stream>>>(grad, s.positions, s, width, out);
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda

namespace mg {

void embedding_backward_cuda(const KernelContext& ctx) {
  const Tensor& grad = ctx.inputs[0];  // [..., D]
  const Tensor& ids = ctx.inputs[1];   // [...]
  const std::int64_t rows = ctx.out.size(0), width = ctx.out.size(1), count = ids.numel();
  CudaBackend& backend = cuda::activate(ctx.out.device());
  if (auto bad = cuda::first_bad_id(ids, rows)) {
    throw_bad_id("embedding_backward", bad->id, bad->position, ids.shape(), rows);
  }
  backend.fill_zero(ctx.out.raw_data(), ctx.out.nbytes());
  if (count == 0 || width == 0) return;
  cuda::DeviceBuffer scratch(
      backend, cuda::scatter_add_scratch_bytes(count, rows, width, dtype_size(grad.dtype())));
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      cuda::scatter_add_rows(grad.data<T>(), ids.data<Id>(), ctx.out.data<T>(), count, rows, width,
                             scratch.data(), backend.stream());
    });
  });
}

}  // namespace mg
