"""Where ``waza run`` writes: ``-o``, ``--output-dir``, ``--journal``, ``--resume``.

:class:`OutputTargets` holds the four flags and everything that follows from them alone:
the checks before the suite is read, the file names once its name and models are known,
and writing one results document. Nothing here knows the suite beyond its name.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.results.io import check_writable_target
from waza_core.results.model import ResultsDocument
from waza_core.results.reports import STDOUT
from waza_core.run import collisions
from waza_core.run.journal import check_new_target, check_resume_target
from waza_core.run.multimodel import per_model_path, sanitize
from waza_core.safe_write import check_target, writes_in_place

#: at most this many characters of the eval name go into a file name of --output-dir
NAME_STEM_LIMIT = 100

#: at most this many characters of a model go into a file name of --output-dir
MODEL_STEM_LIMIT = 60


@attrs.frozen
class OutputTargets:
    """The output flags of ``waza run`` as given (None: not given)."""

    output: Path | None = None  # -o PATH, or - for stdout
    output_dir: Path | None = None  # --output-dir: a new name per results file
    journal: Path | None = None  # --journal: append each finished run here
    resume: Path | None = None  # --resume: rerun only what this journal lacks, keep appending

    @property
    def to_stdout(self) -> bool:
        """``-o -``: the results document goes to stdout, everything else to stderr."""
        return self.output is not None and str(self.output) == STDOUT

    @property
    def to_file(self) -> bool:
        """Whether the results go to a file (-o PATH or --output-dir), not stdout or nowhere."""
        return self.output_dir is not None or (self.output is not None and not self.to_stdout)

    @property
    def summary_to_stderr(self) -> bool:
        """The console summary moves to stderr when the results take stdout
        (``-o /dev/stdout``), so that stdout stays valid JSON."""
        return self.output is not None and is_stdout(self.output)

    def check(self) -> None:
        """Fail before running when the results could not be written afterwards."""
        if self.output and self.output_dir:
            raise WazaError("use either -o/--output or --output-dir, not both")
        if self.output_dir is not None:
            if not self.output_dir.is_dir():
                raise WazaError(f"--output-dir {self.output_dir}: no such folder")
            if not os.access(self.output_dir, os.W_OK | os.X_OK):
                raise WazaError(f"--output-dir {self.output_dir}: folder is not writable")
        if self.output is not None and not self.to_stdout:
            check_writable_target(self.output)
        if self.resume is not None:
            if self.journal is not None and self.journal != self.resume:
                raise WazaError("--resume PATH goes on appending to PATH: give --resume alone, not with another "
                                "--journal")
            check_resume_target(self.resume)
        elif self.journal is not None:
            check_new_target(self.journal)

    def check_output_dir_name(self, eval_name: str) -> None:
        """The --output-dir file name is fixed before anything runs, so it cannot lose a
        finished run (a 300-character eval name once did: "File name too long")."""
        if self.output_dir is not None:
            check_target(self.output_dir / f"{results_file_stem(eval_name)}-00000000T000000Z-000000.json", "results")

    def check_models(self, eval_name: str, models: list[str]) -> None:
        """Before anything runs, every file of a multi-model run: ``-o F`` names one file per
        model beside ``F`` (``F_<model>``), which must be writable and short enough. A
        character device (``-o /dev/null``) takes every model's document itself: no file is
        made beside it (once ``/dev/null_<model>`` was). A FIFO or an inherited descriptor
        (``/dev/stdout``) holds one document only, as ``-o -`` does."""
        if len(models) < 2:
            return
        if self.to_stdout:
            raise WazaError("-o - writes one results document; with several models use -o FILE (one file per "
                            "model) or --output-dir")
        if self.output is not None:
            if is_device(self.output):
                return
            if writes_in_place(self.output):
                raise WazaError(f"-o {self.output} takes one results document (a FIFO or a descriptor); with "
                                "several models use -o FILE (one file per model) or --output-dir")
            for model in models:
                check_target(per_model_path(self.output, model), "results")
        if self.output_dir is not None:
            for model in models:
                name = f"{results_file_stem(eval_name)}-{model_label(model)}-00000000T000000Z-000000.json"
                check_target(self.output_dir / name, "results")

    def check_collisions(self, models: list[str], report_requests, suite) -> None:
        """No two outputs (one file per model, the journal, each reporter's file) name
        one file, and none names a file or lies in a folder of ``suite``."""
        collisions.check_outputs(collisions.run_targets(self.output, models, self.journal, self.resume,
                                                        report_requests), suite)

    def destination(self, doc: ResultsDocument, stdout=None, model: str | None = None) -> tuple[Path | None, Any]:
        """(file, stream) of a results document: ``-o -`` goes to ``stdout`` (the real one;
        the rest of the output went to stderr), else to -o or a new name in --output-dir
        (the file of ``model`` in a multi-model run: ``results_<model>.json``); (None, None):
        nowhere. :func:`waza_core.results.writer.write_results` takes both."""
        if self.to_stdout and stdout is not None:
            return None, stdout
        return self.file_for(doc, model), None

    def file_for(self, doc: ResultsDocument, model: str | None) -> Path | None:
        """The results file of ``doc`` (of ``model`` in a multi-model run), or None."""
        if self.output_dir is not None:
            stamp = doc.timestamp.replace(":", "").replace("-", "")
            label = f"-{model_label(model)}" if model is not None else ""
            return self.output_dir / (f"{results_file_stem(doc.eval_name)}{label}-{stamp}-"
                                      f"{doc.eval_id.rsplit('-', 1)[-1]}.json")
        if self.output is not None and model is not None and not is_device(self.output):
            return per_model_path(self.output, model)
        return self.output


def results_file_stem(name: str, limit: int = NAME_STEM_LIMIT) -> str:
    """A file-name-safe stem from an eval name (or a model): ASCII letters, digits,
    ``-_.`` only, no leading dot, at most ``limit`` characters (with a short hash of the
    full name when it had to be cut, so two long names stay apart)."""
    stem = "".join(c if (c.isascii() and c.isalnum()) or c in "-_." else "-" for c in name).lstrip(".")
    if len(stem) > limit:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        stem = f"{stem[:limit - 9]}-{digest}"
    return stem or "results"


def model_label(model: str) -> str:
    """The model in a file name of --output-dir: made safe and short."""
    return results_file_stem(sanitize(model), MODEL_STEM_LIMIT)


def is_device(target: Path) -> bool:
    """A character device other than an inherited descriptor (``-o /dev/null``)."""
    try:
        return stat.S_ISCHR(os.stat(target).st_mode) and writes_in_place(target) and not is_stdout(target)
    except OSError:
        return False


def is_stdout(target: Path) -> bool:
    """True when ``target`` is where stdout goes (``-o /dev/stdout``)."""
    try:
        a, b = os.stat(target), os.fstat(1)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
