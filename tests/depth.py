"""How many examples the property tests (hypothesis) try: a profile, chosen on the command line.

- ``ci`` (the default): half the examples each test names (at least 10), so the whole suite
  fits the time the tests are allowed on a 2-core machine (docs/architecture.md, "Test time").
- ``deep``: exactly the counts written in the tests (what every run tried before the ``ci``
  profile): ``pytest --hypothesis-profile=deep``. Run it before a release, or after changing a
  parser, a schema check or a fast path that a property test compares with its slow twin.

A test names its count as ``@settings(max_examples=examples(600))``; a test that names none
gets the profile's own default (50 in ``ci``, hypothesis's 100 in ``deep``).
"""

from __future__ import annotations

from hypothesis import settings

#: the ``deep`` profile's default; a count written in a test is meant at this depth
FULL = 100

settings.register_profile("ci", max_examples=FULL // 2)
settings.register_profile("deep", max_examples=FULL)
settings.load_profile("ci")  # --hypothesis-profile (read after the conftests load) overrides it


def examples(count: int) -> int:
    """``count`` examples at the depth of the loaded profile (the whole count under ``deep``)."""
    return max(10, count * settings.default.max_examples // FULL)
