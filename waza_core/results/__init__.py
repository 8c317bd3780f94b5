"""Results: statistics, the results file, the console and the reporters."""
