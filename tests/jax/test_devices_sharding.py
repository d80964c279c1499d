"""Devices as JAX devices and shardings, and the RNG's JAX keys.

torch here is the CPU build: what both can run (``.to`` a device that is the CPU, ``Module.to``)
is compared against torch; data parallelism on a Mesh, moves between devices and the
mixed-device error need several devices, so ``devices_8cpu.py`` runs them in a child process on
8 simulated CPU devices, comparing the sharded runs with the single-device one. The RNG's key
interface is jaxgrad's own (torch has no JAX keys): it is checked against jaxgrad's int seeding.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax.sharding import SingleDeviceSharding

import jaxgrad
from differential import ok

CPU = jax.devices("cpu")[0]


def where(T):
    """The CPU as each library names it: a jax.Device for jaxgrad."""
    return CPU if T is jaxgrad else "cpu"


def test_to_a_jax_device_is_to_cpu():
    def program(T):
        x = T.ones(2, requires_grad=True)
        y = x.to(where(T))
        z = x.to(where(T), T.float64)
        (z * 2).sum().backward()
        return y is x, z, x.grad, str(y.device), repr(y.device)

    ok(program)
    ok(lambda T: T.ones(2).to(device=where(T), dtype=T.int64))


def test_module_to_a_jax_device():
    def program(T):
        T.manual_seed(0)
        m = T.nn.Linear(2, 3)
        w = m.weight
        same_object = m.to(where(T)) is m and m.weight is w
        return same_object, str(m.weight.device), m.to(where(T), T.float64).bias.dtype

    ok(program)


def test_device_of_a_jax_device():
    assert jaxgrad.device(CPU) == jaxgrad.device("cpu")
    assert repr(jaxgrad.device(CPU)) == "device(type='cpu')"
    assert jaxgrad.zeros(2, device=CPU).device == jaxgrad.device("cpu")


def test_to_an_equivalent_sharding_is_the_same_tensor():
    x = jaxgrad.ones(2, 3)
    assert x.to(SingleDeviceSharding(CPU)) is x
    assert jaxgrad.zeros_like(x.to(CPU)).device == x.device


@pytest.fixture
def default_generator_kept():
    g = jaxgrad._functions.random.default_generator
    seed, state = g.initial_seed(), g.get_state()
    yield g
    g.manual_seed(seed).set_state(state)


def test_manual_seed_takes_a_jax_key(default_generator_kept):
    jaxgrad.manual_seed(7)
    by_int = jaxgrad.randn(4)
    jaxgrad.manual_seed(jax.random.key(7))
    assert bool((jaxgrad.randn(4) == by_int).all())
    assert jaxgrad.initial_seed() == 7
    raw = jax.random.key_data(jax.random.key(7))
    assert bool(jaxgrad.Generator().manual_seed(raw).key() == jax.random.key(7))
    big = 2**40 + 5  # a seed beyond 32 bits keeps its high word, with or without JAX's x64
    g = jaxgrad.Generator().manual_seed(big)
    assert jaxgrad.Generator().manual_seed(g.key()).initial_seed() == big
    assert not bool(g.key() == jaxgrad.Generator().manual_seed(5).key())
    with pytest.raises(TypeError, match=r"expected an int or a jax\.random key"):
        jaxgrad.Generator().manual_seed(np.zeros(2, np.float32))


def test_generator_key_continues_the_stream():
    g = jaxgrad.Generator().manual_seed(1)
    jaxgrad.rand(2, generator=g)
    h = jaxgrad.Generator().manual_seed(g.key())
    assert bool((jaxgrad.rand(5, generator=g) == jaxgrad.rand(5, generator=h)).all())
    assert jax.dtypes.issubdtype(g.key().dtype, jax.dtypes.prng_key)


def test_drawing_inside_jit_raises_and_leaves_the_generator_usable(default_generator_kept):
    g = default_generator_kept
    key = g.key()
    with pytest.raises(RuntimeError, match="Thread the key"):
        jax.jit(lambda: jaxgrad.rand(3)._value)()
    with pytest.raises(RuntimeError, match="Thread the key"):
        jax.jit(lambda: jaxgrad.randperm(4)._value)()
    assert g.key() is key  # nothing stored
    assert jaxgrad.rand(3).shape == (3,)  # eager draws still work
    with pytest.raises(RuntimeError, match="cannot store a traced key"):
        jax.jit(lambda k: jaxgrad.manual_seed(k) and 0)(jax.random.key(0))
    assert not isinstance(g.key(), jax.core.Tracer)


def test_a_threaded_key_draws_inside_jit():
    def draw(key):
        g = jaxgrad.Generator().manual_seed(key)
        return (jaxgrad.rand(3, generator=g) + jaxgrad.randn(3, generator=g))._value

    key = jax.random.key(3)
    np.testing.assert_allclose(jax.jit(draw)(key), draw(key), rtol=1e-6)  # fused by XLA


def test_eight_devices_in_a_child_process():
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               PYTHONPATH=str(root / "src"), JAX_PLATFORMS="cpu")
    script = root / "tests" / "support" / "devices_8cpu.py"
    done = subprocess.run([sys.executable, str(script)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert lines[:5] == ["data parallel sgd", "data parallel adam",
                         "data parallel, .grad accumulated in place", "moves between devices",
                         "Expected all tensors to be on the same device, but found at least two "
                         "devices, cpu:1 and cpu:2!"], done.stdout
    assert len(lines) == 11
    assert lines[7:] == ["mixed placements sgd", "mixed placements adam",
                         "compiled data parallel sgd", "compiled data parallel adam"]
