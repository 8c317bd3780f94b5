"""``type: trigger``: would this task's prompt trigger the skill? A keyword heuristic.

It grades the task's *prompt*, not the output, against a SKILL.md: the keywords are the
tokens of the frontmatter ``name``, the ``description`` (up to "DO NOT USE FOR:") and the
body, plus the tokens of the description's "USE FOR:" phrases. A prompt scores the
larger of: the share of its distinct tokens that are keywords, and its best phrase
match (1.0 when a phrase appears in it verbatim). ``mode: positive`` passes at
``score >= threshold`` (default 0.6), ``negative`` below it. Every step follows waza's
``trigger_grader.go``, including its tokenizer (lower case, letters and digits, at least
three bytes, a small stop list).

The SKILL.md is read once, when the run starts; a missing or unusable one stops the run.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from waza_core import Grader, GraderResult, GradingContext, WazaError, go_lower, go_trim_space, go_upper, hookimpl

from ._files import locate, read_regular

DEFAULT_THRESHOLD = 0.6
STOP_WORDS = frozenset(
    "the and for with this that from into your you are was were what where how why not can should using about "
    "have has had but all any too out get let".split())
_TERMINATORS = ("DO NOT USE FOR:", "USE FOR:", "INVOKES:", "FOR SINGLE OPERATIONS:")
_QUOTED = re.compile('["\u201c\u201d]([^"\u201c\u201d]+)["\u201c\u201d]')
_PARENTHETICAL = re.compile("[\t\n\f\r ]*\\([^)]*\\)[\t\n\f\r ]*\\Z")


class TriggerGrader(Grader):
    name = "trigger"
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["skill_path", "mode"],
        "properties": {
            "skill_path": {"type": "string", "minLength": 1,
                           "description": "A SKILL.md or the folder holding it (working directory, then suite)."},
            "mode": {"type": "string",
                     "description": "positive: the prompt should trigger the skill; negative: it should not."},
            "threshold": {"type": "number", "minimum": 0, "maximum": 1,
                          "description": "Score at which a prompt counts as triggering (default 0.6)."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.mode = c["mode"].strip().lower()
        self.threshold = float(c.get("threshold", DEFAULT_THRESHOLD))
        self.skill_path = c["skill_path"]
        try:
            self.keywords, self.phrases = load_skill(self.skill_path, suite)
        except ValueError as exc:
            raise WazaError(f"{spec.where}: grader {spec.name!r}: {exc}") from None

    @classmethod
    def check_config(cls, config):
        problems = []
        if not config["skill_path"].strip():
            problems.append((("skill_path",), "skill_path must not be blank"))
        if config["mode"].strip().lower() not in ("positive", "negative"):
            problems.append((("mode",), f"invalid mode {config['mode']!r} (must be positive or negative)"))
        return problems

    def grade(self, ctx: GradingContext) -> GraderResult:
        score, phrase_score, matched = self.score(ctx.task.prompt or "")
        t = self.threshold
        if self.mode == "positive":
            passed = score >= t
            feedback = (f"Prompt is trigger-aligned (score {score:.2f} >= {t:.2f})" if passed
                        else f"Prompt is not trigger-aligned enough (score {score:.2f} < {t:.2f})")
        else:
            passed = score < t
            feedback = (f"Prompt correctly treated as non-trigger (score {score:.2f} < {t:.2f})" if passed
                        else f"Prompt appears trigger-aligned unexpectedly (score {score:.2f} >= {t:.2f})")
        return self.result(score, passed, feedback, mode=self.mode, threshold=t, skill_path=self.skill_path,
                           matched_keywords=matched or None, matched_count=len(matched),
                           keyword_count=len(self.keywords), phrase_score=phrase_score)

    def score(self, prompt: str) -> tuple[float, float, list[str]]:
        """(score, phrase score, matched keywords in prompt order)."""
        tokens = tokenize(prompt)
        if not tokens:
            return 0.0, 0.0, []
        unique = set(tokens)
        matched = list(dict.fromkeys(t for t in tokens if t in self.keywords))
        token_score = len(matched) / len(unique)
        phrase_score = self._best_phrase(prompt, unique)
        return (phrase_score if phrase_score > token_score else token_score), phrase_score, matched

    def _best_phrase(self, prompt: str, prompt_tokens: set[str]) -> float:
        low = go_lower(prompt)
        best = 0.0
        for phrase in self.phrases:
            plow = go_lower(go_trim_space(phrase))
            if not plow:
                continue
            if plow in low:
                return 1.0
            ptokens = tokenize(phrase)
            if ptokens:
                best = max(best, sum(1 for t in ptokens if t in prompt_tokens) / len(ptokens))
        return best


def tokenize(text: str) -> list[str]:
    """waza's tokenizer: lower case, split on anything but letters and digits, keep tokens of
    three bytes or more (UTF-8) that are not stop words."""
    out, field = [], []
    for ch in go_lower(text) + " ":
        if unicodedata.category(ch)[0] in "LN":
            field.append(ch)
            continue
        if field:
            token = "".join(field)
            field = []
            if len(token.encode("utf-8", "surrogatepass")) >= 3 and token not in STOP_WORDS:
                out.append(token)
    return out


def load_skill(value: str, suite) -> tuple[frozenset[str], list[str]]:
    """(keywords, USE FOR phrases) of a SKILL.md; ValueError saying what is wrong."""
    path, tried = locate(value, suite)
    if not path.exists():
        raise ValueError(f"SKILL.md {value!r} not found (looked for {' and '.join(str(p) for p in tried)})")
    if path.is_dir():
        path = path / "SKILL.md"
    data, problem = read_regular(path)
    if problem:
        raise ValueError(f"reading SKILL.md {path}: {'no such file' if problem == 'missing' else problem}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"reading SKILL.md {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    name, description, body = _parse(text, path)
    cut = go_upper(description).find("DO NOT USE FOR:")
    kept = go_trim_space(description[:cut]) if cut >= 0 else description
    keywords = set(tokenize(f"{name} {kept} {body}"))
    phrases = [p for p in use_for_phrases(description) if go_trim_space(p)]
    for phrase in phrases:
        keywords.update(tokenize(phrase))
    if not keywords:
        raise ValueError(f"SKILL.md {path} does not contain usable keywords")
    return frozenset(keywords), phrases


def _parse(text: str, path: Path) -> tuple[str, str, str]:
    """(name, description, body) as waza's skill parser splits a SKILL.md."""
    if not text.strip():
        raise ValueError(f"parsing SKILL.md {path}: SKILL.md is empty")
    if not text.startswith("---"):
        return "", "", text
    rest = text[3:]
    rest = rest[2:] if rest.startswith("\r\n") else rest[1:] if rest.startswith("\n") else rest
    end = rest.find("\n---")
    if end < 0:
        raise ValueError(f"parsing SKILL.md {path}: parsing frontmatter: closing frontmatter delimiter not found")
    block, body = rest[:end], rest[end + 4:]
    # deferred: ruamel.yaml adds ~68.5 ms to importing this module
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        front = YAML(typ="base", pure=True).load(block)  # every scalar a string, as Go decodes into strings
    except YAMLError as exc:
        raise ValueError(f"parsing SKILL.md {path}: parsing frontmatter: {str(exc).splitlines()[0]}") from None
    if front is None:
        return "", "", body
    if not isinstance(front, dict):
        raise ValueError(f"parsing SKILL.md {path}: parsing frontmatter: the frontmatter is not a mapping")
    fields = []
    for key in ("name", "description"):
        value = front.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"parsing SKILL.md {path}: parsing frontmatter: {key} must be a string")
        fields.append(value or "")
    return fields[0], fields[1], body


def use_for_phrases(description: str) -> list[str]:
    """The "USE FOR:" phrases of a description (quoted ones, else comma-separated)."""
    text = description.replace("\r\n", " ").replace("\n", " ")
    upper = go_upper(text)
    start = 0
    while True:
        pos = upper.find("USE FOR:", start)
        if pos < 0:
            return []
        if pos >= 4 and "NOT " in upper[max(0, pos - 11):pos]:
            start = pos + len("USE FOR:")
            continue
        break
    after = text[pos + len("USE FOR:"):]
    for term in _TERMINATORS:
        if term == "USE FOR:":
            continue
        cut = go_upper(after).find(term)
        if cut >= 0:
            after = after[:cut]
    after = go_trim_space(after).rstrip(".")
    quoted = [go_trim_space(m.group(1)) for m in _QUOTED.finditer(after)]
    if quoted:
        return [q for q in quoted if q]
    phrases = []
    for part in after.split(","):
        p = go_trim_space(_PARENTHETICAL.sub("", go_trim_space(part)))
        if p:
            phrases.append(p)
    return phrases


@hookimpl
def waza_register_graders(register):
    register(TriggerGrader)
