"""The backend names and make_backend: local or ray (``--backend``).

The factory stands above the backends it makes, so the base interface
(:mod:`waza_core.run.backend`) never imports them back.
"""

from __future__ import annotations

from waza_core.errors import WazaError
from waza_core.run.backend import Backend, BackendJob
from waza_core.run.local import LocalBackend
from waza_core.suite.project_config import BACKENDS

__all__ = ["BACKENDS", "check_backend", "make_backend"]


def make_backend(name: str, job: BackendJob) -> Backend:
    """The backend called ``name``."""
    if name == "local":
        return LocalBackend(job)
    if name == "ray":
        # deferred: the Ray backend's module (and its classes) only for a run that uses it
        from waza_core.run.ray_backend import RayBackend

        return RayBackend(job)
    raise WazaError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")


def check_backend(name: str) -> None:
    """Fail now (exit 2) when backend ``name`` does not exist or cannot be used here."""
    if name not in BACKENDS:
        raise WazaError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")
    if name == "ray":
        from waza_core.run.ray_backend import check_ray_installed  # deferred: as in make_backend

        check_ray_installed()
