"""jaxgrad touches no JAX configuration: a JAX user's own programs behave the same before
``import jaxgrad``, after it, and after jaxgrad has run float64/int64 work of every kind (eager
ops, backward, transforms, compile, random, optimizers) - in a child process, so this process's
state cannot mask a change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r'''
import json, warnings
import jax, jax.numpy as jnp

def config():
    return {k: str(getattr(jax.config, k)) for k in sorted(dir(jax.config))
            if k.startswith("jax_")}

def users_programs():
    """What a JAX user's code computes with the default configuration (x64 off)."""
    out = {}
    def record(name, fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = fn()
                out[name] = [str(getattr(value, "dtype", value)), str(value)]
            except Exception as exc:
                out[name] = ["raised", type(exc).__name__]
        out[name].append(sorted({type(w.message).__name__ for w in caught}))
    record("array", lambda: jnp.array(1.0))
    record("arange", lambda: jnp.arange(3))
    record("zeros64", lambda: jnp.zeros(2, jnp.float64))
    record("argmax64", lambda: jnp.argmax(jnp.zeros(3, jnp.float64)))
    record("normal64", lambda: jax.random.normal(jax.random.key(0), (2,), dtype=jnp.float64))
    record("jit_int64", lambda: jax.jit(lambda x: x * 2)(jnp.arange(3, dtype=jnp.int64)))
    record("erf_inv", lambda: jax.lax.erf_inv(jnp.float32(0.5)))
    record("x64_context", lambda: jax.config.jax_enable_x64)
    return out

def use_jaxgrad(jaxgrad):
    x = jaxgrad.tensor([0.5, 0.9], dtype=jaxgrad.float64, requires_grad=True)
    (x.erfinv() * x.argmax()).sum().backward()
    jaxgrad.func.grad(lambda t: (t.sin() * t).sum())(x.detach())
    jaxgrad.func.vmap(jaxgrad.exp)(jaxgrad.randn(2, 3, dtype=jaxgrad.float64))
    model = jaxgrad.nn.Linear(3, 2).double()
    opt = jaxgrad.optim.Adam(model.parameters())
    model(jaxgrad.rand(4, 3, dtype=jaxgrad.float64)).sum().backward()
    opt.step()
    step = jaxgrad.compile(lambda a: (a * 2).sum())
    step(jaxgrad.arange(5, dtype=jaxgrad.float64))
    jaxgrad.arange(2**40, 2**40 + 3).tolist()
    jax.jit(lambda a: jaxgrad.from_jax(a).exp().jax())(jnp.ones(2))

before = (config(), users_programs())
import jaxgrad
after_import = (config(), users_programs())
use_jaxgrad(jaxgrad)
after_use = (config(), users_programs())
print(json.dumps([before, after_import, after_use]))
'''


def test_users_jax_is_unchanged_by_jaxgrad():
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    environ["PYTHONPATH"] = str(ROOT / "src")
    result = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                            env=environ, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    before, after_import, after_use = json.loads(result.stdout.splitlines()[-1])
    assert before[1]["array"][0] == "float32"  # the child really runs with x64 off
    assert after_import == before
    assert after_use == before


STARTS_NOTHING = '''
import json
from jax._src import xla_bridge
import jaxgrad
g = jaxgrad.manual_seed(0)
print(json.dumps(xla_bridge.backends_are_initialized()))
'''


def test_import_and_seeding_start_no_jax_backend():
    """``import jaxgrad`` and ``manual_seed`` start no JAX computation, so a process group can
    still be initialised after them (``jax.distributed.initialize`` must come first)."""
    result = subprocess.run([sys.executable, "-c", STARTS_NOTHING], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.splitlines()[-1]) is False
