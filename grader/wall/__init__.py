"""Where student code runs: the sandboxed kernel (sandbox, warm_kernels, whose zygote is a fork_server)
and nbgrader's Execute step that runs each notebook in it and then its probes (execute).
docs/GRADING.md, "The wall"."""
