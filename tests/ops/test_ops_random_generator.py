"""``generator=`` in every random function, as torch takes it (keyword or position), poisson and
binomial, and every random function under the user's own ``jax.jit`` with a threaded key
(``jaxgrad.random.key``).

Drawn values cannot equal torch's (another bit generator), so the programs compare what does
not depend on them: shapes, dtypes, grad_fn, versions, errors, and the generator's behaviour
(same seed, same values; another seed, other values; the generator moves on, the default one
does not) as booleans both libraries compute. Values that do not depend on the draw (binomial's
edge cases, the zero gradients) are compared directly.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgrad
from differential import Raised, captured_warnings, ok, raises, run, torch


def structure(t):
    return (list(t.shape), str(t.dtype).split(".")[-1], t.requires_grad,
            None if t.grad_fn is None else type(t.grad_fn).__name__, t._version)


def half(T):
    return T.full((3, 4), 0.5)


# each draws from generator ``g`` and, where it takes one, the tensor ``x`` (values in (0, 1))
CALLS = {
    "rand": lambda T, x, g: T.rand(3, 4, generator=g),
    "randn": lambda T, x, g: T.randn(3, 4, generator=g),
    "randint": lambda T, x, g: T.randint(0, 10, (3, 4), generator=g),
    "randint_high": lambda T, x, g: T.randint(10, (3, 4), generator=g),
    "randperm": lambda T, x, g: T.randperm(12, generator=g),
    "rand_like": lambda T, x, g: T.rand_like(x, generator=g),
    "randn_like": lambda T, x, g: T.randn_like(x, generator=g),
    "randint_like": lambda T, x, g: T.randint_like(x, 10, generator=g),
    "randint_like_low_high": lambda T, x, g: T.randint_like(x, 3, 10, generator=g),
    "bernoulli": lambda T, x, g: T.bernoulli(x, generator=g),
    "bernoulli_p": lambda T, x, g: T.bernoulli(x, 0.5, generator=g),
    "Tensor.bernoulli": lambda T, x, g: x.bernoulli(generator=g),
    "bernoulli_": lambda T, x, g: x.clone().bernoulli_(0.5, generator=g),
    "bernoulli_tensor_": lambda T, x, g: x.clone().bernoulli_(x, generator=g),
    "multinomial": lambda T, x, g: T.multinomial(x, 2, generator=g),
    "multinomial_replacement": lambda T, x, g: T.multinomial(x, 5, True, generator=g),
    "Tensor.multinomial": lambda T, x, g: x.multinomial(3, generator=g),
    "normal_tensor_tensor": lambda T, x, g: T.normal(x, x, generator=g),
    "normal_tensor_float": lambda T, x, g: T.normal(x, 2.0, generator=g),
    "normal_float_tensor": lambda T, x, g: T.normal(1.0, x, generator=g),
    "normal_size": lambda T, x, g: T.normal(1.0, 2.0, (3, 4), generator=g),
    "normal_": lambda T, x, g: x.clone().normal_(generator=g),
    "uniform_": lambda T, x, g: x.clone().uniform_(2.0, 3.0, generator=g),
    "cauchy_": lambda T, x, g: x.clone().cauchy_(generator=g),
    "exponential_": lambda T, x, g: x.clone().exponential_(2.0, generator=g),
    "geometric_": lambda T, x, g: x.clone().geometric_(0.3, generator=g),
    "log_normal_": lambda T, x, g: x.clone().log_normal_(generator=g),
    "random_": lambda T, x, g: x.clone().random_(generator=g),
    "random_to": lambda T, x, g: x.clone().random_(10, generator=g),
    "random_from_to": lambda T, x, g: x.clone().random_(2, 10, generator=g),
    "random_int64": lambda T, x, g: x.long().random_(generator=g),
    "poisson": lambda T, x, g: T.poisson(x * 4, generator=g),
    "poisson_positional": lambda T, x, g: T.poisson(x * 4, g),
    "binomial": lambda T, x, g: T.binomial(x * 0 + 10, x, generator=g),
    "binomial_positional": lambda T, x, g: T.binomial(x * 0 + 10, x, g),
    "rrelu": lambda T, x, g: T.rrelu(x - 0.7, 0.1, 0.3, True, generator=g),
    "rrelu_positional": lambda T, x, g: T.rrelu(x - 0.7, 0.1, 0.3, True, g),
    "rrelu_": lambda T, x, g: T.rrelu_(x - 0.7, 0.1, 0.3, True, g),
}


def _equal(a, b):
    return bool((a == b).all())


def generator_behaviour(T, call):
    x = half(T)
    default = T.get_rng_state()
    g = T.Generator().manual_seed(7)
    start = g.get_state()
    a = call(T, x, g)
    moved_on = not _equal(g.get_state(), start)
    again = call(T, x, g)
    g.manual_seed(7)
    b = call(T, x, g)
    g.manual_seed(8)
    c = call(T, x, g)
    return (structure(a), _equal(a, b), not _equal(a, c), not _equal(a, again), moved_on,
            _equal(T.get_rng_state(), default))


@pytest.mark.parametrize("name", list(CALLS))
def test_generator_keyword_seeds_and_advances_like_torch(name):
    ta, _ = ok(lambda T: generator_behaviour(T, CALLS[name]))
    assert ta[1:] == (True, True, True, True, True)  # (a test that can fail on both)


@pytest.mark.parametrize("name", ["rand_like", "randn_like", "randint_like"])
def test_like_factories_take_the_dtype_and_requires_grad_with_a_generator(name):
    extra = (10,) if name == "randint_like" else ()

    def program(T):
        g = T.Generator().manual_seed(0)
        f = getattr(T, name)
        return [structure(f(T.zeros(2, 3, dtype=T.float64), *extra, generator=g)),
                structure(f(T.zeros(2), *extra, generator=g, dtype=T.float16)),
                structure(f(T.zeros(2), *extra, generator=None, requires_grad=True))]

    ok(program)


@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
def test_like_factories_refuse_integer_inputs_like_torch(name):
    raises(lambda T: getattr(T, name)(T.zeros(2, dtype=T.int64), generator=T.Generator()))


# --- the generator argument: which positions, which types ---------------------------------------

POSITIONAL_REFUSED = {
    "rand": lambda T, g: T.rand(2, g),
    "randn": lambda T, g: T.randn(2, g),
    "randint": lambda T, g: T.randint(0, 2, (2,), g),
    "randperm": lambda T, g: T.randperm(3, g),
    "rand_like": lambda T, g: T.rand_like(T.zeros(2), g),
    "randn_like": lambda T, g: T.randn_like(T.zeros(2), g),
    "bernoulli": lambda T, g: T.bernoulli(T.zeros(2), g),
    "bernoulli_p": lambda T, g: T.bernoulli(T.zeros(2), 0.5, g),
    "multinomial": lambda T, g: T.multinomial(T.ones(2), 1, False, g),
    "normal": lambda T, g: T.normal(T.zeros(2), 1.0, g),
    "normal_size": lambda T, g: T.normal(0.0, 1.0, (2,), g),
    "normal_": lambda T, g: T.zeros(2).normal_(0.0, 1.0, g),
    "uniform_": lambda T, g: T.zeros(2).uniform_(0.0, 1.0, g),
    "cauchy_": lambda T, g: T.zeros(2).cauchy_(0.0, 1.0, g),
    "exponential_": lambda T, g: T.zeros(2).exponential_(1.0, g),
    "geometric_": lambda T, g: T.zeros(2).geometric_(0.5, g),
    "log_normal_": lambda T, g: T.zeros(2).log_normal_(1.0, 2.0, g),
    "random_": lambda T, g: T.zeros(2).random_(0, 2, g),
    "bernoulli_": lambda T, g: T.zeros(2).bernoulli_(0.5, g),
    "Tensor.bernoulli": lambda T, g: T.zeros(2).bernoulli(g),
}


@pytest.mark.parametrize("name", list(POSITIONAL_REFUSED))
def test_a_positional_generator_is_refused_where_torch_refuses_it(name):
    def program(T):
        try:
            POSITIONAL_REFUSED[name](T, T.Generator())
        except TypeError:
            return "TypeError"
        return "accepted"

    assert ok(program)[0] == "TypeError"


@pytest.mark.parametrize("program", [
    lambda T: T.normal(T.zeros(2), 1.0, (2,)),
    lambda T: T.normal(T.zeros(2), T.ones(2), (2,)),
    lambda T: T.normal(0.0, T.ones(2), (2,)),
    lambda T: T.normal(0.0, 1.0),
], ids=["tensor_float_size", "tensors_size", "float_tensor_size", "no_size"])
def test_normal_invalid_combinations_like_torch(program):
    raises(program)


def test_bernoulli_with_a_positional_generator_lists_torchs_overloads():
    ta = run(lambda T: T.bernoulli(T.zeros(2), T.Generator()), torch)
    jb = run(lambda T: T.bernoulli(T.zeros(2), T.Generator()), jaxgrad)
    # the same message but for the generator's class name (torch's is torch._C.Generator)
    assert jb.message == ta.message.replace("jaxgrad._C.Generator", "Generator").replace(
        "torch", "jaxgrad")


# single-signature functions: torch names the argument (and its position when given so)
@pytest.mark.parametrize("program", [
    lambda T: T.poisson(T.ones(2), 3),
    lambda T: T.poisson(T.ones(2), generator=3),
    lambda T: T.binomial(T.ones(2), T.ones(2), "g"),
    lambda T: T.binomial(T.ones(2), T.ones(2), generator=1.5),
    lambda T: T.rrelu(T.ones(2), 0.1, 0.3, True, 3),
    lambda T: T.rrelu(T.ones(2), generator=3),
    lambda T: T.rrelu_(T.ones(2), 0.1, 0.3, True, 3),
    lambda T: T.multinomial(T.ones(2), 1, generator=3),
    lambda T: T.zeros(2).normal_(generator=3),
], ids=["poisson_pos", "poisson_kw", "binomial_pos", "binomial_kw", "rrelu_pos", "rrelu_kw",
        "rrelu__pos", "multinomial_kw", "normal__kw"])
def test_a_generator_of_another_type_raises_torchs_error(program):
    raises(program)


@pytest.mark.parametrize("name", ["rand", "randn", "randint", "randperm", "rand_like",
                                  "randn_like", "randint_like", "bernoulli", "normal", "uniform_",
                                  "bernoulli_", "random_", "exponential_"])
def test_a_generator_of_another_type_is_a_type_error(name):
    call = {"rand": lambda T: T.rand(2, generator=3),
            "randn": lambda T: T.randn(2, generator=3),
            "randint": lambda T: T.randint(0, 2, (2,), generator=3),
            "randperm": lambda T: T.randperm(2, generator=3),
            "rand_like": lambda T: T.rand_like(T.ones(2), generator=3),
            "randn_like": lambda T: T.randn_like(T.ones(2), generator=3),
            "randint_like": lambda T: T.randint_like(T.ones(2), 3, generator=3),
            "bernoulli": lambda T: T.bernoulli(T.ones(2), generator=3),
            "normal": lambda T: T.normal(T.ones(2), 1.0, generator=3),
            "uniform_": lambda T: T.ones(2).uniform_(generator=3),
            "bernoulli_": lambda T: T.ones(2).bernoulli_(generator=3),
            "random_": lambda T: T.ones(2).random_(generator=3),
            "exponential_": lambda T: T.ones(2).exponential_(generator=3)}[name]
    ta, jb = run(call, torch), run(call, jaxgrad)
    assert isinstance(ta, Raised) and isinstance(jb, Raised)
    assert ta.cls == jb.cls == "TypeError"


# --- poisson ------------------------------------------------------------------------------------

def test_poisson_records_poissonbackward0_with_a_zero_gradient():
    def program(T):
        rates = T.tensor([0.5, 2.0, 7.0], requires_grad=True)
        y = T.poisson(rates, generator=T.Generator().manual_seed(0))
        y.sum().backward()
        return structure(y), rates.grad, next_names(y)

    ok(program)


def next_names(t):
    return [None if f is None else type(f).__name__ for f, _ in t.grad_fn.next_functions]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_poisson_keeps_the_floating_dtype(dtype):
    ok(lambda T: structure(T.poisson(T.full((2, 3), 3.0, dtype=getattr(T, dtype)))))


@pytest.mark.parametrize("program", [
    lambda T: T.poisson(T.tensor([1, 2])),
    lambda T: T.poisson(T.tensor([True])),
    lambda T: T.poisson(T.tensor([1.0 + 0j])),
    lambda T: T.poisson(T.tensor([-1.0, 2.0])),
    lambda T: T.poisson(T.tensor([float("nan")])),
    lambda T: T.poisson([1.0]),
], ids=["long", "bool", "complex", "negative", "nan", "list"])
def test_poisson_errors_like_torch(program):
    raises(program)


def test_poisson_of_zero_rates_and_empty_and_0d_like_torch():
    ok(lambda T: [T.poisson(T.zeros(4)), T.poisson(T.zeros(0)), structure(T.poisson(
        T.tensor(3.0)))])


def test_poisson_has_no_tensor_method_as_torch():
    assert not hasattr(torch.Tensor, "poisson") and not hasattr(jaxgrad.Tensor, "poisson")


@pytest.mark.parametrize("rate", [0.3, 4.0, 60.0])
def test_poisson_mean_and_variance_are_the_rate(rate):
    def program(T):
        y = T.poisson(T.full((20000,), rate, dtype=T.float64),
                      generator=T.Generator().manual_seed(1))
        return (abs(y.mean().item() - rate) < 0.05 * rate + 0.02,
                abs(y.var().item() - rate) < 0.1 * rate + 0.02, bool((y == y.round()).all()))

    assert ok(program)[0] == (True, True, True)


# --- binomial -----------------------------------------------------------------------------------

def test_binomial_at_its_deterministic_cases_like_torch():
    # count <= 0 or prob <= 0: 0; prob >= 1: count; NaN prob: NaN
    ok(lambda T: T.binomial(T.tensor([0.0, -3.0, 10.0, 10.0, 10.0, 7.0, 4.0, 2.5]),
                            T.tensor([0.5, 0.5, 0.0, -0.5, 1.0, 1.5, float("nan"), 1.0])))


def test_binomial_records_notimplemented_whose_backward_raises():
    def program(T):
        count = T.tensor([10.0, 5.0], requires_grad=True)
        prob = T.tensor([0.5, 0.2], requires_grad=True)
        y = T.binomial(count, prob, generator=T.Generator())
        names = next_names(y)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return structure(y), names, str(e)
        return structure(y), names, None

    ok(program)


@pytest.mark.parametrize("program", [
    lambda T: T.binomial(T.tensor([10, 5]), T.tensor([0.5, 0.2])),
    lambda T: T.binomial(T.tensor([10.0, 5.0]), T.tensor([1, 0])),
    lambda T: T.binomial(T.tensor([True]), T.tensor([0.5])),
    lambda T: T.binomial(T.tensor([1.0 + 0j]), T.tensor([0.5])),
    lambda T: T.binomial(T.ones(2), T.ones(2, dtype=T.float64)),
    lambda T: T.binomial(T.ones(2, dtype=T.float64), T.ones(2)),
    lambda T: T.binomial(T.ones(2, dtype=T.float16), T.ones(2)),
    lambda T: T.binomial(T.ones(2, dtype=T.float16), T.ones(2, dtype=T.float16)),
    lambda T: T.binomial(T.ones(2, dtype=T.bfloat16), T.ones(2, dtype=T.bfloat16)),
    lambda T: T.binomial(T.ones(2), T.ones(3)),
    lambda T: T.binomial(T.ones(2), T.ones(3, dtype=T.float64)),
    lambda T: T.binomial(T.ones(2), 0.5),
    lambda T: T.binomial([1.0], T.ones(1)),
], ids=["long_count", "long_prob", "bool", "complex", "float_double", "double_float", "half_float",
        "half", "bfloat16", "shapes", "shapes_before_dtypes", "number_prob", "list_count"])
def test_binomial_errors_like_torch(program):
    raises(program)


def test_binomial_broadcasts_with_torchs_resize_warning():
    def program(T):
        return structure(T.binomial(T.tensor([[10.0], [4.0]]), T.tensor([0.0, 1.0])))

    ok(program)
    ok(lambda T: T.binomial(T.tensor([[10.0], [4.0]]), T.tensor([0.0, 1.0])))
    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
    assert len(captured_warnings(program, jaxgrad)) == 1
    same_shape = lambda T: T.binomial(T.ones(2), T.ones(1))
    assert captured_warnings(same_shape, torch) == captured_warnings(same_shape, jaxgrad) == []


def test_binomial_of_float64_and_empty_like_torch():
    ok(lambda T: [structure(T.binomial(T.ones(2, 3, dtype=T.float64),
                                       T.full((2, 3), 0.5, dtype=T.float64))),
                  T.binomial(T.zeros(0), T.zeros(0)), structure(T.binomial(T.tensor(4.0),
                                                                           T.tensor(0.5)))])


@pytest.mark.parametrize(("count", "prob"), [(10.0, 0.3), (200.0, 0.7), (3.5, 0.5)])
def test_binomial_mean_and_range(count, prob):
    def program(T):
        y = T.binomial(T.full((20000,), count, dtype=T.float64),
                       T.full((20000,), prob, dtype=T.float64),
                       generator=T.Generator().manual_seed(3))
        trials = np.floor(count)
        return (abs(y.mean().item() - trials * prob) < 0.03 * trials,
                bool(((y >= 0) & (y <= trials) & (y == y.round())).all()))

    assert ok(program)[0] == (True, True)


def test_binomial_has_no_tensor_method_as_torch():
    assert not hasattr(torch.Tensor, "binomial") and not hasattr(jaxgrad.Tensor, "binomial")


# --- torch's zeros_like gradients of normal ---------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda T, a: T.normal(a, 1.0),
    lambda T, a: T.normal(1.0, a),
    lambda T, a: T.normal(a, a),
    lambda T, a: T.poisson(a),
], ids=["tensor_float", "float_tensor", "tensor_tensor", "poisson"])
def test_zero_gradients_of_samplers_carry_torchs_version(program):
    def run(T):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        program(T, a).sum().backward()
        return a.grad, a.grad._version

    ok(run)


# --- under the user's jax.jit, with a threaded key -------------------------------------------

def _traced(call, g):
    def fn(k, x):
        with jaxgrad.random.key(k):
            return call(jaxgrad, jaxgrad.from_jax(x), g).jax()
    return fn


@pytest.mark.parametrize("name", list(CALLS))
def test_every_random_function_draws_from_the_threaded_key_under_jit(name):
    call = CALLS[name]
    g = jaxgrad.Generator().manual_seed(5)
    generator_state, default_state = g.get_state(), jaxgrad.get_rng_state()
    x = jnp.full((3, 4), 0.5, jnp.float32)
    fn = _traced(call, g)
    jitted = jax.jit(fn)
    a, b = jitted(jax.random.key(0), x), jitted(jax.random.key(0), x)
    c = jitted(jax.random.key(1), x)
    eager = fn(jax.random.key(0), x)
    plain = call(jaxgrad, jaxgrad.from_jax(x), jaxgrad.Generator())
    assert (a.shape, a.dtype) == (eager.shape, eager.dtype) == (tuple(plain.shape),
                                                                plain._value.dtype)
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(eager, np.float64),
                               rtol=1e-5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert bool((g.get_state() == generator_state).all())  # neither generator was used
    assert bool((jaxgrad.get_rng_state() == default_state).all())


@pytest.mark.parametrize("name", ["rrelu", "poisson", "bernoulli",
                                  "normal_tensor_float", "normal_float_tensor",
                                  "normal_tensor_tensor", "normal_", "bernoulli_tensor_"])
def test_random_functions_under_jit_and_grad_of_the_users(name):
    call = CALLS[name]

    def loss(x, k):
        with jaxgrad.random.key(k):
            return call(jaxgrad, jaxgrad.from_jax(x), None).sum().jax()

    x = jnp.full((3, 4), 0.5, jnp.float32)
    grad = jax.jit(jax.grad(loss))(x, jax.random.key(0))
    y = jax.jit(lambda x, k: _traced(call, None)(k, x))(x, jax.random.key(0))
    if name == "rrelu":  # x - 0.7 < 0: the gradient is the drawn slope, y / (x - 0.7)
        np.testing.assert_allclose(grad, y / (x - 0.7), rtol=1e-5)
        assert bool(((grad >= 0.1) & (grad <= 0.3)).all())
    else:  # the samplers' formulas: zero
        np.testing.assert_array_equal(grad, np.zeros((3, 4)))


def test_binomial_under_the_users_grad_raises_torchs_error():
    def loss(x, k):
        with jaxgrad.random.key(k):
            return CALLS["binomial"](jaxgrad, jaxgrad.from_jax(x), None).sum().jax()

    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        jax.grad(loss)(jnp.full((3, 4), 0.5), jax.random.key(0))


def test_random_functions_under_vmap_over_keys():
    def draw(k):
        with jaxgrad.random.key(k):
            x = jaxgrad.full((8,), 0.5)
            return jnp.stack([jaxgrad.poisson(x * 4).jax(),
                              jaxgrad.binomial(x * 0 + 10, x).jax(),
                              jaxgrad.rrelu(x - 1, 0.1, 0.3, True).jax(),
                              jaxgrad.rand_like(x).jax()])

    out = jax.vmap(draw)(jax.random.split(jax.random.key(0), 4))
    assert out.shape == (4, 4, 8)
    assert len({np.asarray(o).tobytes() for o in out}) == 4


def test_traced_probabilities_skip_the_value_checks_eager_ones_keep():
    def fn(k, p):
        with jaxgrad.random.key(k):
            return jaxgrad.bernoulli(jaxgrad.from_jax(p)).jax()

    jax.jit(fn)(jax.random.key(0), jnp.full((3,), 0.5))
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        fn(jax.random.key(0), jnp.full((3,), 1.5))


def test_random_functions_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = jaxgrad.Generator()
        for call in CALLS.values():
            call(jaxgrad, half(jaxgrad), g)
