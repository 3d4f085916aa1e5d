"""bench/auto_families.py and bench/semiring_rule.py model Auto's CUDA rules (src/core/auto_rule.cpp,
src/cuda/semiring_plan.cu) for the cross-validation sweeps on the GPU machine; CI has no GPU, so this
checks here that every row class the model can return has a kernel in each rule's table (a class added
to one and not the other crashed the semiring fit once) and that the classes fall where the C++ rule
puts them (tests/core/auto_rule_test.cpp checks the same shapes there)."""

import itertools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import auto_families  # noqa: E402
import semiring_rule  # noqa: E402


def shape(rows, nnz, mean=None, std=0.0, row_max=None, empty=0):
    mean = nnz / rows if mean is None else mean
    return {"rows": rows, "cols": rows, "nnz": nnz, "row_mean": mean, "row_std": std,
            "row_max": mean if row_max is None else row_max, "empty_rows": empty}


def grid():
    for rows, per_row, empty_share, skew in itertools.product(
            [1000, 40_000, 200_000, 4_000_000], [1, 4, 16, 32, 64, 300], [0.0, 0.3, 0.6, 0.75, 0.95], [1, 200, 5000]):
        nonempty = max(1, int(rows * (1 - empty_share)))
        nnz = nonempty * per_row
        mean = nnz / rows
        yield shape(rows, nnz, std=mean * (0.1 if skew == 1 else 10.0), row_max=per_row * skew,
                    empty=rows - nonempty)


def test_every_class_has_a_kernel_in_both_rules():
    for s in grid():
        for constants, table in ((auto_families.CURRENT["constants"], auto_families.CURRENT["leaves"]),
                                 (auto_families.PREVIOUS["constants"], auto_families.PREVIOUS["leaves"]),
                                 (semiring_rule.CONSTANTS, semiring_rule.IN_CODE)):
            assert auto_families.classify(s, constants) in table, s


def test_half_empty_classes_match_the_cpp_rule():
    c = auto_families.CURRENT["constants"]
    # Three quarters empty (tests/core/auto_rule_test.cpp): 32 a row stays with csr-vector from 2^20
    # nonzeros, 64 a row takes segmented-sum; under 2^20 nonzeros more than 20 a row take merge-path.
    big32 = shape(1_000_000, 250_000 * 32, std=14.0, row_max=32, empty=750_000)
    big64 = shape(1_000_000, 250_000 * 64, std=28.0, row_max=64, empty=750_000)
    small32 = shape(40_000, 10_000 * 32, std=14.0, row_max=32, empty=30_000)
    assert auto_families.classify(big32, c) == "irregular"
    assert auto_families.classify(big64, c) == "empty_long"
    assert auto_families.CURRENT["leaves"]["empty_long"] == "segmented-sum"
    assert auto_families.classify(small32, c) == "empty"
    # The semiring rule keeps its bound of 20: 32 a row is merge-path there at any size.
    assert semiring_rule.IN_CODE[auto_families.classify(big32, semiring_rule.CONSTANTS)] == "merge-path"


def test_mostly_empty_classes_match_the_cpp_rule():
    c = auto_families.CURRENT["constants"]
    # 95% empty (tests/core/auto_rule_test.cpp): rows of 32 from 2^20 nonzeros take csr-vector's group walk
    # at their own width; rows of 16, or a launch-bound product, merge-path.
    wide = shape(1_000_000, 50_000 * 32, std=7.0, row_max=32, empty=950_000)
    short = shape(1_000_000, 50_000 * 16, std=3.5, row_max=16, empty=950_000)
    small = shape(200_000, 10_000 * 64, std=14.0, row_max=64, empty=190_000)
    assert auto_families.classify(wide, c) == "empty_wide"
    assert auto_families.CURRENT["leaves"]["empty_wide"] == "csr-vector"
    assert auto_families.classify(short, c) == "empty"
    assert auto_families.classify(small, c) == "empty"


def test_dia_needs_two_to_the_twenty_nonzeros():
    small = shape(32_768, 880_000) | {"diagonals": 27, "ell_padding": 1.0}
    big = shape(729_000, 19_000_000) | {"diagonals": 27, "ell_padding": 1.0}
    assert not auto_families.repaid("dia", small, "f32", 10 ** 9)
    assert auto_families.repaid("dia", big, "f32", 1000)
