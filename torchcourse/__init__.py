"""Code the course reuses across chapters and ddp_scripts/.

A student writes each piece in the chapter that teaches it; later chapters and the DDP scripts
import the reference version from here, so there is exactly one copy of it.
"""
