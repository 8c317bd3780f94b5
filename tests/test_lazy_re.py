"""LazyPattern: waza's own module-level patterns compiled at first use, not on import."""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from waza_core.lazy_re import LazyPattern


def test_it_compiles_at_first_use_and_then_answers_as_the_compiled_pattern():
    lazy = LazyPattern(r"(\d+)-(?P<word>[a-z]+)", re.I)
    assert "search" not in vars(lazy)  # nothing compiled yet
    real = re.compile(r"(\d+)-(?P<word>[a-z]+)", re.I)
    assert lazy.search("x 12-AB y").groups() == real.search("x 12-AB y").groups()
    assert "search" in vars(lazy)  # the compiled pattern's methods now sit on the instance
    assert lazy.sub("#", "1-a 2-b") == real.sub("#", "1-a 2-b")
    assert lazy.match("3-c") and not lazy.fullmatch("3-c!")
    assert lazy.findall("1-a 2-b") == real.findall("1-a 2-b")
    assert (lazy.pattern, lazy.flags, lazy.groups, dict(lazy.groupindex)) == \
        (real.pattern, real.flags, real.groups, dict(real.groupindex))


def test_a_bad_pattern_fails_at_first_use_and_unknown_names_are_attribute_errors():
    bad = LazyPattern("(unclosed")
    with pytest.raises(re.error):
        bad.search("x")
    lazy = LazyPattern("a")
    with pytest.raises(AttributeError):
        lazy.no_such_method  # noqa: B018
    assert "search" not in vars(lazy)  # asking for something else compiled nothing
    # copying or pickling looks up dunder names: no compile, no recursion
    assert copy.copy(lazy).search("cat") and pickle.loads(pickle.dumps(lazy)).search("cat")


def test_importing_what_validate_and_run_import_compiles_no_pattern_of_waza():
    """Only the method cache's key pattern (used by every command at once) is compiled when
    the modules of `waza validate` and `waza run` are imported."""
    code = """
import re, sys
seen = []
orig = re._compile
def spy(pattern, flags):
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.endswith("__init__.py") and "/re/" in f.f_code.co_filename:
        f = f.f_back
    name = f.f_code.co_filename if f is not None else "?"
    if "waza_" in name and not name.endswith("method_cache.py"):
        seen.append(f"{name}:{f.f_lineno}")
    return orig(pattern, flags)
re._compile = spy
import waza_core.cli.validate_check, waza_core.run.command, waza_core.run.engine, waza_core.cli.run_plain
from waza_core.plugins import get_registry
get_registry([])
print("\\n".join(seen))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
