// Tier (i) of the oracle: the sequential reference checked exactly on tiny hand-computed matrices.
// Values are small integers and halves, so every result below is exact in float and double and ==
// is the right comparison. The named CPU algorithms are held to the same exact answers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <limits>
#include <string>
#include <vector>

#include "common/zoo.hpp"
#include "spmv/cpu.hpp"
#include "spmv/error.hpp"

namespace spmv::test {
namespace {

template <class T>
struct Types;
template <class V, class I>
struct Types<std::pair<V, I>> {
  using Value = V;
  using Index = I;
};

template <class P>
class ReferenceTest : public ::testing::Test {
 protected:
  using Value = typename Types<P>::Value;
  using Index = typename Types<P>::Index;
  using Matrix = CsrMatrix<Value, Index>;
  using Vec = std::vector<Value>;
  static constexpr Value nan = std::numeric_limits<Value>::quiet_NaN();

  // [ 1  0  2  0  ]
  // [ 0  0  0  0  ]
  // [-3  4  0 1/2 ]
  Matrix a3x4 = convert<Value, Index>(zoo_matrix("tiny_3x4"));
  // rows: {(3, 1.5), (0, 2), (3, -1)}, {}, {(1, 4)}, {(2, 0), (0, -2)}: unsorted, a duplicate, an
  // empty row, an explicit zero.
  Matrix messy = convert<Value, Index>(zoo_matrix("tiny_unsorted_duplicates"));

  static Vec ref(const Matrix& a, Operation op, Value alpha, const Vec& x, Value beta, Vec y) {
    cpu::reference<Value, Index>(a, op, alpha, x, beta, y);
    return y;
  }
};

using TypePairs = ::testing::Types<std::pair<float, std::int32_t>, std::pair<float, std::int64_t>,
                                   std::pair<double, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(ReferenceTest, TypePairs);

TYPED_TEST(ReferenceTest, NonTransposeHandComputed) {
  using Vec = typename TestFixture::Vec;
  const auto nan = TestFixture::nan;
  const Vec x{1, 2, -1, 4};  // A x = [1 - 2, 0, -3 + 8 + 2] = [-1, 0, 7]
  const Vec y0{10, 20, 30};
  const auto& a = this->a3x4;
  const auto N = Operation::NonTranspose;
  EXPECT_EQ(this->ref(a, N, 1, x, 0, {nan, nan, nan}), (Vec{-1, 0, 7}));  // beta = 0 never reads y
  EXPECT_EQ(this->ref(a, N, 2, x, -1, y0), (Vec{-12, -20, -16}));
  EXPECT_EQ(this->ref(a, N, -1, x, 1, y0), (Vec{11, 20, 23}));
  EXPECT_EQ(this->ref(a, N, 0.5, x, 0.5, y0), (Vec{4.5, 10, 18.5}));
  EXPECT_EQ(this->ref(a, N, 0, x, 0.5, y0), (Vec{5, 10, 15}));       // alpha = 0: y = beta*y
  EXPECT_EQ(this->ref(a, N, 0, x, 0, {nan, nan, nan}), (Vec{0, 0, 0}));
  // alpha = 0 does not touch x: a NaN there does not propagate (BLAS semantics).
  EXPECT_EQ(this->ref(a, N, 0, {nan, nan, nan, nan}, 1, y0), y0);
}

TYPED_TEST(ReferenceTest, TransposeHandComputed) {
  using Vec = typename TestFixture::Vec;
  const auto nan = TestFixture::nan;
  const Vec x{1, 5, 2};  // A^T x = [1 - 6, 8, 2, 1] = [-5, 8, 2, 1]
  const Vec y0{1, 2, 3, 4};
  const auto& a = this->a3x4;
  const auto T = Operation::Transpose;
  EXPECT_EQ(this->ref(a, T, 1, x, 0, {nan, nan, nan, nan}), (Vec{-5, 8, 2, 1}));
  EXPECT_EQ(this->ref(a, T, 0.5, x, 2, y0), (Vec{-0.5, 8, 7, 8.5}));
  EXPECT_EQ(this->ref(a, T, -1, x, -1, y0), (Vec{4, -10, -5, -5}));
  EXPECT_EQ(this->ref(a, T, 0, x, -1, y0), (Vec{-1, -2, -3, -4}));
  EXPECT_EQ(this->ref(a, T, 0, x, 0, {nan, nan, nan, nan}), (Vec{0, 0, 0, 0}));
}

TYPED_TEST(ReferenceTest, UnsortedDuplicatesEmptyRowExplicitZero) {
  using Vec = typename TestFixture::Vec;
  const auto nan = TestFixture::nan;
  const Vec x{1, 2, 3, 4};
  const auto& a = this->messy;
  // row 0: 1.5*4 + 2*1 - 1*4 = 4 (both duplicates count); row 3: 0*3 - 2*1 = -2
  EXPECT_EQ(this->ref(a, Operation::NonTranspose, 1, x, 0, Vec(4, nan)), (Vec{4, 0, 8, -2}));
  // columns: 0: 2*1 - 2*4 = -6; 1: 4*3 = 12; 2: 0*4 = 0; 3: 1.5*1 - 1*1 = 0.5
  EXPECT_EQ(this->ref(a, Operation::Transpose, 1, x, 0, Vec(4, nan)), (Vec{-6, 12, 0, 0.5}));
}

TYPED_TEST(ReferenceTest, DegenerateShapes) {
  using Value = typename TestFixture::Value;
  using Index = typename TestFixture::Index;
  using Vec = typename TestFixture::Vec;
  const auto nan = TestFixture::nan;
  const auto m0x0 = convert<Value, Index>(zoo_matrix("empty_0x0"));
  const auto m0x7 = convert<Value, Index>(zoo_matrix("empty_0x7"));
  const auto m7x0 = convert<Value, Index>(zoo_matrix("empty_7x0"));
  EXPECT_EQ(this->ref(m0x0, Operation::NonTranspose, 1, {}, 0, {}), Vec{});
  EXPECT_EQ(this->ref(m0x0, Operation::Transpose, 1, {}, 0, {}), Vec{});
  EXPECT_EQ(this->ref(m0x7, Operation::NonTranspose, 1, Vec(7, 1), 0, {}), Vec{});
  // A^T of a 0 x 7 matrix is 7 x 0: y = beta*y, and beta = 0 gives zeros.
  EXPECT_EQ(this->ref(m0x7, Operation::Transpose, 1, {}, 2, Vec(7, 3)), Vec(7, 6));
  EXPECT_EQ(this->ref(m0x7, Operation::Transpose, 1, {}, 0, Vec(7, nan)), Vec(7, 0));
  EXPECT_EQ(this->ref(m7x0, Operation::NonTranspose, 1, {}, -1, Vec(7, 3)), Vec(7, -3));
  EXPECT_EQ(this->ref(m7x0, Operation::Transpose, 1, Vec(7, 1), 0, {}), Vec{});
}

TYPED_TEST(ReferenceTest, Magnitude) {
  using Vec = typename TestFixture::Vec;
  using Value = typename TestFixture::Value;
  using Index = typename TestFixture::Index;
  const auto& a = this->a3x4;
  EXPECT_EQ((cpu::reference_magnitude<Value, Index>(a, Operation::NonTranspose, Vec{1, 2, -1, 4})),
            (std::vector<double>{3, 0, 13}));
  EXPECT_EQ((cpu::reference_magnitude<Value, Index>(a, Operation::Transpose, Vec{1, 5, 2})),
            (std::vector<double>{7, 8, 2, 1}));
  // Duplicates add their own magnitudes; explicit zeros add nothing.
  EXPECT_EQ((cpu::reference_magnitude<Value, Index>(this->messy, Operation::NonTranspose, Vec{1, 2, 3, 4})),
            (std::vector<double>{12, 0, 8, 2}));
}

TYPED_TEST(ReferenceTest, AccumulatesInDouble) {
  using Value = typename TestFixture::Value;
  using Index = typename TestFixture::Index;
  using Vec = typename TestFixture::Vec;
  // [big, 1, -big] * [1, 1, 1] = 1 exactly, while a left-to-right sum in float loses the 1 when
  // big = 2^24. In double the same happens at 2^53, beyond the reference's reach too, so this is a
  // float-only property.
  const Value big = std::is_same_v<Value, float> ? Value(16777216) : Value(1);
  const auto a = make_csr<Value, Index>(1, 3, {0, 3}, {0, 1, 2}, {big, 1, -big});
  const Vec x{1, 1, 1};
  EXPECT_EQ(this->ref(a, Operation::NonTranspose, 1, x, 0, {0}), Vec{1});
  if constexpr (std::is_same_v<Value, float>) {
    Vec y{0};
    cpu::row_loop<Value, Index>(a, Operation::NonTranspose, 1, x, 0, y);
    EXPECT_EQ(y, Vec{0}) << "the naive float loop rounds the 1 away (why the oracle uses double)";
  }
}

TYPED_TEST(ReferenceTest, BadInputThrows) {
  using Value = typename TestFixture::Value;
  using Index = typename TestFixture::Index;
  using Vec = typename TestFixture::Vec;
  const auto& a = this->a3x4;
  Vec y3(3), y4(4);
  EXPECT_THROW((cpu::reference<Value, Index>(a, Operation::NonTranspose, 1, Vec(3), 0, y3)), InvalidArgument);
  EXPECT_THROW((cpu::reference<Value, Index>(a, Operation::NonTranspose, 1, Vec(4), 0, y4)), InvalidArgument);
  EXPECT_THROW((cpu::reference<Value, Index>(a, Operation::Transpose, 1, Vec(4), 0, y3)), InvalidArgument);
  EXPECT_THROW((cpu::reference_magnitude<Value, Index>(a, Operation::Transpose, Vec(4))), InvalidArgument);
  auto broken = a;
  broken.col_idx[1] = 4;  // out of range
  EXPECT_THROW((cpu::reference<Value, Index>(broken, Operation::NonTranspose, 1, Vec(4), 0, y3)), InvalidArgument);
  EXPECT_THROW((cpu::row_loop<Value, Index>(broken, Operation::NonTranspose, 1, Vec(4), 0, y3)), InvalidArgument);
  EXPECT_THROW((cpu::merge_parallel<Value, Index>(broken, Operation::NonTranspose, 1, Vec(4), 0, y3)), InvalidArgument);
  EXPECT_THROW((cpu::column_chunked<Value, Index>(broken, Operation::NonTranspose, 1, Vec(4), 0, y3)), InvalidArgument);
  broken = a;
  broken.row_ptr[1] = 5;  // decreasing
  EXPECT_THROW((cpu::reference<Value, Index>(broken, Operation::Transpose, 1, Vec(3), 0, y4)), InvalidArgument);
}

// The CPU algorithms give the same exact answers on the hand examples, at several chunk widths and
// thread counts (more threads than rows included).
TYPED_TEST(ReferenceTest, NamedAlgorithmsExactOnHandExamples) {
  using Value = typename TestFixture::Value;
  using Index = typename TestFixture::Index;
  using Vec = typename TestFixture::Vec;
  using Fn = std::function<void(const typename TestFixture::Matrix&, Operation, Value, std::span<const Value>,
                                Value, std::span<Value>)>;
  std::vector<std::pair<std::string, Fn>> algorithms{
      {"row_loop", [](auto& a, auto op, auto al, auto x, auto be, auto y) { cpu::row_loop(a, op, al, x, be, y); }}};
  for (int t : {1, 2, 3, 5})
    algorithms.emplace_back("merge_parallel threads=" + std::to_string(t),
                            [t](auto& a, auto op, auto al, auto x, auto be, auto y) {
                              cpu::merge_parallel(a, op, al, x, be, y, t);
                            });
  for (int span : {1, 2, 3, 0})
    for (int t : {1, 2})
      algorithms.emplace_back("column_chunked span=" + std::to_string(span) + " threads=" + std::to_string(t),
                              [span, t](auto& a, auto op, auto al, auto x, auto be, auto y) {
                                cpu::column_chunked(a, op, al, x, be, y, span, t);
                              });
  const auto nan = TestFixture::nan;
  for (const auto& [name, run] : algorithms)
    for (const auto* a : {&this->a3x4, &this->messy})
      for (Operation op : {Operation::NonTranspose, Operation::Transpose}) {
        const auto nx = static_cast<std::size_t>(op == Operation::NonTranspose ? a->cols : a->rows);
        const auto ny = static_cast<std::size_t>(op == Operation::NonTranspose ? a->rows : a->cols);
        Vec x(nx), y0(ny);
        for (std::size_t i = 0; i < nx; ++i) x[i] = Value(static_cast<int>(i % 3) - 1) + Value(0.5) * Value(i);
        for (std::size_t i = 0; i < ny; ++i) y0[i] = Value(static_cast<int>(i)) - 2;
        for (Value alpha : {Value(0), Value(1), Value(-0.5)})
          for (Value beta : {Value(0), Value(1), Value(2)}) {
            Vec start = beta == 0 ? Vec(ny, nan) : y0;
            Vec got = start;
            run(*a, op, alpha, x, beta, got);
            EXPECT_EQ(got, this->ref(*a, op, alpha, x, beta, start))
                << name << " op " << to_string(op) << " alpha " << alpha << " beta " << beta;
          }
      }
}

}  // namespace
}  // namespace spmv::test
