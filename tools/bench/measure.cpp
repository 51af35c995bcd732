#include "measure.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace mg::bench {

std::int64_t minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; }

double self_cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Seconds all cores spent busy (user, nice, system, irq, softirq, steal) since boot.
double machine_busy_s() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

OtherLoad::OtherLoad()
    : start_busy_s_(machine_busy_s()), start_self_s_(self_cpu_s()), start_wall_s_(wall_s()) {}

double OtherLoad::cores() const {
  const double others = (machine_busy_s() - start_busy_s_) - (self_cpu_s() - start_self_s_);
  return std::max(0.0, others / (wall_s() - start_wall_s_));
}

Timing time_reps(const std::function<void()>& work, int reps, int warmup) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> ms;
  const std::int64_t faults_before = minor_faults();
  for (int i = 0; i < reps; ++i) {
    const auto start = clock::now();
    work();
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count());
  }
  const std::int64_t faults = minor_faults() - faults_before;
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  Timing t;
  t.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.faults_per_rep = static_cast<double>(faults) / reps;
  return t;
}

}  // namespace mg::bench
