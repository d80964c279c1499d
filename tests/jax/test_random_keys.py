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
