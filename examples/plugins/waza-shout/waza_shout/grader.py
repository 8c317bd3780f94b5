"""``type: shout``: pass when the output has no lowercase letter (and enough letters)."""

from waza_core import Grader, GraderError, hookimpl


class ShoutGrader(Grader):
    name = "shout"
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "min_letters": {"type": "integer", "minimum": 0},
            "max_letters": {"type": "integer", "minimum": 0},
        },
    }
    needs_workspace = False  # it reads the output only

    @classmethod
    def check_config(cls, config):
        lo, hi = config.get("min_letters", 0), config.get("max_letters")
        if hi is not None and lo > hi:
            return [(("min_letters",), f"min_letters ({lo}) is greater than max_letters ({hi})")]
        return []

    def grade(self, ctx):
        if ctx.evidence.output is None:
            raise GraderError("the executor recorded no output", "no_output")
        letters = [c for c in ctx.evidence.output if c.isalpha()]
        lower = sum(c.islower() for c in letters)
        lo = self.spec.config.get("min_letters", 0)
        hi = self.spec.config.get("max_letters")
        if len(letters) < lo or (hi is not None and len(letters) > hi):
            return self.result(0.0, False, f"{len(letters)} letters, wanted {lo}..{hi or 'any'}",
                               letters=len(letters))
        score = 1.0 - lower / len(letters) if letters else 1.0
        feedback = "all caps" if lower == 0 else f"{lower} lowercase letter(s)"
        return self.result(score, lower == 0, feedback, letters=len(letters), lowercase=lower)


@hookimpl
def waza_register_graders(register):
    register(ShoutGrader)
