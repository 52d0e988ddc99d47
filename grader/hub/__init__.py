"""A class on one JupyterHub: the services that run beside it, instructor side."""
