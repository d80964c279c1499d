"""jaxgrad.random against torch.random (fork_rng, seeding), and random ops under the user's own
jax.jit / jax.grad / vmap with a key the user threads (``jaxgrad.random.key``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgrad
from differential import ok, torch


def forked_draws(T, enabled):
    T.manual_seed(0)
    first = T.rand(3)
    T.manual_seed(0)
    with T.random.fork_rng(enabled=enabled):
        T.rand(5)
    return bool((T.rand(3) == first).all())


@pytest.mark.parametrize("enabled", [True, False])
def test_fork_rng_like_torch(enabled):
    ok(lambda T: forked_draws(T, enabled))


def test_fork_rng_restores_after_an_exception_and_a_reseed():
    state = jaxgrad.get_rng_state()
    with pytest.raises(ValueError), jaxgrad.random.fork_rng():
        jaxgrad.manual_seed(123)
        raise ValueError
    assert bool((jaxgrad.get_rng_state() == state).all())


@pytest.mark.parametrize("name", ["fork_rng", "get_rng_state", "set_rng_state", "manual_seed",
                                  "seed", "initial_seed"])
def test_torch_random_names(name):
    assert hasattr(torch.random, name) and callable(getattr(jaxgrad.random, name))


def _dropout_loss(w, k, x):
    with jaxgrad.random.key(k):
        t = jaxgrad.from_jax(w)
        return jaxgrad.nn.functional.dropout(jaxgrad.from_jax(x) * t, 0.5).sum().jax()


def test_dropout_under_the_users_jit_and_grad_draws_from_the_threaded_key():
    x = jnp.arange(1.0, 65.0)
    state = jaxgrad.get_rng_state()
    grads = [jax.jit(jax.grad(_dropout_loss))(jnp.ones(64), jax.random.key(s), x)
             for s in (0, 0, 1)]
    assert bool((jaxgrad.get_rng_state() == state).all())  # the generator was not used
    for g in grads:  # kept elements are scaled by 1 / (1 - p), dropped ones are 0
        kept = np.asarray(g) != 0
        np.testing.assert_allclose(np.asarray(g)[kept], 2 * np.asarray(x)[kept])
        assert 0 < kept.sum() < 64
    np.testing.assert_array_equal(grads[0], grads[1])
    assert not np.array_equal(grads[0], grads[2])
    jaxgrad.rand(2)  # nothing traced was kept: the default generator still draws eagerly


def test_a_module_with_dropout_under_vmap_over_keys():
    model = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(8, 8), jaxgrad.nn.Dropout(0.5))

    def out(k):
        with jaxgrad.random.key(k):
            return model(jaxgrad.ones(2, 8)).jax()

    per_key = jax.vmap(out)(jax.random.split(jax.random.key(0), 4))
    assert per_key.shape == (4, 2, 8)
    assert len({np.asarray(r).tobytes() for r in per_key}) == 4
    np.testing.assert_allclose(jax.jit(out)(jax.random.key(7)), out(jax.random.key(7)), rtol=1e-5)


def test_a_raw_uint32_key_is_accepted():
    with jaxgrad.random.key(jax.random.PRNGKey(0)):
        a = jaxgrad.rand(3)
    with jaxgrad.random.key(jax.random.key(0)):
        b = jaxgrad.rand(3)
    assert bool((a == b).all())


# --- draws made for a size class (fewer sampler kernels per program) ------------------------------

@pytest.mark.parametrize("shape", [(1,), (3,), (2, 5), (33, 31), (1025,), (256, 300)])
@pytest.mark.parametrize("draw", ["rand", "randn", "randint", "uniform_", "normal_"])
def test_eager_draws_equal_jax_samplers_on_their_shape(shape, draw):
    """Eager draws are made for a power-of-two size and cut; they are exactly what the
    ``jax.random`` sampler gives on the tensor's own shape (the values inside a trace)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxgrad
    from jaxgrad._functions.random import _split_in_two

    g = jaxgrad.Generator().manual_seed(7)
    sub = _split_in_two(g.key())[1]
    if draw == "rand":
        got, want = jaxgrad.rand(*shape, generator=g), jax.random.uniform(sub, shape)
    elif draw == "randn":
        got = jaxgrad.randn(*shape, generator=g, dtype=jaxgrad.float64)
        with jax.enable_x64(True):
            want = jax.random.normal(sub, shape, jnp.float64)
    elif draw == "randint":
        got = jaxgrad.randint(-5, 9, shape, generator=g)
        want = jax.random.randint(sub, shape, -5, 9, jnp.int32)
    elif draw == "uniform_":
        got = jaxgrad.empty(*shape, dtype=jaxgrad.bfloat16).uniform_(-2, 3, generator=g)
        want = jax.random.uniform(sub, shape, jnp.bfloat16, -2, 3)
    else:
        got = jaxgrad.empty(*shape).normal_(1.5, 2.0, generator=g)
        want = 1.5 + 2.0 * jax.random.normal(sub, shape)
    assert got.shape == shape
    np.testing.assert_array_equal(got.numpy().astype(np.float64),
                                  np.asarray(want).astype(np.float64))


def test_eager_draws_match_a_compiled_steps_draws():
    """The same seed draws the same values eagerly (size classes) and inside a compiled step
    (the sampler on the exact shape)."""
    import jaxgrad

    def step():
        return jaxgrad.randn(3, 7), jaxgrad.rand(5), jaxgrad.randint(0, 9, (2, 2))

    compiled = jaxgrad.compile(step)
    jaxgrad.manual_seed(3)
    eager = [step() for _ in range(2)]
    jaxgrad.manual_seed(3)
    traced = [compiled() for _ in range(2)]
    for e, t in zip(eager, traced):
        assert all(jaxgrad.equal(a, b) for a, b in zip(e, t))


def test_a_seed_key_is_the_seeds_words():
    """A generator's key is wrapped from its seed's two 32-bit words on the host: the key
    ``jax.random.key(seed)`` makes with 64-bit types on."""
    import jax
    import numpy as np

    from jaxgrad._functions.random import _key_of

    for seed in [0, 5, 2**32 - 1, 2**32, 2**40 + 7, 67280421310721, 2**63 - 1]:
        with jax.enable_x64(True):
            want = jax.random.key_data(jax.random.key(seed))
        np.testing.assert_array_equal(np.asarray(jax.random.key_data(_key_of(seed))),
                                      np.asarray(want))
