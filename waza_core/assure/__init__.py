"""``waza assure``: check a suite's graders against reviewed reference labels, without an agent.

waza (Go)'s grader assurance (``cmd/waza/cmd_assure.go``, ``internal/assurance``), read and
ported: a ``waza.grader-reference`` 1.0 label file says, for finite reference cases, what each
declared requirement check (a grader of the suite) should conclude; ``waza assure`` runs those
graders on the cases' evidence and writes a ``waza.grader-assurance`` 1.0 report whose
``state`` is ``passed`` only when every binding holds, the review is eligible, every case was
observed and agreed, and each domain met its minimum cases and agreement.

* :mod:`.jsonv1`: the ``json-v1`` canonical JSON digests the documents bind with;
* :mod:`.documents`: the label and review documents, checked to the letter;
* :mod:`.authored`: authored reference inputs (``waza.grader-reference-input``);
* :mod:`.verify`: the assessment and its report.
"""
