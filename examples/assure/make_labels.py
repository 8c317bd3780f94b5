"""Write this example's reference labels: one authored input per case (inputs/), the label file
(references.json) bound to the suite as it is now, and a review declaration (review.json).

    python make_labels.py               # the four cases: waza assure passes (exit 0)
    python make_labels.py --loophole    # plus a case the regex grader wrongly accepts (exit 1)

The digests come from `waza assure eval.yaml --bindings`, so the labels bind the suite, the task
and grader declarations and this waza as they are: edit any of them and `waza assure` reports
the binding as a mismatch until the labels are made (and reviewed) again. In a real project a
person reads the labels and writes review.json; here the script writes it so that the example
runs on its own.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from waza_core.assure.authored import new_input

HERE = Path(__file__).resolve().parent
LABELS_ID, VERSION, TASK = "refund-reply-labels", "1", "refund-reply"
# (case id, classification, authored output file, what each grader should conclude)
CASES = [
    ("good", "good", "good.txt", {"offers-refund": True, "is-json-reply": True}),
    ("alternative", "alternative_valid", "alternative.txt", {"offers-refund": True, "is-json-reply": True}),
    ("refused", "critical_bad", "refused.txt", {"offers-refund": False, "is-json-reply": True}),
    ("prose", "critical_bad", "prose.txt", {"offers-refund": True, "is-json-reply": False}),
]
LOOPHOLE = ("nested-true", "critical_bad", "nested_true.txt", {"offers-refund": False, "is-json-reply": True})
REQUIREMENT = {"offers-refund": ("grants-refund", "task"), "is-json-reply": ("machine-readable", "eval")}


def bindings() -> dict:
    out = subprocess.run([sys.executable, "-m", "waza_core", "assure", "eval.yaml", "--bindings"], cwd=HERE,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loophole", action="store_true", help="add a case the regex grader wrongly accepts")
    cases = CASES + ([LOOPHOLE] if parser.parse_args().loophole else [])
    digests = bindings()
    task = next(t for t in digests["tasks"] if t["task_id"] == TASK)
    grader_sha = {c["check"]["grader"]: c["grader_declaration_sha256"] for c in task["checks"]}
    (HERE / "inputs").mkdir(exist_ok=True)
    label_cases = []
    for ordinal, (case_id, classification, text_file, expected) in enumerate(cases, start=1):
        text = (HERE / "cases" / text_file).read_text(encoding="utf-8")
        envelope = new_input(LABELS_ID, case_id, TASK, ordinal, text)
        path = f"inputs/{case_id}.json"
        (HERE / path).write_bytes(envelope)
        origin = {"eval_id": f"reference:{LABELS_ID}", "task_id": TASK, "run_number": ordinal, "attempt_count": 1,
                  "prior_attempts": "none"}
        label_cases.append({
            "id": case_id, "scenario_id": "damaged-delivery-refund", "domain": "refund-replies",
            "classification": classification, "task_id": TASK,
            "task_declaration_sha256": task["task_declaration_sha256"],
            "authored_input": {"path": path, "document_sha256": hashlib.sha256(envelope).hexdigest()},
            "manifest_sha256": json.loads(envelope)["evidence"]["sha256"],
            "checks": [{"requirement_id": REQUIREMENT[grader][0],
                        "check": {"scope": REQUIREMENT[grader][1], "grader": grader},
                        "grader_declaration_sha256": grader_sha[grader], "rubric_content_sha256": None,
                        "expected_passed": passed,
                        "evidence": [{"origin": origin, "artifact_id": "authored-output", "pointer": "/output"}]}
                       for grader, passed in expected.items()],
        })
    labels = {"schema_version": "1.0", "kind": "waza.grader-reference", "id": LABELS_ID, "version": VERSION,
              "eval_source_sha256": digests["eval_source_sha256"],
              "eval_resolved_config_sha256": digests["eval_resolved_config_sha256"],
              "implementation_executable_sha256": digests["implementation_executable_sha256"],
              "domains": [{"id": "refund-replies", "minimum_cases": 4, "minimum_agreement": 1}],
              "calibration": None, "cases": label_cases}
    data = (json.dumps(labels, indent=2) + "\n").encode()
    (HERE / "references.json").write_bytes(data)
    review = {"schema_version": "1.0", "kind": "waza.grader-review", "source_id": "support-team",
              "subject_id": LABELS_ID, "subject_version": VERSION, "labels_sha256": hashlib.sha256(data).hexdigest(),
              "state": "reviewed", "reviewer": "example-reviewer", "reviewed_at": "2026-12-01T12:00:00Z"}
    (HERE / "review.json").write_text(json.dumps(review, indent=2) + "\n", encoding="utf-8")
    print(f"wrote references.json ({len(label_cases)} cases), review.json and inputs/")


if __name__ == "__main__":
    main()
