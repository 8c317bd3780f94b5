"""waza for Python: a plugin-based grading framework for AI-agent evaluations.

This module is the public surface for plugin authors: everything a grader, executor,
optimizer adapter, interop dialect or reporter needs is importable from
``waza_core`` itself, and nothing deeper is part of the contract. The built-in
plugins (``waza_graders``, ``waza_adapters``, ``waza_interop``) are held to the same
rule by a test, so the surface is exercised every day.

Names are resolved lazily on first use, so ``import waza_core`` (and ``waza
--version``) does not pay for pluggy, attrs or jsonschema.
"""

from __future__ import annotations

import importlib

from waza_core._version import __version__

#: ``typing`` costs a few ms to import; ``waza --version`` goes through this module, so the
#: names it needs exist for type checkers only (mypy treats TYPE_CHECKING as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # the hook marker
    "hookimpl": "waza_core.hookspecs",
    # graders
    "Grader": "waza_core.grading.base",
    "GradingContext": "waza_core.grading.base",
    "GraderSetup": "waza_core.grading.base",
    "GraderResult": "waza_core.model",
    "GraderSpec": "waza_core.model",
    # executors
    "Executor": "waza_core.run.execution",
    "ExecutionRequest": "waza_core.run.execution",
    "RunEvidence": "waza_core.model",
    # suites, as graders and executors see them
    "Suite": "waza_core.model",
    "SuiteConfig": "waza_core.model",
    "TaskSpec": "waza_core.model",
    "FileInput": "waza_core.model",
    # optimizer adapters
    "OptimizerAdapter": "waza_core.optimize.adapter",
    "AdapterOptions": "waza_core.optimize.adapter",
    "AdapterReply": "waza_core.optimize.adapter",
    "AdapterFailure": "waza_core.optimize.adapter",
    "ADAPTER_STDOUT_LIMIT": "waza_core.optimize.contract",
    "ADAPTER_RESPONSE_KIND": "waza_core.optimize.contract",
    "HARNESS_CAPABILITIES": "waza_core.optimize.contract",
    "StrictJSONError": "waza_core.optimize.contract",
    "strict_json_loads": "waza_core.optimize.contract",
    # interop dialects
    "Dialect": "waza_core.interop",
    "Conversion": "waza_core.interop",
    "SuiteConversion": "waza_core.interop",
    "InteropError": "waza_core.interop",
    "find_template_marker": "waza_core.interop",
    "yaml_quote": "waza_core.interop",
    "quote_for_message": "waza_core.interop",
    "StrictDocument": "waza_core.suite.strict_yaml",
    "StrictYamlError": "waza_core.suite.strict_yaml",
    "load_strict_yaml": "waza_core.suite.strict_yaml",
    "describe_yaml_type": "waza_core.suite.strict_yaml",
    # reporters
    "Reporter": "waza_core.results.reporting",
    # agent event streams (config.cli.events)
    "EventFormat": "waza_core.run.event_stream",
    "normalize_usage": "waza_core.run.event_stream",
    "add_usage": "waza_core.run.event_stream",
    "find_registered": "waza_core.plugins",
    "registered_names": "waza_core.plugins",
    "get_console": "waza_core.results.console",
    "ResultsView": "waza_core.results.reporting",
    # the json reporter writes exactly the bytes of `waza run -o`
    "results_json_bytes": "waza_core.results.jsonbytes",
    # reporters, gate and compare show foreign text in markdown the same safe way
    "escape_markdown": "waza_core.results.markdown_text",
    # every report that shows a comparison words it the same way (interval, "within noise", "significant")
    "describe_significance": "waza_core.results.significance",
    # child processes (argv, no shell, bounded output, whole-group kill)
    "run_process": "waza_core.procs",
    "ProcessResult": "waza_core.procs",
    "ProcessStartError": "waza_core.procs",
    "CancelEvent": "waza_core.cancel",
    # small shared helpers
    "display_path": "waza_core.paths",
    "resolve_inside": "waza_core.paths",
    "PathEscape": "waza_core.paths",
    "program_timeout": "waza_core.suite.project_config",
    # the environment of a child program: whole by default, or an allow-list
    "child_environment": "waza_core.childenv",
    "ADAPTER_ENV_BASELINE": "waza_core.childenv",
    "check_env_allow_list": "waza_core.childenv",
    "project_env_allow_list": "waza_core.childenv",
    # text from suites, agents and graders, made safe for a terminal or a report
    "escape_terminal": "waza_core.results.console",
    "escape_html": "waza_core.results.console",
    # writing a file a user named (reporters, snapshots, journals): never replaces a device
    "write_file_safely": "waza_core.safe_write",
    "open_append_safely": "waza_core.safe_write",
    "check_output_target": "waza_core.safe_write",
    # RE2 regexes (waza's regex semantics) for every plugin that takes a pattern
    "compile_regex": "waza_core.regex",
    "Regex": "waza_core.regex",
    "RegexError": "waza_core.regex",
    # text printed as waza (Go) prints it (%q, %v, json.Marshal, case mapping), so feedback
    # and mock replies match waza's byte for byte
    "go_quote": "waza_core.gofmt",
    "go_quote_list": "waza_core.gofmt",
    "go_list": "waza_core.gofmt",
    "go_float": "waza_core.gofmt",
    "go_json": "waza_core.gofmt",
    "go_value": "waza_core.gofmt",
    "go_lower": "waza_core.gofmt",
    "go_upper": "waza_core.gofmt",
    "go_trim_space": "waza_core.gofmt",
    # errors and exit codes
    "WazaError": "waza_core.errors",
    "SuiteError": "waza_core.errors",
    "PluginError": "waza_core.errors",
    "GraderError": "waza_core.errors",
    "ExecutorError": "waza_core.errors",
    "ExitCode": "waza_core.errors",
}

#: public names whose defining module uses another name for them
_RENAMED = {
    "describe_significance": "describe",
    "ADAPTER_RESPONSE_KIND": "RESPONSE_KIND",
    "strict_json_loads": "strict_loads",
    "load_strict_yaml": "load",
    "describe_yaml_type": "describe_type",
    "run_process": "run",
    "yaml_quote": "quote",
    "quote_for_message": "show",
    "ProcessResult": "ProcResult",
    "write_file_safely": "write_file",
    "escape_terminal": "escape",
    "check_env_allow_list": "check_allow_list",
    "project_env_allow_list": "project_allow_list",
    "open_append_safely": "open_append",
    "check_output_target": "check_target",
    "results_json_bytes": "dumps",
}

#: a literal list, so type checkers see every re-export (tests/api/test_public_api.py keeps it
#: equal to _EXPORTS)
__all__ = [
    "__version__", "hookimpl", "Grader", "GradingContext", "GraderSetup", "GraderResult", "GraderSpec",
    "Executor", "ExecutionRequest", "RunEvidence", "Suite", "SuiteConfig", "TaskSpec", "FileInput",
    "OptimizerAdapter", "AdapterOptions", "AdapterReply", "AdapterFailure", "ADAPTER_STDOUT_LIMIT",
    "ADAPTER_RESPONSE_KIND", "HARNESS_CAPABILITIES", "StrictJSONError", "strict_json_loads", "Dialect",
    "Conversion", "SuiteConversion", "InteropError", "find_template_marker", "yaml_quote", "quote_for_message",
    "StrictDocument",
    "StrictYamlError", "load_strict_yaml", "describe_yaml_type", "Reporter", "EventFormat", "normalize_usage",
    "add_usage", "find_registered",
    "registered_names", "get_console", "ResultsView",
    "results_json_bytes", "escape_markdown", "describe_significance", "run_process", "ProcessResult",
    "ProcessStartError",
    "CancelEvent", "display_path", "resolve_inside", "PathEscape", "program_timeout", "child_environment",
    "ADAPTER_ENV_BASELINE",
    "check_env_allow_list", "project_env_allow_list", "escape_terminal", "escape_html", "write_file_safely",
    "open_append_safely", "check_output_target", "compile_regex", "Regex", "RegexError", "go_quote",
    "go_quote_list", "go_list", "go_float", "go_json", "go_value", "go_lower", "go_upper", "go_trim_space",
    "WazaError", "SuiteError", "PluginError", "GraderError", "ExecutorError", "ExitCode",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'waza_core' has no attribute {name!r}")

    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # resolve once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # "import X as X": an explicit re-export, so `from waza_core import Grader` type-checks
    # under mypy --strict (no implicit re-export) in a plugin author's project
    from waza_core.childenv import ADAPTER_ENV_BASELINE as ADAPTER_ENV_BASELINE
    from waza_core.childenv import check_allow_list as check_env_allow_list
    from waza_core.childenv import child_environment as child_environment
    from waza_core.childenv import project_allow_list as project_env_allow_list
    from waza_core.errors import ExecutorError as ExecutorError
    from waza_core.errors import ExitCode as ExitCode
    from waza_core.errors import GraderError as GraderError
    from waza_core.errors import PluginError as PluginError
    from waza_core.errors import SuiteError as SuiteError
    from waza_core.errors import WazaError as WazaError
    from waza_core.gofmt import go_float as go_float
    from waza_core.gofmt import go_json as go_json
    from waza_core.gofmt import go_list as go_list
    from waza_core.gofmt import go_lower as go_lower
    from waza_core.gofmt import go_quote as go_quote
    from waza_core.gofmt import go_quote_list as go_quote_list
    from waza_core.gofmt import go_trim_space as go_trim_space
    from waza_core.gofmt import go_upper as go_upper
    from waza_core.gofmt import go_value as go_value
    from waza_core.grading.base import Grader as Grader
    from waza_core.grading.base import GraderSetup as GraderSetup
    from waza_core.grading.base import GradingContext as GradingContext
    from waza_core.hookspecs import hookimpl as hookimpl
    from waza_core.interop import Conversion as Conversion
    from waza_core.interop import Dialect as Dialect
    from waza_core.interop import InteropError as InteropError
    from waza_core.interop import SuiteConversion as SuiteConversion
    from waza_core.interop import find_template_marker as find_template_marker
    from waza_core.interop import quote as yaml_quote
    from waza_core.interop import show as quote_for_message
    from waza_core.model import FileInput as FileInput
    from waza_core.model import GraderResult as GraderResult
    from waza_core.model import GraderSpec as GraderSpec
    from waza_core.model import RunEvidence as RunEvidence
    from waza_core.model import Suite as Suite
    from waza_core.model import SuiteConfig as SuiteConfig
    from waza_core.model import TaskSpec as TaskSpec
    from waza_core.optimize.adapter import AdapterFailure as AdapterFailure
    from waza_core.optimize.adapter import AdapterOptions as AdapterOptions
    from waza_core.optimize.adapter import AdapterReply as AdapterReply
    from waza_core.optimize.adapter import OptimizerAdapter as OptimizerAdapter
    from waza_core.optimize.contract import ADAPTER_STDOUT_LIMIT as ADAPTER_STDOUT_LIMIT
    from waza_core.optimize.contract import HARNESS_CAPABILITIES as HARNESS_CAPABILITIES
    from waza_core.optimize.contract import RESPONSE_KIND as ADAPTER_RESPONSE_KIND
    from waza_core.optimize.contract import StrictJSONError as StrictJSONError
    from waza_core.optimize.contract import strict_loads as strict_json_loads
    from waza_core.paths import PathEscape as PathEscape
    from waza_core.paths import display_path as display_path
    from waza_core.paths import resolve_inside as resolve_inside
    from waza_core.plugins import find_registered as find_registered
    from waza_core.plugins import registered_names as registered_names
    from waza_core.cancel import CancelEvent as CancelEvent
    from waza_core.procs import ProcessStartError as ProcessStartError
    from waza_core.procs import ProcResult as ProcessResult
    from waza_core.procs import run as run_process
    from waza_core.regex import Regex as Regex
    from waza_core.regex import RegexError as RegexError
    from waza_core.regex import compile_regex as compile_regex
    from waza_core.results.console import escape as escape_terminal
    from waza_core.results.console import escape_html as escape_html
    from waza_core.results.console import get_console as get_console
    from waza_core.results.jsonbytes import dumps as results_json_bytes
    from waza_core.results.markdown_text import escape_markdown as escape_markdown
    from waza_core.results.reporting import Reporter as Reporter
    from waza_core.results.reporting import ResultsView as ResultsView
    from waza_core.results.significance import describe as describe_significance
    from waza_core.run.event_stream import EventFormat as EventFormat
    from waza_core.run.event_stream import add_usage as add_usage
    from waza_core.run.event_stream import normalize_usage as normalize_usage
    from waza_core.run.execution import ExecutionRequest as ExecutionRequest
    from waza_core.run.execution import Executor as Executor
    from waza_core.safe_write import check_target as check_output_target
    from waza_core.safe_write import open_append as open_append_safely
    from waza_core.safe_write import write_file as write_file_safely
    from waza_core.suite.project_config import program_timeout as program_timeout
    from waza_core.suite.strict_yaml import StrictDocument as StrictDocument
    from waza_core.suite.strict_yaml import StrictYamlError as StrictYamlError
    from waza_core.suite.strict_yaml import describe_type as describe_yaml_type
    from waza_core.suite.strict_yaml import load as load_strict_yaml
