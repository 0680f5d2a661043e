"""Pages of a DynamicTable (electrodes, units, trials, epochs, plane segmentations...) as plain data.

A page reads only its rows of each column (a contiguous page: one slice per column). Ragged columns show
each row's values (the first :data:`CELL_ITEMS`, and how many more), region and reference columns show
what they point at with its path to jump to, and columns of arrays (image masks) show their shape only.
Sorting by a column reads that column whole, so it is refused beyond :data:`SORT_ROWS` rows or
:data:`~.budget.REQUEST_BYTES`. A page is bounded in bytes too: at most :data:`PAGE_COLUMNS` columns and
:data:`PAGE_CELLS` cells (a table of many columns gets fewer rows), each text cut to :data:`CELL_CHARS`, no
chunk decoded past the budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ViewRequestError
from . import budget
from .tree import plain
from .viewed_file import ViewedFile

#: Rows of one page, at most.
PAGE_ROWS = 500
#: Values of one ragged cell shown, at most.
CELL_ITEMS = 10
#: Rows a sort reads, at most (the whole column is read to sort it).
SORT_ROWS = 2_000_000
#: Elements a cell of a multi-dimensional column may hold to be shown (larger ones show their shape).
CELL_ELEMENTS = 16
#: Cells of one page, at most (columns times rows).
PAGE_CELLS = 10_000
#: Characters of one text cell sent, at most.
CELL_CHARS = 500
#: Columns of one page, at most (the page says how many the table has).
PAGE_COLUMNS = 200
#: Bytes of a ragged column read by one request for the cells of neighbouring rows, at most (a million float64
#: spike times): a page of a Units table read the chunk of its spike times once per row, 50 times for 50 rows.
SPAN_BYTES = 8 * 2**20


def table_page(
    opened: ViewedFile,
    path: str,
    start: int = 0,
    count: int = 50,
    sort: str | None = None,
    descending: bool = False,
    where: str | None = None,
    equals: str = "",
) -> dict[str, Any]:
    """Rows ``start:start+count`` of the table at ``path`` (in the order of column ``sort`` if given; only the
    rows whose column ``where`` matches ``equals`` if given, see :func:`_matching`)."""
    from hdmf.common import DynamicTable

    table = opened.container_at(path)
    if not isinstance(table, DynamicTable):
        raise ViewRequestError(f"a {type(table).__name__} is no table", path)
    if start < 0 or not 0 < count <= PAGE_ROWS:
        raise ViewRequestError(f"a page starts at a row >= 0 and has 1 to {PAGE_ROWS} rows", path)
    total = len(table.id)
    names = ["id", *table.colnames]
    for asked in (sort, where):
        if asked is not None and asked not in names:
            raise ViewRequestError(f"the table has no column {asked[:40]!r}", path)
    column_count = len(names)
    names = names[:PAGE_COLUMNS]  # a table of 100,000 columns: its first columns, each read for a few rows
    count = max(1, min(count, PAGE_CELLS // len(names)))
    matched = None
    if sort is None and where is None:  # the page's rows only: a table of 2**28 rows is no array of 2**28 rows
        first = total - 1 - start if descending else start
        rows = (
            np.arange(first, max(first - count, -1), -1) if descending else np.arange(start, min(total, start + count))
        )
    else:  # a sort or a filter reads its column whole (within SORT_ROWS): the rows are known in full
        order = _order(opened, table, sort, path) if sort is not None else np.arange(total)
        if where is not None:
            order = order[np.isin(order, _matching(opened, table, where, equals, path))]
            matched = len(order)
        rows = (order[::-1] if descending else order)[start : start + count]
    columns = []
    cells = []
    for name in names:
        column = table.id if name == "id" else table[name]
        described, values = _column(opened, column, rows)
        columns.append({"name": name, **described})
        cells.append(values)
    return {
        "path": path,
        "rows": total,
        "start": start,
        "sort": sort,
        "descending": descending,
        "where": where,
        "equals": equals if where is not None else None,
        "matched": matched,
        "column_count": column_count,
        "row_numbers": [int(r) for r in rows],
        "columns": columns,
        "data": [list(row) for row in zip(*cells)] if cells else [],
    }


def _column(opened: ViewedFile, column: Any, rows: np.ndarray) -> tuple[dict[str, Any], list[Any]]:
    """What the column is (``kind``, and the table a region points into) and its cells in ``rows``."""
    from hdmf.common import DynamicTableRegion, VectorIndex

    if isinstance(column, VectorIndex):
        return _ragged(opened, column, rows)
    budget.check_chunks(column.data, "")
    if isinstance(column, DynamicTableRegion):
        target = opened.path_of(column.table)
        return {"kind": "region", "target": target}, [
            {"text": f"{column.table.name}[{int(v)}]", "ref": target, "row": int(v)} for v in _read(column.data, rows)
        ]
    shape = getattr(column.data, "shape", None) or (len(column.data),)
    if len(shape) > 1 and int(np.prod(shape[1:])) > CELL_ELEMENTS:  # e.g. image masks: not read
        text = "[" + "×".join(str(n) for n in shape[1:]) + f" {getattr(column.data, 'dtype', '')}]"
        return {"kind": "array", "shape": [int(n) for n in shape]}, [text] * len(rows)
    return {"kind": "values"}, [_cell(opened, v) for v in _read(column.data, rows)]


def _ragged(opened: ViewedFile, index: Any, rows: np.ndarray) -> tuple[dict[str, Any], list[Any]]:
    from hdmf.common import DynamicTableRegion, VectorIndex

    target = index.target
    budget.check_chunks(target.data, "")
    ends = _read(index.data, rows)
    starts = [0 if r == 0 else int(v) for r, v in zip(rows, _read(index.data, np.maximum(rows - 1, 0)))]
    described: dict[str, Any] = {"kind": "ragged"}
    if isinstance(target, DynamicTableRegion):
        described.update(kind="ragged region", target=opened.path_of(target.table))
    counts_only = isinstance(target, VectorIndex) or _large_rows(target.data)  # doubly ragged, arrays
    ends = [int(hi) for hi in ends]
    shown = [(lo, min(hi, lo + CELL_ITEMS)) for lo, hi in zip(starts, ends)]
    values = [[]] * len(shown) if counts_only else _spans(target.data, shown)
    cells = []
    for (lo, _), hi, items in zip(shown, ends, values):
        if counts_only:
            kind = "lists" if isinstance(target, VectorIndex) else "arrays"
            cells.append({"text": f"[{hi - lo} {kind}]", "count": hi - lo})
        elif isinstance(target, DynamicTableRegion):
            where = described["target"]
            rows_of = [{"text": f"{target.table.name}[{int(v)}]", "ref": where, "row": int(v)} for v in items]
            cells.append({"items": rows_of, "count": hi - lo})
        else:
            cells.append({"items": [_cell(opened, v) for v in items], "count": hi - lo})
    return described, cells


def _spans(data: Any, bounds: list[tuple[int, int]]) -> list[Any]:
    """``data[lo:hi]`` for each ``(lo, hi)`` of ``bounds`` (empty when ``hi <= lo``): the spans of neighbouring
    rows read together, each request covering at most :data:`SPAN_BYTES`."""
    most = max(1, SPAN_BYTES // (budget.item_bytes(data) * _row_elements(data)))
    found: list[Any] = [[] for _ in bounds]
    wanted = sorted((lo, hi, i) for i, (lo, hi) in enumerate(bounds) if hi > lo)
    runs: list[list[tuple[int, int, int]]] = []
    for item in wanted:  # (a negative start, which only a damaged index gives, is read alone, as a slice reads it)
        if runs and item[0] >= 0 and runs[-1][0][0] >= 0 and item[1] - runs[-1][0][0] <= most:
            runs[-1].append(item)
        else:
            runs.append([item])
    for run in runs:
        first, last = run[0][0], max(hi for _, hi, _ in run)
        block = data[first:last]
        for lo, hi, i in run:
            found[i] = block[lo - first : hi - first]
    return found


def _large_rows(data: Any) -> bool:
    """Whether a row of ``data`` holds more than :data:`CELL_ELEMENTS` elements (then it is not read)."""
    return _row_elements(data) > CELL_ELEMENTS


def _row_elements(data: Any) -> int:
    """Elements in one row of ``data`` (1 for a column of scalars)."""
    shape = getattr(data, "shape", None) or (len(data),)
    return int(np.prod(shape[1:]))


def _read(data: Any, rows: np.ndarray) -> list[Any]:
    """``data[rows]``: one slice when the rows are close together, else one read per row."""
    if len(rows) == 0:
        return []
    lo, hi = int(rows.min()), int(rows.max()) + 1
    if hi - lo <= max(4 * len(rows), 256):
        block = data[lo:hi]
        return [block[int(r) - lo] for r in rows]
    return [data[int(r)] for r in rows]


def _cell(opened: ViewedFile, value: Any) -> Any:
    """One cell: numbers and text as they are, an object it refers to as its name and path."""
    if hasattr(value, "object_id") and hasattr(value, "name"):  # a reference resolved to a container
        return {"text": value.name, "ref": opened.path_of(value)}
    parts: Any = (
        tuple(value.tolist() if isinstance(value, np.void) else value) if isinstance(value, (tuple, np.void)) else ()
    )
    if len(parts) == 3 and hasattr(parts[2], "object_id"):
        start, count, series = parts  # TimeSeriesReferenceVectorData: (idx_start, count, timeseries)
        return {"text": f"{series.name}[{int(start)}:{int(start) + int(count)}]", "ref": opened.path_of(series)}
    shown = plain(value)
    return shown[:CELL_CHARS] if isinstance(shown, str) else shown


def _order(opened: ViewedFile, table: Any, name: str, path: str) -> np.ndarray:
    """The row order that sorts the table by column ``name`` (ragged columns by their length)."""
    return np.argsort(_keys(opened, table, name, path, "sorted"), kind="stable")


def _matching(opened: ViewedFile, table: Any, name: str, text: str, path: str) -> np.ndarray:
    """The rows whose value in column ``name`` matches ``text``: a number equal to it, a text (or the name of what
    a cell refers to) containing it in any case; a ragged column's rows by their length."""
    keys = _keys(opened, table, name, path, "filtered")
    if isinstance(keys, np.ndarray) and keys.dtype.kind in "biuf":
        try:
            return np.flatnonzero(keys == float(text))
        except ValueError:
            raise ViewRequestError(f"column {name!r} holds numbers: {text[:40]!r} is none", path) from None
    wanted = text.casefold()
    return np.array([i for i, key in enumerate(keys) if wanted in str(key).casefold()], dtype=np.int64)


def _keys(opened: ViewedFile, table: Any, name: str, path: str, doing: str) -> Any:
    """The values of column ``name`` to sort or filter by, read whole (at most :data:`SORT_ROWS` rows)."""
    from hdmf.common import VectorIndex

    total = len(table.id)
    if total > SORT_ROWS:
        raise ViewRequestError(
            f"a table of {total} rows is not {doing} here (at most {SORT_ROWS})", path, status=budget.TOO_LARGE
        )
    column = table.id if name == "id" else table[name]
    shape = getattr(column.data, "shape", None) or (len(column.data),)
    if len(shape) > 1:
        raise ViewRequestError(f"column {name!r} holds arrays: it cannot be {doing}", path)
    budget.check_read(column.data, min(total, len(column.data)), path, f"column {name!r}")
    budget.check_chunk_count(column.data, [(total, total)], path, f"column {name!r} {doing}")
    values = column.data[:total]
    if isinstance(column, VectorIndex):
        keys: Any = np.diff(np.asarray(values, dtype=np.int64), prepend=0)
    elif isinstance(values, np.ndarray) and values.dtype.kind in "biuf":  # numbers sort as they are (NaN last)
        keys = values
    else:
        keys = [_sort_key(opened, v) for v in values]
        keys = np.asarray(keys, dtype=object if any(isinstance(k, str) for k in keys) else None)
    return keys


def _sort_key(opened: ViewedFile, value: Any) -> Any:
    cell = _cell(opened, value)
    if isinstance(cell, dict):
        return str(cell.get("text"))
    return cell if isinstance(cell, (int, float, str)) else str(cell)
