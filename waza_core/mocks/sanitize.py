"""Redacting secrets from a mocked command's arguments, exactly as waza (Go) does.

Recorded invocations and the unmatched-call message never show a secret that reached
a command line: the value after a sensitive flag (``--password x`` or
``--token=x``), any value of a sensitively named environment variable, and anything
shaped like a known token. Standard library only (the shim imports this).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

REDACTED = "[REDACTED]"

#: GitHub, OpenAI, AWS access keys, JWTs and bearer tokens (waza's list)
TOKEN_SHAPES = re.compile(
    r"(gh[pousr]_[A-Za-z0-9_]{20,}|sk-(?:proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+|bearer\s+[A-Za-z0-9._\-+/=]{16,})",
    re.IGNORECASE | re.ASCII,
)

SENSITIVE_WORDS = (
    "secret", "token", "password", "passwd", "credential", "credentials", "key", "auth", "authorization",
    "sig", "signature", "connection", "connection-string", "connectionstring", "apikey", "accesskey",
    "privatekey", "clientsecret", "clientpassword", "accesstoken", "refreshtoken",
)


def sensitive_name(name: str) -> bool:
    """A flag or variable name that holds a secret: ``token``, ``GITHUB_TOKEN``, ``client-secret``..."""
    name = name.replace("_", "-").lower()
    return any(name == word or name.endswith("-" + word) for word in SENSITIVE_WORDS)


def secret_values(env: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[str]:
    """Non-empty values of sensitively named variables, in environment order."""
    items = env.items() if isinstance(env, Mapping) else env
    return [value for key, value in items if value and sensitive_name(key)]


def sanitize_args(args: list[str], env: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[str]:
    """``args`` with every secret replaced by ``[REDACTED]`` (see the module docstring)."""
    secrets = secret_values(env)
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        key, has_value, _ = arg.partition("=")
        sensitive_key = key.startswith("-") and sensitive_name(key.lstrip("-"))
        if sensitive_key and not has_value:
            out.append(REDACTED)
            hide_next = True
            continue
        if sensitive_key:
            out.append(key + "=" + REDACTED)
            continue
        value = arg
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        out.append(TOKEN_SHAPES.sub(REDACTED, value))
    return out
