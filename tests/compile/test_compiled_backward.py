"""The cached compiled backward must be indistinguishable from the eager engine and from torch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxgrad
from differential import same, torch  # noqa: F401 - torch import skips without it
from jaxgrad._engine import compiled_backward as _compiled_backward
from jaxgrad._engine import engine as _engine

UNARY = ["exp", "sin", "tanh", "sigmoid", "relu", "neg", "abs"]
BINARY = ["add", "mul", "sub"]


@st.composite
def random_graphs(draw):
    """A random program: ops over a pool of tensors, mixing unary/binary/reductions/views."""
    steps = []
    pool = 2
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "view", "inplace"]))
        a = draw(st.integers(0, pool - 1))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(UNARY)), a))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(BINARY)), a, draw(st.integers(0, pool - 1))))
        elif kind == "scalar":
            steps.append(("scalar", draw(st.sampled_from(BINARY)), a, draw(st.floats(-2, 2))))
        elif kind == "view":
            steps.append(("view", draw(st.sampled_from(["t", "flip_reshape", "slice"])), a))
        else:
            steps.append(("inplace", draw(st.sampled_from(["mul_", "add_"])), a))
        pool += 1
    return steps


def build(steps, T, seed=0):
    rng = np.random.RandomState(seed)
    leaves = [T.tensor(rng.randn(3, 3), requires_grad=True, dtype=T.float64) for _ in range(2)]
    pool = [*leaves]
    for step in steps:
        kind, name = step[0], step[1]
        x = pool[step[2]]
        if kind == "unary":
            out = getattr(x, name)()
        elif kind == "binary":
            out = getattr(x, name)(pool[step[3]])
        elif kind == "scalar":
            out = getattr(x, name)(step[3])
        elif kind == "view":
            out = x.t() if name == "t" else x.reshape(9).reshape(3, 3) if name == "flip_reshape" \
                else x[1:]
            out = out * 1.0 if name == "slice" else out
            if name == "slice":
                out = T.cat([out, out[:1]])
        else:
            out = x * 1.0
            getattr(out, name)(0.5)
        pool.append(out)
    loss = sum(p.sum() for p in pool[2:]) if len(pool) > 2 else pool[0].sum()
    return leaves, loss


def program(steps, backward_twice=False):
    # .grad._version of a gradient summed over several paths depends on torch's memory layouts
    # (see test_grad_versions.py for the cases we match); random graphs compare values only
    def run(T):
        leaves, loss = build(steps, T)
        loss.backward(retain_graph=backward_twice)
        if backward_twice:
            loss.backward()
        return [None if leaf.grad is None else leaf.grad.clone() for leaf in leaves]
    return run


@settings(max_examples=25, deadline=None)
@given(random_graphs(), st.booleans())
def test_random_graphs_match_torch_through_compiled_backward(steps, twice):
    same(program(steps, twice))


@settings(max_examples=15, deadline=None)
@given(random_graphs())
def test_compiled_and_eager_engines_agree(steps):
    def grads(enabled):
        with _engine.compiled_backward(enabled):
            leaves, loss = build(steps, jaxgrad)
            loss.backward()
            return [(None, None) if leaf.grad is None else
                    (np.asarray(leaf.grad._value), leaf.grad._version) for leaf in leaves]

    for (a, va), (b, vb) in zip(grads(True), grads(False)):
        assert (a is None) == (b is None)
        if a is not None:  # XLA may fuse sums in another order: equal to float64 rounding
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert va == vb


def test_same_structure_reuses_one_program():
    def step():
        x = jaxgrad.ones(4, requires_grad=True)
        ((x * 2).exp().sum()).backward()
        return x.grad

    step()
    before = len(_compiled_backward._cache)
    for _ in range(3):
        step()
    assert len(_compiled_backward._cache) == before


def test_hooked_graph_runs_eagerly_and_hooks_fire():
    calls = []
    x = jaxgrad.ones(3, requires_grad=True)
    y = x.exp()
    y.register_hook(lambda g: calls.append(g) or g * 2)
    before = len(_compiled_backward._cache)
    y.sum().backward()
    assert len(calls) == 1
    assert len(_compiled_backward._cache) == before
    np.testing.assert_allclose(np.asarray(x.grad._value), 2 * np.exp(np.ones(3)), rtol=1e-6)


def test_modified_saved_tensor_raises_torch_error_via_fallback():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()

    same(prog)


def test_second_backward_after_compiled_run_raises():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()

    same(prog)


@pytest.mark.parametrize("retain", [True, False])
def test_existing_grad_accumulates_in_place(retain):
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
        g = x.grad
        (x.exp()).sum().backward(retain_graph=retain)
        return x.grad, g is x.grad
    same(prog)


@pytest.mark.xfail(strict=True, reason="known difference: torch copies a transposed fresh gradient "
                   "(non-contiguous, version 1) but steals mm's (laid out to match); jaxgrad has "
                   "no strides for gradients and steals both (version 0)")
def test_grad_version_after_transpose_of_fresh_gradient():
    def prog(T):
        x = T.ones(2, 3, requires_grad=True)
        (x.t() * 2).sum().backward()
        return x.grad
    same(prog)
