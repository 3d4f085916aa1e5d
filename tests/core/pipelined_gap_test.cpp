// The policy of pipelined CG's gap checks (src/solvers/pipelined_gap.hpp), which both backends run step
// by step: when a check is due, how the interval adapts, when a measured gap asks for a replacement.
#include "solvers/pipelined_gap.hpp"

#include <gtest/gtest.h>

namespace {

using spmv::solvers::GapWatch;
using spmv::solvers::kGapFirstInterval;
using spmv::solvers::kGapMaxInterval;
using spmv::solvers::kGapTolerance;

// Iterations without a measurement until a check is due.
int iterations_to_check(GapWatch& watch) {
  int k = 1;
  while (!watch.check_due()) ++k;
  return k;
}

TEST(PipelinedGap, TheFirstCheckComesAfterTheFirstInterval) {
  GapWatch watch;
  EXPECT_FALSE(watch.measuring());
  EXPECT_EQ(iterations_to_check(watch), kGapFirstInterval);
  watch.checked();
  EXPECT_TRUE(watch.measuring());
}

// A gap far below the bound doubles the interval up to its maximum; near the bound it returns to the first.
TEST(PipelinedGap, TheIntervalDoublesWhileTheGapIsSmallAndTightensNearTheBound) {
  GapWatch watch;
  int expected = kGapFirstInterval;
  for (int check = 0; check < 12; ++check) {
    EXPECT_EQ(iterations_to_check(watch), expected) << "check " << check;
    watch.checked();
    EXPECT_FALSE(watch.measured(1e-12, 1.0));  // far below kGapTolerance / 64
    EXPECT_FALSE(watch.measuring());
    expected = expected * 2 > kGapMaxInterval ? kGapMaxInterval : expected * 2;
  }
  EXPECT_EQ(iterations_to_check(watch), kGapMaxInterval);
  watch.checked();
  EXPECT_FALSE(watch.measured(kGapTolerance / 2, 1.0));  // near the bound, not past it: no replacement
  EXPECT_EQ(iterations_to_check(watch), kGapFirstInterval);
}

// Past the bound the residual is replaced, unless the gap is within twice the first gap measured since
// the last recomputation (the rounding of b - A x itself, which a replacement cannot remove).
TEST(PipelinedGap, ReplacesPastTheBoundAboveTwiceTheFloor) {
  GapWatch watch;
  watch.checked();
  EXPECT_FALSE(watch.measured(1e-6, 1.0));  // the first gap: the floor, never a replacement
  watch.checked();
  EXPECT_TRUE(watch.measured(2 * kGapTolerance, 1.0));  // past the bound and past twice the floor
  watch.recomputed();
  EXPECT_EQ(iterations_to_check(watch), kGapFirstInterval);
  watch.checked();
  EXPECT_FALSE(watch.measured(1e-4, 1e-3));  // first after the recomputation: ratio 0.1, but the floor
  watch.checked();
  EXPECT_FALSE(watch.measured(1.5e-4, 1e-3));  // past the bound, within twice the floor
  watch.checked();
  EXPECT_TRUE(watch.measured(2.5e-4, 1e-3));
}

TEST(PipelinedGap, ARecomputationDropsAPendingCheck) {
  GapWatch watch;
  watch.checked();
  watch.recomputed();
  EXPECT_FALSE(watch.measuring());
  EXPECT_EQ(iterations_to_check(watch), kGapFirstInterval);
}

}  // namespace
