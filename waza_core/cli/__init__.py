"""The ``waza`` command line.

``waza --version`` is answered before typer is imported, and command modules import
their heavy libraries inside the command functions, so ``--help`` stays fast.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from waza_core._version import __version__

        print(f"waza {__version__}")
        raise SystemExit()  # ExitCode.OK, without importing enum on the fastest path
    from waza_core.cli.app import build_app

    app = build_app()
    app(args=args, prog_name="waza")
