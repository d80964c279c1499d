"""jaxgrad.nn.init against torch.nn.init: gains and fans exactly, random fills statistically
(bounds, mean, std over large tensors), in-place semantics (version, no history) and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from differential import captured_warnings, ok, raises

torch = pytest.importorskip("torch")
import torch.nn.init as TI  # noqa: E402

import jaxgrad as J  # noqa: E402
import jaxgrad.nn.init as JI  # noqa: E402


def init(T):
    return TI if T is torch else JI


GAINS = [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
         ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]


@pytest.mark.parametrize("nonlinearity, param", GAINS)
def test_calculate_gain(nonlinearity, param):
    ok(lambda T: init(T).calculate_gain(nonlinearity, param))


@pytest.mark.parametrize("shape", [(4, 3), (5, 2, 3), (6, 4, 3, 2)])
def test_fan_in_and_fan_out(shape):
    ok(lambda T: init(T)._calculate_fan_in_and_fan_out(T.empty(*shape)))


ERRORS = {
    "fan_1d": lambda T: init(T)._calculate_fan_in_and_fan_out(T.empty(3)),
    "xavier_1d": lambda T: init(T).xavier_uniform_(T.empty(3)),
    "kaiming_bad_mode": lambda T: init(T).kaiming_normal_(T.empty(3, 2), mode="fan_avg"),
    "gain_unknown": lambda T: init(T).calculate_gain("softplus"),
    "gain_bad_slope": lambda T: init(T).calculate_gain("leaky_relu", True),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    raises(ERRORS[name])


def test_kaiming_on_empty_tensor_warns_and_returns_it():
    program = lambda T: init(T).kaiming_uniform_(T.empty(0, 3))
    assert captured_warnings(program, torch) == captured_warnings(program, J)
    ok(lambda T: init(T).kaiming_uniform_(T.empty(0, 3)))


DETERMINISTIC = {
    "zeros_": lambda T, w: init(T).zeros_(w),
    "ones_": lambda T, w: init(T).ones_(w),
    "constant_": lambda T, w: init(T).constant_(w, -0.25),
}


@pytest.mark.parametrize("name", list(DETERMINISTIC))
def test_deterministic_fills_in_place_on_a_parameter_like_leaf(name):
    def program(T):
        w = T.empty(3, 4, requires_grad=True)
        out = DETERMINISTIC[name](T, w)
        return out, out is w, w._version

    ok(program)


# name -> (fill(T, w), shape); fills of large tensors compared by their statistics
RANDOM = {
    "uniform_": (lambda T, w: init(T).uniform_(w, -0.5, 2.0), (400, 500)),
    "normal_": (lambda T, w: init(T).normal_(w, 1.5, 0.3), (400, 500)),
    "xavier_uniform_": (lambda T, w: init(T).xavier_uniform_(w, gain=2.0), (300, 200, 3)),
    "xavier_normal_": (lambda T, w: init(T).xavier_normal_(w), (300, 200, 3)),
    "kaiming_uniform_": (lambda T, w: init(T).kaiming_uniform_(w, a=math.sqrt(5)), (400, 50, 3)),
    "kaiming_uniform_relu_fan_out": (
        lambda T, w: init(T).kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"),
        (400, 50, 3)),
    "kaiming_normal_": (lambda T, w: init(T).kaiming_normal_(w), (400, 500)),
    "kaiming_normal_tanh_fan_out": (
        lambda T, w: init(T).kaiming_normal_(w, mode="fan_out", nonlinearity="tanh"),
        (400, 500)),
}


def _stats(T, name):
    fill, shape = RANDOM[name]
    if T is torch:
        torch.manual_seed(0)
    else:
        J.manual_seed(0)
    w = T.empty(*shape, requires_grad=True)
    out = fill(T, w)
    values = np.asarray(w.detach().numpy(), dtype=np.float64)
    return out is w, w._version, w.requires_grad, w.grad_fn, values


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_fills_have_torchs_distribution(name):
    same_t, version_t, rg_t, fn_t, t = _stats(torch, name)
    same_j, version_j, rg_j, fn_j, j = _stats(J, name)
    assert (same_t, version_t, rg_t, fn_t) == (same_j, version_j, rg_j, fn_j)
    n = t.size
    std = t.std()
    assert abs(j.mean() - t.mean()) < 6 * std / math.sqrt(n)
    assert abs(j.std() / std - 1) < 0.01
    if "uniform" in name:  # the same support: sample extremes agree to the sampling resolution
        np.testing.assert_allclose([j.min(), j.max()], [t.min(), t.max()], rtol=1e-3,
                                   atol=1e-3 * std)


def test_fills_are_reproducible_under_manual_seed():
    J.manual_seed(3)
    a = JI.kaiming_uniform_(J.empty(4, 5))
    J.manual_seed(3)
    assert J.equal(a, JI.kaiming_uniform_(J.empty(4, 5)))
