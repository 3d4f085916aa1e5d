// Distributed Krylov solves on the CUDA backend: spmv::cuda::solve over this rank's rows, its operator
// the matrix's device product and every reduction summed across the ranks by ncclAllReduce on the
// solver's stream (SolverOptions::device_global_sum). The scalars and the stopping decisions stay on
// each GPU and are equal on every rank, so every rank enqueues the same products and collectives.
#include <cuda_runtime_api.h>

#include "cpu/instantiate.hpp"
#include "distributed/device_part.hpp"
#include "spmv/cuda/device_buffer.hpp"
#include "spmv/cuda/linear_operator.hpp"
#include "spmv/cuda/solvers.hpp"

namespace spmv::dist::detail {
namespace {

// This rank's part of the matrix as a device operator: x and y are its parts on the matrix's GPU.
template <class Value, class Index>
class DeviceRows final : public cuda::LinearOperator<Value> {
 public:
  DeviceRows(DistributedMatrix<Value, Index>& a, int rank) : a_(a), rank_(rank) {}
  std::int64_t rows() const override { return a_.y_partition().count(rank_); }
  std::int64_t cols() const override { return a_.x_partition().count(rank_); }
  void apply(Value alpha, const Value* x, Value beta, Value* y, cudaStream_t stream) override {
    a_.apply(alpha, x, beta, y, stream);
  }

 private:
  DistributedMatrix<Value, Index>& a_;
  int rank_;
};

class Stream {
 public:
  Stream() { SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace

template <class Value, class Index>
SolverResult solve_on_device(DistributedMatrix<Value, Index>& a, int rank, std::span<const Value> b,
                             std::span<Value> x, const SolverOptions& options, std::span<const Value> diagonal) {
  SPMV_CUDA_CHECK(cudaSetDevice(a.device()));
  const Stream stream;
  cuda::DeviceBuffer<Value> db(b), dx(std::span<const Value>(x.data(), x.size())), dd(diagonal);
  SolverOptions on_device = options;
  on_device.fused = false;  // the fused CG finishes its sums inside the sweep: no room for the all-reduce
  on_device.device_global_sum = [&a](double* values, int count, cudaStream_t s) { a.all_reduce_sum(values, count, s); };
  DeviceRows<Value, Index> op(a, rank);
  SolverResult result = cuda::solve<Value>(op, db.data(), dx.data(), on_device,
                                           diagonal.empty() ? nullptr : dd.data(), stream.get());
  dx.download(x, stream.get());
  return result;
}

SPMV_CPU_FOR_EACH_TYPE(SPMV_INSTANTIATE_SOLVE_ON_DEVICE)

}  // namespace spmv::dist::detail
