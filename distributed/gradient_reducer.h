// Data-parallel gradients: after each backward pass every rank holds the mean over the ranks
// of each parameter's gradient. As in PyTorch's DistributedDataParallel, parameters are packed
// into flat buckets of about `bucket_bytes` in the reverse of their order (the order a
// backward pass finishes them), and a bucket's all-reduce starts as soon as its last gradient
// is ready, while the rest of the backward pass still runs:
//
//   GradientReducer reducer(comm, model.named_parameters(), 25 << 20);
//   mg::backward(loss, {}, false, reducer.hook());
//   reducer.finish();  // every parameter's grad() is now the mean over the ranks
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "minigraph/autograd.h"
#include "minigraph/distributed/communicator.h"

namespace mg::distributed {

class GradientReducer {
 public:
  // Throws mg::Error for an undefined or non-float parameter, one on another device than the
  // communicator's, the same tensor twice, or bucket_bytes < 1.
  GradientReducer(Communicator& comm, std::vector<std::pair<std::string, Tensor>> params,
                  std::int64_t bucket_bytes = std::int64_t{25} << 20);
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // For mg::backward: copies each parameter's gradient into its bucket as the pass finishes it
  // and starts the bucket's all-reduce (mean) when the bucket is full. Leaves that are not
  // these parameters are ignored. Valid while the reducer lives.
  LeafGradReady hook();
  // After the backward pass: starts the buckets still waiting (a parameter the pass gave no
  // gradient counts as zeros, on every rank alike), waits for every bucket and writes each
  // parameter's grad() with the mean: the pass's gradient replaces what grad() held, so
  // gradients must be dropped (zero_grad) before each pass. Throws mg::Error when a collective
  // fails or times out.
  void finish();

  // The parameters' names in each bucket, in the order the buckets are reduced.
  std::vector<std::vector<std::string>> buckets() const;

 private:
  struct Slot {
    std::string name;
    Tensor param;
    std::size_t bucket;
    std::int64_t offset;  // in elements, into the bucket
    bool ready = false;
  };
  struct Bucket {
    Tensor flat;  // [elements] in the parameters' dtype, on their device
    std::vector<std::size_t> slots;
    std::size_t ready = 0;
    std::shared_ptr<Work> work;
  };
  void on_ready(const Tensor& leaf, const Tensor& grad);
  void launch(Bucket& bucket);

  Communicator& comm_;
  std::vector<Slot> slots_;
  std::unordered_map<const TensorImpl*, std::size_t> slot_of_;  // a parameter's slot
  std::vector<Bucket> buckets_;
};

}  // namespace mg::distributed
