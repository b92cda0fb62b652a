"""Reading a CSV, TSV or Parquet file with every cell as text, with pyarrow.

pyarrow reads all three formats with one library, streams a CSV in blocks (so a huge file is
refused once it passes ``MAX_ROWS``, before it fills memory), hands every malformed row to a
handler with its line number (so all of them are reported, not the first), and gives a Parquet
file's row count from its metadata before any row is read. Every cell is kept as text and
trimmed; the spellings in ``NA_VALUES`` become None (missing), so what counts as a gap is
decided here, not by a parser's defaults.
"""

from __future__ import annotations

import csv
import os
from typing import Any

import numpy as np

from ..kinds.base import Problem
from .problems import Problems

__all__ = ["MAX_ROWS", "NA_VALUES", "RawTable", "missing", "read_table", "table_format"]

# A table larger than this is refused: every cell is held as text while it is encoded.
MAX_ROWS = 10_000_000
NA_VALUES = frozenset(
    ["", "NA", "N/A", "n/a", "na", "NaN", "nan", "NAN", "null", "NULL", "None", "none", "?"]
)
_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet"}


class RawTable:
    """A table as read: its ``header``, each column's cells (an object array of trimmed text,
    None where missing) and ``rows``, the number each row has in error messages (its line in a
    CSV/TSV file, whose header is line 1; its 1-based position in a Parquet file)."""

    def __init__(
        self, file: str, header: list[str], cells: dict[str, np.ndarray], rows: np.ndarray
    ) -> None:
        self.file, self.header, self.cells, self.rows = file, header, cells, rows

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, keep: np.ndarray) -> RawTable:
        """The rows where ``keep`` (a boolean mask) is True."""
        return RawTable(
            self.file, self.header, {k: v[keep] for k, v in self.cells.items()}, self.rows[keep]
        )


def table_format(path: str, format: str) -> str | None:
    """``csv``, ``tsv`` or ``parquet``: ``format`` unless ``auto``, else from the extension."""
    if format != "auto":
        return format
    return _FORMATS.get(os.path.splitext(path)[1].lower())


def read_table(path: str, format: str = "auto") -> RawTable:
    """Every cell of the table at ``path`` as text; ``DataError`` lists every problem found."""
    problems = Problems()
    kind = table_format(path, format)
    if not os.path.isfile(path):
        why = "is a folder, not a table file" if os.path.isdir(path) else "no such file"
        problems.add(Problem(path, why))
    elif kind is None:
        ext = os.path.splitext(path)[1] or "(none)"
        problems.add(
            Problem(
                path,
                f"cannot tell the format from the extension {ext}: use .csv, .tsv or "
                ".parquet, or set format: csv | tsv | parquet",
            )
        )
    problems.check()
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        problems.add(
            Problem(path, "reading a table needs pyarrow: pip install 'autogradcli[table]'")
        )
    problems.check()
    if kind == "parquet":
        table = _read_parquet(path, problems)
    else:
        table = _read_delimited(path, "\t" if kind == "tsv" else ",", problems)
    problems.check()
    assert table is not None
    return table


def _read_delimited(path: str, delimiter: str, problems: Problems) -> RawTable | None:
    """A CSV/TSV file, streamed in blocks as text; every malformed row a problem."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    header = _header(path, delimiter, problems)
    if header is None:
        return None

    def bad_row(row: Any) -> str:
        """pyarrow's handler for a malformed row: note it, skip it."""
        if "\n" in row.text:
            why = "a quoted value opened in this row is never closed (check its quotes)"
        else:
            why = f"expected {row.expected_columns} values (as in the header), found {row.actual_columns}"
        problems.add(Problem(path, why, row=row.number))
        return "skip"

    names = [f"c{i}" for i in range(len(header))]  # the header's own names may repeat
    try:
        reader = pcsv.open_csv(
            path,
            read_options=pcsv.ReadOptions(use_threads=False, skip_rows=1, column_names=names),
            parse_options=pcsv.ParseOptions(
                delimiter=delimiter, invalid_row_handler=bad_row, ignore_empty_lines=False
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                null_values=[],
            ),
        )
        batches, count = [], 0
        for batch in reader:
            count += batch.num_rows
            if count > MAX_ROWS:
                problems.add(
                    Problem(path, f"has more than {MAX_ROWS:,} rows, the most a table may have")
                )
                return None
            batches.append(batch)
    except (pa.ArrowInvalid, OSError) as err:
        problems.add(_parse_problem(path, err))
        return None
    if problems:
        return None
    table = pa.Table.from_batches(batches, schema=reader.schema)
    if len(table) == 0:
        problems.add(Problem(path, "has a header but no data rows"))
        return None
    cells = {h: _cells(table.column(i)) for i, h in enumerate(header)}
    blank = np.logical_and.reduce([missing(c) for c in cells.values()])
    out = RawTable(path, header, cells, np.arange(2, len(table) + 2, dtype=np.int64))
    return out.take(~blank) if blank.any() else out


def _header(path: str, delimiter: str, problems: Problems) -> list[str] | None:
    """The first line's names (quotes honoured); empty or repeated names are problems."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline().decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.add(Problem(path, "the header is not UTF-8 text", row=1))
        return None
    except OSError as err:
        problems.add(Problem(path, f"cannot read it: {err.strerror or err}"))
        return None
    if not first.strip():
        problems.add(
            Problem(
                path,
                "is empty" if not first else "the first line (the header) is blank",
                row=1 if first else None,
            )
        )
        return None
    header = [h.strip() for h in next(csv.reader([first], delimiter=delimiter))]
    seen: set[str] = set()
    for i, name in enumerate(header):
        if not name:
            problems.add(Problem(path, f"column {i + 1} of the header has no name", row=1))
        elif name in seen:
            problems.add(
                Problem(path, f"the header names column {name!r} twice", row=1, column=name)
            )
        seen.add(name)
    return None if problems else header


def _parse_problem(path: str, err: Exception) -> Problem:
    """A problem for a file pyarrow cannot read, with the line of the first non-UTF-8 byte."""
    text = str(err).split("\n")[0]
    if "UTF8" in text or "utf8" in text.lower():
        with open(path, "rb") as fh:
            for number, line in enumerate(fh, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as bad:
                    return Problem(
                        path, f"is not UTF-8 text (byte {line[bad.start]:#04x})", row=number
                    )
    return Problem(path, f"cannot be read as a table: {text}")


def _read_parquet(path: str, problems: Problems) -> RawTable | None:
    """A Parquet file, its row count checked from the metadata before reading."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as err:
        problems.add(Problem(path, f"is not a Parquet file ({str(err).splitlines()[0]})"))
        return None
    claimed = pf.metadata.num_rows
    if claimed > MAX_ROWS:
        problems.add(
            Problem(
                path,
                f"its metadata claims {claimed:,} rows, more than {MAX_ROWS:,}, the most a table may have",
            )
        )
        return None
    if claimed == 0:
        problems.add(Problem(path, "has no data rows"))
        return None
    header = list(pf.schema_arrow.names)
    for name in header:
        if header.count(name) > 1:
            problems.add(Problem(path, f"names column {name!r} twice", column=name))
    for field in pf.schema_arrow:
        if pa.types.is_nested(field.type) or pa.types.is_binary(field.type):
            problems.add(
                Problem(
                    path, f"has type {field.type}, not numbers, text or booleans", column=field.name
                )
            )
    if problems:
        return None
    try:
        table = pf.read()
    except (pa.ArrowException, OSError) as err:
        problems.add(Problem(path, f"cannot be read: {str(err).splitlines()[0]}"))
        return None
    if len(table) != claimed:
        problems.add(
            Problem(path, f"its metadata claims {claimed:,} rows but it holds {len(table):,}")
        )
        return None
    cells = {name: _cells(table.column(name).cast(pa.string())) for name in header}
    return RawTable(path, header, cells, np.arange(1, len(table) + 1, dtype=np.int64))


def missing(cells: np.ndarray) -> np.ndarray:
    """Where the cells of a column (as ``RawTable`` holds them) are missing."""
    return np.equal(cells, None)


def _cells(column: Any) -> np.ndarray:
    """A pyarrow text column as an object array of trimmed strings (``str.strip``: the
    characters pyarrow's ``utf8_trim_whitespace`` trims), None for a missing cell. In Python:
    ``pyarrow.compute`` takes ~45 ms to import, and ``to_numpy`` imports pandas (0.1-0.25 s)."""
    out = np.empty(len(column), dtype=object)
    out[:] = [None if v is None or (t := v.strip()) in NA_VALUES else t for v in column.to_pylist()]
    return out
