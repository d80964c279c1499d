"""Shape and view ops and random sampling (issue 10). Every case runs on torch and on jaxgrad
(``differential.same``): values, grads, grad_fn graphs, versions, views, errors. Random values
come from jaxgrad's own generators, so sampling tests compare everything but the values, and check
the distributions and the reproducibility of seeded generators.
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import captured_warnings, next_functions, ok, raises, same, val

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import jaxgrad  # noqa: E402

FAST = settings(max_examples=6, deadline=None, database=None)


def _x(T, shape=(3, 4), dtype=None):
    n = int(np.prod(shape))
    values = ((np.arange(n) * 7) % n - n / 2).reshape(shape) / 4
    return T.tensor(values, dtype=dtype or T.float32, requires_grad=True)


def _grads(T, out, *leaves):
    """Backward with a non-uniform gradient; the leaves' grads (values, flags)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = 0
    for o in outs:
        weight = T.arange(float(o.numel())).reshape(o.shape).to(o.dtype) + 1
        total = total + (o * weight).sum()
    total.backward()
    return [val(leaf.grad) for leaf in leaves]


def meta(t):
    """What a sampled tensor shows besides its values."""
    fn = t.grad_fn
    return (tuple(t.shape), str(t.dtype), t.requires_grad, t.is_leaf,
            None if fn is None else type(fn).__name__, t._version,
            None if fn is None else next_functions(fn))


# --- sampling ------------------------------------------------------------------------------------

SAMPLERS = {
    "random_": lambda t: t.random_(),
    "random_to": lambda t: t.random_(5),
    "random_from_to": lambda t: t.random_(-2, 5),
    "random_kw": lambda t: t.random_(to=3),
    "exponential_": lambda t: t.exponential_(2.0),
    "geometric_": lambda t: t.geometric_(0.3),
    "cauchy_": lambda t: t.cauchy_(1.0, 2.0),
    "log_normal_": lambda t: t.log_normal_(),
    "normal_": lambda t: t.normal_(1.0, 2.0),
    "uniform_": lambda t: t.uniform_(-1, 1),
    "bernoulli_float": lambda t: t.bernoulli_(0.25),
    "bernoulli_tensor": lambda t: t.bernoulli_(t.detach().new_full((3,), 0.5)),
}


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
def test_inplace_samplers_meta(name, dtype):
    def program(T):
        t = T.ones(2, 3, dtype=getattr(T, dtype))
        return meta(SAMPLERS[name](t)), meta(t)

    same(program)


@pytest.mark.parametrize("name", SAMPLERS)
def test_inplace_samplers_record_zero_gradients(name):
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        y = x * 2
        out = SAMPLERS[name](y)
        return meta(out), _grads(T, out * 3, x)

    ok(program)


@pytest.mark.parametrize("name", SAMPLERS)
def test_inplace_samplers_refuse_leaves_and_count_versions_of_views(name):
    same(lambda T: SAMPLERS[name](T.ones(2, 3, requires_grad=True)))

    def view(T):
        base = T.zeros(2, 3, dtype=T.float64)
        v = base[0]
        SAMPLERS[name](v)
        return base._version, v._version, v._is_view(), bool((base[1] == 0).all())

    ok(view)


SAMPLER_ERRORS = {
    "random_order": lambda T: T.ones(3).random_(5, 2),
    "random_from_bounds": lambda T: T.ones(3, dtype=T.uint8).random_(-1, 3),
    "random_to_bounds": lambda T: T.ones(3, dtype=T.uint8).random_(0, 300),
    "exponential_rate": lambda T: T.ones(3).exponential_(-1),
    "exponential_zero": lambda T: T.ones(3).exponential_(0),
    "exponential_int": lambda T: T.ones(3, dtype=T.int64).exponential_(),
    "geometric_p": lambda T: T.ones(3).geometric_(1.5),
    "cauchy_sigma": lambda T: T.ones(3).cauchy_(0, -1),
    "cauchy_int": lambda T: T.ones(3, dtype=T.int64).cauchy_(),
    "log_normal_std": lambda T: T.ones(3).log_normal_(1, -1),
    "log_normal_int": lambda T: T.ones(3, dtype=T.int64).log_normal_(),
    "normal_std": lambda T: T.ones(3).normal_(0, -1.0),
    "uniform_order": lambda T: T.ones(3).uniform_(2, 1),
    "bernoulli_p": lambda T: T.ones(3).bernoulli_(1.5),
    "bernoulli_range": lambda T: T.bernoulli(T.tensor([1.5])),
    "bernoulli_long": lambda T: T.bernoulli(T.ones(3, dtype=T.int64)),
    "normal_tensor_std": lambda T: T.normal(T.ones(3), T.tensor([1.0, -1.0, 1.0])),
    "normal_float_std": lambda T: T.normal(T.ones(3), -1.0),
    "normal_long": lambda T: T.normal(T.ones(3, dtype=T.int64), 1.0),
    "multinomial_negative": lambda T: T.multinomial(T.tensor([-1.0, 1.0]), 1),
    "multinomial_inf": lambda T: T.multinomial(T.tensor([float("inf"), 2.0]), 1),
    "multinomial_nan": lambda T: T.multinomial(T.tensor([float("nan"), 2.0]), 1),
    "multinomial_zero_sum": lambda T: T.multinomial(T.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    "multinomial_3d": lambda T: T.multinomial(T.ones(2, 2, 2), 1),
    "multinomial_no_samples": lambda T: T.multinomial(T.ones(2), 0),
    "multinomial_long": lambda T: T.multinomial(T.tensor([1, 2]), 1),
    "multinomial_too_many": lambda T: T.multinomial(T.ones(3), 4),
    "multinomial_empty": lambda T: T.multinomial(T.ones(2, 0), 1),
}


@pytest.mark.parametrize("name", SAMPLER_ERRORS)
def test_sampler_errors(name):
    raises(SAMPLER_ERRORS[name])


FUNCTIONS = {
    "bernoulli": lambda T, p: T.bernoulli(p),
    "bernoulli_method": lambda T, p: p.bernoulli(),
    "bernoulli_p": lambda T, p: T.bernoulli(p, 0.3),
    "normal_tensor_tensor": lambda T, p: T.normal(p, p.detach().reshape(3, 1) + 1),
    "normal_tensor_float": lambda T, p: T.normal(p, 2.0),
    "normal_float_tensor": lambda T, p: T.normal(1.0, p),
    "normal_size": lambda T, p: T.normal(0.0, 1.0, (2, 3)),
    "normal_size_dtype": lambda T, p: T.normal(0.0, 1.0, size=(4,), dtype=T.float64),
    "normal_requires_grad": lambda T, p: T.normal(0.0, 1.0, (4,), requires_grad=True),
    "multinomial": lambda T, p: T.multinomial(p, 2),
    "multinomial_2d": lambda T, p: T.multinomial(p.detach().expand(4, 3), 3),
    "multinomial_replacement": lambda T, p: p.multinomial(10, replacement=True),
    "multinomial_2d_replacement": lambda T, p: T.multinomial(p.expand(2, 3), 5, True),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_sampling_functions_meta(name):
    def program(T):
        p = T.tensor([0.2, 0.5, 0.3], requires_grad=True)
        return meta(FUNCTIONS[name](T, p))

    ok(program)


@pytest.mark.parametrize("name", ["bernoulli", "normal_tensor_tensor", "normal_tensor_float",
                                  "normal_float_tensor"])
def test_sampling_functions_have_zero_gradients(name):
    def program(T):
        p = T.tensor([0.2, 0.5, 0.3], requires_grad=True)
        return _grads(T, FUNCTIONS[name](T, p) * 2, p)

    ok(program)


def test_bernoulli_with_p_has_no_derivative():
    def program(T):
        p = T.tensor([0.2, 0.5, 0.3], requires_grad=True)
        T.bernoulli(p, 0.5).sum().backward()

    raises(program)


SEEDED = {
    "multinomial": lambda g: jaxgrad.multinomial(jaxgrad.ones(2, 5), 3, generator=g),
    "multinomial_replacement": lambda g: jaxgrad.multinomial(jaxgrad.ones(5), 9, True,
                                                             generator=g),
    "bernoulli": lambda g: jaxgrad.bernoulli(jaxgrad.full((9,), 0.5), generator=g),
    "bernoulli_": lambda g: jaxgrad.zeros(9).bernoulli_(0.5, generator=g),
    "normal": lambda g: jaxgrad.normal(0.0, 1.0, (5,), generator=g),
    "normal_tensor": lambda g: jaxgrad.normal(jaxgrad.zeros(5), 1.0, generator=g),
    "random_": lambda g: jaxgrad.zeros(9).random_(100, generator=g),
    "exponential_": lambda g: jaxgrad.zeros(5).exponential_(generator=g),
    "geometric_": lambda g: jaxgrad.zeros(9).geometric_(0.2, generator=g),
    "cauchy_": lambda g: jaxgrad.zeros(5).cauchy_(generator=g),
    "log_normal_": lambda g: jaxgrad.zeros(5).log_normal_(generator=g),
}


@pytest.mark.parametrize("name", SEEDED)
def test_seeded_generators_reproduce_their_samples(name):
    first = SEEDED[name](jaxgrad.Generator().manual_seed(7)).tolist()
    assert SEEDED[name](jaxgrad.Generator().manual_seed(7)).tolist() == first
    g = jaxgrad.Generator().manual_seed(7)
    SEEDED[name](g)
    assert SEEDED[name](g).tolist() != first  # the generator moved on


def test_default_generator_follows_manual_seed():
    state = jaxgrad._random.default_generator.get_state()
    try:
        jaxgrad.manual_seed(3)
        a = jaxgrad.multinomial(jaxgrad.ones(50), 20).tolist()
        jaxgrad.manual_seed(3)
        assert jaxgrad.multinomial(jaxgrad.ones(50), 20).tolist() == a
    finally:
        jaxgrad._random.default_generator.set_state(state)


N = 40000


def _moments(values):
    return float(np.mean(values)), float(np.var(values))


@pytest.mark.parametrize("name,draw,mean,var", [
    ("exponential_", lambda t, g: t.exponential_(2.0, generator=g), 0.5, 0.25),
    ("geometric_", lambda t, g: t.geometric_(0.25, generator=g), 4.0, 12.0),
    ("log_normal_", lambda t, g: t.log_normal_(0.0, 0.5, generator=g),
     np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
    ("normal_", lambda t, g: t.normal_(1.0, 2.0, generator=g), 1.0, 4.0),
    ("uniform_", lambda t, g: t.uniform_(-1.0, 3.0, generator=g), 1.0, 16 / 12),
    ("random_", lambda t, g: t.random_(3, 7, generator=g), 4.5, 1.25),
    ("bernoulli_", lambda t, g: t.bernoulli_(0.3, generator=g), 0.3, 0.21),
])
def test_sampler_distributions(name, draw, mean, var):
    t = jaxgrad.zeros(N, dtype=jaxgrad.float64)
    m, v = _moments(np.asarray(draw(t, jaxgrad.Generator().manual_seed(1)).tolist()))
    assert abs(m - mean) < 5 * np.sqrt(var / N)
    assert abs(v - var) < 0.1 * var


def test_cauchy_quartiles():
    t = jaxgrad.zeros(N, dtype=jaxgrad.float64).cauchy_(1.0, 2.0,
                                                         generator=jaxgrad.Generator())
    q1, q2, q3 = np.quantile(np.asarray(t.tolist()), [0.25, 0.5, 0.75])
    assert abs(q2 - 1.0) < 0.1 and abs((q3 - q1) / 2 - 2.0) < 0.15


def test_multinomial_frequencies():
    g = jaxgrad.Generator().manual_seed(2)
    p = np.array([0.1, 0.6, 0.3, 0.0])
    with_replacement = np.asarray(jaxgrad.multinomial(jaxgrad.tensor(p * 5), N, True,
                                                      generator=g).tolist())
    np.testing.assert_allclose(np.bincount(with_replacement, minlength=4) / N, p, atol=0.015)
    # without replacement: the first pick follows p, later picks never repeat a category
    rows = jaxgrad.multinomial(jaxgrad.tensor(p).expand(N // 4, 4), 3, generator=g).tolist()
    first = np.bincount([r[0] for r in rows], minlength=4) / len(rows)
    np.testing.assert_allclose(first, p, atol=0.03)
    assert all(len(set(r)) == 3 and 3 not in r for r in rows)


def test_bernoulli_tensor_probabilities():
    probs = jaxgrad.tensor([0.0, 0.2, 0.9, 1.0], dtype=jaxgrad.float64).expand(N // 4, 4)
    draws = np.asarray(jaxgrad.bernoulli(probs, generator=jaxgrad.Generator()).tolist())
    np.testing.assert_allclose(draws.mean(0), [0.0, 0.2, 0.9, 1.0], atol=0.025)
    assert draws[:, 0].max() == 0 and draws[:, 3].min() == 1
