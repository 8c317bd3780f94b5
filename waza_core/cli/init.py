"""``waza init [DIR]`` and ``waza new eval|task``: starter files that run offline at once.

``init`` writes a suite under the mock executor (it runs with no account and no
network), a ``.waza.yaml`` and a GitHub Actions workflow that runs the suite, gates
the pull request against the main branch's results and posts the markdown summary.
Nothing is ever overwritten: every target is checked first, and an existing file
stops the command before anything is written (exit 2, naming the files).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import typer

from waza_core._version import __version__
from waza_core.cli.common import user_errors
from waza_core.errors import WazaError
from waza_core.paths import display_path

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")

EVAL_YAML = """\
# A starter suite: runs offline at once under the mock executor.
#   waza run eval.yaml -o results.json
# Switch config.executor to a real agent when you are ready (docs/executors.md).
name: {name}
description: Starter suite made by `waza init`; replace the tasks with your own.
skill: {name}
config:
  trials_per_task: 1
  timeout_seconds: 120
  executor: mock
  model: mock-model
graders:
  - type: text
    name: answers_the_prompt
    config:
      regex_match: ["(?i)mock response for: .+"]
tasks:
  - "tasks/*.yaml"
"""

TASK_YAML = """\
id: {id}
name: {title}
description: {description}
tags: [starter]
inputs:
  prompt: {prompt}
{files}graders:
  - type: text
    name: {grader}
    config:
      contains: [{expect}]
"""

FIXTURE = '''\
def greet(name):
    """Return a friendly greeting."""
    return f"hello, {name}"
'''

WAZA_YAML = """\
# Project settings shared by every suite below this folder (looked up from the
# working directory and its parents). waza for Python reads graders.programTimeout;
# keys only waza (Go) knows are read and ignored, so one file serves both.
graders:
  programTimeout: 60
"""

GITIGNORE = """\
# waza outputs
results.json
results.xml
report.html
summary.md
baseline/
.waza-cache/
"""

WORKFLOW = """\
# Runs the waza suite on every pull request and on main. A pull request is gated
# against the results of the latest run on main (uploaded as the artifact
# waza-results), and the markdown summary is posted on the pull request and
# shown as the job summary. See docs/ci.md.
name: waza

on:
  push:
    branches: [main]
  pull_request:

permissions:
  contents: read
  actions: read
  pull-requests: write

jobs:
  eval:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      # waza for Python, pinned to the version that wrote this file. Until that version is on a
      # package index, commit its wheel (python -m build --wheel) and install it instead:
      #   pip install ./ci/waza-{version}-py3-none-any.whl    (see docs/ci.md, "Installing waza in CI")
      - run: pip install "waza=={version}"
      # waza's own keys decide what is reused (docs/ci.md); this only carries the folder over
      - uses: actions/cache@v4
        with:
          path: {suite_dir}/.waza-cache
          key: waza-cache-${{{{ github.sha }}}}
          restore-keys: waza-cache-
      - name: Run the suite
        id: run
        working-directory: {suite_dir}
        run: |
          set +e
          waza run eval.yaml -o results.json --cache \\
            --reporter markdown:summary.md --reporter junit:results.xml --reporter html:report.html
          echo "exit_code=$?" >> "$GITHUB_OUTPUT"
      - name: Job summary
        if: always()
        working-directory: {suite_dir}
        run: cat summary.md >> "$GITHUB_STEP_SUMMARY"
      - name: Fetch the main branch's results
        if: github.event_name == 'pull_request'
        working-directory: {suite_dir}
        env:
          GH_TOKEN: ${{{{ github.token }}}}
        run: |
          run_id=$(gh run list --workflow "${{{{ github.workflow }}}}" --branch main --event push \\
            --status completed --limit 1 --json databaseId --jq '.[0].databaseId // empty')
          if [ -n "$run_id" ]; then gh run download "$run_id" --name waza-results --dir baseline || true; fi
      - name: Gate against main
        id: gate
        if: github.event_name == 'pull_request'
        working-directory: {suite_dir}
        run: |
          if [ -f baseline/results.json ]; then
            waza gate --baseline baseline/results.json --current results.json --format github-actions
          else
            echo "No results from main yet: the run's own exit code decides."
            exit "${{{{ steps.run.outputs.exit_code }}}}"
          fi
      - name: Post the summary on the pull request
        if: always() && github.event_name == 'pull_request'
        working-directory: {suite_dir}
        env:
          GH_TOKEN: ${{{{ github.token }}}}
        run: gh pr comment "${{{{ github.event.pull_request.number }}}}" --body-file summary.md
      - name: Fail on a broken suite
        if: steps.run.outputs.exit_code == '2'
        run: exit 2
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: waza-results
          path: |
            {suite_dir}/results.json
            {suite_dir}/results.xml
            {suite_dir}/report.html
            {suite_dir}/summary.md
"""

STARTER_TASKS = (
    ("explain-greet", "Explain the greet function", "The agent explains fixtures/greet.py.",
     "Explain what greet() in greet.py does.", "greet.py", "mentions_the_file", '"greet.py"'),
    ("summarise-notes", "Summarise release notes", "The agent summarises a short note given inline.",
     "Summarise the release notes.", None, "sees_the_note", '"release notes"'),
)


#: what a YAML double-quoted scalar cannot hold as it is: controls (JSON already escapes
#: C0 ones, " and \\), YAML's line breaks (NEL, U+2028, U+2029: folded into spaces),
#: a byte-order mark, non-characters and lone surrogates
_NOT_YAML = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")


def yaml_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that reads back as ``text``: JSON's quoting
    (YAML 1.2 reads JSON strings), with what YAML refuses raw as ``\\u`` escapes; a lone
    surrogate (a byte of the command line that was not UTF-8) becomes U+FFFD."""
    # deferred: json adds ~8.8 ms to importing this module
    import json

    def escape(m: re.Match) -> str:
        code = ord(m.group())
        return "\ufffd" if 0xD800 <= code <= 0xDFFF else f"\\u{code:04x}"

    return _NOT_YAML.sub(escape, json.dumps(text, ensure_ascii=False))


def _task_text(tid: str, title: str, description: str, prompt: str, file: str | None, grader: str,
               expect: str) -> str:
    files = f"  files:\n    - path: {file}\n" if file else ""
    return TASK_YAML.format(id=tid, title=title, description=description, prompt=yaml_quoted(prompt), files=files,
                            grader=grader, expect=expect)


def _write_all(files: dict[Path, str], root: Path) -> None:
    """Write every file, or none: every target and every folder on its way is checked
    before the first byte is written (:func:`check_targets`), and a write that fails
    anyway (a full disk) removes the files this command already wrote."""

    check_targets(files, root)
    written: list[Path] = []
    try:
        for path, text in files.items():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise WazaError(f"cannot create folder {path.parent}: {exc.strerror}") from None
            write_new(path, text.encode("utf-8"))
            written.append(path)
    except BaseException:
        for path in written:
            try:
                path.unlink()
            except OSError:
                pass
        raise
    for path in files:
        typer.echo(f"created {display_path(path)}")


def check_targets(files: dict[Path, str], root: Path) -> None:
    """Exit 2 before anything is written when a file cannot be made as asked: it exists
    (a dangling link too), or a folder on its way below ``root`` is a symbolic link
    (dangling or not: waza writes nothing through a link), is not a folder, or cannot be
    written. ``root`` itself may be a link to a folder (the user named it)."""

    problems: dict[str, str] = {}
    existing: list[str] = []
    folders: set[Path] = set()
    for path in files:
        try:
            os.lstat(path)
            existing.append(display_path(path))
            continue
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.setdefault(display_path(path), exc.strerror or str(exc))
            continue
        folder = _first_missing_or_problem(path.parent, root, problems)
        if folder is not None:
            folders.add(folder)
    for folder in sorted(folders):
        if not os.access(folder, os.W_OK | os.X_OK):
            problems.setdefault(display_path(folder), "is not a writable folder")
    listed = [f"{name} {why}" for name, why in problems.items()]
    if existing:
        listed.insert(0, f"not overwriting existing file(s): {', '.join(existing)}; "
                         "move them away or pick another folder")
    if listed:
        raise WazaError(f"nothing written: {'; '.join(listed)}")


def _first_missing_or_problem(folder: Path, root: Path, problems: dict[str, str]) -> Path | None:
    """The deepest existing folder on the way to ``folder`` (where new folders or the file
    will be made), or None after recording why the way is blocked."""

    chain = [folder, *folder.parents]
    existing = None
    for step in reversed(chain):  # from / down to the file's folder
        try:
            st = os.lstat(step)
        except FileNotFoundError:
            break
        except OSError as exc:
            problems.setdefault(display_path(step), exc.strerror or str(exc))
            return None
        below_root = step != root and root in step.parents
        if stat.S_ISLNK(st.st_mode):
            if below_root:
                problems.setdefault(display_path(step), "is a symbolic link (waza writes nothing through a link)")
                return None
            try:
                st = os.stat(step)
            except OSError:
                problems.setdefault(display_path(step), "is a dangling symbolic link")
                return None
        if not stat.S_ISDIR(st.st_mode):
            problems.setdefault(display_path(step), "is not a folder")
            return None
        existing = step
    return existing


def write_new(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write a new file atomically and never over an existing one, not even one that
    appeared since the check above: the complete temporary file is hard-linked to its
    name, which fails when the name is taken (exclusive creation where links are not
    supported)."""
    # deferred: tempfile adds ~6.0 ms to importing this module
    import tempfile


    taken = WazaError(f"not overwriting existing file: {path}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WazaError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), mode)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise taken from None
        except OSError:  # no hard links on this file system
            with open(path, "xb") as fh:
                fh.write(data)
            os.chmod(path, mode)
    except FileExistsError:
        raise taken from None
    except OSError as exc:
        raise WazaError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _check_name(name: str, what: str) -> None:

    if not NAME.match(name):
        raise WazaError(f"{what} {name!r} must be letters, digits, '.', '_' or '-' (at most 100), "
                        "starting with a letter or digit")


def suite_files(root: Path, name: str) -> dict[Path, str]:
    files = {root / "eval.yaml": EVAL_YAML.format(name=name), root / "fixtures" / "greet.py": FIXTURE}
    for tid, title, description, prompt, file, grader, expect in STARTER_TASKS:
        text = _task_text(tid, title, description, prompt, file, grader, expect)
        if file is None:  # the inline task carries its file content
            text = text.replace("graders:\n", "  files:\n    - path: notes.md\n      content: |\n"
                                              "        # Release notes\n        - faster start-up\n"
                                              "graders:\n", 1)
        files[root / "tasks" / f"{tid}.yaml"] = text
    return files


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    new_app = typer.Typer(help="Create a new eval suite or task from a template (never overwrites).",
                          no_args_is_help=True)
    new_app.command("eval")(new_eval)
    new_app.command("task")(new_task)
    app.add_typer(new_app, name="new")


@user_errors
def init(
    directory: Path = typer.Argument(Path("."), help="Project folder (created when missing)."),
    name: str = typer.Option("", "--name", help="Suite name (default: the folder's name)."),
    no_workflow: bool = typer.Option(False, "--no-workflow", help="Do not write .github/workflows/waza.yml."),
) -> None:
    """Create a starter project: suite (mock executor), .waza.yaml, CI workflow. Exit 0, or 2."""
    root = directory.absolute()
    suite_name = name or _slug(root.name)
    _check_name(suite_name, "suite name")
    files = suite_files(root, suite_name)
    files[root / ".waza.yaml"] = WAZA_YAML
    files[root / ".gitignore"] = GITIGNORE
    if not no_workflow:
        files[root / ".github" / "workflows" / "waza.yml"] = WORKFLOW.format(suite_dir=".", version=__version__)
    _write_all(files, root)
    where = "" if root == Path.cwd() else f"cd {directory} && "
    typer.echo(f"\nnext: {where}waza run eval.yaml -o results.json")


@user_errors
def new_eval(
    name: str = typer.Argument(..., help="Suite name; also its folder."),
    directory: Path = typer.Option(None, "--dir", help="Parent folder (default: the current one)."),
) -> None:
    """Create NAME/eval.yaml with two starter tasks and a fixture. Never overwrites."""
    _check_name(name, "suite name")
    parent = (directory or Path(".")).absolute()
    _write_all(suite_files(parent / name, name), parent / name)


@user_errors
def new_task(
    task_id: str = typer.Argument(..., help="Task id; the file is tasks/<id>.yaml."),
    suite: Path = typer.Option(Path("."), "--suite", help="The suite's folder (holding eval.yaml)."),
    prompt: str = typer.Option("Describe what you would like the agent to do.", "--prompt",
                               help="The task's prompt."),
) -> None:
    """Create tasks/ID.yaml in a suite. Never overwrites."""

    _check_name(task_id, "task id")
    if not (suite / "eval.yaml").is_file():
        raise WazaError(f"{suite / 'eval.yaml'}: no such file; give the suite's folder with --suite")
    text = _task_text(task_id, task_id.replace("-", " ").capitalize(), "What this task checks.", prompt,
                      None, "answers", '"mock response"')
    _write_all({suite.absolute() / "tasks" / f"{task_id}.yaml": text}, suite.absolute())


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "my-evals"
    return slug[:100]
