"""Settings for the test processes (not the library's: jaxgrad changes no JAX or XLA setting).

The suite compiles tens of thousands of small XLA kernels, and on CPU the compile, not the run,
is most of its time. Its processes (and the ones they start, which inherit the environment)
compile with LLVM at ``-O0``: about 40% less compile time per kernel
(``--xla_backend_optimization_level``). It does not change results: XLA's CPU fast-math is off
at every level, so LLVM may not reassociate floating-point arithmetic. The benchmarks run at
XLA's default level. Set ``XLA_FLAGS`` yourself to run the tests another way.
"""

from __future__ import annotations

import os

if "XLA_FLAGS" not in os.environ:  # (read when JAX's CPU backend starts: before any test runs)
    os.environ["XLA_FLAGS"] = "--xla_backend_optimization_level=0"
