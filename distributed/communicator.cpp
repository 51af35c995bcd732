// The communicator's checks (one place for every implementation), the local communicator, and
// the helpers built from collectives: bytes from one rank, the same identity on every rank.
#include "communicator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "minigraph/error.h"
#include "mpi_communicator.h"  // in_mpi_job, whether or not MPI is built

namespace mg::distributed {

namespace {

void check_tensor(const Communicator& comm, const char* op, const Tensor& tensor) {
  MG_CHECK(tensor.defined(), op, "tensor", "a defined tensor", "an undefined tensor");
  MG_CHECK(tensor.device() == comm.device(), op, "tensor",
           fmt::format("a tensor on {} (the {} communicator's device)", comm.device().str(),
                       comm.name()),
           "one on {}", tensor.device().str());
}

class DoneWork final : public Work {
 public:
  void wait() override {}
};

class LocalCommunicator final : public Communicator {
 public:
  explicit LocalCommunicator(Device device) : device_(device) {}
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string name() const override { return "local"; }
  Device device() const override { return device_; }
  void barrier() override {}
  [[noreturn]] void abort(int exit_code) override { std::_Exit(exit_code); }

 private:
  std::shared_ptr<Work> all_reduce_checked(const Tensor&, ReduceOp) override {
    return std::make_shared<DoneWork>();
  }
  std::shared_ptr<Work> broadcast_checked(const Tensor&, int) override {
    return std::make_shared<DoneWork>();
  }
  Device device_;
};

}  // namespace

std::shared_ptr<Work> Communicator::all_reduce_async(const Tensor& tensor, ReduceOp op) {
  check_tensor(*this, "all_reduce", tensor);
  MG_CHECK(op == ReduceOp::sum || is_floating(tensor.dtype()), "all_reduce", "op",
           "sum for an integer tensor (mean: f32 or f64)", "mean of an {} tensor",
           dtype_name(tensor.dtype()));
  return all_reduce_checked(tensor, op);
}

std::shared_ptr<Work> Communicator::broadcast_async(const Tensor& tensor, int root) {
  check_tensor(*this, "broadcast", tensor);
  MG_CHECK(root >= 0 && root < world_size(), "broadcast", "root",
           fmt::format("a rank in [0, {})", world_size()), "{}", root);
  return broadcast_checked(tensor, root);
}

bool in_mpi_job() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

std::unique_ptr<Communicator> local_communicator(Device device) {
  return std::make_unique<LocalCommunicator>(device);
}

std::string broadcast_bytes(Communicator& comm, std::string bytes, int root) {
  if (comm.world_size() == 1) return bytes;
  const Device device = comm.device();
  Tensor size =
      Tensor::from_vector(std::vector<std::int64_t>{static_cast<std::int64_t>(bytes.size())}, {1})
          .to(device);
  comm.broadcast(size, root);
  const std::int64_t n = size.to(Device::cpu()).to_vector<std::int64_t>()[0];
  // Bytes travel as i64 words: every communicator moves those.
  std::vector<std::int64_t> words(static_cast<std::size_t>((n + 7) / 8), 0);
  if (comm.rank() == root) std::memcpy(words.data(), bytes.data(), bytes.size());
  Tensor data = Tensor::from_vector(words, {static_cast<std::int64_t>(words.size())}).to(device);
  if (!words.empty()) comm.broadcast(data, root);
  words = data.to(Device::cpu()).to_vector<std::int64_t>();
  bytes.assign(reinterpret_cast<const char*>(words.data()), static_cast<std::size_t>(n));
  return bytes;
}

namespace {

// The first line where `a` and `b` differ, as "'x' here, 'y' on rank 0".
std::string first_difference(const std::string& here, const std::string& root) {
  std::size_t at = 0;
  while (true) {
    const std::size_t here_end = here.find('\n', at), root_end = root.find('\n', at);
    const std::string a = here.substr(at, here_end - at), b = root.substr(at, root_end - at);
    if (a != b || here_end == std::string::npos || root_end == std::string::npos) {
      return fmt::format("'{}' here, '{}' on rank 0", a, b);
    }
    at = here_end + 1;
  }
}

}  // namespace

void check_same_on_every_rank(Communicator& comm, const std::string& what,
                              const std::string& identity) {
  if (comm.world_size() == 1) return;
  const std::string root = broadcast_bytes(comm, identity, 0);
  std::vector<std::int64_t> differs(static_cast<std::size_t>(comm.world_size()), 0);
  differs[static_cast<std::size_t>(comm.rank())] = root != identity;
  Tensor flags = Tensor::from_vector(differs, {comm.world_size()}).to(comm.device());
  comm.all_reduce(flags);
  differs = flags.to(Device::cpu()).to_vector<std::int64_t>();
  std::vector<int> ranks;
  for (int r = 0; r < comm.world_size(); ++r) {
    if (differs[static_cast<std::size_t>(r)] != 0) ranks.push_back(r);
  }
  MG_CHECK(ranks.empty(), what, "ranks",
           "the same model and run settings on every rank (names, shapes, dtypes, settings)",
           "ranks {} differ from rank 0{}", fmt::join(ranks, ", "),
           root != identity ? ": " + first_difference(identity, root) : "");
}

}  // namespace mg::distributed
