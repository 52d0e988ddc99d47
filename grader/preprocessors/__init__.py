"""The harness's nbgrader preprocessors, one per file; grader/pipeline.py lists them in order."""
