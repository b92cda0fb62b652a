"""Installs the torch shim at interpreter start when AGRAD_CORPUS_TORCH_SHIM is set, so the
processes a corpus program spawns (multiprocessing's spawn start method) run on torch too."""

import os
import sys

if os.environ.get("AGRAD_CORPUS_TORCH_SHIM"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import _torch_shim

    _torch_shim.install()
