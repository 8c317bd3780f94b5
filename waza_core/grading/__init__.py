"""Grading: the grader interface, the expected.* checks and offline regrading."""
