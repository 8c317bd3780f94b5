"""A grader that declares itself non-deterministic (as a judge model would): it turns the result cache off."""

from waza_core import Grader, hookimpl


class MoodyGrader(Grader):
    name = "moody"
    needs_workspace = False
    deterministic = False

    def grade(self, ctx):
        return self.result(1.0, True, "fine today")


@hookimpl
def waza_register_graders(register):
    register(MoodyGrader)
