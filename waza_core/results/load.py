"""Open a saved results file: the light outline when it can, the full tolerant read otherwise.

The entry points of ``waza report``, ``gate`` and ``compare``. They stand above the
pieces they join: the bytes reader (:mod:`waza_core.results.io`), the light reading
(:mod:`waza_core.results.outline`), the tolerant decoder and normalizer
(:mod:`waza_core.results.reading`) and the reporters' view
(:mod:`waza_core.results.reporting`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from waza_core.errors import WazaError
from waza_core.results.io import parse_json_document, read_bytes
from waza_core.results.outline import outline
from waza_core.results.reading import OPTIMIZER_REPORT_KIND, decode, normalize
from waza_core.results.reporting import ResultsView
from waza_core.results.stream import stream


def document_from_bytes(data: bytes, path: str | Path) -> dict[str, Any]:
    """A results file's bytes (decoded, then normalized) or an optimizer ``report.json`` (as is)."""
    doc = parse_json_document(data, path)
    if doc.get("kind") == OPTIMIZER_REPORT_KIND:
        return doc
    return normalize(decode(doc, str(path)), str(path))


def open_results(path: str | Path) -> ResultsView:
    """``path`` (a results file or an optimizer report) as a :class:`ResultsView` for reporters.

    The view keeps the file's bytes and reads them one task at a time
    (:mod:`waza_core.results.stream`: a markdown or JUnit report of 500,000 runs in bounded
    memory); the light :func:`~waza_core.results.outline.outline` is made only if a
    reporter asks for it (the HTML reporter), and the full document only if a reporter
    asks for that (the JSON reporter), so ``waza report BIG.json --html`` never decodes
    the outputs and transcripts it only copies.
    """
    data = read_bytes(path)
    streamed = stream(data, str(path))
    if streamed is None:
        return ResultsView(document_from_bytes(data, path))
    return ResultsView(source=data, streamed=streamed, load=lambda: document_from_bytes(data, path))


def read_results(path: str | Path, light: bool = False) -> dict[str, Any]:
    """A results file, decoded and normalized; an optimizer report is refused with a clear message.

    ``light``: only the fields a summary reads (statuses, scores, stats, golden marks,
    durations, tokens, grader verdicts and feedback) when the file allows the light
    reading (:mod:`waza_core.results.outline`), which costs a fraction of a full one; what
    it gives of those fields is exactly what the full read gives.
    """
    data = read_bytes(path)
    if light:
        short = outline(data, str(path))
        if short is not None:
            return short.document
    doc = parse_json_document(data, path)
    if doc.get("kind") == OPTIMIZER_REPORT_KIND:
        raise WazaError(f"{path} is a `waza optimize` report, not a results file; "
                        "its evaluations' results files are under evidence/ beside it")
    return normalize(decode(doc, str(path)), str(path))
