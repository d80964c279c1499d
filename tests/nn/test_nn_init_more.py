"""jaxgrad.nn.init's structured and less common initialisers against torch.nn.init: eye_ and
dirac_ exactly; orthogonal_, trunc_normal_ and sparse_ by the properties their random draws
guarantee; in-place semantics (identity, ``_version``, no history), errors, warnings and the
deprecated spellings without the underscore."""

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


def seeded(T, seed=0):
    (torch if T is torch else J).manual_seed(seed)


def in_place(T, fill, shape, dtype="float32"):
    """``fill(T, w)`` on a leaf requiring grad: the result, whether it is ``w``, its flags."""
    w = T.empty(*shape, dtype=getattr(T, dtype), requires_grad=True)
    out = fill(T, w)
    return out, out is w, w._version, w.requires_grad, w.grad_fn


EXACT = {
    "eye_wide": (lambda T, w: init(T).eye_(w), (3, 5)),
    "eye_tall": (lambda T, w: init(T).eye_(w), (5, 2)),
    "eye_empty": (lambda T, w: init(T).eye_(w), (2, 0)),
    "dirac_1d": (lambda T, w: init(T).dirac_(w), (3, 2, 5)),
    "dirac_2d": (lambda T, w: init(T).dirac_(w), (4, 6, 3, 2)),
    "dirac_2d_groups": (lambda T, w: init(T).dirac_(w, 2), (6, 4, 3, 3)),
    "dirac_3d_groups": (lambda T, w: init(T).dirac_(w, groups=3), (6, 1, 2, 3, 3)),
}


@pytest.mark.parametrize("name", list(EXACT))
def test_exact_fills_match_torch_in_place(name):
    fill, shape = EXACT[name]
    ok(lambda T: in_place(T, fill, shape))


def test_eye_keeps_an_integer_dtype():
    ok(lambda T: in_place(T, lambda T, w: init(T).eye_(w.detach()), (3, 4), "float64"))
    ok(lambda T: init(T).eye_(T.empty(3, 4, dtype=T.int64)))


ERRORS = {
    "eye_1d": lambda T: init(T).eye_(T.empty(3)),
    "eye_3d": lambda T: init(T).eye_(T.empty(2, 2, 2)),
    "dirac_2d": lambda T: init(T).dirac_(T.empty(3, 3)),
    "dirac_6d": lambda T: init(T).dirac_(T.empty(1, 1, 1, 1, 1, 1)),
    "dirac_groups": lambda T: init(T).dirac_(T.empty(3, 3, 3), 2),
    "dirac_empty_kernel": lambda T: init(T).dirac_(T.empty(2, 3, 0)),
    "orthogonal_1d": lambda T: init(T).orthogonal_(T.empty(3)),
    "sparse_3d": lambda T: init(T).sparse_(T.empty(3, 3, 3), 0.1),
    "sparse_1d": lambda T: init(T).sparse_(T.empty(3), 0.1),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    raises(ERRORS[name])


def test_empty_tensors_are_left_alone():
    ok(lambda T: in_place(T, lambda T, w: init(T).orthogonal_(w), (0, 3)))
    ok(lambda T: in_place(T, lambda T, w: init(T).sparse_(w, 0.3), (0, 3)))


# --- orthogonal_ ----------------------------------------------------------------------------


def _orthogonal(T, shape, gain):
    seeded(T)
    out, is_w, version, rg, fn = in_place(T, lambda T, w: init(T).orthogonal_(w, gain), shape)
    flat = np.asarray(out.detach().reshape(shape[0], -1).numpy(), dtype=np.float64)
    return flat, (is_w, version, rg, fn)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (6, 2, 3), (2, 3, 2, 2)])
@pytest.mark.parametrize("gain", [1, 2.5])
def test_orthogonal_rows_or_columns_are_orthonormal_times_the_gain(shape, gain):
    t, flags_t = _orthogonal(torch, shape, gain)
    j, flags_j = _orthogonal(J, shape, gain)
    assert flags_j == flags_t
    small = min(j.shape)
    gram = j @ j.T if j.shape[0] == small else j.T @ j
    np.testing.assert_allclose(gram, gain**2 * np.eye(small), atol=1e-5 * gain**2)
    # torch's holds the same property (the test can tell an orthogonal fill from another)
    gram_t = t @ t.T if t.shape[0] == small else t.T @ t
    np.testing.assert_allclose(gram_t, gain**2 * np.eye(small), atol=1e-5 * gain**2)


def test_orthogonal_is_reproducible_and_takes_a_generator():
    a = JI.orthogonal_(J.empty(4, 3), generator=J.Generator().manual_seed(5))
    b = JI.orthogonal_(J.empty(4, 3), generator=J.Generator().manual_seed(5))
    c = JI.orthogonal_(J.empty(4, 3), generator=J.Generator().manual_seed(6))
    assert J.equal(a, b) and not J.equal(a, c)


# --- trunc_normal_ --------------------------------------------------------------------------

TRUNC = {  # kwargs -> shape; the last ones put little mass inside [a, b] (rejection sampling)
    "default": (dict(), (300, 200)),
    "narrow": (dict(mean=0.5, std=2.0, a=-0.5, b=1.0), (300, 200)),
    "one_sided": (dict(mean=1.0, std=0.5, a=1.2, b=3.0), (300, 200)),
    "far_tail": (dict(mean=0.0, std=1.0, a=2.0, b=4.0), (300, 200)),
}


def _trunc(T, kwargs, shape):
    seeded(T)
    out, is_w, version, rg, fn = in_place(T, lambda T, w: init(T).trunc_normal_(w, **kwargs), shape)
    return np.asarray(out.detach().numpy(), dtype=np.float64), (is_w, version, rg, fn)


@pytest.mark.parametrize("name", list(TRUNC))
def test_trunc_normal_stays_in_bounds_with_torchs_distribution(name):
    kwargs, shape = TRUNC[name]
    t, flags_t = _trunc(torch, kwargs, shape)
    j, flags_j = _trunc(J, kwargs, shape)
    assert flags_j == flags_t  # a large fill always redraws something: one more copy_
    a, b = kwargs.get("a", -2.0), kwargs.get("b", 2.0)
    assert j.min() >= a and j.max() <= b
    std = t.std()
    assert abs(j.mean() - t.mean()) < 6 * std / math.sqrt(t.size)
    assert abs(j.std() / std - 1) < 0.02


def test_trunc_normal_warns_when_the_mean_is_far_from_the_interval():
    program = lambda T: init(T).trunc_normal_(T.empty(50), mean=5.0, std=1.0, a=-1.0, b=1.0)
    warned = captured_warnings(program, J)
    assert warned == captured_warnings(program, torch) and len(warned) == 1


# --- sparse_ --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sparsity, shape", [(0.5, (10, 4)), (0.15, (7, 3)), (0.0, (4, 2)), (1.0, (3, 3))]
)
def test_sparse_zeroes_ceil_sparsity_rows_in_each_column(sparsity, shape):
    def program(T):
        seeded(T)
        out, is_w, version, rg, fn = in_place(
            T, lambda T, w: init(T).sparse_(w, sparsity, std=0.5), shape
        )
        return (out == 0).sum(0), is_w, version, rg, fn

    ok(program)


# --- deprecated spellings -------------------------------------------------------------------

DEPRECATED = {
    "uniform": (lambda T, w: init(T).uniform(w, 2.0, 2.0), (2, 3)),
    "normal": (lambda T, w: init(T).normal(w, 1.0, 0.0), (2, 3)),
    "constant": (lambda T, w: init(T).constant(w, 0.5), (2, 3)),
    "eye": (lambda T, w: init(T).eye(w), (2, 3)),
    "dirac": (lambda T, w: init(T).dirac(w), (2, 2, 3)),
    "xavier_uniform": (lambda T, w: init(T).xavier_uniform(w, gain=0.0), (2, 3)),
    "xavier_normal": (lambda T, w: init(T).xavier_normal(w, gain=0.0), (2, 3)),
    "kaiming_uniform": (lambda T, w: init(T).kaiming_uniform(w).abs().le(1.0).all(), (2, 3)),
    "kaiming_normal": (lambda T, w: init(T).kaiming_normal(w).shape, (2, 3)),
    "orthogonal": (lambda T, w: init(T).orthogonal(w, gain=0.0), (2, 3)),
    "sparse": (lambda T, w: (init(T).sparse(w, 0.5) == 0).sum(0), (2, 3)),
}


@pytest.mark.parametrize("name", list(DEPRECATED))
def test_deprecated_spellings_warn_and_fill(name):
    fill, shape = DEPRECATED[name]
    program = lambda T: fill(T, T.empty(*shape))
    warned = captured_warnings(program, J)
    assert warned == captured_warnings(program, torch) and warned[0][0] == "FutureWarning"
    ok(program)
    assert getattr(JI, name).__name__ == name
