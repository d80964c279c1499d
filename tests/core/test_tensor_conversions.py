"""Differential matrix of the conversions out of a tensor -- ``numpy()`` (and ``force=True``),
``tolist()``, ``item()``, ``float``/``int``/``bool``/``complex``, ``np.asarray``/``np.array``
(``__array__``), ``len``, iteration, ``operator.index``, format specs -- for leaves requiring
grad or not, non-leaves, views (also a no_grad view), 0-d and one-element tensors, integer,
bool and inference tensors, under grad mode, no_grad and inference_mode: results, torch's
errors ("Can't call numpy() on Tensor that requires grad...") and warnings.

``float()`` of a tensor requiring grad warns once per process (tests/core/test_scalar_warning.py);
its warnings are left out here.
"""

from __future__ import annotations

import contextlib
import itertools
import operator

import numpy as np
import pytest
import torch

import jaxgrad
from differential import attempt, captured_warnings, same

KINDS = ["leaf_rg", "leaf_plain", "nonleaf", "view_rg", "no_grad_view", "scalar_rg",
         "scalar_nonleaf", "one_rg", "int", "bool", "inference"]
MODES = ["grad", "no_grad", "inference"]
CONVERSIONS = ["numpy", "numpy_force", "tolist", "item", "float", "int", "bool", "complex",
               "asarray", "array_dtype", "len", "iter", "index", "format", "format_empty"]


def make(T, kind):
    if kind == "leaf_rg":
        return T.tensor([1.5, 2.5], requires_grad=True)
    if kind == "leaf_plain":
        return T.tensor([1.5, 2.5])
    if kind == "nonleaf":
        return T.tensor([1.5, 2.5], requires_grad=True) * 2
    if kind == "view_rg":
        return T.tensor([[1.5, 2.5]], requires_grad=True)[0]
    if kind == "no_grad_view":
        x = T.tensor([[1.5, 2.5]], requires_grad=True)
        with T.no_grad():
            return x[0]
    if kind == "scalar_rg":
        return T.tensor(1.5, requires_grad=True)
    if kind == "scalar_nonleaf":
        return T.tensor(1.5, requires_grad=True) * 2
    if kind == "one_rg":
        return T.tensor([3.0], requires_grad=True)
    if kind == "int":
        return T.tensor([3])
    if kind == "bool":
        return T.tensor([True])
    with T.inference_mode():
        return T.tensor([1.5, 2.5])


def convert(t, how):
    return {
        "numpy": lambda: t.numpy().tolist(),
        "numpy_force": lambda: t.numpy(force=True).tolist(),
        "tolist": t.tolist,
        "item": t.item,
        "float": lambda: float(t),
        "int": lambda: int(t),
        "bool": lambda: bool(t),
        "complex": lambda: complex(t),
        "asarray": lambda: np.asarray(t).tolist(),
        "array_dtype": lambda: np.array(t, dtype=np.float64).tolist(),
        "len": lambda: len(t),
        "iter": lambda: list(t),
        "index": lambda: operator.index(t),
        "format": lambda: f"{t:.2f}",
        "format_empty": lambda: f"{t}",
    }[how]()


def _mode(T, mode):
    return {"grad": contextlib.nullcontext(), "no_grad": T.no_grad(),
            "inference": T.inference_mode()}[mode]


def program_for(kind, mode, how):
    def program(T):
        t = make(T, kind)
        with _mode(T, mode):
            return attempt(lambda: convert(t, how))

    return program


@pytest.mark.parametrize(("kind", "mode"), list(itertools.product(KINDS, MODES)))
def test_conversions(kind, mode):
    for how in CONVERSIONS:
        program = program_for(kind, mode, how)
        same(program)
        if how != "float":
            assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad), how
