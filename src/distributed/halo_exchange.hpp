#pragma once
// Private: the communication plan of a distributed matrix (PETSc's VecScatter, Ginkgo's
// RowGatherer), built once, and its exchange over MPI point-to-point messages on host buffers.
// The CUDA backend will keep the plan and replace the exchange (pack kernel, ncclSend/ncclRecv in a
// group on a communication stream).
#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "spmv/distributed.hpp"

namespace spmv::dist::detail {

struct HaloPlan {
  // Receive side: the ghost vector in segments, one per owner, in increasing rank order.
  std::vector<int> recv_ranks;
  std::vector<std::int64_t> recv_offsets{0};  // recv_ranks.size() + 1, into the ghost vector
  // Send side: which owned entries (indices into this rank's part) each neighbour needs.
  std::vector<int> send_ranks;
  std::vector<std::int64_t> send_offsets{0};  // send_ranks.size() + 1, into send_index
  std::vector<std::int64_t> send_index;

  std::int64_t ghosts() const { return recv_offsets.back(); }
  std::int64_t sends() const { return send_offsets.back(); }
  int neighbors() const;  // distinct ranks sent to or received from
  std::int64_t largest_message() const;  // entries of this rank's largest message, sent or received (0: none)
};

// Collective over `comm`: each rank names the global indices it needs (`ghost_cols`, increasing, none
// owned by itself) under `owners`; the owners learn them once (MPI_Alltoall of counts, then the lists).
HaloPlan build_halo_plan(MPI_Comm comm, const RowPartition& owners, std::span<const std::int64_t> ghost_cols);

// The exchange of one product. Forward (A x): owners send packed x entries, the ghost vector receives
// them in place. Reverse (A^T x): the ghost vector's partial sums go back to their owners, who add them.
// start_* posts non-blocking messages and returns; finish() waits for all of them.
template <class Value>
class HaloExchange {
 public:
  HaloExchange(MPI_Comm comm, HaloPlan plan);
  const HaloPlan& plan() const { return plan_; }
  std::span<Value> ghost() { return ghost_; }

  // Packs owned[send_index] (zeros when `owned` is empty: a rank whose input was refused still takes
  // part, so that its neighbours do not wait) and posts the receives and sends.
  void start_forward(std::span<const Value> owned);
  // Posts the ghost vector's contents to their owners and the receives of this rank's own entries.
  void start_reverse();
  // MPI_Testall on the posted messages: lets MPI move them (a message above the eager limit moves only
  // inside MPI calls) and returns whether all have arrived, after which finish() returns at once.
  bool test();
  void finish();
  // After a finished reverse exchange: owned[send_index[k]] += received[k], in neighbour order.
  void add_received(std::span<Value> owned) const;

 private:
  void post(std::span<Value> recv, const std::vector<int>& from, const std::vector<std::int64_t>& recv_offsets,
            std::span<const Value> send, const std::vector<int>& to, const std::vector<std::int64_t>& send_offsets,
            int tag);

  MPI_Comm comm_;
  HaloPlan plan_;
  std::vector<Value> ghost_;   // recv_offsets.back() entries
  std::vector<Value> packed_;  // send_offsets.back() entries: packed x (forward), received sums (reverse)
  std::vector<MPI_Request> requests_;
};

}  // namespace spmv::dist::detail
