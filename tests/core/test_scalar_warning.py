"""torch warns once per process when ``float()`` converts a tensor that requires grad; the
check runs in fresh processes, since the once-per-process state is global in both libraries."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import warnings
import {lib} as T
t = T.tensor(2.0, requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    values = [float(t), float(t), int(t), t.item(), float(t.detach())]
    with T.no_grad():
        values.append(float(t))
print(values)
print([(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught])
"""


def _run(lib: str) -> str:
    return subprocess.run([sys.executable, "-c", PROGRAM.format(lib=lib)], capture_output=True,
                          text=True, check=True).stdout


def test_float_of_a_tensor_requiring_grad_warns_once_like_torch():
    assert _run("jaxgrad") == _run("torch")
