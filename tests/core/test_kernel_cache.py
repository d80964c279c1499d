"""The persistent kernel cache: hits across processes, concurrent writers, corrupt entries,
turning it off, its size bound, and that only jaxgrad's compilations use it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgrad
from jaxgrad._core import kernel_cache as cache_impl

# a child process: a few ops on a shape no other test uses, then its results and cache counters
CHILD = r"""
import json, jaxgrad
x = jaxgrad.arange(7.0).reshape(7, 1) * jaxgrad.ones(1, 3)
y = (x.sin() * 3 + 1).sum(1)
z = jaxgrad.randn(5, 7, generator=jaxgrad.Generator().manual_seed(1))
values = y.tolist() + z.flatten().tolist()
i = jaxgrad.kernel_cache.info()
print(json.dumps({"values": values, "dir": i.directory,
                  "hits": i.hits, "misses": i.misses, "writes": i.writes, "errors": i.errors}))
"""
TIMEOUT = 120


def run_child(directory: str | Path, count: int = 1) -> list[dict]:
    """Run CHILD in ``count`` processes at once with the cache in ``directory``."""
    env = {**os.environ, cache_impl.ENV_DIR: str(directory)}
    procs = [subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(count)]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=TIMEOUT)
            assert p.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return results


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.xla"))


def test_a_second_process_loads_every_kernel_the_first_compiled(tmp_path):
    first, = run_child(tmp_path)
    assert first["dir"] == str(tmp_path)
    assert first["misses"] > 0 and first["writes"] == first["misses"] and first["errors"] == 0
    assert len(entries(tmp_path)) == first["writes"]
    second, = run_child(tmp_path)
    assert second["values"] == first["values"]
    assert (second["hits"], second["misses"], second["errors"]) == (first["misses"], 0, 0)


def test_concurrent_writers_share_the_directory(tmp_path):
    results = run_child(tmp_path, count=3)
    assert all(r["values"] == results[0]["values"] and r["errors"] == 0 for r in results)
    assert not list(tmp_path.glob(".tmp-*"))  # every write was renamed into place
    after, = run_child(tmp_path)
    assert (after["misses"], after["errors"]) == (0, 0)
    assert after["values"] == results[0]["values"]


@pytest.mark.parametrize("damage", ["truncated", "bit flipped", "not an executable"])
def test_a_corrupt_entry_is_ignored_and_rebuilt(tmp_path, damage):
    first, = run_child(tmp_path)
    for path in entries(tmp_path):
        data = path.read_bytes()
        if damage == "truncated":
            data = data[:len(data) // 2]
        elif damage == "bit flipped":
            data = data[:-10] + bytes([data[-10] ^ 1]) + data[-9:]
        else:  # a valid digest over bytes XLA cannot load
            payload = os.urandom(2000)
            data = cache_impl._MAGIC + hashlib.blake2b(payload, digest_size=32).digest() + payload
        path.write_bytes(data)
    second, = run_child(tmp_path)
    assert second["values"] == first["values"]
    assert second["errors"] == second["misses"] == first["misses"] and second["hits"] == 0
    third, = run_child(tmp_path)
    assert (third["hits"], third["misses"], third["errors"]) == (first["misses"], 0, 0)


@pytest.mark.parametrize("value", ["off", "0"])
def test_the_environment_variable_turns_it_off(tmp_path, value):
    env_dir = tmp_path / "never"
    result, = run_child(value)
    assert result["dir"] is None and result["writes"] == result["hits"] == 0
    assert not env_dir.exists()


@pytest.fixture
def cache_dir(tmp_path):
    """The cache moved to a fresh directory for one test (in this process), then put back."""
    before = cache_impl._State.store, cache_impl._State.resolved
    jaxgrad.kernel_cache.set_dir(tmp_path)
    jaxgrad._clear_caches()
    yield tmp_path
    cache_impl._State.store, cache_impl._State.resolved = before


def test_set_dir_moves_it_and_none_turns_it_off(cache_dir):
    start = jaxgrad.kernel_cache.info()
    assert start.directory == str(cache_dir) == jaxgrad.kernel_cache.get_dir()
    x = jaxgrad.ones(11, 3)
    _ = (x * 5).cos()
    written = jaxgrad.kernel_cache.info()
    assert written.writes > start.writes and written.entries == len(entries(cache_dir)) > 0
    jaxgrad._clear_caches()  # new jitted kernels: compiled again, so loaded from the directory
    _ = (x * 5).cos()
    assert jaxgrad.kernel_cache.info().hits > written.hits
    jaxgrad.kernel_cache.set_dir(None)
    assert jaxgrad.kernel_cache.get_dir() is None and jaxgrad.kernel_cache.info().entries == 0
    _ = (jaxgrad.ones(13, 3) * 5).tan()
    assert len(entries(cache_dir)) == written.entries


def test_a_users_own_jax_programs_are_not_stored(cache_dir):
    before = len(entries(cache_dir))
    out = jax.jit(lambda a: jnp.sinh(a) * 17.0)(jnp.ones((3, 19)))
    np.testing.assert_allclose(np.asarray(out), np.sinh(1.0) * 17.0, rtol=1e-6)
    assert len(entries(cache_dir)) == before


def test_its_size_stays_bounded(cache_dir):
    jaxgrad.kernel_cache.set_dir(cache_dir, max_bytes=60_000)
    for n in range(2, 12):
        _ = jaxgrad.ones(n, 5, 2).exp().sum(0)
    total = sum(p.stat().st_size for p in entries(cache_dir))
    assert 0 < total <= 60_000
    jaxgrad.kernel_cache.clear()
    assert entries(cache_dir) == [] and jaxgrad.kernel_cache.info().bytes == 0


def test_the_default_directory_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv(cache_impl.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_impl._store_from_environment().directory == tmp_path / "jaxgrad" / "kernels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_impl._store_from_environment().directory == (
        Path.home() / ".cache" / "jaxgrad" / "kernels")


def test_kernels_in_memory_stay_bounded_and_results_and_identities_stay(cache_dir, monkeypatch):
    """Past ``max_live`` kernels, jaxgrad's kernel memos are emptied before the next compilation:
    fewer executables are held, values are unchanged, and node classes keep their identity."""
    from jaxgrad._ops._table import jitted_forward

    monkeypatch.setattr(cache_impl._State, "max_live", 4)
    monkeypatch.setattr(cache_impl._State, "live", 0)
    releases = jaxgrad.kernel_cache.info().releases
    x = jaxgrad.ones(3, requires_grad=True)
    node_class = type((x * 2).grad_fn)
    for n in range(2, 14):  # a new shape each step: new kernels, as a changing mask count makes
        a = jaxgrad.arange(float(n)).requires_grad_()
        (a.sin() * 3).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), 3 * np.cos(np.arange(float(n))), rtol=1e-6)
        assert jitted_forward.cache_info().currsize <= 4
    info = jaxgrad.kernel_cache.info()
    assert info.releases > releases and info.live_kernels <= 4
    assert type((x * 2).grad_fn) is node_class


def test_the_live_kernel_bound_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv(cache_impl.ENV_MAX_LIVE, "37")
    assert cache_impl._max_live_from_environment() == 37
    monkeypatch.setenv(cache_impl.ENV_MAX_LIVE, "many")
    assert cache_impl._max_live_from_environment() == cache_impl.DEFAULT_MAX_LIVE
