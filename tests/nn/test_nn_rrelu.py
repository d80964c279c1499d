"""Randomized leaky ReLU against torch: ``torch.rrelu``/``rrelu_``, ``F.rrelu``/``rrelu_`` and
``nn.RReLU``.

Eval mode is deterministic (slope ``(lower + upper) / 2``): values and gradients are compared
directly. In training the slopes are drawn (from another bit generator than torch's), so the
programs compare what torch guarantees about them as booleans both libraries compute: slopes in
``[lower, upper]`` where ``x <= 0``, the input kept where ``x > 0``, and the gradient equal to
the drawn noise (``out / in`` on the negative inputs, torch's ``RreluWithNoiseBackward0``).
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import ok, raises, torch

X = [-2.0, -1.0, -0.25, 0.0, 0.5, 3.0]


def structure(t):
    return (list(t.shape), str(t.dtype).split(".")[-1], t.requires_grad,
            None if t.grad_fn is None else type(t.grad_fn).__name__, t._version)


def leaf(T, dtype="float64"):
    return T.tensor(X, dtype=getattr(T, dtype), requires_grad=True)


FORMS = {
    "torch.rrelu": lambda T, x, **kw: T.rrelu(x, **kw),
    "F.rrelu": lambda T, x, **kw: T.nn.functional.rrelu(x, **kw),
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("bounds", [(), (0.1, 0.3), (0.2, 0.2), (-0.5, -0.1), (1.0, 2.0)])
def test_eval_mode_values_and_gradients_like_torch(form, bounds):
    def program(T):
        x = leaf(T)
        kw = dict(zip(("lower", "upper"), bounds))
        y = FORMS[form](T, x, **kw)
        gy = T.tensor(np.linspace(-1, 2, len(X)), dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad(y, x, gy, create_graph=True)
        gg = T.autograd.grad((g * g).sum(), [x, gy], allow_unused=True)
        return y, g.detach(), [t.detach() for t in gg]

    ok(program)


def test_the_default_is_eval_for_the_functions_and_training_for_the_module():
    def program(T):
        x = T.tensor(X)
        eval_out = T.rrelu(x)
        return (T.nn.functional.rrelu(x), eval_out, T.nn.RReLU().training,
                bool((T.nn.RReLU()(x) != eval_out).any()))

    assert ok(program)[0][2:] == (True, True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_eval_mode_dtypes_like_torch(dtype):
    ok(lambda T: T.rrelu(T.tensor(X, dtype=getattr(T, dtype)), 0.1, 0.3))


def training_facts(T, x, y, lower, upper):
    """What torch guarantees of a training draw, given ``x.grad`` from ``y.sum()``."""
    neg, pos = x.detach() <= 0, x.detach() > 0
    slopes = x.grad[neg]
    in_bounds = bool(((slopes >= lower) & (slopes <= upper)).all())
    nonzero = x.detach() != 0
    matches = bool(((y.detach()[nonzero] / x.detach()[nonzero]) - x.grad[nonzero]).abs().max()
                   < 1e-6)
    return (structure(y), in_bounds, matches, bool((y.detach()[pos] == x.detach()[pos]).all()),
            bool((x.grad[pos] == 1).all()))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_training_draws_a_slope_per_negative_element_and_backward_multiplies_by_it(dtype):
    def program(T):
        x = T.tensor(X * 50, dtype=getattr(T, dtype), requires_grad=True)
        y = T.rrelu(x, 0.1, 0.3, True, T.Generator().manual_seed(0))
        y.sum().backward()
        facts = training_facts(T, x, y, 0.1, 0.3)
        slopes = x.grad[x.detach() < 0]
        return facts, len(set(slopes.float().tolist())) > 20

    facts = ok(program)[0]
    assert facts[0][1:] == (True, True, True, True) and facts[1]


def test_training_slopes_are_uniform_on_the_bounds():
    def program(T):
        x = -T.ones(20000, dtype=T.float64)
        slopes = -T.rrelu(x, 0.2, 0.6, True, T.Generator().manual_seed(1))
        return (abs(slopes.mean().item() - 0.4) < 0.005,
                abs(slopes.var().item() - 0.4 ** 2 / 12) < 0.001,
                0.2 <= slopes.min().item() < 0.201, 0.599 < slopes.max().item() <= 0.6)

    assert ok(program)[0] == (True, True, True, True)


def test_training_second_derivative_is_the_noise_and_zero():
    def program(T):
        x = leaf(T)
        y = T.rrelu(x, 0.1, 0.3, True, T.Generator().manual_seed(3))
        gy = T.ones(len(X), dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad(y, x, gy, create_graph=True)
        gx, ggy = T.autograd.grad(g.sum(), [x, gy], allow_unused=True)
        return g.requires_grad, gx, bool((ggy == g.detach()).all())

    assert ok(program)[0][2] is True


def test_training_with_equal_bounds_like_torch():
    # upper - lower <= 1e-6: torch's backward takes leaky_relu's formula with the mean slope
    def program(T):
        x = leaf(T)
        y = T.rrelu(x, 0.25, 0.25, True)
        y.sum().backward()
        return y, x.grad

    ok(program)


def test_training_saves_the_input_as_torch():
    def program(T):
        x = leaf(T)
        h = x * 1
        y = T.rrelu(h, training=True)
        h.add_(1)
        y.sum().backward()

    raises(program)


@pytest.mark.parametrize("training", [False, True])
def test_requires_grad_and_no_grad_like_torch(training):
    def program(T):
        with T.no_grad():
            a = T.rrelu(leaf(T), training=training)
        return structure(a), structure(T.rrelu(T.tensor(X), training=training))

    ok(program)


# --- in place ----------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["torch", "F_inplace", "F_rrelu_"])
def test_inplace_eval_like_torch(form):
    def program(T):
        x = leaf(T)
        h = x * 1
        call = {"torch": lambda: T.rrelu_(h, 0.1, 0.3),
                "F_inplace": lambda: T.nn.functional.rrelu(h, 0.1, 0.3, inplace=True),
                "F_rrelu_": lambda: T.nn.functional.rrelu_(h, 0.1, 0.3)}[form]
        y = call()
        same_object = y is h
        y.backward(T.tensor(np.linspace(-1, 2, len(X)), dtype=T.float64))
        return y, same_object, x.grad

    ok(program)


def test_inplace_training_bumps_the_version_and_multiplies_by_the_noise():
    def program(T):
        x = T.tensor(X * 20, dtype=T.float64, requires_grad=True)
        h = x * 1
        y = T.rrelu_(h, 0.1, 0.3, True, T.Generator().manual_seed(0))
        y.sum().backward()
        return training_facts(T, x, y, 0.1, 0.3), y is h

    facts = ok(program)[0]
    assert facts[0][1:] == (True, True, True, True) and facts[1]


def test_inplace_with_a_negative_slope_refuses_backward_in_eval_only():
    def program(T, training):
        x = leaf(T)
        y = T.rrelu_(x * 1, -0.5, -0.1, training)
        y.sum().backward()
        return structure(y), x.grad if not training else None

    raises(lambda T: program(T, False))
    ok(lambda T: program(T, True))


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("program", [
    lambda T, tr: T.rrelu_(T.tensor(X, requires_grad=True), training=tr),
    lambda T, tr: T.rrelu_(T.tensor(X).expand(2, len(X)), training=tr),
], ids=["leaf", "expanded"])
def test_inplace_errors_like_torch(program, training):
    raises(lambda T: program(T, training))


def test_inplace_without_grad_bumps_the_version_like_torch():
    ok(lambda T: [structure(T.rrelu_(T.tensor(X))),
                  structure(T.rrelu_(T.tensor(X), training=True))])


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda T: T.rrelu(T.tensor(X), 0.5, 0.1),
    lambda T: T.rrelu(T.tensor(X), 0.5, 0.1, True),
    lambda T: T.rrelu(T.tensor([1, 2]), 0.5, 0.1),
    lambda T: T.rrelu(T.tensor([1, 2])),
    lambda T: T.rrelu(T.tensor([1, 2]), training=True),
    lambda T: T.rrelu(T.tensor(X, dtype=T.float16), training=True),
    lambda T: T.rrelu(T.tensor([1.0 + 0j])),
    lambda T: T.rrelu(T.tensor([1.0 + 0j]), training=True),
    lambda T: T.rrelu(T.tensor(X), "a"),
    lambda T: T.rrelu(T.tensor(X), lower=None),
    lambda T: T.rrelu(T.tensor(X), 0.1, 0.3, 1),
    lambda T: T.rrelu(T.tensor(X), training=None),
    lambda T: T.rrelu([1.0]),
    lambda T: T.rrelu_([1.0]),
    lambda T: T.rrelu(T.tensor(X), True, 0.1),
    lambda T: T.nn.functional.rrelu(T.tensor(X), "a"),
    lambda T: T.nn.functional.rrelu(T.tensor(X), training=1),
    lambda T: T.nn.functional.rrelu([1.0]),
    lambda T: T.nn.functional.rrelu([1.0], inplace=True),
    lambda T: T.nn.functional.rrelu(T.tensor(X), generator=T.Generator()),
], ids=["bounds", "bounds_training", "bounds_before_dtype", "long", "long_training",
        "half_training", "complex", "complex_training", "str_lower", "none_lower", "int_training",
        "none_training", "list", "list_inplace", "bool_lower", "F_str_lower", "F_int_training",
        "F_list", "F_list_inplace", "F_generator"])
def test_errors_like_torch(program):
    raises(program)


def test_bounds_as_0d_tensors_like_torch():
    ok(lambda T: T.rrelu(T.tensor(X), T.tensor(0.1), T.tensor(0.3)))


def test_empty_and_0d_like_torch():
    ok(lambda T: [T.rrelu(T.zeros(0), training=True),
                  structure(T.rrelu(T.tensor(-1.0), training=True)), T.rrelu(T.tensor(-1.0))])


# --- nn.RReLU ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(), (0.1, 0.3), (0.1, 0.3, True), (1, 2)])
def test_module_repr_and_attributes_like_torch(args):
    ok(lambda T: (repr(T.nn.RReLU(*args)), T.nn.RReLU(*args).lower, T.nn.RReLU(*args).upper,
                  T.nn.RReLU(*args).inplace, list(T.nn.RReLU(*args).state_dict()),
                  T.nn.RReLU.__constants__))


@pytest.mark.parametrize("inplace", [False, True])
def test_module_eval_like_torch(inplace):
    def program(T):
        x = leaf(T)
        m = T.nn.RReLU(0.1, 0.3, inplace).eval()
        y = m(x * 1)
        y.backward(T.tensor(np.linspace(-1, 2, len(X)), dtype=T.float64))
        return y, x.grad

    ok(program)


@pytest.mark.parametrize("inplace", [False, True])
def test_module_training_draws_from_the_default_generator(inplace):
    def program(T):
        with T.random.fork_rng():  # (the default generators are left as they were)
            T.manual_seed(0)
            x = T.tensor(X * 20, dtype=T.float64, requires_grad=True)
            m = T.nn.Sequential(T.nn.Identity(), T.nn.RReLU(0.1, 0.3, inplace))
            y = m(x * 1)
            y.sum().backward()
            facts = training_facts(T, x, y, 0.1, 0.3)
            T.manual_seed(0)
            again = m(x.detach() * 1)
            return facts, bool((again == y.detach()).all())

    facts = ok(program)[0]
    assert facts[0][1:] == (True, True, True, True) and facts[1]


def test_module_is_exported_like_torch():
    assert jaxgrad.nn.RReLU.__name__ == torch.nn.RReLU.__name__ == "RReLU"
    assert jaxgrad.nn.functional.rrelu_ is jaxgrad.rrelu_
    assert torch.nn.functional.rrelu_ is torch.rrelu_
