"""``type: word_count``: pass when the output has between ``min`` and ``max`` words.

An example of a third-party grader plugin for waza. Install it next to waza
(``pip install ./examples/plugins/waza-wordcount``) and ``waza plugins`` lists it.
"""

from waza_core import Grader, hookimpl


class WordCountGrader(Grader):
    name = "word_count"
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "minProperties": 1,
        "properties": {
            "min": {"type": "integer", "minimum": 0},
            "max": {"type": "integer", "minimum": 0},
        },
    }

    @classmethod
    def check_config(cls, config):
        if "min" in config and "max" in config and config["min"] > config["max"]:
            return [(("min",), f"min ({config['min']}) is greater than max ({config['max']})")]
        return []

    def grade(self, ctx):
        words = len((ctx.evidence.output or "").split())
        lo = self.spec.config.get("min", 0)
        hi = self.spec.config.get("max")
        ok = words >= lo and (hi is None or words <= hi)
        bound = f"{lo}..{hi if hi is not None else 'inf'}"
        feedback = f"{words} words (wanted {bound})"
        return self.result(1.0 if ok else 0.0, ok, feedback, words=words)


@hookimpl
def waza_register_graders(register):
    register(WordCountGrader)
