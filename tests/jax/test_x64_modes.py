"""jaxgrad leaves JAX's x64 defaults alone and works with x64 off (this process) and on.

The suite itself runs with whatever ``JAX_ENABLE_X64`` the environment has (off by default);
``test_suite_subset_with_global_x64`` runs the core differential files again in a child process
with ``JAX_ENABLE_X64=1``, so both modes are exercised by every run of the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgrad
from differential import ok

ROOT = Path(__file__).resolve().parents[2]


def _child(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    environ.update(env, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True, env=environ).stdout.split()


DEFAULTS = ("import jax, jax.numpy as jnp\n"
            "import jaxgrad\n"
            "print(jnp.array(1.0).dtype, jnp.arange(3).dtype, jax.config.jax_enable_x64,\n"
            "      jax.config.jax_explicit_x64_dtypes.name,\n"
            "      jaxgrad.tensor([1.0], dtype=jaxgrad.float64).dtype, jaxgrad.tensor([1]).dtype)")


def test_import_leaves_jax_defaults_alone():
    dt, it, x64, explicit, f64, i64 = _child(DEFAULTS)
    assert (dt, it, x64) == ("float32", "int32", "False")
    assert explicit == _child("import jax; print(jax.config.jax_explicit_x64_dtypes.name)")[0]
    assert (f64, i64) == ("jaxgrad.float64", "jaxgrad.int64")


def test_a_users_explicit_x64_choice_is_kept():
    code = "import jax, jaxgrad; print(jax.config.jax_explicit_x64_dtypes.name)"
    assert _child(code, JAX_EXPLICIT_X64_DTYPES="error") == ["ERROR"]


def test_global_x64_on_is_honoured():
    dt, it, x64, _, f64, i64 = _child(DEFAULTS, JAX_ENABLE_X64="1")
    assert (dt, it, x64) == ("float64", "int64", "True")
    assert (f64, i64) == ("jaxgrad.float64", "jaxgrad.int64")


def test_this_process_runs_with_x64_off_unless_asked():
    if os.environ.get("JAX_ENABLE_X64", "0") in ("0", "", "false", "False"):
        assert not jax.config.jax_enable_x64
        assert jnp.array(1.0).dtype == jnp.float32


def test_float64_kernels_are_full_precision_with_x64_off():
    """JAX's explicit-x64 mode alone computes erf_inv at float32 accuracy and fails on
    argmax/max of 64-bit arrays; jaxgrad's kernels give torch's float64 results."""

    def program(T):
        x = T.tensor([0.5, 0.99, 0.999999, -0.3], dtype=T.float64, requires_grad=True)
        y = T.erfinv(x)
        g = T.nn.functional.gelu(x * 3)
        (y.sum() + g.sum()).backward()
        i = T.tensor([3, -2**40, 2**40, 5], dtype=T.int64)
        return (y, g, x.grad, x.argmax(), x.max(0), i.max(), i.argmin(), i.roll(1),
                T.tensor([2**40]) * 3, x.cumsum(0), T.arange(2**40, 2**40 + 3))

    ok(program, rtol=1e-10)  # float32 accuracy would be ~1e-7


def test_random_sampling_in_float64():
    g = jaxgrad.Generator().manual_seed(0)
    assert jaxgrad.randn(3, dtype=jaxgrad.float64, generator=g).dtype == jaxgrad.float64
    assert jaxgrad.rand(3, dtype=jaxgrad.float64, generator=g).dtype == jaxgrad.float64
    assert jaxgrad.randint(0, 2**40, (3,), generator=g).dtype == jaxgrad.int64
    assert jaxgrad.multinomial(jaxgrad.tensor([0.2, 0.8], dtype=jaxgrad.float64), 4,
                               replacement=True, generator=g).dtype == jaxgrad.int64


CORE_FILES = ["tests/ops/test_ops.py", "tests/autograd/test_engine.py",
              "tests/autograd/test_hooks.py", "tests/autograd/test_inplace_views.py",
              "tests/autograd/test_function.py", "tests/ops/test_ops_pointwise.py"]


@pytest.mark.skipif(os.environ.get("JAX_ENABLE_X64") == "1", reason="already the x64 run")
def test_suite_subset_with_global_x64():
    """The core differential files pass with ``JAX_ENABLE_X64=1`` too (the full suite was run
    both ways when x64 stopped being global; this keeps the switch honest on every run)."""
    environ = dict(os.environ, JAX_ENABLE_X64="1", PYTHONPATH=str(ROOT / "src"))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *CORE_FILES],
        cwd=ROOT, env=environ, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_jaxgrad_arrays_follow_the_users_x64_setting_in_the_users_jax():
    """A float64 array handed out stays float64 where the user's JAX has 64-bit types on; with
    them off, the user's jit makes it float32 (JAX's own rule, with JAX's warning)."""
    t = jaxgrad.tensor([1.0, 2.0], dtype=jaxgrad.float64)
    assert t.jax().dtype == jnp.float64
    with jax.enable_x64(True):
        doubled = jax.jit(lambda a: a * 2)(t.jax())
    assert doubled.dtype == jnp.float64
    np.testing.assert_array_equal(np.asarray(doubled), [2.0, 4.0])
    if not jax.config.jax_enable_x64:
        with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
            assert jax.jit(lambda a: a * 2)(t.jax()).dtype == jnp.float32
