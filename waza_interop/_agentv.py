"""An AgentV eval file -> the model of a waza suite (see :mod:`waza_interop.agentv`)."""

from __future__ import annotations

from pathlib import Path

from waza_interop._pfconfig import Reader, SuiteModel, Task, _Test
from waza_interop._pfyaml import SourceError, load_yaml

DEFAULT_THRESHOLD = 0.8
_REFUSED = {"required": "a required assertion gates the test on its own score",
            "min_score": "a per-assertion minimum score", "negate": "negate inverts the score, not only the verdict"}


def read_agentv(config: Path, approximate: bool) -> tuple[SuiteModel | None, list[str]]:
    reader = Reader(config, approximate)
    doc = load_yaml(config, reader.shown)
    root = doc.data
    if not isinstance(root, dict) or not isinstance(root.get("tests"), list):
        raise SourceError(f"{doc.where()}: expected an AgentV eval file (a mapping with a tests list)")
    tasks = []
    for j, test in enumerate(root["tests"], 1):
        path = ("tests", j - 1)
        if not isinstance(test, dict):
            reader.refuse(doc.where(path), "a test must be a mapping")
            continue
        prompt = test.get("input")
        if not isinstance(prompt, str):
            reader.refuse(doc.where(path + ("input",)), "input must be a string (message lists are not translated)")
            continue
        items = test.get("assert") or []
        if not isinstance(items, list):
            reader.refuse(doc.where(path + ("assert",)), "assert must be a list")
            continue
        if not items:
            reader.refuse(doc.where(path), f"test {test.get('id', j)!r} has no assert list: AgentV grades it with "
                          "its default LLM judge (criteria, expected output) or scores it 0; waza would pass it")
            continue
        threshold = test.get("threshold", root.get("threshold", DEFAULT_THRESHOLD))
        weights = []
        for k, item in enumerate(items):
            if isinstance(item, str):
                reader.refuse(doc.where(path + ("assert", k)), "a plain-string criterion is judged by an LLM")
                continue
            if isinstance(item, dict):
                for key, why in _REFUSED.items():
                    if key in item:
                        reader.refuse(doc.where(path + ("assert", k, key), key=True), f"{key} is not translated: {why}")
                w = item.get("weight", 1)
                weights.append(w if isinstance(w, (int, float)) and not isinstance(w, bool) else 1)
        total = sum(weights)
        # AgentV: pass when sum(w * score) / sum(w) >= threshold; one failure must fall below it
        if weights and isinstance(threshold, (int, float)) and any((total - w) / total >= threshold
                                                                   for w in weights):
            reader.approx(doc.where(path), f"test {test.get('id', j)!r} passes in AgentV on a weighted mean "
                          f">= {threshold}, which {len(weights)} assertion(s) can reach with one failing",
                          "translated as every grader must pass")
        graders: list[dict] = []
        notes: list[str] = []
        owner = _Test(test, doc, path)
        for k, item in enumerate(items, 1):
            if isinstance(item, dict):
                reader.map_one(item, owner, path + ("assert", k - 1), {}, f"assertion {k} of t{j}", graders, notes)
        for n, g in enumerate(graders, 1):
            label = g.pop("label", g["type"])
            g["name"] = g.pop("metric", None) or f"a{n}-{label}"
        name = test.get("id") if isinstance(test.get("id"), str) else f"t{j}"
        tasks.append(Task(f"t{j}", name, prompt, graders, doc.where(path), notes))
        reader.notes.extend(notes)
    if reader.problems:
        return None, reader.problems
    return SuiteModel(name=config.stem, description=str(root.get("description") or ""), providers=[],
                      tasks=tasks, notes=reader.notes, source=reader.shown), []
