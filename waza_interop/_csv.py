"""CSV as promptfoo reads test files (csv-parse with ``columns: true``, ``bom: true``),
keeping the line and column where each field starts, for messages that point at a cell.

Quotes follow RFC 4180 (``""`` inside a quoted field). What csv-parse accepts only in its
relaxed retry (a quote inside an unquoted field) and rows whose length differs from the
header's are refused: promptfoo would read them differently or fail.
"""

from __future__ import annotations


class CsvError(ValueError):
    def __init__(self, message: str, line: int, col: int):
        super().__init__(message)
        self.line = line
        self.col = col


Field = tuple[str, int, int]  # value, line, column (1-based)


def read_csv(text: str) -> tuple[list[Field], list[list[Field]]]:
    """(header fields, rows of fields)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    records = _records(text)
    if not records:
        raise CsvError("the file is empty", 1, 1)
    header, rows = records[0], records[1:]
    names = [f[0] for f in header]
    for f in header:
        if names.count(f[0]) > 1:
            raise CsvError(f"the column {f[0]!r} appears twice", f[1], f[2])
    for row in rows:
        if len(row) != len(header):
            raise CsvError(f"the row has {len(row)} field(s), the header {len(header)}", row[0][1], row[0][2])
    return header, rows


def _records(text: str) -> list[list[Field]]:
    records: list[list[Field]] = []
    row: list[Field] = []
    i, n, line, col = 0, len(text), 1, 1
    while i < n or row:
        start_line, start_col = line, col
        if i < n and text[i] == '"':
            i += 1
            col += 1
            buf = []
            while True:
                if i >= n:
                    raise CsvError("a quoted field is not closed", start_line, start_col)
                ch = text[i]
                if ch == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        col += 2
                        continue
                    i += 1
                    col += 1
                    break
                buf.append(ch)
                i += 1
                if ch == "\n":
                    line, col = line + 1, 1
                else:
                    col += 1
            value = "".join(buf)
            if i < n and text[i] not in ",\r\n":
                raise CsvError("text after a closing quote", line, col)
        else:
            j = i
            while j < n and text[j] not in ",\r\n":
                if text[j] == '"':
                    raise CsvError("a quote inside an unquoted field", line, col + (j - i))
                j += 1
            value = text[i:j]
            col += j - i
            i = j
        row.append((value, start_line, start_col))
        if i < n and text[i] == ",":
            i += 1
            col += 1
            if i >= n:
                row.append(("", line, col))
                records.append(row)
                row = []
            continue
        # end of record
        if i < n and text[i] == "\r":
            i += 1
        if i < n and text[i] == "\n":
            i += 1
        line, col = line + 1, 1
        if not (len(row) == 1 and row[0][0] == "" and i >= n):
            records.append(row)
        row = []
        if i >= n:
            break
    return records
