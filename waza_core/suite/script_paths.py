"""Scripts named by program graders and hooks: checked when the suite loads.

A relative script path (``python3 graders/check.py``, ``./check.sh``) is resolved from
the working folder, as in waza (Go), so a suite run from another folder used to fail at
grading time with ``can't open file`` and the agent got the blame. The loader now checks
every such path at ``waza validate`` and ``waza run`` start: a missing script is a load
error (exit 2), and when the script is beside ``eval.yaml`` instead the message says so
and how to fix it: the ``{suite_dir}`` placeholder (the folder of ``eval.yaml``, as the
``cli`` executor has) in the grader's ``command``/``args`` or the hook's ``command``.

Only the script itself is checked: ``command`` when it contains a ``/``, else the first
argument that is not an option when ``command`` is a known interpreter (``python3``,
``node``, ``bash`` ...) and no ``-m``/``-c``/``-e`` comes first. Programs looked up on
PATH and other arguments are left alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from waza_core.lazy_re import LazyPattern

#: the placeholder replaced by the folder of eval.yaml in program grader and hook commands
SUITE_DIR = "{suite_dir}"
#: interpreters whose first non-option argument is the script they run
INTERPRETERS = frozenset({"python", "python3", "py", "node", "bash", "sh", "zsh", "dash", "ruby",
                          "perl", "pwsh", "powershell", "deno", "bun", "tsx", "php", "Rscript"})
_VERSIONED = LazyPattern(r"^(python|pypy)[0-9.]*$")
#: options after which the interpreter runs code or a module, not a script file
_NO_SCRIPT = frozenset({"-m", "-c", "-e", "--eval", "-Command", "-command", "run"})


def expand(text: str, suite_dir: str) -> str:
    """``text`` with ``{suite_dir}`` replaced by the folder of eval.yaml."""
    return text.replace(SUITE_DIR, suite_dir) if SUITE_DIR in text else text


def script_of(argv: Sequence[str]) -> str | None:
    """The script file a command runs, or None (a program on PATH, ``python -m x``)."""
    if not argv:
        return None
    prog = argv[0]
    name = os.path.basename(prog).removesuffix(".exe")
    if name not in INTERPRETERS and not _VERSIONED.match(name):
        return prog if "/" in prog or os.sep in prog else None
    for arg in argv[1:]:
        if arg in _NO_SCRIPT:
            return None
        if not arg.startswith("-"):
            return arg
    return None


def problem(argv: Sequence[str], suite_dir: Path, base: str | None = None) -> str | None:
    """Why the script of ``argv`` cannot be found, with the fix; None when it exists.

    ``argv`` has ``{suite_dir}`` already expanded; ``base`` is the folder a relative path is
    resolved from (a hook's ``working_directory``), the working folder when None."""
    script = script_of(argv)
    if script is None:
        return None
    where = Path(base) if base else Path.cwd()
    target = Path(script) if os.path.isabs(script) else where / script
    if target.exists():
        return None
    if os.path.isabs(script):
        return f"script {script!r} does not exist"
    beside = suite_dir / script
    shown_base = "the working folder" if base is None else f"working_directory {base!r}"
    if beside.exists():
        return (f"script {script!r} does not exist from {shown_base} ({where.absolute()}) but does beside "
                f"eval.yaml ({beside}): write '{SUITE_DIR}/{script}' instead (relative paths are resolved "
                "from where waza runs, as in waza (Go)), or run waza from the suite's folder")
    return (f"script {script!r} does not exist (looked in {shown_base}, {where.absolute()}, and beside "
            f"eval.yaml, {suite_dir}); relative paths are resolved from where waza runs; "
            f"'{SUITE_DIR}/...' names a file beside eval.yaml")
