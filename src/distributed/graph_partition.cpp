// PartitionKind::Graph (include/spmv/distributed.hpp, docs/DISTRIBUTED.md "Graph partition"): a k-way
// partition of a square matrix's graph by METIS (Karypis & Kumar, "A fast and high quality multilevel
// scheme for partitioning irregular graphs", SIAM J. Sci. Comput. 20(1), 1998; multilevel k-way
// refinement minimising the edge cut), turned into contiguous blocks of rows: the rows of part 0 first,
// then part 1's, each in its original order, so that the contiguous-block machinery (scatter_rows, the
// block split, the halo plan) runs unchanged on P A P^T.
#include <chrono>
#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include "core/symmetric_pattern.hpp"
#include "spmv/distributed.hpp"
#include "spmv/error.hpp"

#ifdef SPMV_WITH_METIS
#include <metis.h>
#endif

namespace spmv::dist {
namespace {

#ifdef SPMV_WITH_METIS

// Seeded so that the partition, and with it every rank's rows, is the same on every run.
constexpr idx_t kMetisSeed = 1;

// Rows grouped by part, stable within a part (a counting sort); part[i] in [0, parts).
GraphPartition group_by_part(const std::vector<idx_t>& part, int parts) {
  GraphPartition g;
  g.parts.offsets.assign(static_cast<std::size_t>(parts) + 1, 0);
  for (const idx_t p : part) ++g.parts.offsets[static_cast<std::size_t>(p) + 1];
  for (int p = 0; p < parts; ++p) g.parts.offsets[p + 1] += g.parts.offsets[p];
  std::vector<std::int64_t> cursor(g.parts.offsets.begin(), g.parts.offsets.end() - 1);
  g.permutation.resize(part.size());
  for (std::size_t i = 0; i < part.size(); ++i)
    g.permutation[static_cast<std::size_t>(cursor[static_cast<std::size_t>(part[i])]++)] = static_cast<std::int64_t>(i);
  return g;
}

template <class Value>
std::vector<idx_t> metis_parts(const CsrMatrix<Value, std::int64_t>& a, int parts, std::int64_t& edge_cut) {
  const std::int64_t n = a.rows;
  std::vector<idx_t> part(static_cast<std::size_t>(n), 0);
  edge_cut = 0;
  // One part, or no edges to cut: METIS is not needed (and some versions reject nparts = 1).
  if (parts == 1 || n == 0) return part;
  const auto graph = spmv::detail::symmetric_pattern(a);
  // METIS indexes vertices, adjacency entries and summed weights in idx_t (IDXTYPEWIDTH of metis.h).
  constexpr auto limit = static_cast<std::int64_t>(std::numeric_limits<idx_t>::max());
  const std::int64_t edges = graph.start.back(), weight = n + a.nnz();
  if (n > limit || edges > limit || weight > limit)
    throw Unsupported("graph partition: " + std::to_string(n) + " rows, " + std::to_string(edges) +
                      " adjacency entries of A + A^T and a total weight of " + std::to_string(weight) +
                      " exceed this METIS's " + std::to_string(IDXTYPEWIDTH) +
                      "-bit idx_t; use the nonzero partition (or a METIS built with IDXTYPEWIDTH 64)");
  std::vector<idx_t> xadj(graph.start.begin(), graph.start.end());
  std::vector<idx_t> adjncy(graph.adj.begin(), graph.adj.end());
  if (adjncy.empty()) adjncy.push_back(0);  // METIS reads through the pointer; never indexed (xadj is all 0)
  std::vector<idx_t> vwgt(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) vwgt[static_cast<std::size_t>(i)] = static_cast<idx_t>(1 + a.row_length(i));
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = kMetisSeed;
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = parts, objval = 0;
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, nullptr,
                                         &nparts, nullptr, nullptr, options, &objval, part.data());
  if (status == METIS_ERROR_MEMORY) throw std::bad_alloc();
  if (status != METIS_OK)
    throw Error("graph partition: METIS_PartGraphKway failed (status " + std::to_string(status) + ") on " +
                std::to_string(n) + " rows into " + std::to_string(parts) + " parts");
  for (const idx_t p : part)
    if (p < 0 || p >= parts) throw Error("graph partition: METIS returned part " + std::to_string(p));
  edge_cut = objval;
  return part;
}

#endif

}  // namespace

bool graph_partition_available() {
#ifdef SPMV_WITH_METIS
  return true;
#else
  return false;
#endif
}

template <class Value>
GraphPartition partition_graph(const CsrMatrix<Value, std::int64_t>& a, int parts) {
  if (a.rows != a.cols)
    throw InvalidArgument("graph partition: needs a square matrix (this one is " + std::to_string(a.rows) + " x " +
                          std::to_string(a.cols) + "); use the nonzero or row partition");
  if (parts < 1) throw InvalidArgument("graph partition: " + std::to_string(parts) + " parts");
#ifdef SPMV_WITH_METIS
  const auto start = std::chrono::steady_clock::now();
  std::int64_t edge_cut = 0;
  GraphPartition g = group_by_part(metis_parts(a, parts, edge_cut), parts);
  g.edge_cut = edge_cut;
  g.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return g;
#else
  throw Unsupported("graph partition: this spmv was built without METIS (apt-get install libmetis-dev, then "
                    "configure with -DSPMV_WITH_METIS=ON)");
#endif
}

namespace {

// Throws unless a non-empty permutation and the vector have one length.
void check_length(const char* what, std::size_t permutation, std::size_t whole) {
  if (permutation != 0 && permutation != whole)
    throw InvalidArgument(std::string(what) + ": a vector of " + std::to_string(whole) +
                          " entries for a permutation of " + std::to_string(permutation));
}

}  // namespace

template <class T>
std::vector<T> to_distributed_order(std::span<const std::int64_t> permutation, std::span<const T> whole) {
  check_length("to_distributed_order", permutation.size(), whole.size());
  if (permutation.empty()) return {whole.begin(), whole.end()};
  std::vector<T> out(whole.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = whole[static_cast<std::size_t>(permutation[i])];
  return out;
}

template <class T>
std::vector<T> to_original_order(std::span<const std::int64_t> permutation, std::span<const T> whole) {
  check_length("to_original_order", permutation.size(), whole.size());
  if (permutation.empty()) return {whole.begin(), whole.end()};
  std::vector<T> out(whole.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[static_cast<std::size_t>(permutation[i])] = whole[i];
  return out;
}

template GraphPartition partition_graph<float>(const CsrMatrix<float, std::int64_t>&, int);
template GraphPartition partition_graph<double>(const CsrMatrix<double, std::int64_t>&, int);
#define SPMV_INSTANTIATE(T)                                                                               \
  template std::vector<T> to_distributed_order<T>(std::span<const std::int64_t>, std::span<const T>); \
  template std::vector<T> to_original_order<T>(std::span<const std::int64_t>, std::span<const T>);
SPMV_INSTANTIATE(float)
SPMV_INSTANTIATE(double)
#undef SPMV_INSTANTIATE

}  // namespace spmv::dist
