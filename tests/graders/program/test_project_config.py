""".waza.yaml lookup for graders.programTimeout (waza Go semantics)."""

from __future__ import annotations

import pytest

from waza_core.errors import WazaError
from waza_core.suite import project_config


def nest(root, depth):
    d = root
    for i in range(depth):
        d = d / f"d{i}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def test_found_in_the_start_dir_or_up_to_ten_parents_but_not_eleven(tmp_path):
    (tmp_path / ".waza.yaml").write_text("graders: {programTimeout: 12}\n")
    assert project_config.program_timeout(tmp_path) == 12.0
    assert project_config.find(nest(tmp_path, 10)) == tmp_path / ".waza.yaml"
    assert project_config.program_timeout(nest(tmp_path, 10)) == 12.0
    assert project_config.find(nest(tmp_path, 11)) != tmp_path / ".waza.yaml"


def test_the_nearest_file_wins_and_defaults_to_the_cwd(tmp_path, monkeypatch):
    (tmp_path / ".waza.yaml").write_text("graders: {programTimeout: 12}\n")
    inner = nest(tmp_path, 2)
    (inner / ".waza.yaml").write_text("graders:\n  programTimeout: 3\n")
    monkeypatch.chdir(inner)
    assert project_config.program_timeout() == 3.0


@pytest.mark.parametrize("text", ["", "paths: {skills: s/}\n", "graders: {}\n", "graders: {programTimeout: 0}\n"])
def test_unset_or_zero_means_no_override(tmp_path, text):
    (tmp_path / ".waza.yaml").write_text(text)
    assert project_config.program_timeout(tmp_path) is None


@pytest.mark.parametrize("text,fragment", [
    ("graders: [1, 2]\n", "'graders' must be a mapping"),
    ("graders: {programTimeout: -1}\n", "graders.programTimeout must be a number"),
    ("graders: {programTimeout: true}\n", "graders.programTimeout must be a number"),
    ("graders: {programTimeout: 5\n", "invalid YAML"),
    ("- a list\n", "expected a mapping"),
])
def test_broken_files_are_errors_naming_the_file(tmp_path, text, fragment):
    (tmp_path / ".waza.yaml").write_text(text)
    with pytest.raises(WazaError) as exc:
        project_config.program_timeout(tmp_path)
    assert str(tmp_path / ".waza.yaml") in str(exc.value) and fragment in str(exc.value)


def test_not_utf8_is_an_error_naming_the_file(tmp_path):
    (tmp_path / ".waza.yaml").write_bytes(b"graders: {programTimeout: \xff}\n")
    with pytest.raises(WazaError, match="not UTF-8"):
        project_config.load(tmp_path)


def test_the_file_is_parsed_once_per_version(tmp_path, monkeypatch):
    from waza_core.suite import yamlio

    parsed = []
    real_parse = yamlio.parse
    monkeypatch.setattr(yamlio, "parse", lambda text: parsed.append(text) or real_parse(text))
    config = tmp_path / ".waza.yaml"
    config.write_text("graders: {programTimeout: 12}\n")
    assert [project_config.program_timeout(tmp_path) for _ in range(50)] == [12.0] * 50
    assert len(parsed) == 1  # one parse for all the program graders of a suite
    config.write_text("graders: {programTimeout: 7.5}\n")  # another size: same-tick writes share a mtime
    assert project_config.program_timeout(tmp_path) == 7.5 and len(parsed) == 2
    config.write_text("graders: {programTimeout: soon}\n")
    for _ in range(2):  # a broken file stays an error, every time
        with pytest.raises(WazaError, match="must be a number"):
            project_config.program_timeout(tmp_path)
