#pragma once
// Private: dist::read_matrix_market with the exchange's round size exposed, so that the tests can force
// entries through many MPI_Alltoallv rounds on small files.
#include <cstdint>
#include <string>

#include "spmv/distributed.hpp"

namespace spmv::dist::detail {

// dist::read_matrix_market; `round_bytes`: what one rank sends per round of the exchange that moves
// parsed entries to their rows' owners (alltoallv_in_rounds).
template <class Value>
LocalRows<Value> read_matrix_market(const Communicator& comm, const std::string& path, PartitionKind kind,
                                    const ReadOptions& options, ReadMode mode, std::int64_t round_bytes);

}  // namespace spmv::dist::detail
