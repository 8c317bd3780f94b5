"""One policy for the environment of the programs waza starts: graders, hooks, CLI
agents (``executor: cli``) and the optimizer's ``command`` adapter. Each of them builds
its child's environment with :func:`child_environment`; the only difference between them
is which baseline passes with an allow-list: :data:`BASELINE` for all but the adapter,
:data:`ADAPTER_ENV_BASELINE` (the seed's exact list) for the adapter.

By default a child gets **waza's whole environment**: that is waza (Go)'s behaviour
and the trust model of the program-grader seed page, and existing graders rely on it
(a grader that calls an API reads its key from the environment). The price is that
every secret of the shell (``GITHUB_TOKEN``, cloud keys) reaches every grader.

An **allow-list** is the opt-in alternative: ``env: [NAME, PREFIX_*, ...]`` on a
program grader's config, or a default for all of them in ``.waza.yaml``
(``graders.env``; ``hooks.env`` for suite hooks). With an allow-list a child sees
only

* the :data:`BASELINE` names a program needs to start and behave (``PATH``,
  ``HOME``, the locale, ``TMPDIR``, ...), when waza has them;
* the names the list allows (``*`` and ``?`` are wildcards; ``AWS_*`` allows every
  name that starts with ``AWS_``);
* what waza itself sets for the child (``WAZA_WORKSPACE_DIR``, ``WAZA_GRADING_CONTEXT``).

An empty list (``env: []``) means: the baseline only.

A CLI agent always has an allow-list (its ``env``: the baseline plus what it names); the
``command`` adapter too (``--adapter-env``: exactly :data:`ADAPTER_ENV_BASELINE` plus the
names given, nothing else: the seed's contract).
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

from waza_core.lazy_re import LazyPattern

#: passed even with an allow-list: what a program needs to start and behave as in a shell
#: (the locale, temp folders, the Windows system names, XDG folders, a custom CA bundle)
BASELINE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TERM",
            "TMPDIR", "TEMP", "TMP", "SYSTEMROOT", "PATHEXT", "COMSPEC", "WINDIR", "XDG_*",
            "SSL_CERT_FILE", "SSL_CERT_DIR")

#: the optimizer's ``command`` adapter: exactly these (the seed's contract), plus ``--adapter-env``
ADAPTER_ENV_BASELINE = ("PATH", "HOME", "USERPROFILE", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL")

_NAME = LazyPattern(r"^[A-Za-z_*?][A-Za-z0-9_*?]*$")


def check_allow_list(value: Any) -> str | None:
    """Why ``value`` is not an allow-list (a list of names or ``PREFIX_*`` patterns), or None."""
    if not isinstance(value, list):
        return f"must be a list of environment variable names, got {type(value).__name__}"
    for item in value:
        if not isinstance(item, str) or not _NAME.match(item):
            return (f"{item!r} is not an environment variable name (letters, digits and _, "
                    "with * or ? as wildcards)")
    return None


def child_environment(allow: Sequence[str] | None, extra: Mapping[str, str] | None = None,
                      base: Mapping[str, str] | None = None, drop: Sequence[str] = (),
                      baseline: Sequence[str] = BASELINE) -> dict[str, str]:
    """The environment of one child.

    ``allow`` None: all of ``base`` (default ``os.environ``); a list: only the
    ``baseline`` names (:data:`BASELINE`, or :data:`ADAPTER_ENV_BASELINE` for the
    optimizer's adapter) and those ``allow`` matches. ``drop`` names are removed either
    way (e.g. values waza sets itself), then ``extra`` is added.
    """
    source = os.environ if base is None else base
    if allow is None:
        env = {k: v for k, v in source.items() if k not in drop}
    else:
        env = {k: v for k, v in allowed(source, [*baseline, *allow]).items() if k not in drop}
    if extra:
        env.update(extra)
    return env


def allowed(source: Mapping[str, str], patterns: Sequence[str]) -> dict[str, str]:
    """The variables of ``source`` whose names match one of ``patterns`` (exact names, or
    :func:`fnmatch.fnmatchcase` patterns: ``*``, ``?``, ``[...]``; case-sensitive)."""
    exact = {p for p in patterns if not any(c in p for c in "*?[")}
    wild = [p for p in patterns if p not in exact]
    return {k: v for k, v in source.items() if k in exact or any(fnmatch.fnmatchcase(k, p) for p in wild)}


def project_allow_list(section: str, start: str | os.PathLike[str] | None = None) -> list[str] | None:
    """The default allow-list of ``.waza.yaml`` for ``section`` (``graders`` or
    ``hooks``): ``<section>.env``, or None when not set. A bad value is a WazaError."""
    # deferred: waza_core.suite adds ~8.6 ms to importing this module
    from waza_core.suite import project_config

    path = project_config.find(start)
    if path is None:
        return None
    try:
        st = path.stat()
        identity = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    except OSError:
        identity = None
    found = _cached_allow_list(path, section, identity)
    return None if found is None else list(found)


@functools.lru_cache(maxsize=32)
def _cached_allow_list(path, section: str, _identity) -> tuple[str, ...] | None:
    """Read once per file identity: a suite of thousands of graders parses it once."""
    # deferred: waza_core.errors adds ~0.6 ms to importing this module
    from waza_core.errors import WazaError
    from waza_core.suite import project_config

    settings = project_config._read(path)
    block = settings.get(section)
    if block is None:
        return None
    if not isinstance(block, dict):
        raise WazaError(f"{path}: '{section}' must be a mapping")
    if "env" not in block or block["env"] is None:
        return None
    problem = check_allow_list(block["env"])
    if problem:
        raise WazaError(f"{path}: {section}.env {problem}")
    return tuple(block["env"])
