"""The grading harness: wraps nbgrader for releasing, grading and self-checking the course."""
