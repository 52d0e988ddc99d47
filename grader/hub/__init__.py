"""A class on one server: JupyterHub, the shared nbgrader exchange, and feedback on submit (docs/GRADING.md, "A class on one server")."""
