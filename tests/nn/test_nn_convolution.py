"""Transposed convolutions (functional and modules, output_size, initialisation) and 3-D
convolutions and batch norm against torch.nn: values, grad_fn graphs, gradients, reprs and
errors, with weights copied from fixed random values into both libraries' modules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import jaxgrad
from differential import (
    float_leaves,
    grad_of,
    next_functions,
    ok,
    param_grads,
    raises,
    same,
    set_weights,
    weighted,
    weighted_backward,
)

RS = np.random.RandomState(10)


# --- transposed convolution -----------------------------------------------------------------------

CONV_T = {
    "1d": (1, (2, 4, 5), (4, 3, 3), {}),
    "1d_stride": (1, (2, 4, 5), (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    "1d_groups_dilation": (1, (1, 4, 6), (4, 1, 2), {"groups": 2, "dilation": 2, "stride": 3,
                                                     "output_padding": 2}),
    "1d_unbatched": (1, (4, 5), (4, 2, 2), {"stride": 2}),
    "2d": (2, (2, 3, 4, 4), (3, 2, 3, 3), {}),
    "2d_full": (2, (1, 4, 3, 5), (4, 3, 2, 3), {"stride": (2, 1), "padding": (1, 0),
                                                "output_padding": (1, 0), "groups": 2,
                                                "dilation": (1, 2)}),
    "2d_unbatched": (2, (3, 4, 4), (3, 2, 2, 2), {"stride": 2}),
}


@pytest.mark.parametrize("key", list(CONV_T))
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose_functional(key, bias):
    n, x_shape, w_shape, kwargs = CONV_T[key]
    rs = np.random.RandomState(1)
    arrays = [rs.randn(*x_shape), rs.randn(*w_shape), rs.randn(w_shape[1] * kwargs.get(
        "groups", 1))]

    def program(T):
        x, w, b = (T.tensor(a, requires_grad=True) for a in arrays)
        out = getattr(T.nn.functional, f"conv_transpose{n}d")(x, w, b if bias else None,
                                                               **kwargs)
        graph = next_functions(out.grad_fn)
        weighted_backward(T, out)
        return out, graph, grad_of(x), grad_of(w), grad_of(b)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 2, 3, 3), T.ones(4, 3, 2, 2)),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               output_padding=1),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               stride=2, output_padding=(1, 2)),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2),
                                               output_padding=1),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(2, 4, 3, 3), T.ones(4, 3, 2)),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               padding="same"),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               padding=3),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2), padding=3),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2),
                                               stride=(1, 2)),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2), stride=0),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2), groups=3),
    lambda T: T.nn.ConvTranspose2d(2, 3, 2, padding_mode="reflect"),
])
def test_conv_transpose_errors(call):
    raises(call)


CONV_T_MODULES = {
    "1d": lambda T: T.nn.ConvTranspose1d(2, 3, 2),
    "1d_full": lambda T: T.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                              groups=2, bias=False, dilation=2),
    "2d": lambda T: T.nn.ConvTranspose2d(3, 2, (2, 3), stride=(2, 1), padding=(0, 1)),
    "2d_full": lambda T: T.nn.ConvTranspose2d(4, 6, (2, 3), stride=2, padding=1,
                                              output_padding=1, groups=2, bias=False,
                                              dilation=2),
}
CONV_T_INPUTS = {"1d": (2, 2, 5), "1d_full": (1, 4, 4), "2d": (2, 3, 3, 4),
                 "2d_full": (1, 4, 3, 3)}


@pytest.mark.parametrize("key", list(CONV_T_MODULES))
def test_conv_transpose_modules(key):
    x = RS.randn(*CONV_T_INPUTS[key])

    def program(T):
        m = set_weights(T, CONV_T_MODULES[key](T))
        inp = T.tensor(x, requires_grad=True)
        out = m(inp)
        weighted_backward(T, out)
        return (repr(m), [(n, tuple(p.shape)) for n, p in m.named_parameters()], out,
                grad_of(inp), param_grads(m))

    ok(program)


@pytest.mark.parametrize("size", [[16, 16], [1, 3, 14, 15], [17, 16], [16], [1, 2, 3, 4, 5]])
def test_conv_transpose_output_size(size):
    def program(T):
        m = set_weights(T, T.nn.ConvTranspose2d(2, 3, 2, stride=3))
        return m(T.ones(1, 2, 5, 5, dtype=T.float64), output_size=size)

    same(program)


def test_conv_transpose_init_bounds():
    """Weight (in, out/groups, k...) drawn with kaiming_uniform(a=sqrt(5)): fan_in is
    out/groups * k, as torch computes it from dim 1."""
    m = jaxgrad.nn.ConvTranspose2d(4, 6, 3, groups=2)
    bound = 1 / math.sqrt(3 * 9)
    w = np.asarray(m.weight.detach()._value)
    assert w.shape == (4, 3, 3, 3)
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    assert np.abs(np.asarray(m.bias.detach()._value)).max() <= bound


# --- volumes: Conv3d, BatchNorm3d -----------------------------------------------------------------

V5 = RS.randn(2, 2, 4, 3, 5)

VOLUME_MODULES = {
    "conv3d": lambda T: T.nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1, dilation=(2, 1, 1)),
    "conv3d_groups_same": lambda T: T.nn.Conv3d(2, 4, 3, padding="same", groups=2, bias=False),
    "conv3d_circular": lambda T: T.nn.Conv3d(2, 2, 3, padding=1, padding_mode="circular"),
    "batch_norm3d": lambda T: T.nn.BatchNorm3d(2),
}


@pytest.mark.parametrize("key", list(VOLUME_MODULES))
def test_volume_modules(key):
    def program(T):
        m = set_weights(T, VOLUME_MODULES[key](T), scale=0.5)
        (x,) = float_leaves(T, "float64", V5)
        out = m(x)
        weighted(T, out).backward()
        return repr(m), out, grad_of(x), param_grads(m), dict(m.state_dict())

    ok(program)


def test_conv3d_init_bounds():
    def program(T):
        m = T.nn.Conv3d(2, 3, (2, 3, 2))
        return [tuple(p.shape) for p in m.parameters()], repr(m)

    ok(program)
    m = jaxgrad.nn.Conv3d(4, 64, 3)
    bound = 1 / math.sqrt(4 * 27)  # kaiming_uniform_(a=sqrt(5)) on fan_in 4 * 3 * 3 * 3
    weight = np.asarray(m.weight.detach()._value)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.95 * bound
