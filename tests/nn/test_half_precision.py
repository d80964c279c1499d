"""bfloat16 activations round where torch's CPU kernels round: computed in float32 inside, the
result rounded once. Values and gradients over every normal bfloat16 input in (-30, 30) (XLA's
CPU kernels flush subnormal numbers to zero, torch's keep them), compared with torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jaxgrad

_BITS = np.arange(0, 2 ** 16, dtype=np.uint32)
_VALUES = (_BITS << 16).view(np.float32)
_TINY = np.finfo(np.float32).tiny
ALL_BF16 = _VALUES[np.isfinite(_VALUES) & (np.abs(_VALUES) < 30)
                   & ((np.abs(_VALUES) >= _TINY) | (_VALUES == 0))]


def F(T):
    return T.nn.functional


# one float32 expression rounded once, as torch's: equal to torch for every normal input
EXACT = {
    "sigmoid": lambda T, x: x.sigmoid(),
    "tanh": lambda T, x: x.tanh(),
    "exp": lambda T, x: x.exp(),
    "softplus": lambda T, x: F(T).softplus(x),
    "elu": lambda T, x: F(T).elu(x),
}
# the same, but where XLA's float32 erf/tanh/exp differ from torch's by an ulp (in gelu's tails,
# x < -2.8) the result can round to the neighbouring bfloat16: under 1% of the inputs (3-5% when
# each op rounded to bfloat16), and results XLA flushes to zero (below 1e-30) are not compared
NEAR = {
    "gelu": lambda T, x: F(T).gelu(x),
    "gelu_tanh": lambda T, x: F(T).gelu(x, approximate="tanh"),
    "silu": lambda T, x: F(T).silu(x),
    "mish": lambda T, x: F(T).mish(x),
    "hardswish": lambda T, x: F(T).hardswish(x),
}


def _value_and_grad(T, fn):
    x = T.tensor(ALL_BF16).to(T.bfloat16).requires_grad_()
    y = fn(T, x)
    y.sum().backward()
    return y.detach().float().numpy(), x.grad.float().numpy()


def _normal(a):
    return (np.abs(a) >= _TINY) | (a == 0) | ~np.isfinite(a)


@pytest.mark.parametrize("name", EXACT)
def test_bfloat16_activations_round_once_as_torch(name):
    for t, j in zip(_value_and_grad(torch, EXACT[name]), _value_and_grad(jaxgrad, EXACT[name])):
        keep = _normal(t)
        np.testing.assert_array_equal(j[keep], t[keep])


@pytest.mark.parametrize("name", NEAR)
def test_bfloat16_activations_round_as_torch_but_for_float32_ulps(name):
    for t, j in zip(_value_and_grad(torch, NEAR[name]), _value_and_grad(jaxgrad, NEAR[name])):
        keep = _normal(t) & _normal(j) & ((np.abs(t) > 1e-30) | (t == 0))
        t, j = t[keep], j[keep]
        differ = ~((t == j) | (np.isnan(t) & np.isnan(j)))
        assert differ.mean() < 0.01, f"{differ.mean():.4f} of the inputs differ"
