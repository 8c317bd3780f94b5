"""``waza assure``: a suite's graders against reviewed reference labels, no agent (waza_core.assure)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, user_errors


def register(app: typer.Typer) -> None:
    app.command("assure")(assure)


@user_errors
def assure(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml."),
    references: Optional[Path] = typer.Option(None, "--references",
                                              help="The waza.grader-reference 1.0 label JSON (required); "
                                                   "authored inputs are found relative to its folder."),
    review: Optional[Path] = typer.Option(None, "--review",
                                          help="A separate waza.grader-review 1.0 declaration of the labels."),
    accept_review_source: str = typer.Option("", "--accept-review-source", metavar="ID",
                                             help="Accept this review source's current decision (needs --review)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="Also write the waza.grader-assurance JSON report here."),
    calibrate: bool = typer.Option(False, "--calibrate",
                                   help="Ask for judge calibration: not available; the report says not assessed "
                                        "and no model is called."),
    bindings: bool = typer.Option(False, "--bindings",
                                  help="Print the digests a label file of this suite must carry, and exit 0."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Check a suite's graders against reviewed reference labels without running an agent: each
    labelled case's evidence is graded by the declared grader and compared with its label. Prints
    a waza.grader-assurance report. Exit 0 when the assessment passed, 1 when it did not (any
    disagreement, missing coverage, unreviewed labels or a broken binding), 2 for bad input."""
    # deferred: json adds ~7.2 ms to importing this module
    import json

    # deferred: waza_core.assure.documents adds ~52.6 ms to importing this module
    from waza_core.assure.documents import parse_references, parse_review, read_document
    from waza_core.assure.verify import Request, bindings_document, verify
    from waza_core.errors import ExitCode, WazaError
    from waza_core.plugins import get_registry
    from waza_core.suite import preflight as pf
    from waza_core.suite.load import load_suite

    registry = get_registry(plugin)
    if bindings:
        suite = load_suite(eval_file, registry)
        typer.echo(json.dumps(bindings_document(suite, read_document(eval_file, "eval source")), indent=2))
        return
    if references is None:
        raise WazaError("missing option --references: the waza.grader-reference label file to check against")
    labels = parse_references(references)
    supplied = None
    if review is not None:
        supplied = parse_review(review)
    elif accept_review_source:
        raise WazaError("--accept-review-source requires an explicitly supplied --review document")
    inspection = pf.inspect(str(eval_file), registry)
    if not inspection.doc["complete"] or inspection.failed(False):
        raise WazaError("assurance prerequisites invalid; run waza preflight for diagnostics")
    suite = load_suite(eval_file, registry)
    source = read_document(eval_file, "eval source")
    if calibrate:
        typer.echo("Calibration unavailable: no paid calls will be made; the report remains not assessed.", err=True)
    report = verify(Request(suite=suite, registry=registry, labels=labels, eval_source=source, review=supplied,
                            accepted_source=accept_review_source, calibrate=calibrate))
    data = report_bytes(report)
    if output is not None:
        # deferred: waza_core.results.io adds ~30.4 ms to importing this module
        from waza_core.results.io import write_atomic

        write_atomic(output, data, mode=0o600)
    typer.echo(data.decode("utf-8"), nl=False)
    if report["state"] != "passed":
        typer.echo(f"waza: assurance did not pass ({report['state']}: {report['reason']}); inspect report states, "
                   "review and evidence", err=True)
        raise typer.Exit(ExitCode.FAILED)


def report_bytes(report: dict) -> bytes:
    """The report as waza (Go) prints it: two-space indent, ``<``, ``>``, ``&`` escaped, a
    whole float as a whole number (Go writes float64 1 as ``1``), a newline."""
    # deferred: json adds ~7.2 ms to importing this module
    import json

    text = json.dumps(_go_numbers(report), indent=2, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (text + "\n").encode("utf-8")


def _go_numbers(value):
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    return value
