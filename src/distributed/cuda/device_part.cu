// The CUDA backend of the distributed matrix: each block is a device cuda::Plan, the halo moves over
// NCCL point-to-point calls (one group per product) on a stream of the matrix while the local block
// runs on the caller's stream, and events join the two (docs/DISTRIBUTED.md "The CUDA backend").
//
//   A x:   caller stream  | local block .................. | wait | remote block (+= into y)
//          halo stream    | pack x[send] | ncclSend/ncclRecv -> ghost |
//   A^T x: caller stream  | remote block -> ghost | local block ........ | wait | add received sums
//          halo stream    |                       | ncclSend ghost / ncclRecv sums |
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "cpu/instantiate.hpp"
#include "distributed/collective.hpp"
#include "distributed/device_part.hpp"
#include "distributed/mpi_util.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/plan.hpp"

namespace spmv::dist::detail {
namespace {

void check_nccl(ncclResult_t status, const char* call) {
  if (status != ncclSuccess) throw Error(std::string(call) + " failed: " + ncclGetErrorString(status));
}

template <class Value>
constexpr ncclDataType_t nccl_type() {
  return sizeof(Value) == 4 ? ncclFloat32 : ncclFloat64;
}

// out[k] = x[index[k]]: the entries the neighbours need, packed in their segments' order.
template <class Value, class Index>
__global__ void gather_entries(const Value* __restrict__ x, const Index* __restrict__ index, Value* __restrict__ out,
                               std::int64_t n) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    out[k] = x[index[k]];
}

// y[index[k]] += in[k] for distinct indices (one neighbour's segment of the send list, or the remote
// block's rows), so no atomics; neighbours go one launch each, in rank order, which keeps the sum's
// order fixed.
template <class Value, class Index>
__global__ void add_entries(Value* __restrict__ y, const Index* __restrict__ index, const Value* __restrict__ in,
                            std::int64_t n) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    y[index[k]] += in[k];
}

constexpr int kThreads = 256;
unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 4096)); }

// One event; timing events only where the profile reads them.
class Event {
 public:
  explicit Event(bool timing = false) {
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { SPMV_CUDA_CHECK(cudaEventRecord(event_, s)); }
  void wait_in(cudaStream_t s) { SPMV_CUDA_CHECK(cudaStreamWaitEvent(s, event_, 0)); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

float elapsed_ms(const Event& from, const Event& to) {
  float ms = 0;
  SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return ms;
}

// The timestamps of one profiled product (host-vector applies).
struct StepEvents {
  Event start{true}, packed{true}, local_begin{true}, local_end{true}, exchanged{true}, joined{true},
      remote_end{true}, end{true};
};

// A NCCL communicator, destroyed with its last owner.
struct NcclComm {
  ncclComm_t comm = nullptr;
  std::shared_ptr<NcclComm> parent;  // a split child shares its parent's resources: the parent outlives it
  ~NcclComm() {
    if (comm) ncclCommDestroy(comm);
  }
};

// ncclCommInitRank costs ~0.5-1 s (bootstrap, topology, proxy threads) and a split plus its destroy
// about as much again; every matrix needs a communicator of its own (a product's sends and receives
// must never match another matrix's). So the first matrix on an MPI communicator makes a parent, cached
// on that communicator as an MPI attribute per device, and matrices borrow children split off it: a
// destroyed matrix gives its child back, and the next matrix takes it instead of splitting another.
struct CommPool {
  std::shared_ptr<NcclComm> parent;
  std::vector<std::shared_ptr<NcclComm>> children;  // children[i] came from the i-th split, alike on every rank
  std::vector<unsigned char> lent;                  // children[i] belongs to a live matrix
};
using PoolCache = std::map<int, std::shared_ptr<CommPool>>;  // by device

int cache_keyval() {
  static int keyval = MPI_KEYVAL_INVALID;
  if (keyval == MPI_KEYVAL_INVALID) {
    const auto release = [](MPI_Comm, int, void* cache, void*) -> int {
      delete static_cast<PoolCache*>(cache);
      return MPI_SUCCESS;
    };
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release, &keyval, nullptr), "MPI_Comm_create_keyval");
  }
  return keyval;
}

// A matrix's communicator: on destruction it goes back to its pool (when the pool still exists; the
// owner has finished its work on it).
class BorrowedComm {
 public:
  BorrowedComm(const std::shared_ptr<CommPool>& pool, std::size_t id) : pool_(pool), comm_(pool->children[id]), id_(id) {
    pool->lent[id] = 1;
  }
  BorrowedComm(const BorrowedComm&) = delete;
  BorrowedComm& operator=(const BorrowedComm&) = delete;
  ~BorrowedComm() {
    if (const auto pool = pool_.lock()) pool->lent[id_] = 0;
  }
  ncclComm_t get() const { return comm_->comm; }

 private:
  std::weak_ptr<CommPool> pool_;
  std::shared_ptr<NcclComm> comm_;
  std::size_t id_;
};

// Collective over `comm`, the matrix's duplicate of `caller` (the communicator it was built on, which
// holds the cache): every rank has `device` current.
std::unique_ptr<BorrowedComm> matrix_comm(MPI_Comm caller, MPI_Comm comm, int device) {
  const Communicator c(comm);
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(caller, cache_keyval(), &value, &found), "MPI_Comm_get_attr");
  auto* cache = found ? static_cast<PoolCache*>(value) : nullptr;
  std::shared_ptr<CommPool> pool = cache && cache->count(device) ? cache->at(device) : nullptr;
  // Reuse the pool only where every rank has it with the same children (same ranks, same order).
  const int size = pool ? static_cast<int>(pool->children.size()) : -1;
  int agree[2] = {size, -size};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, agree, 2, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (agree[0] < 0 || agree[0] != -agree[1]) {
    ncclUniqueId id{};
    if (c.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), "MPI_Bcast");
    pool = std::make_shared<CommPool>();
    pool->parent = std::make_shared<NcclComm>();
    collectively(c, [&] { check_nccl(ncclCommInitRank(&pool->parent->comm, c.size(), id, c.rank()), "ncclCommInitRank"); });
    if (!cache) {
      cache = new PoolCache;
      check_mpi(MPI_Comm_set_attr(caller, cache_keyval(), cache), "MPI_Comm_set_attr");
    }
    (*cache)[device] = pool;  // children lent from a pool replaced here stay with their matrices
  }
  // The first child idle on every rank, else a new split.
  std::vector<unsigned char> idle(pool->children.size());
  for (std::size_t i = 0; i < idle.size(); ++i) idle[i] = !pool->lent[i];
  if (!idle.empty())
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, idle.data(), static_cast<int>(idle.size()), MPI_UNSIGNED_CHAR, MPI_MIN, comm),
              "MPI_Allreduce");
  const auto reuse = std::find(idle.begin(), idle.end(), 1);
  if (reuse != idle.end()) return std::make_unique<BorrowedComm>(pool, static_cast<std::size_t>(reuse - idle.begin()));
  auto child = std::make_shared<NcclComm>();
  child->parent = pool->parent;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.splitShare = 1;
  collectively(c, [&] { check_nccl(ncclCommSplit(pool->parent->comm, 0, c.rank(), &child->comm, &config), "ncclCommSplit"); });
  pool->children.push_back(child);
  pool->lent.push_back(0);
  return std::make_unique<BorrowedComm>(pool, pool->children.size() - 1);
}

template <class Value, class Index>
class NcclPart final : public DevicePart<Value, Index> {
 public:
  NcclPart(MPI_Comm caller, MPI_Comm comm, Blocks<Value, Index>& blocks, const HaloPlan& plan, Operation op,
           const DistributedOptions& options)
      : op_(op), plan_(plan) {
    const Communicator own(comm);
    const int on_node = node_rank(comm);  // collective: before anything that may fail on one rank
    // Every step that can fail on one rank only runs collectively; the NCCL communicator, collective
    // itself, comes last, once every rank is known to reach it.
    collectively(own, [&] {
      int devices = 0;
      if (cudaGetDeviceCount(&devices) != cudaSuccess) {  // no driver or no device: a refusal, not a crash
        devices = 0;
        cudaGetLastError();
      }
      device_ = options.device >= 0 ? options.device : on_node % std::max(devices, 1);
      if (device_ >= devices)
        throw Unsupported("DistributedMatrix: the CUDA backend needs a GPU per rank; this rank has " +
                          std::to_string(devices) + " devices and was given device " + std::to_string(device_));
      SPMV_CUDA_CHECK(cudaSetDevice(device_));
      SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&halo_stream_, cudaStreamNonBlocking));
      Options block = options.options;
      block.device = device_;
      local_csr_ = cuda::DeviceCsr<Value, Index>(blocks.local);
      local_ = std::make_unique<cuda::Plan<Value, Index>>(local_csr_.view(), options.algorithm, op, block);
      if (blocks.remote.nnz() > 0) {
        remote_csr_ = cuda::DeviceCsr<Value, Index>(blocks.remote);
        remote_ = std::make_unique<cuda::Plan<Value, Index>>(remote_csr_.view(), options.algorithm, op, block);
        remote_rows_ = cuda::DeviceBuffer<Index>(std::span<const Index>(blocks.remote_rows));
        remote_part_ = cuda::DeviceBuffer<Value>(blocks.remote_rows.size());
      }
      blocks = {};  // the host copies are no longer needed
      std::vector<Index> index(plan_.send_index.begin(), plan_.send_index.end());
      send_index_ = cuda::DeviceBuffer<Index>(std::span<const Index>(index));
      packed_ = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(plan_.sends()));
      ghost_ = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(plan_.ghosts()));
      joins_ = std::make_unique<Joins>();
      SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    });
    nccl_ = matrix_comm(caller, comm, device_);
  }

  ~NcclPart() override {
    cudaSetDevice(device_);
    // The next matrix may borrow the communicator: no exchange (halo stream) and no all-reduce (the
    // caller's streams) of this one may still be running.
    cudaDeviceSynchronize();
    nccl_.reset();
    if (halo_stream_) cudaStreamDestroy(halo_stream_);
    if (work_stream_) cudaStreamDestroy(work_stream_);
  }

  int device() const override { return device_; }
  std::string local_algorithm() const override { return describe(local_.get()); }
  std::string remote_algorithm() const override { return describe(remote_.get()); }

  void apply(Value alpha, const Value* x, Value beta, Value* y, CUstream_st* stream) override {
    SPMV_CUDA_CHECK(cudaSetDevice(device_));
    run(alpha, x, beta, y, stream, nullptr);
  }

  void apply_host(Value alpha, std::span<const Value> x, Value beta, std::span<Value> y,
                  ApplyProfile& profile) override {
    SPMV_CUDA_CHECK(cudaSetDevice(device_));
    if (x_.size() != x.size()) x_ = cuda::DeviceBuffer<Value>(x.size());
    if (y_.size() != y.size()) y_ = cuda::DeviceBuffer<Value>(y.size());
    const cudaStream_t s = halo_stream_;  // host applies run on the matrix's own stream (no caller stream)
    if (!x.empty()) SPMV_CUDA_CHECK(cudaMemcpyAsync(x_.data(), x.data(), x.size_bytes(), cudaMemcpyHostToDevice, s));
    if (beta != Value(0) && !y.empty())
      SPMV_CUDA_CHECK(cudaMemcpyAsync(y_.data(), y.data(), y.size_bytes(), cudaMemcpyHostToDevice, s));
    if (!work_stream_) SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&work_stream_, cudaStreamNonBlocking));
    Event uploaded;
    uploaded.record(s);
    uploaded.wait_in(work_stream_);
    StepEvents e;
    run(alpha, x_.data(), beta, y_.data(), work_stream_, &e);
    if (!y.empty()) SPMV_CUDA_CHECK(cudaMemcpyAsync(y.data(), y_.data(), y.size_bytes(), cudaMemcpyDeviceToHost, work_stream_));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(work_stream_));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(halo_stream_));
    if (op_ == Operation::NonTranspose) {
      profile.pack_ms += elapsed_ms(e.start, e.packed);
      profile.local_ms += elapsed_ms(e.local_begin, e.local_end);
      profile.wait_ms += std::max(0.0f, elapsed_ms(e.local_end, e.exchanged));
      profile.remote_ms += elapsed_ms(e.joined, e.remote_end);
    } else {
      profile.remote_ms += elapsed_ms(e.start, e.remote_end);
      profile.local_ms += elapsed_ms(e.local_begin, e.local_end);
      profile.wait_ms += std::max(0.0f, elapsed_ms(e.local_end, e.exchanged));
      profile.unpack_ms += elapsed_ms(e.joined, e.end);
    }
  }

  void all_reduce_sum(double* values, int count, CUstream_st* stream) override {
    SPMV_CUDA_CHECK(cudaSetDevice(device_));
    check_nccl(ncclAllReduce(values, values, static_cast<std::size_t>(count), ncclDouble, ncclSum, nccl_->get(), stream),
               "ncclAllReduce");
  }

  void exchange_only() override {
    SPMV_CUDA_CHECK(cudaSetDevice(device_));
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());  // no product of the caller's may still use the buffers
    if (op_ == Operation::NonTranspose) {
      pack(x_.size() > 0 ? x_.data() : nullptr, halo_stream_);
      forward(halo_stream_);
    } else {
      reverse(halo_stream_);
    }
    SPMV_CUDA_CHECK(cudaStreamSynchronize(halo_stream_));
  }

 private:
  // The product; `e` (host applies only) timestamps its steps.
  void run(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t s, StepEvents* e) {
    const auto mark = [&](Event StepEvents::*which, cudaStream_t on) {
      if (e) (e->*which).record(on);
    };
    // The exchange is in flight on the halo stream: the local block meanwhile, then the join.
    const auto local_then_join = [&] {
      joins_->exchanged.record(halo_stream_);
      mark(&StepEvents::exchanged, halo_stream_);
      mark(&StepEvents::local_begin, s);
      local_->apply(alpha, x, beta, y, s);
      mark(&StepEvents::local_end, s);
      joins_->exchanged.wait_in(s);
      mark(&StepEvents::joined, s);
    };
    mark(&StepEvents::start, s);
    if (op_ == Operation::NonTranspose) {
      joins_->ready.record(s);  // x is ready on the caller's stream (and the last product read the ghosts)
      joins_->ready.wait_in(halo_stream_);
      pack(alpha == Value(0) ? nullptr : x, halo_stream_);  // alpha == 0: x is not read (it may be null)
      mark(&StepEvents::packed, halo_stream_);
      forward(halo_stream_);
      local_then_join();
      if (remote_) {  // y[remote_rows] += alpha * B * ghost
        remote_->apply(alpha, ghost_.data(), Value(0), remote_part_.data(), s);
        const auto n = static_cast<std::int64_t>(remote_part_.size());
        add_entries<<<blocks_for(n), kThreads, 0, s>>>(y, remote_rows_.data(), remote_part_.data(), n);
        SPMV_CUDA_CHECK(cudaGetLastError());
      }
      mark(&StepEvents::remote_end, s);
    } else {
      // The remote block's partial sums first, so that they travel while the local block runs.
      if (remote_) {  // ghost = alpha * B^T * x[remote_rows] (alpha == 0: x is not read, it may be null)
        const auto n = static_cast<std::int64_t>(remote_part_.size());
        if (alpha != Value(0)) gather_entries<<<blocks_for(n), kThreads, 0, s>>>(x, remote_rows_.data(), remote_part_.data(), n);
        SPMV_CUDA_CHECK(cudaGetLastError());
        remote_->apply(alpha, remote_part_.data(), Value(0), ghost_.data(), s);
      }
      mark(&StepEvents::remote_end, s);
      joins_->sums_ready.record(s);
      joins_->sums_ready.wait_in(halo_stream_);
      reverse(halo_stream_);
      local_then_join();
      for (std::size_t i = 0; i < plan_.send_ranks.size(); ++i) {
        const std::int64_t at = plan_.send_offsets[i], n = plan_.send_offsets[i + 1] - at;
        if (n > 0) add_entries<<<blocks_for(n), kThreads, 0, s>>>(y, send_index_.data() + at, packed_.data() + at, n);
      }
      SPMV_CUDA_CHECK(cudaGetLastError());
    }
    mark(&StepEvents::end, s);
  }

  // packed = x[send_index] (zeros without x: a product with alpha == 0 still exchanges, so that ranks
  // stay matched).
  void pack(const Value* x, cudaStream_t s) {
    const std::int64_t n = plan_.sends();
    if (n == 0) return;
    if (x) gather_entries<<<blocks_for(n), kThreads, 0, s>>>(x, send_index_.data(), packed_.data(), n);
    else SPMV_CUDA_CHECK(cudaMemsetAsync(packed_.data(), 0, packed_.bytes(), s));
    SPMV_CUDA_CHECK(cudaGetLastError());
  }

  // A x: each owner sends its packed entries, the ghost vector receives in place (segments per owner).
  void forward(cudaStream_t s) {
    exchange(ghost_.data(), plan_.recv_ranks, plan_.recv_offsets, packed_.data(), plan_.send_ranks,
             plan_.send_offsets, s);
  }
  // A^T x: the ghost vector's partial sums go back to their owners, received into `packed`.
  void reverse(cudaStream_t s) {
    exchange(packed_.data(), plan_.send_ranks, plan_.send_offsets, ghost_.data(), plan_.recv_ranks,
             plan_.recv_offsets, s);
  }

  void exchange(Value* recv, const std::vector<int>& from, const std::vector<std::int64_t>& recv_offsets,
                const Value* send, const std::vector<int>& to, const std::vector<std::int64_t>& send_offsets,
                cudaStream_t s) {
    if (from.empty() && to.empty()) return;
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t i = 0; i < from.size(); ++i)
      check_nccl(ncclRecv(recv + recv_offsets[i], static_cast<std::size_t>(recv_offsets[i + 1] - recv_offsets[i]),
                          nccl_type<Value>(), from[i], nccl_->get(), s),
                 "ncclRecv");
    for (std::size_t i = 0; i < to.size(); ++i)
      check_nccl(ncclSend(send + send_offsets[i], static_cast<std::size_t>(send_offsets[i + 1] - send_offsets[i]),
                          nccl_type<Value>(), to[i], nccl_->get(), s),
                 "ncclSend");
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }

  Operation op_;
  HaloPlan plan_;
  int device_ = 0;
  cudaStream_t halo_stream_ = nullptr;
  cudaStream_t work_stream_ = nullptr;  // host-vector applies
  std::unique_ptr<BorrowedComm> nccl_;
  cuda::DeviceCsr<Value, Index> local_csr_, remote_csr_;  // before the plans that view them
  std::unique_ptr<cuda::Plan<Value, Index>> local_, remote_;
  cuda::DeviceBuffer<Index> remote_rows_;  // the remote block's rows in this rank's rows
  cuda::DeviceBuffer<Value> remote_part_;  // one per remote row: its x (A^T) or its product (A)
  cuda::DeviceBuffer<Index> send_index_;
  cuda::DeviceBuffer<Value> packed_, ghost_;
  cuda::DeviceBuffer<Value> x_, y_;  // host-vector applies: the device copies of x and y
  // The joins between the caller's stream and the halo stream (created on device_, as events must be).
  struct Joins {
    Event ready, sums_ready, exchanged;
  };
  std::unique_ptr<Joins> joins_;
};

}  // namespace

template <class Value, class Index>
std::unique_ptr<DevicePart<Value, Index>> make_device_part(MPI_Comm caller, MPI_Comm comm,
                                                           Blocks<Value, Index>& blocks, const HaloPlan& plan,
                                                           Operation op, const DistributedOptions& options) {
  return std::make_unique<NcclPart<Value, Index>>(caller, comm, blocks, plan, op, options);
}

SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE_MAKE_DEVICE_PART)

}  // namespace spmv::dist::detail
