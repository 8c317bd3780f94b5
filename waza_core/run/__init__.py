"""Running a suite: the plan of runs, the executor interface, the run loop."""
