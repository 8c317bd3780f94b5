"""waza for Python: a plugin-based grading framework for AI-agent evaluations.

Plugins import :data:`hookimpl` from here. Importing this package stays cheap: the
marker is created lazily so that ``waza --version`` does not pay for pluggy.
"""

from waza_core._version import __version__

__all__ = ["__version__", "hookimpl"]


def __getattr__(name: str):
    if name == "hookimpl":
        from waza_core.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(name)
