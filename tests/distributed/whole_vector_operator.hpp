#pragma once
// The Operator face of a distributed matrix for the differential body (common/differential.hpp's
// check_operator): every rank passes the whole x and y (drawn identically everywhere) and gets the whole
// y back, so that each rank's copy is compared with the reference. Subclasses implement apply: how the
// whole vectors reach the ranks' parts and come back.
#include <cstdint>
#include <span>
#include <string>

#include "spmv/distributed.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {

template <class Value, class Index>
class WholeVectorOperator : public Operator<Value, Index> {
 public:
  WholeVectorOperator(const dist::Communicator& comm, dist::DistributedMatrix<Value, Index>& m) : comm_(comm), m_(m) {}
  Backend backend() const override { return Backend::Cpu; }
  Algorithm algorithm() const override { return Algorithm::Auto; }
  Operation operation() const override { return m_.operation(); }
  std::string policy() const override { return "distributed"; }
  double setup_ms() const override { return 0; }
  std::size_t extra_bytes() const override { return 0; }
  std::int64_t rows() const override { return m_.y_partition().size(); }
  std::int64_t cols() const override { return m_.x_partition().size(); }
  Timing time(Value, std::span<const Value>, Value, std::span<Value>, const TimingOptions&) override { return {}; }

 protected:
  dist::Communicator comm_;
  dist::DistributedMatrix<Value, Index>& m_;
};

}  // namespace spmv::test
