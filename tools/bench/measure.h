// Timing for `minigraph bench`: warm repetitions, their median, min and max, and the minor
// page faults the process took meanwhile.
#pragma once

#include <cstdint>
#include <functional>

namespace mg::bench {

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double faults_per_rep = 0;  // minor page faults per repetition (fresh memory touched)
};

// Runs `work` `warmup` times untimed, then `reps` times timed.
Timing time_reps(const std::function<void()>& work, int reps, int warmup = 1);

// Minor page faults of this process so far (getrusage).
std::int64_t minor_faults();

// How busy the machine was with other processes while a run lasted: the CPU time every core
// spent outside idle (from /proc/stat) less this process's own, in cores on average. Benchmark
// figures taken with other load (another build, say) read low; the report says how much.
class OtherLoad {
 public:
  OtherLoad();  // starts counting
  double cores() const;

 private:
  double start_busy_s_, start_self_s_, start_wall_s_;
};

}  // namespace mg::bench
