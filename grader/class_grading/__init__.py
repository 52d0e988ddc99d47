"""Grading a whole class: the hand-ins dealt into batches (the map), each graded by nbgrader in a
scratch course of its own, and the results merged into the one gradebook (the reduce).
docs/GRADING.md, "How parallel grading works"."""
