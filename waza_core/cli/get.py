"""``waza get``: resolve grader refs into the module cache and write waza.lock (waza_core.suite.get)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from waza_core.cli.common import user_errors
from waza_core.paths import display_path


def register(app: typer.Typer) -> None:
    app.command("get")(get)


@user_errors
def get(
    target: str = typer.Argument("eval.yaml", help="An eval YAML file (its graders[].ref entries) or one ref "
                                 "<host>/<owner>/<repo>[/path][#export]@<version>."),
    source: List[str] = typer.Option([], "--source", metavar="MODULE=LOCATION",
                                     help="Fetch module HOST/OWNER/REPO from LOCATION (a Git URL, a local Git "
                                          "repository or a plain folder) instead of https://HOST/OWNER/REPO.git "
                                          "(repeatable)."),
) -> None:
    """Resolve remote grader refs and update waza.lock.

    Given an eval YAML file, resolves every graders[].ref, unpacks each module into the
    module cache ($WAZA_MODULE_CACHE, default ~/.waza/cache) and writes waza.lock beside
    the eval; given one ref, writes waza.lock in the current folder. Exit 0 on success,
    2 when a ref cannot be resolved or loaded.
    """
    # deferred: waza_core.suite adds ~74.8 ms to importing this module
    from waza_core.suite import get as getter

    count, lock = getter.run_get(target, getter.parse_sources(source), Path.cwd())
    typer.echo(f"Resolved {count} remote grader ref(s); wrote {display_path(lock)}")
