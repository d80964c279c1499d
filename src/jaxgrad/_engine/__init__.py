"""Layer 2: running ops and their backward.

The dispatcher (``dispatch.apply``, the one choke point every op goes through), the backward
engine and where its hooks run (``engine``), accumulation into leaves, the compiled backward,
forward-mode AD, autocast and the profiler's recording. Imports only ``_core`` and ``_ops``.
"""
