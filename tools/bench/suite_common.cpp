#include "suite_common.h"

#include <random>

namespace mg::bench {

Tensor random_ids(std::int64_t batch, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(batch * kContext));
  for (auto& id : ids) id = static_cast<std::int64_t>(engine() % kVocab);
  return Tensor::from_vector(ids, {batch, kContext});
}

Tensor random_tensor(const Shape& shape, bool requires_grad, std::uint64_t seed) {
  Tensor t = Tensor::normal(shape, 0, 1, seed);
  if (requires_grad) t.set_requires_grad(true);
  return t;
}

Record rate_record(const std::string& name, std::optional<int> batch, const Timing& timing,
                   Work work, double amount, const Limits& limits, double raw_ms,
                   std::string note) {
  Record r;
  r.name = name;
  r.threads = num_threads();
  r.batch = batch;
  r.median_ms = timing.median_ms;
  r.min_ms = timing.min_ms;
  r.max_ms = timing.max_ms;
  r.achieved = amount / (timing.median_ms * 1e6);  // per ms * 1e-6: G per second
  r.unit = work == Work::bytes ? "GB/s" : "GFLOP/s";
  r.limit_pct = 100 * r.achieved / (work == Work::bytes ? limits.copy_gbs : limits.fma_gflops);
  if (raw_ms > 0) r.ratio_vs_raw = timing.median_ms / raw_ms;
  r.note = std::move(note);
  return r;
}

}  // namespace mg::bench
