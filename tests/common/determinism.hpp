#pragma once
// Options::deterministic, shared by the CPU and CUDA tests: every algorithm a backend offers either
// refuses (Unsupported) or gives the same bits on repeated products, and the ones documented as
// reproducible (docs/ALGORITHMS.md "Determinism") must build and repeat; Auto resolves to one of them
// and stays within the error bound. Repetition cannot prove reproducibility (atomics may happen to add
// in the same order twice), so the refusal list is checked too: an algorithm known to sum with atomics
// must refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/differential.hpp"
#include "common/zoo.hpp"
#include "spmv/operator.hpp"

namespace spmv::test {

// Reproducible by construction (CudaAlgorithm::reproducible; CPU: all but Tune and Mkl).
inline bool documented_reproducible(Backend backend, Algorithm a, Operation op) {
  if (backend == Backend::Cpu) return a != Algorithm::Mkl && a != Algorithm::Tune;
  // column-chunked: each block's plan is built under Options::deterministic too (Auto's reproducible choice)
  // and the blocks are summed in a fixed order.
  if (a == Algorithm::ColumnChunked) return true;
  if (op == Operation::Transpose) return a == Algorithm::ExplicitTranspose || a == Algorithm::Symmetric;
  static const std::vector<Algorithm> n = {Algorithm::CsrScalar, Algorithm::CsrVector,   Algorithm::CsrCoop,
                                           Algorithm::Pcsr,      Algorithm::LightSpmv,   Algorithm::Ell,
                                           Algorithm::EllR,      Algorithm::EllRVector,  Algorithm::Dia,
                                           Algorithm::Sell,      Algorithm::CompressedCsr, Algorithm::CusparseCsrAlg2};
  return std::find(n.begin(), n.end(), a) != n.end();
}

// Two products from the same inputs, compared bit for bit (y poisoned with NaN before each).
template <class Value, class Index>
void expect_same_bits(Operator<Value, Index>& oper, const CsrMatrix<Value, Index>& a, Operation op,
                      const std::string& what) {
  const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a.cols : a.rows);
  const auto ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a.rows : a.cols);
  SplitMix64 rng(hash_name(what));
  std::vector<Value> x(nx), y0(ny);
  for (auto& v : x) v = static_cast<Value>(rng.symmetric());
  for (auto& v : y0) v = static_cast<Value>(rng.symmetric());
  std::vector<Value> first = y0, second = y0;
  oper.apply(Value(1.5), x, Value(-0.5), first);
  for (int k = 0; k < 3; ++k) {
    second = y0;
    oper.apply(Value(1.5), x, Value(-0.5), second);
    ASSERT_EQ(std::memcmp(first.data(), second.data(), ny * sizeof(Value)), 0)
        << what << ": product " << k + 2 << " differs from the first in some bit";
  }
}

// Every offered algorithm on matrices that exercise the non-reproducible paths: long rows (CSR-vector
// would split them), power-law rows, empty rows.
inline void check_deterministic_mode(Backend backend) {
  if (backend == Backend::Cuda && !cuda_available()) GTEST_SKIP() << "no CUDA device";
  Options options;
  options.deterministic = true;
  for (const char* name : {"long_rows", "power_law_rmat12", "empty_rows", "empty_rows_long_rows", "poisson2d_64"}) {
    const auto a = convert<double, std::int32_t>(zoo_matrix(name));
    for (Operation op : {Operation::NonTranspose, Operation::Transpose})
      for (Algorithm alg : backend_algorithms(backend, op)) {
        const std::string what = std::string(name) + " " + std::string(to_string(alg)) + " op " +
                                 std::string(to_string(op));
        std::unique_ptr<Operator<double, std::int32_t>> oper;
        try {
          oper = make_operator(backend, a, alg, op, options);
        } catch (const Unsupported& e) {
          // A documented-reproducible algorithm may still refuse a shape (padding), never for determinism.
          if (documented_reproducible(backend, alg, op))
            EXPECT_EQ(std::string(e.what()).find("bit-reproducible"), std::string::npos) << what << ": " << e.what();
          continue;
        }
        EXPECT_TRUE(documented_reproducible(backend, alg, op))
            << what << " [" << oper->policy() << "] was built with Options::deterministic but sums with atomics";
        expect_same_bits(*oper, a, op, what);
      }
  }
}

// Auto under Options::deterministic: a reproducible algorithm, right (error bound), repeatable.
inline void check_deterministic_auto(Backend backend, Operation op) {
  if (backend == Backend::Cuda && !cuda_available()) GTEST_SKIP() << "no CUDA device";
  Options options;
  options.deterministic = true;
  for (const char* name :
       {"long_rows", "dense_rows", "power_law_rmat12", "mostly_empty", "empty_rows_long_rows", "poisson3d_16"}) {
    check_against_reference<double, std::int32_t>(backend, Algorithm::Auto, op, zoo_matrix(name), name, options);
    const auto a = convert<float, std::int32_t>(zoo_matrix(name));
    auto oper = make_operator(backend, a, Algorithm::Auto, op, options);
    EXPECT_TRUE(documented_reproducible(backend, oper->algorithm(), op))
        << name << ": Auto chose " << to_string(oper->algorithm()) << " [" << oper->policy() << "]";
    expect_same_bits(*oper, a, op, std::string(name) + " auto");
  }
}

}  // namespace spmv::test
