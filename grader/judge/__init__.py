"""The trusted side: the probes and their kernel side, the reference run, the comparison rules, the
code scan, and the Judge preprocessor that decides each grade from data, outside any kernel that ran
student code. docs/GRADING.md, "Who decides a grade"."""
