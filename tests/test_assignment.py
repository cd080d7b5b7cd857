"""The one-row and one-column shortcut of the assignment gives what the Hungarian method gives."""

from __future__ import annotations

import random

import pytest

from pytest_graphrag_eval.steps.assignment import _min_cost_assignment, max_weight_assignment


def by_the_method(weights: list[list[int]]) -> dict[int, int]:
    """The general path, for any shape: transposed to rows <= columns, then minimum cost."""
    transposed = len(weights) > len(weights[0])
    table = [list(column) for column in zip(*weights, strict=True)] if transposed else weights
    top = max(max(row) for row in table)
    pairs = _min_cost_assignment([[top - weight for weight in row] for row in table])
    if transposed:
        pairs = {column: row for row, column in pairs.items()}
    return {row: column for row, column in pairs.items() if weights[row][column] > 0}


@pytest.mark.parametrize("seed", range(200))
def test_a_single_row_or_column_is_assigned_as_the_method_does(seed: int) -> None:
    rng = random.Random(seed)
    length = rng.randint(1, 6)
    line = [rng.choice([0, 0, 3, 5, 5, 7]) for _ in range(length)]  # ties and zeros on purpose
    for weights in ([line], [[weight] for weight in line]):
        assert max_weight_assignment(weights) == by_the_method(weights)


def test_the_first_of_equal_best_weights_is_chosen() -> None:
    assert max_weight_assignment([[0, 4, 4]]) == {0: 1}
    assert max_weight_assignment([[0], [4], [4]]) == {1: 0}
    assert max_weight_assignment([[0, 0]]) == {}
