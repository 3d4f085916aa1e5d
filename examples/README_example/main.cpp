// The README example: y = A * ones with the public API, built against the installed spmv package.
#include <spmv/matrix_market.hpp>
#include <spmv/operator.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

int main(int argc, char** argv) try {
  if (argc != 2) return std::fprintf(stderr, "usage: %s MATRIX.mtx[.gz]\n", argv[0]), 2;
  const auto a = spmv::read_csr<double, std::int32_t>(argv[1]);
  std::vector<double> x(a.cols, 1.0), y(a.rows);
  auto op = spmv::make_operator(spmv::Backend::Cpu, a, spmv::Algorithm::Auto, spmv::Operation::NonTranspose);
  op->apply(1.0, x, 0.0, y);  // y = 1 * A * x + 0 * y
  double norm = 0;
  for (double v : y) norm += v * v;
  const std::string_view algorithm = spmv::to_string(op->algorithm());
  std::printf("%d x %d, %d nonzeros, algorithm %.*s\n", a.rows, a.cols, a.nnz(), int(algorithm.size()), algorithm.data());
  for (std::size_t i = 0; i < y.size() && i < 5; ++i) std::printf("y[%zu] = %g\n", i, y[i]);
  std::printf("||y||_2 = %.12g\n", std::sqrt(norm));
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
