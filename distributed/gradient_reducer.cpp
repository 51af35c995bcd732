// The bucketed gradient all-reduce (see gradient_reducer.h). Buckets are allocated once and
// reused each step; a gradient is copied into its bucket (one contiguous slice per parameter)
// and the averaged values are copied back into grad() by finish().
#include "gradient_reducer.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "minigraph/error.h"

namespace mg::distributed {

GradientReducer::GradientReducer(Communicator& comm,
                                 std::vector<std::pair<std::string, Tensor>> params,
                                 std::int64_t bucket_bytes)
    : comm_(comm) {
  MG_CHECK(bucket_bytes >= 1, "GradientReducer", "bucket_bytes", "at least 1", "{}", bucket_bytes);
  std::set<const TensorImpl*> seen;
  for (const auto& [name, p] : params) {
    MG_CHECK(p.defined() && is_floating(p.dtype()), "GradientReducer", name,
             "a defined f32 or f64 parameter", "{}",
             p.defined() ? std::string(dtype_name(p.dtype())) : "an undefined tensor");
    MG_CHECK(p.device() == comm.device(), "GradientReducer", name,
             fmt::format("a parameter on {} (the {} communicator's device)", comm.device().str(),
                         comm.name()),
             "one on {}", p.device().str());
    MG_CHECK(seen.insert(p.impl()).second, "GradientReducer", name, "each parameter once",
             "a tensor given under another name before");
  }
  // Reverse order: a backward pass finishes the last parameters first.
  std::reverse(params.begin(), params.end());
  std::int64_t bytes_in_bucket = 0;
  for (auto& [name, p] : params) {
    const auto bytes = static_cast<std::int64_t>(p.nbytes());
    const bool fits = !buckets_.empty() && bytes_in_bucket + bytes <= bucket_bytes &&
                      slots_[buckets_.back().slots.front()].param.dtype() == p.dtype();
    if (!fits) {
      buckets_.emplace_back();
      bytes_in_bucket = 0;
    }
    Bucket& bucket = buckets_.back();
    std::int64_t offset = 0;
    if (!bucket.slots.empty()) {
      const Slot& last = slots_[bucket.slots.back()];
      offset = last.offset + last.param.numel();
    }
    bucket.slots.push_back(slots_.size());
    slot_of_.emplace(p.impl(), slots_.size());
    slots_.push_back({name, p, buckets_.size() - 1, offset});
    bytes_in_bucket += bytes;
  }
  for (Bucket& bucket : buckets_) {
    const Slot& last = slots_[bucket.slots.back()];
    bucket.flat =
        Tensor::zeros({last.offset + last.param.numel()}, last.param.dtype(), last.param.device());
  }
}

LeafGradReady GradientReducer::hook() {
  return [this](const Tensor& leaf, const Tensor& grad) { on_ready(leaf, grad); };
}

namespace {

// The elements [offset, offset + numel) of a flat bucket, in `shape`.
Tensor slice(const Tensor& flat, std::int64_t offset, const Tensor& like) {
  return flat.narrow(0, offset, like.numel()).view(like.shape());
}

}  // namespace

void GradientReducer::on_ready(const Tensor& leaf, const Tensor& grad) {
  auto found = slot_of_.find(leaf.impl());
  if (found == slot_of_.end()) return;
  Slot& slot = slots_[found->second];
  Bucket& bucket = buckets_[slot.bucket];
  MG_CHECK(!slot.ready, "GradientReducer", slot.name, "one gradient per backward pass",
           "a second one before finish()");
  NoGradGuard no_grad;
  slice(bucket.flat, slot.offset, slot.param).copy_(grad);
  slot.ready = true;
  if (++bucket.ready == bucket.slots.size()) launch(bucket);
}

void GradientReducer::launch(Bucket& bucket) {
  bucket.work = comm_.all_reduce_async(bucket.flat, ReduceOp::mean);
}

void GradientReducer::finish() {
  NoGradGuard no_grad;
  // Reset first: whatever happens below, the next pass starts from empty buckets.
  struct Reset {
    GradientReducer& r;
    ~Reset() {
      for (Slot& s : r.slots_) s.ready = false;
      for (Bucket& b : r.buckets_) {
        b.ready = 0;
        b.work.reset();
      }
    }
  } reset{*this};
  for (Bucket& bucket : buckets_) {
    if (bucket.work) continue;
    for (std::size_t i : bucket.slots) {
      if (!slots_[i].ready) slice(bucket.flat, slots_[i].offset, slots_[i].param).zero_();
    }
    launch(bucket);
  }
  for (Bucket& bucket : buckets_) bucket.work->wait();
  for (Slot& slot : slots_) {
    const Tensor mean = slice(buckets_[slot.bucket].flat, slot.offset, slot.param);
    TensorImpl& impl = *slot.param.impl();
    if (impl.grad) {
      Tensor(impl.grad).copy_(mean);
    } else {
      impl.grad = mean.clone().impl_ptr();
    }
  }
}

std::vector<std::vector<std::string>> GradientReducer::buckets() const {
  std::vector<std::vector<std::string>> out;
  for (const Bucket& bucket : buckets_) {
    auto& names = out.emplace_back();
    for (std::size_t i : bucket.slots) names.push_back(slots_[i].name);
  }
  return out;
}

}  // namespace mg::distributed
