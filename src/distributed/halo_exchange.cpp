// The communication plan and its MPI exchange. Messages go only to neighbours (ranks that share
// entries), so a product costs O(neighbours) messages, not O(ranks); the plan itself is built with
// one MPI_Alltoall of counts (O(ranks) per rank, once).
#include "distributed/halo_exchange.hpp"

#include <algorithm>
#include <set>

#include "distributed/mpi_util.hpp"

namespace spmv::dist::detail {
namespace {

// Message tags on the matrix's own communicator (a duplicate of the caller's, so never mixed with
// the caller's messages).
constexpr int kTagPlan = 1;
constexpr int kTagForward = 2;
constexpr int kTagReverse = 3;

}  // namespace

int HaloPlan::neighbors() const {
  std::set<int> all(recv_ranks.begin(), recv_ranks.end());
  all.insert(send_ranks.begin(), send_ranks.end());
  return static_cast<int>(all.size());
}

std::int64_t HaloPlan::largest_message() const {
  std::int64_t largest = 0;
  for (const auto* offsets : {&recv_offsets, &send_offsets})
    for (std::size_t i = 1; i < offsets->size(); ++i) largest = std::max(largest, (*offsets)[i] - (*offsets)[i - 1]);
  return largest;
}

HaloPlan build_halo_plan(MPI_Comm comm, const RowPartition& owners, std::span<const std::int64_t> ghost_cols) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  HaloPlan plan;
  std::vector<std::int64_t> need(static_cast<std::size_t>(size), 0), give(need);
  for (std::size_t k = 0; k < ghost_cols.size();) {  // sorted: one run per owner
    const int q = owners.owner(ghost_cols[k]);
    const auto end = static_cast<std::size_t>(std::lower_bound(ghost_cols.begin() + k, ghost_cols.end(), owners.end(q)) -
                                              ghost_cols.begin());
    need[q] = static_cast<std::int64_t>(end - k);
    plan.recv_ranks.push_back(q);
    plan.recv_offsets.push_back(static_cast<std::int64_t>(end));
    k = end;
  }
  check_mpi(MPI_Alltoall(need.data(), 1, MPI_INT64_T, give.data(), 1, MPI_INT64_T, comm), "MPI_Alltoall");
  for (int q = 0; q < size; ++q)
    if (give[q] > 0) {
      plan.send_ranks.push_back(q);
      plan.send_offsets.push_back(plan.send_offsets.back() + give[q]);
    }
  plan.send_index.resize(static_cast<std::size_t>(plan.sends()));
  std::vector<MPI_Request> requests;
  for (std::size_t i = 0; i < plan.send_ranks.size(); ++i) {
    requests.emplace_back();
    const std::int64_t n = plan.send_offsets[i + 1] - plan.send_offsets[i];
    check_mpi(MPI_Irecv(plan.send_index.data() + plan.send_offsets[i], message_count(n, "a halo"), MPI_INT64_T,
                        plan.send_ranks[i], kTagPlan, comm, &requests.back()),
              "MPI_Irecv");
  }
  for (std::size_t i = 0; i < plan.recv_ranks.size(); ++i) {
    requests.emplace_back();
    const std::int64_t n = plan.recv_offsets[i + 1] - plan.recv_offsets[i];
    check_mpi(MPI_Isend(ghost_cols.data() + plan.recv_offsets[i], message_count(n, "a halo"), MPI_INT64_T,
                        plan.recv_ranks[i], kTagPlan, comm, &requests.back()),
              "MPI_Isend");
  }
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  const std::int64_t first = owners.begin(rank);
  for (auto& i : plan.send_index) i -= first;  // global -> this rank's part
  return plan;
}

template <class Value>
HaloExchange<Value>::HaloExchange(MPI_Comm comm, HaloPlan plan)
    : comm_(comm),
      plan_(std::move(plan)),
      ghost_(static_cast<std::size_t>(plan_.ghosts())),
      packed_(static_cast<std::size_t>(plan_.sends())) {
  requests_.reserve(plan_.recv_ranks.size() + plan_.send_ranks.size());
}

template <class Value>
void HaloExchange<Value>::post(std::span<Value> recv, const std::vector<int>& from,
                               const std::vector<std::int64_t>& recv_offsets, std::span<const Value> send,
                               const std::vector<int>& to, const std::vector<std::int64_t>& send_offsets, int tag) {
  requests_.clear();
  // Receives first, so that a message finds its buffer posted (no unexpected-message copy).
  for (std::size_t i = 0; i < from.size(); ++i) {
    requests_.emplace_back();
    check_mpi(MPI_Irecv(recv.data() + recv_offsets[i], static_cast<int>(recv_offsets[i + 1] - recv_offsets[i]),
                        mpi_type<Value>(), from[i], tag, comm_, &requests_.back()),
              "MPI_Irecv");
  }
  for (std::size_t i = 0; i < to.size(); ++i) {
    requests_.emplace_back();
    check_mpi(MPI_Isend(send.data() + send_offsets[i], static_cast<int>(send_offsets[i + 1] - send_offsets[i]),
                        mpi_type<Value>(), to[i], tag, comm_, &requests_.back()),
              "MPI_Isend");
  }
}

template <class Value>
void HaloExchange<Value>::start_forward(std::span<const Value> owned) {
  const auto n = static_cast<std::int64_t>(packed_.size());
  if (owned.empty()) {
    std::fill(packed_.begin(), packed_.end(), Value(0));
  } else {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t k = 0; k < n; ++k) packed_[k] = owned[plan_.send_index[k]];
  }
  post(ghost_, plan_.recv_ranks, plan_.recv_offsets, packed_, plan_.send_ranks, plan_.send_offsets, kTagForward);
}

template <class Value>
void HaloExchange<Value>::start_reverse() {
  post(packed_, plan_.send_ranks, plan_.send_offsets, ghost_, plan_.recv_ranks, plan_.recv_offsets, kTagReverse);
}

template <class Value>
bool HaloExchange<Value>::test() {
  int done = 0;
  check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
            "MPI_Testall");
  return done != 0;
}

template <class Value>
void HaloExchange<Value>::finish() {
  check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  requests_.clear();
}

template <class Value>
void HaloExchange<Value>::add_received(std::span<Value> owned) const {
  // Sequential: two neighbours may send sums for the same entry; neighbour order keeps it deterministic.
  for (std::size_t k = 0; k < packed_.size(); ++k) owned[plan_.send_index[k]] += packed_[k];
}

template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace spmv::dist::detail
