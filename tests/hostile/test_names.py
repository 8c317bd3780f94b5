"""Item 7: file names derived from suite data are safe before anything runs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.hostile.conftest import no_traceback, valid_results
from waza_core.run.targets import NAME_STEM_LIMIT, results_file_stem


def test_a_300_character_name_with_output_dir_keeps_the_results(waza, make_suite, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    path = make_suite(f"name: {'n' * 300}\nskill: demo\nconfig: {{executor: mock}}\ntasks: ['tasks/*.yaml']\n"
                      "allow_ungraded: true\n",
                      {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    proc = waza("run", str(path), "--output-dir", str(out))
    no_traceback(proc)
    assert proc.returncode == 0
    [written] = list(out.iterdir())
    assert len(written.name) < 255
    assert valid_results(written.read_bytes())["eval_name"] == "n" * 300


@pytest.mark.parametrize("name", ["../../etc/passwd", ".hidden", "a/b\\c", "\x1b]0;title\x07", "日本語", "", "..."])
def test_hostile_names_become_plain_file_names(name):
    stem = results_file_stem(name)
    assert stem and "/" not in stem and "\\" not in stem and not stem.startswith(".")
    assert all(c.isascii() and (c.isalnum() or c in "-_.") for c in stem)


@given(st.text(max_size=1000))
def test_any_name_gives_a_short_safe_stem(name):
    stem = results_file_stem(name)
    assert 0 < len(stem) <= NAME_STEM_LIMIT
    assert all(c.isascii() and (c.isalnum() or c in "-_.") for c in stem) and not stem.startswith(".")


def test_two_long_names_stay_apart():
    assert results_file_stem("x" * 200 + "a") != results_file_stem("x" * 200 + "b")
