"""Fixtures for the grading-harness tests: a tiny assignment and hostile submissions."""
