"""The environment that hides every GPU from graded code, in every walled process: cold kernels (bwrap
sets it), the warm-kernel zygote (before it imports torch) and the kernels it forks, reference kernels.

The wall's /dev has no GPU device node, so graded code could not use a GPU anyway; this says so to
torch too. With no visible device listed, torch.cuda.is_available() and device_count() answer 0 from
the environment alone (PYTORCH_NVML_BASED_CUDA_CHECK=1 sends is_available() that way) and never call
the driver, which, with its libraries readable but no device node, warned on stderr ("CUDA
initialization: Unexpected error from cudaGetDeviceCount() ... Error 304") on a grading host with a
GPU. docs/GRADING.md, "The wall".
"""

NO_GPU = {
    "CUDA_VISIBLE_DEVICES": "",             # the CUDA driver, and torch's own parsing of it
    "HIP_VISIBLE_DEVICES": "",              # ROCm builds of torch read this one first
    "PYTORCH_NVML_BASED_CUDA_CHECK": "1",   # is_available() from the list above, not cudaGetDeviceCount
}
