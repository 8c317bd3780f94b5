"""`waza interop`: translate between foreign eval formats (dialects) and waza.

``import``/``export``: one assertion, stdin in, stdout out. ``import-suite``/``export-suite``:
whole suites, files in, files out. Either way the whole output is built in memory and
written once, so a validation or conversion error writes nothing (exit 2).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, fail, user_errors

app = typer.Typer(
    help="Translate between foreign eval formats (dialects) and waza: one assertion, or whole suites.",
    no_args_is_help=True,
)

ADAPTER_HELP = "The dialect's exact adapter id (see `waza interop list`)."


@app.command("list")
@user_errors
def list_dialects(
    plugin: Optional[list[str]] = typer.Option(None, "--plugin", "-p", help=PLUGIN_OPTION_HELP),
) -> None:
    """Show the registered dialects: one adapter id and summary per line."""
    registry = _registry(plugin)
    lines = []
    for name in registry.names("interop_dialect"):
        cls = registry.get("interop_dialect", name)
        summary = " ".join(str(cls.summary or "").split())
        lines.append(f"{name}  {summary}".rstrip() + "\n")
    _deliver("".join(lines).encode("utf-8"), None)


@app.command("import")
@user_errors
def import_cmd(
    adapter: Optional[str] = typer.Option(None, "--adapter", help=ADAPTER_HELP),
    test: Optional[str] = typer.Option(None, "--test", help="The id of the test that holds the assertion."),
    assertion: Optional[str] = typer.Option(
        None, "--assertion", help="The assertion's position in the test's assert list, counted from 1."),
    plugin: Optional[list[str]] = typer.Option(None, "--plugin", "-p", help=PLUGIN_OPTION_HELP),
) -> None:
    """Read a foreign suite on stdin; write one native grader mapping on stdout."""
    # deferred: waza_core.interop adds ~30.6 ms to importing this module
    from waza_core.interop import InteropError, parse_position

    _require(adapter=adapter, test=test, assertion=assertion)
    if test == "":
        raise InteropError("--test must not be empty")
    position = parse_position(assertion)
    dialect = _dialect(adapter, plugin)
    data = _read_stdin()
    result = _convert(adapter, lambda: dialect.import_assertion(data, test, position))
    _deliver(result.output, result.notice)


@app.command("export")
@user_errors
def export_cmd(
    adapter: Optional[str] = typer.Option(None, "--adapter", help=ADAPTER_HELP),
    plugin: Optional[list[str]] = typer.Option(None, "--plugin", "-p", help=PLUGIN_OPTION_HELP),
) -> None:
    """Read one native grader mapping on stdin; write one foreign assertion on stdout."""
    _require(adapter=adapter)
    dialect = _dialect(adapter, plugin)
    data = _read_stdin()
    result = _convert(adapter, lambda: dialect.export_grader(data))
    _deliver(result.output, result.notice)


@app.command("import-suite")
@user_errors
def import_suite_cmd(
    config: Path = typer.Argument(..., help="The foreign suite: a promptfooconfig.yaml or an AgentV eval file."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="The folder to write the waza suite into "
                                          "(must not exist, or be empty)."),
    dialect: str = typer.Option("promptfoo", "--dialect", help="promptfoo, agentv, or a plugin's dialect."),
    approximate: bool = typer.Option(False, "--approximate", help="Translate what has no exact equivalent "
                                     "as closely as possible; record and print each approximation."),
    plugin: Optional[list[str]] = typer.Option(None, "--plugin", "-p", help=PLUGIN_OPTION_HELP),
) -> None:
    """Translate a whole foreign suite into a waza suite (exit 2, nothing written, when refused)."""
    _require(output=None if output is None else str(output))
    target = _check_output_folder(output)
    if not config.is_file():
        raise fail(f"{config}: no such file")
    instance = _dialect(dialect, plugin)
    result = _convert_suite(dialect, lambda: instance.import_suite(config, approximate))
    _write_suite_folder(target, result.files)
    for note in result.notes:
        sys.stderr.write(f"APPROXIMATION: {note}\n")
    sys.stderr.write(f"waza: wrote {len(result.files)} file(s) to {target}"
                     + (f" with {len(result.notes)} approximation(s)" if result.notes else "") + "\n")


@app.command("export-suite")
@user_errors
def export_suite_cmd(
    suite: Path = typer.Argument(..., help="The waza suite's eval.yaml (or its folder)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="The file to write (promptfooconfig.yaml)."),
    dialect: str = typer.Option("promptfoo", "--dialect", help="promptfoo, or a plugin's dialect."),
    plugin: Optional[list[str]] = typer.Option(None, "--plugin", "-p", help=PLUGIN_OPTION_HELP),
) -> None:
    """Translate a waza suite whose graders all have exact equivalents (exit 2, nothing written, otherwise)."""
    # deferred: waza_core.safe_write adds ~3.0 ms to importing this module
    from waza_core.safe_write import write_file

    _require(output=None if output is None else str(output))
    instance = _dialect(dialect, plugin)
    eval_file = suite / "eval.yaml" if suite.is_dir() else suite
    result = _convert_suite(dialect, lambda: instance.export_suite(eval_file))
    if len(result.files) != 1:
        raise fail(f"dialect {dialect!r} wrote {len(result.files)} files; export-suite writes one")
    (data,) = result.files.values()
    write_file(output, data)
    sys.stderr.write(f"waza: wrote {output}\n")


def _check_output_folder(output: Path) -> Path:
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise fail(f"{output}: already exists and is not an empty folder; choose a new folder")
    return output


def _write_suite_folder(target: Path, files: dict) -> None:
    """Write every file into a new folder beside ``target``, then rename it into place:
    a failure leaves no half-written suite."""
    # deferred: tempfile adds ~3.4 ms to importing this module
    import tempfile

    parent = target.absolute().parent
    if not parent.is_dir():
        raise fail(f"{target.parent}: no such folder")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    try:
        for rel, data in files.items():
            path = staging.joinpath(*rel.split("/"))
            if staging not in path.resolve().parents:
                raise fail(f"the dialect named a file outside the suite folder: {rel!r}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        staging.chmod(0o777 & ~_umask())
        if target.is_dir():
            target.rmdir()
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _umask() -> int:
    # deferred: waza_core.safe_write adds ~3.1 ms to importing this module
    from waza_core.safe_write import current_umask

    return current_umask()


def _convert_suite(adapter: str, run):
    """Run one whole-suite conversion, checked like :func:`_convert`."""
    # deferred: waza_core.interop adds ~28.9 ms to importing this module
    from waza_core.interop import SuiteConversion

    def complete(result) -> bool:
        return isinstance(result, SuiteConversion) and all(
            isinstance(k, str) and isinstance(v, bytes) for k, v in result.files.items())

    return _convert(adapter, run, complete, "a SuiteConversion of bytes")


def _require(**options: Optional[str]) -> None:
    # deferred: waza_core.interop adds ~35.8 ms to importing this module
    from waza_core.interop import InteropError

    missing = [f"--{k}" for k, v in options.items() if v is None]
    if missing:
        raise InteropError(f"missing required option(s): {', '.join(missing)}")


def _registry(plugin: Optional[list[str]]):
    # deferred: waza_core.plugins adds ~40.1 ms to importing this module
    from waza_core.plugins import get_registry

    return get_registry(list(plugin or []))


def _dialect(adapter: str, plugin: Optional[list[str]]):
    # deferred: waza_core.interop adds ~36.0 ms to importing this module
    from waza_core.interop import InteropError, show

    registry = _registry(plugin)
    cls = registry.get("interop_dialect", adapter)
    if cls is None:
        msg = registry.unknown("interop_dialect", adapter)
        raise InteropError(" ".join(msg.replace(repr(adapter), show(adapter), 1).split()))
    return _instantiate(cls, adapter)


def _instantiate(cls, adapter: str):
    # deferred: waza_core.interop adds ~36.0 ms to importing this module
    from waza_core.interop import InteropError, show

    try:
        return cls()
    except Exception as exc:
        raise InteropError(f"dialect {show(adapter)} failed: {type(exc).__name__}: {exc}") from None


def _convert(adapter: str, run, complete=None, expected: str = "a Conversion with bytes"):
    """Run one conversion; a dialect that crashes is reported in one line, like any error,
    so a third-party plugin cannot print a traceback or half an output."""
    # deferred: waza_core.errors adds ~0.4 ms to importing this module
    from waza_core.errors import WazaError
    from waza_core.interop import Conversion, InteropError, show

    try:
        result = run()
    except WazaError:
        raise
    except Exception as exc:
        raise InteropError(f"dialect {show(adapter)} failed: {type(exc).__name__}: {exc}") from None
    ok = complete(result) if complete else isinstance(result, Conversion) and isinstance(result.output, bytes)
    if not ok:
        raise InteropError(f"dialect {show(adapter)} returned {type(result).__name__}, not {expected}")
    return result


def _read_stdin() -> bytes:
    """At most 4 MiB + 1 byte, so an oversized input is refused without reading it all."""
    # deferred: waza_core.interop adds ~35.8 ms to importing this module
    from waza_core.interop import InteropError
    from waza_core.suite.strict_yaml import MAX_BYTES

    stream = sys.stdin
    if stream is None:
        raise InteropError("stdin is closed; redirect the input file: < file.yaml")
    if stream.isatty():
        raise InteropError("reads its input from stdin; redirect a file: < file.yaml")
    try:
        data = stream.buffer.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InteropError(f"cannot read stdin: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise InteropError(f"<stdin>: input is larger than {MAX_BYTES} bytes (4 MiB)")
    return data


def _deliver(output: bytes, notice: Optional[str]) -> None:
    """Write the finished output once. A failed write is a delivery error (exit 2); bytes
    already written cannot be taken back."""
    stream = sys.stdout
    try:
        if stream is None:
            raise OSError("stdout is closed")
        stream.flush()
        stream.buffer.write(output)
        stream.buffer.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise fail("cannot write the output: stdout was closed by its reader (broken pipe); "
                   "part of the output may have been delivered") from None
    except (OSError, ValueError) as exc:
        _silence_stdout()
        reason = getattr(exc, "strerror", None) or str(exc)
        raise fail(f"cannot write the output to stdout: {reason}; part of the output may have "
                   "been delivered") from None
    if notice:
        try:
            sys.stderr.write(notice + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail again."""

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
