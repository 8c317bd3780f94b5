#!/usr/bin/env python3
"""Write the real ``--help`` text of every ``waza`` command into docs/cli.md.

Each command's help lives in docs/cli.md as a block

    ```console
    $ waza run --help
    ...the help, exactly as the command prints it at 80 columns...
    ```

This script rewrites the inside of every such block from the command itself, and adds
a section with a block for a command that has none yet (a new command lands under
its parent's section, a new top-level command before "## Exit codes", unless a heading
"## waza NAME" exists already: then right under it; move and describe it as you like, the
block is found wherever it is). The prose around the
blocks is left alone.

    python scripts/gen_cli_docs.py          # update docs/cli.md
    python scripts/gen_cli_docs.py --check  # exit 1 and show what is stale

tests/api/test_cli_docs.py runs the check, so a flag added without re-running this
script fails the tests with a message that says to run it.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: WAZA_CLI_DOC points the script at another copy (its own tests use that)
DOC = Path(os.environ.get("WAZA_CLI_DOC") or ROOT / "docs" / "cli.md")
#: the help as a terminal of 80 columns shows it (click leaves 2 columns free)
WIDTH = 80
BLOCK = re.compile(r"```console\n\$ waza(?P<path>(?: [a-z][a-z0-9-]*)*) --help\n(?P<body>.*?)```", re.S)
FIX_HINT = "run `python scripts/gen_cli_docs.py` to regenerate docs/cli.md from the real --help text"
#: ``waza --help`` and each command's, served without importing typer (see waza_core.cli.main)
TOP_HELP = ROOT / "waza_core" / "cli" / "top_help.py"


def top_help_module(helps: dict[tuple[str, ...], str]) -> str:
    """The source of waza_core/cli/top_help.py: ``waza --help`` as ``TEXT`` and every
    command's ``--help`` in ``HELPS`` (by the command's words, ``"optimize run"``)."""
    out = ['"""``waza --help`` and every ``waza COMMAND --help`` at 80 columns, written by\n'
           "scripts/gen_cli_docs.py: do not edit.\n\n"
           "Printed by :func:`waza_core.cli.main` without importing typer (~100 ms); a test\n"
           'keeps them equal to what typer prints."""\n\n',
           "TEXT = (\n" + "".join(f"    {line!r}\n" for line in helps[()].splitlines(True)) + ")\n\n",
           "HELPS = {\n"]
    for path in sorted(p for p in helps if p):
        lines = "".join(f"        {line!r}\n" for line in helps[path].splitlines(True))
        out.append(f"    {' '.join(path)!r}: (\n{lines}    ),\n")
    out.append("}\n")
    return "".join(out)


def command_helps() -> dict[tuple[str, ...], str]:
    """Every command path (``()`` for ``waza`` itself) and its help text at WIDTH columns."""
    import typer  # typer >= 0.28 ships its own copy of click: reach it through the command objects

    sys.path.insert(0, str(ROOT))
    from waza_core.cli.app import build_app

    root = typer.main.get_command(build_app())
    helps: dict[tuple[str, ...], str] = {}

    def walk(cmd, path: tuple[str, ...], parent) -> None:
        ctx = cmd.context_class(cmd, info_name=path[-1] if path else "waza", parent=parent,
                                terminal_width=WIDTH - 2, max_content_width=WIDTH)
        helps[path] = ctx.get_help().rstrip("\n") + "\n"
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, path + (name,), ctx)

    walk(root, (), None)
    return helps


def render(text: str, helps: dict[tuple[str, ...], str]) -> str:
    """``text`` with every help block rewritten and missing ones added."""
    seen: set[tuple[str, ...]] = set()

    def replace(match: re.Match) -> str:
        path = tuple(match["path"].split())
        seen.add(path)
        if path not in helps:  # a block for a command that is gone: keep it, the check reports it
            return match[0]
        return f"```console\n$ {_name(path)} --help\n{helps[path]}```"

    text = BLOCK.sub(replace, text)
    for path in sorted(helps, key=len):
        if path not in seen:
            text = _insert(text, path, helps[path])
    return text


def _insert(text: str, path: tuple[str, ...], help_text: str) -> str:
    block = f"```console\n$ {_name(path)} --help\n{help_text}```\n"
    heading = re.search(rf"^#{{2,4}} {re.escape(_name(path))}\n", text, re.M)
    if heading:  # a section for the command exists: its help goes first in it
        return text[:heading.end()] + "\n" + block + text[heading.end():]
    level = "#" * (1 + len(path))
    section = f"{level} {_name(path)}\n\n```console\n$ {_name(path)} --help\n{help_text}```\n\n"
    parent = f"\n{'#' * len(path)} {_name(path[:-1])}\n" if len(path) > 1 else None
    start = text.find(parent) if parent else -1
    if start >= 0:
        nxt = text.find("\n## ", start + len(parent) - 1)
        at = nxt + 1 if nxt >= 0 else len(text)
    else:
        at = text.find("## Exit codes")
        at = at if at >= 0 else len(text)
    return text[:at] + section + text[at:]


def stale_paths(text: str, helps: dict[tuple[str, ...], str]) -> list[str]:
    """Human descriptions of what differs between docs/cli.md and the commands."""
    found = {tuple(m["path"].split()): m["body"] for m in BLOCK.finditer(text)}
    problems = [f"`{_name(p)} --help` is not in docs/cli.md" for p in helps if p not in found]
    problems += [f"docs/cli.md shows `{_name(p)} --help`, but there is no such command"
                 for p in found if p not in helps]
    problems += [f"the help of `{_name(p)}` in docs/cli.md is out of date"
                 for p, body in found.items() if p in helps and body != helps[p]]
    return problems


def _name(path: tuple[str, ...]) -> str:
    return " ".join(("waza",) + path)


def main(argv: list[str]) -> int:
    helps = command_helps()
    text = DOC.read_text("utf-8")
    new = render(text, helps)
    if "--check" in argv:
        if new == text and TOP_HELP.exists() and TOP_HELP.read_text("utf-8") == top_help_module(helps):
            return 0
        sys.stderr.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                   "docs/cli.md", "docs/cli.md (regenerated)"))
        sys.stderr.write(f"\ndocs/cli.md is stale: {FIX_HINT}\n")
        return 1
    if new != text:
        DOC.write_text(new, "utf-8")
        print("docs/cli.md updated")
    module = top_help_module(helps)
    if not TOP_HELP.exists() or TOP_HELP.read_text("utf-8") != module:
        TOP_HELP.write_text(module, "utf-8")
        print("waza_core/cli/top_help.py updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
