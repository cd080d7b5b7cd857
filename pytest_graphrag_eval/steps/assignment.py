"""Maximum-weight one-to-one assignment (the Hungarian method, O(n^2 m)), which greedy matching
misses when two reference steps compete for one actual step."""

from __future__ import annotations

from collections.abc import Sequence


def max_weight_assignment(weights: Sequence[Sequence[int]]) -> dict[int, int]:
    """{row: column} maximising the summed non-negative integer weights; pairs of weight <= 0 are left out."""
    rows = len(weights)
    columns = len(weights[0]) if rows else 0
    if not rows or not columns:
        return {}
    if rows == 1 or columns == 1:
        # Most groups have one step, or one candidate: the method then picks the first best
        # entry (its minimum search takes a later entry only when strictly better), as here.
        line = list(weights[0]) if rows == 1 else [row[0] for row in weights]
        best = line.index(max(line))
        if line[best] <= 0:
            return {}
        return {0: best} if rows == 1 else {best: 0}
    transposed = rows > columns
    table = [list(column) for column in zip(*weights, strict=True)] if transposed else weights
    top = max(max(row) for row in table)
    costs = [[top - weight for weight in row] for row in table]
    pairs = _min_cost_assignment(costs)
    if transposed:
        pairs = {column: row for row, column in pairs.items()}
    return {row: column for row, column in pairs.items() if weights[row][column] > 0}


def _min_cost_assignment(costs: Sequence[Sequence[int]]) -> dict[int, int]:
    """Assign every row (rows <= columns) to a distinct column at minimum total cost."""
    rows, columns = len(costs), len(costs[0])
    # Floats: the potentials start as integers but a step may subtract the infinite initial slack.
    row_potential: list[float] = [0] * (rows + 1)
    column_potential: list[float] = [0] * (columns + 1)
    owner = [0] * (columns + 1)  # 1-based row owning each column; 0 = free
    previous = [0] * (columns + 1)
    for row in range(1, rows + 1):
        owner[0] = row
        current = 0
        slack = [float("inf")] * (columns + 1)
        visited = [False] * (columns + 1)
        while True:
            visited[current] = True
            owner_row = owner[current]
            delta = float("inf")
            next_column = 0
            for column in range(1, columns + 1):
                if visited[column]:
                    continue
                reduced = (
                    costs[owner_row - 1][column - 1] - row_potential[owner_row] - column_potential[column]
                )
                if reduced < slack[column]:
                    slack[column] = reduced
                    previous[column] = current
                if slack[column] < delta:
                    delta = slack[column]
                    next_column = column
            for column in range(columns + 1):
                if visited[column]:
                    row_potential[owner[column]] += delta
                    column_potential[column] -= delta
                else:
                    slack[column] -= delta
            current = next_column
            if owner[current] == 0:
                break
        while current:
            back = previous[current]
            owner[current] = owner[back]
            current = back
    return {owner[column] - 1: column - 1 for column in range(1, columns + 1) if owner[column]}
