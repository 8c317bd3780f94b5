"""Writing a large results file while the run goes on, in bounded memory.

A suite of 100,000 tasks has a results file of over 100 MB; building it as one
document at the end holds every run, a tree of dicts and the encoded text at once
(over a gigabyte). :class:`StreamingResultsWriter` instead encodes each task as it
finishes (:func:`waza_core.results.codec.task_to_json`, compact) into a spool (in
memory up to :data:`SPILL_BYTES`, then an anonymous file), keeps only where each task's
bytes are, and at the end writes the header (with the final summary), the tasks in plan
order and the trailer into a temporary sibling of the target that is fsynced and renamed
over it (as :func:`waza_core.results.io.write_atomic` does). The bytes are those of
:func:`waza_core.results.codec.encode_results` for a compact document.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from pathlib import Path

from waza_core.results.codec import encode_results, header_to_json, task_to_json
from waza_core.results.jsonbytes import compact_json
from waza_core.results.model import ResultsDocument, TaskResult
from waza_core.safe_write import write_file, write_stream

_COPY_CHUNK = 1 << 20
_SPOOL_BUFFER = 1 << 20
#: the spool is kept in memory up to this size (~3,000 tasks of the usual ~1.3 KB), then moved
#: to an anonymous temporary file: a run of a few thousand tasks makes no file and does not
#: import ``tempfile`` (with ``shutil``, ``random`` and ``lzma``, ~11 M instructions)
SPILL_BYTES = 4 << 20
#: a task entry is at least about this long (an entry of the mock executor is ~1.3 KB): a
#: plan of more than SPILL_BYTES / this many tasks spools to a file from the start, so the
#: peak memory of a large run has no buffer in it
SMALLEST_ENTRY_BYTES = 1024


class StreamingResultsWriter:
    """Spools finished tasks; :meth:`finish` writes the results file, :meth:`close` drops the spool."""

    def __init__(self, positions: Mapping[str, int]) -> None:
        self.positions = positions  # task id -> index in plan order
        self.offsets = array("q", [-1]) * len(positions)
        self.lengths = array("q", [0]) * len(positions)
        self.memory: bytearray | None = bytearray()  # the spool until it grows past SPILL_BYTES
        self.spool = None  # then: the file it moved to
        self.size = 0
        if len(positions) * SMALLEST_ENTRY_BYTES > SPILL_BYTES:
            self._spill()

    def add(self, task: TaskResult) -> None:
        data = compact_json(task_to_json(task))
        i = self.positions[task.test_id]
        self.offsets[i] = self.size
        self.lengths[i] = len(data)
        # each entry is followed by its separator, so tasks spooled in plan order are one
        # stretch of the results file, copied at the end in large blocks
        memory = self.memory
        if memory is not None:
            memory += data
            memory += b","
            if len(memory) > SPILL_BYTES:
                self._spill()
        else:
            spool = self.spool
            spool.write(data)
            spool.write(b",")
        self.size += len(data) + 1

    def _spill(self) -> None:
        """Move the spool from memory to an anonymous file: gone when closed, or on a crash."""
        import tempfile  # deferred: see SPILL_BYTES

        # a large buffer: ~1.3 KB per task, one write call per ~800 tasks instead of one per ~6
        self.spool = tempfile.TemporaryFile(prefix="waza-results-", buffering=_SPOOL_BUFFER)
        self.spool.write(self.memory)
        self.memory = None

    def finish(self, doc: ResultsDocument, target: str | Path) -> None:
        """Write ``target``: ``doc``'s header and trailer around the spooled tasks (``doc.tasks``
        is not read), atomically."""
        self.target = Path(target)
        header = compact_json(header_to_json(doc))
        trailer = compact_json({"incomplete": doc.incomplete, **doc.extra})

        def fill(out) -> None:
            out.write(header[:-1] + b',"tasks":[')
            self._copy_tasks(out)
            out.write(b"]," + trailer[1:] + b"\n")

        # the rules of every file waza writes: atomic for a regular file, through a link,
        # directly to a FIFO or device, the mode of an existing file kept
        write_stream(self.target, fill)

    def _copy_tasks(self, out) -> None:
        """The spooled tasks in plan order: one block per stretch of tasks that were spooled
        one after the other (the whole spool when they finished in plan order)."""
        if self.spool is not None:
            self.spool.flush()
        start, end = -1, -2  # the block being gathered: spool bytes [start, end); none yet
        first = True
        for offset, length in zip(self.offsets, self.lengths, strict=True):
            if offset < 0:
                continue  # never finished (interrupted, fail-fast)
            if offset == end + 1:  # right after the previous task and its separator
                end = offset + length
                continue
            if start >= 0:
                self._copy(out, start, end, first)
                first = False
            start, end = offset, offset + length
        if start >= 0:
            self._copy(out, start, end, first)

    def _copy(self, out, start: int, end: int, first: bool) -> None:
        if not first:
            out.write(b",")
        if self.memory is not None:
            with memoryview(self.memory) as view:
                out.write(view[start:end])
            return
        spool = self.spool
        spool.seek(start)
        length = end - start
        while length:
            chunk = spool.read(min(length, _COPY_CHUNK))
            if not chunk:
                raise OSError("the results spool file is shorter than what was written to it")
            out.write(chunk)
            length -= len(chunk)

    def close(self) -> None:
        self.memory = None
        if self.spool is not None:
            self.spool.close()


def write_results(doc: ResultsDocument, target: Path | None, stdout=None,
                  writer: StreamingResultsWriter | None = None) -> None:
    """Write one results document: to ``stdout`` when given (``-o -``), else to ``target``
    (nowhere when None): from ``writer``'s spool when the tasks were spooled as they
    finished (``doc`` then has none), else encoded whole and written atomically
    (:func:`waza_core.safe_write.write_file`)."""
    if stdout is not None:
        stdout.write(encode_results(doc))
        stdout.flush()
        return
    if target is None:
        return
    if writer is not None:
        writer.finish(doc, target)
    else:
        data = encode_results(doc)
        write_file(target, data)
