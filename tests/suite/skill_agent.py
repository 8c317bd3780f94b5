"""A test plugin: the ``skill-echo`` executor, an agent whose use of a skill is predictable.

It "uses" the skill ``demo`` when its skill folders are not empty and the prompt mentions
``greet``; a prompt with ``boom`` fails the run. Its output names the skill folders it got.
"""

from waza_core import Executor, RunEvidence, hookimpl


class SkillEcho(Executor):
    name = "skill-echo"
    paid = False
    needs_workspace = False
    reports_turns = False

    def execute(self, request):
        if "boom" in request.prompt:
            return RunEvidence(error="the agent crashed on purpose")
        used = bool(request.skill_directories) and "greet" in request.prompt
        return RunEvidence(output=f"skills={','.join(request.skill_directories)} answer to: {request.prompt}",
                           skill_invocations=[{"name": "demo", "path": "SKILL.md"}] if used else [],
                           session_id="echo")


@hookimpl
def waza_register_executors(register):
    register(SkillEcho)
