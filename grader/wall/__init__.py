"""Where student code runs: the sandboxed kernel (sandbox, warm_kernels, whose zygote is a fork_server;
no_gpu, the environment that hides every GPU from it) and nbgrader's Execute step that runs each
notebook in it and then its probes (execute). docs/GRADING.md, "The wall"."""
