"""torch's gradient layout contract for a leaf's first ``.grad`` (AccumulateGrad's
``clone_obey_contract``): a non-overlapping and dense leaf gets a ``.grad`` with its own strides
(a transposed leaf, a transposed ``.grad``), any other leaf a contiguous clone (version 0,
``CloneBackward0`` under ``create_graph``); the compiled and the eager engine agree.

Which gradients torch steals (and so ``_version`` 0 instead of 1) also depends on the layouts
its kernels give their outputs, which jaxgrad does not model: those programs are left out."""

from __future__ import annotations

import warnings

import pytest

from differential import ok
from jaxgrad._engine import engine as _engine

LEAVES = {
    "transposed": lambda T: T.arange(6.0).reshape(2, 3).t(),
    "permuted 3-d": lambda T: T.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "every other column": lambda T: T.arange(12.0).reshape(3, 4)[:, ::2],
    "contiguous": lambda T: T.arange(6.0).reshape(2, 3),
}

PROGRAMS = {
    "mul": lambda x: (x * 2).sum(),
    "square": lambda x: (x * x).sum(),
    "sum": lambda x: x.sum(),
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "eager"])
@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_first_grad_follows_the_layout_contract(leaf, program, create_graph, compiled):
    def prog(T):
        x = LEAVES[leaf](T).detach().requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_graph's reference-cycle warning
            PROGRAMS[program](x).backward(create_graph=create_graph)
        g = x.grad
        return x.stride(), g.stride(), g.is_contiguous(), g.grad_fn, g.detach()

    with _engine.compiled_backward(compiled):
        ok(prog)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "eager"])
def test_strided_grad_accumulates_and_optimizes_in_place(compiled):
    def prog(T):
        x = T.arange(6.0).reshape(2, 3).t().detach().requires_grad_()
        (x * 2).sum().backward()
        first = x.grad
        (x * x).sum().backward()
        T.optim.SGD([x], lr=0.5).step()
        return x.grad is first, x.grad.stride(), x.grad, x.detach(), x.grad.t().contiguous()

    with _engine.compiled_backward(compiled):
        ok(prog)
