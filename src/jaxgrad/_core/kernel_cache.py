"""A persistent cache of the XLA kernels jaxgrad compiles, shared by every process of a user.

Each new shape of an eager op costs an XLA compilation (10-300 ms on CPU); a second run of the
same script would pay it all again. This module keeps jaxgrad's compiled executables on disk,
keyed by JAX's own cache key (the lowered program, the compile options and XLA flags, the
devices, the JAX, jaxlib and backend versions), so a later process loads them in ~2 ms each.

Only jaxgrad's own compilations use it: those that start while jaxgrad's code runs (its kernels,
its samplers, a ``jaxgrad.compile`` step). A user's own ``jax.jit`` programs are left to JAX,
and no JAX setting is changed; where the user has turned on JAX's persistent compilation cache,
jaxgrad's kernels go there instead. Programs with host callbacks and programs spanning several
processes are never stored.

Where it lives: ``$JAXGRAD_KERNEL_CACHE_DIR`` if set (``0``, ``off``, ``false`` or ``no``
turn the cache off), else ``$XDG_CACHE_HOME/jaxgrad/kernels``, else
``~/.cache/jaxgrad/kernels``; :func:`set_dir` moves or disables it at run time. Its size is
bounded (``$JAXGRAD_KERNEL_CACHE_MAX_BYTES``, default 1 GiB): the entries least recently used go
first. Entries are written whole (a temporary file renamed into place), so concurrent processes
(pytest-xdist workers) share it safely; each carries a digest of its bytes, and an entry that is
corrupt or that XLA cannot load is deleted and compiled again.

Memory: an XLA executable holds 1-3 MB of host memory however small its program, and an eager
program that meets many shapes (a boolean mask's count, a test suite) would keep every one
alive. So once ``$JAXGRAD_MAX_LIVE_KERNELS`` kernels (default 1024) were compiled or loaded since
the last release, jaxgrad's kernel memos are emptied before the next compilation: the kernels a
program still uses come back from this directory in milliseconds, the rest are freed.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any, NamedTuple

from jax._src import cache_key as _cache_key  # (JAX's persistent-cache key; not public)
from jax._src import compiler as _jax_compiler  # (where JAX compiles a lowered program)
from jax._src import config as _jax_config
from jax._src.interpreters import mlir as _mlir

from . import jax_setup
from .caches import release_kernels

ENV_DIR = "JAXGRAD_KERNEL_CACHE_DIR"
ENV_MAX_BYTES = "JAXGRAD_KERNEL_CACHE_MAX_BYTES"
ENV_MAX_LIVE = "JAXGRAD_MAX_LIVE_KERNELS"
DEFAULT_MAX_BYTES = 1 << 30
DEFAULT_MAX_LIVE = 1024
_OFF = frozenset({"0", "off", "false", "no"})
_MAGIC = b"jaxgrad-kernel-1\n"
_DIGEST_BYTES = 32
_SUFFIX = ".xla"


class KernelCacheInfo(NamedTuple):
    """What :func:`info` reports: the directory (None when off), this process's hits, misses,
    writes and errors (entries found corrupt or not loadable), the entries on disk, and the
    kernels loaded since jaxgrad last released its kernel memos, and how often it did."""

    directory: str | None
    hits: int
    misses: int
    writes: int
    errors: int
    entries: int
    bytes: int
    live_kernels: int = 0
    releases: int = 0


class _Store:
    """The entries of one directory: whole-file writes, digest-checked reads, LRU eviction."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory, self.max_bytes = directory, max_bytes
        self._bytes: int | None = None  # the total on disk, counted at the first write
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        return self.directory / (re.sub(r"[^A-Za-z0-9_.-]", "_", key)[-150:] + _SUFFIX)

    def read(self, key: str) -> bytes | None:
        """The payload stored under ``key``, or None; a corrupt entry is deleted."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        head = len(_MAGIC) + _DIGEST_BYTES
        payload = data[head:]
        if data[:len(_MAGIC)] != _MAGIC or data[len(_MAGIC):head] != _digest(payload):
            raise _CorruptEntry(path)  # (the caller deletes it)
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        return payload

    def write(self, key: str, payload: bytes) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + _digest(payload) + payload)
            os.replace(tmp, self.path(key))
        except BaseException:
            _unlink(Path(tmp))
            raise
        with self._lock:
            if self._bytes is None:
                self._bytes = sum(size for _, size, _ in self.entries())
            else:
                self._bytes += len(payload) + len(_MAGIC) + _DIGEST_BYTES
            if self._bytes > self.max_bytes:
                self._bytes = self._evict(int(self.max_bytes * 0.8))

    def discard(self, key: str) -> None:
        _unlink(self.path(key))

    def entries(self) -> list[tuple[float, int, Path]]:
        """(last use, size, path) of every entry."""
        out = []
        try:
            with os.scandir(self.directory) as it:
                for e in it:
                    if e.name.endswith(_SUFFIX):
                        try:
                            st = e.stat()
                        except OSError:
                            continue  # removed by another process meanwhile
                        out.append((st.st_mtime, st.st_size, Path(e.path)))
        except OSError:
            pass
        return out

    def _evict(self, target: int) -> int:
        """Delete the least recently used entries until at most ``target`` bytes remain."""
        entries = sorted(self.entries())
        total = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if total <= target:
                break
            _unlink(path)
            total -= size
        return total


class _CorruptEntry(Exception):
    pass


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_DIGEST_BYTES).digest()


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _default_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jaxgrad" / "kernels"


def _max_bytes_from_environment() -> int:
    return int(os.environ.get(ENV_MAX_BYTES) or DEFAULT_MAX_BYTES)


def _store_from_environment() -> _Store | None:
    configured = os.environ.get(ENV_DIR, "").strip()
    if configured.lower() in _OFF:
        return None
    return _Store(Path(configured).expanduser() if configured else _default_directory(),
                  _max_bytes_from_environment())


class _State:
    store: _Store | None = None
    resolved = False  # the environment is read at the first compilation, not at import
    hits = misses = writes = errors = 0
    live = 0  # kernels compiled or loaded since jaxgrad's kernel memos were last emptied
    releases = 0
    max_live: int | None = None  # read from the environment at the first compilation


def _max_live_from_environment() -> int:
    configured = os.environ.get(ENV_MAX_LIVE, "").strip()
    try:
        return max(1, int(configured)) if configured else DEFAULT_MAX_LIVE
    except ValueError:
        return DEFAULT_MAX_LIVE


def _count_live_kernel() -> None:
    """Count one more kernel of jaxgrad's in memory; past the bound, first release the others
    (the one being compiled is held by its caller, so it stays)."""
    if _State.max_live is None:
        _State.max_live = _max_live_from_environment()
    if _State.live >= _State.max_live:
        release_kernels()
        _State.live, _State.releases = 0, _State.releases + 1
    _State.live += 1


def _current_store() -> _Store | None:
    if not _State.resolved:
        _State.store, _State.resolved = _store_from_environment(), True
    return _State.store


def set_dir(path: str | os.PathLike | None, max_bytes: int | None = None) -> None:
    """Keep jaxgrad's compiled kernels in ``path`` from now on (bounded to ``max_bytes``, by
    default ``$JAXGRAD_KERNEL_CACHE_MAX_BYTES`` or 1 GiB), or turn the cache off with None.

    >>> import tempfile, jaxgrad
    >>> before = jaxgrad.kernel_cache.get_dir()
    >>> jaxgrad.kernel_cache.set_dir(tempfile.mkdtemp())
    >>> _ = jaxgrad.ones(3, 29) * 2  # compiled once, loaded from the directory by later runs
    >>> jaxgrad.kernel_cache.info().entries > 0
    True
    >>> jaxgrad.kernel_cache.set_dir(None)
    >>> jaxgrad.kernel_cache.get_dir() is None
    True
    >>> jaxgrad.kernel_cache.set_dir(before)
    """
    if path is None:
        _State.store = None
    else:
        _State.store = _Store(Path(path).expanduser(),
                              _max_bytes_from_environment() if max_bytes is None else max_bytes)
    _State.resolved = True


def get_dir() -> str | None:
    """The directory jaxgrad's compiled kernels are kept in, or None when the cache is off.

    >>> import jaxgrad
    >>> d = jaxgrad.kernel_cache.get_dir()
    >>> d is None or isinstance(d, str)
    True
    """
    store = _current_store()
    return None if store is None else str(store.directory)


def clear() -> None:
    """Delete every entry of the cache's directory (kernels compiled in this process stay
    compiled).

    >>> import jaxgrad
    >>> jaxgrad.kernel_cache.clear()
    """
    store = _current_store()
    if store is not None:
        for _, _, path in store.entries():
            _unlink(path)
        with store._lock:
            store._bytes = 0


def info() -> KernelCacheInfo:
    """The cache's directory, this process's hits, misses, writes and errors, and the entries
    on disk.

    >>> import jaxgrad
    >>> isinstance(jaxgrad.kernel_cache.info().hits, int)
    True
    """
    store = _current_store()
    entries = [] if store is None else store.entries()
    return KernelCacheInfo(None if store is None else str(store.directory), _State.hits,
                           _State.misses, _State.writes, _State.errors, len(entries),
                           sum(size for _, size, _ in entries), _State.live, _State.releases)


# --- the compilation hook ----------------------------------------------------------------------

def _compile_or_load(original, backend, computation, devices, compile_options, host_callbacks,
                     executable_devices, *rest: Any, **kwargs: Any) -> Any:
    """JAX's ``compile_or_get_cached``, with jaxgrad's compilations kept in the store."""
    def compile_now():
        return original(backend, computation, devices, compile_options, host_callbacks,
                        executable_devices, *rest, **kwargs)

    in_scope = jax_setup.in_scope()
    if in_scope:
        _count_live_kernel()
    store = _current_store() if in_scope else None
    if (store is None or host_callbacks or _jax_config.compilation_cache_dir.value is not None
            or len({d.process_index for d in devices.flat}) > 1):
        return compile_now()
    key = _key(computation, devices, compile_options, backend)
    if key is None:
        return compile_now()
    try:
        payload = store.read(key)
        if payload is not None:
            executable = backend.deserialize_executable(payload, executable_devices,
                                                        compile_options)
            _State.hits += 1
            return executable
    except Exception:  # corrupt, or XLA cannot load it: compiled again and rewritten
        _State.errors += 1
        store.discard(key)
    _State.misses += 1
    executable = compile_now()
    try:
        store.write(key, _serialize(executable, backend))
        _State.writes += 1
    except Exception:
        _State.errors += 1  # (a full disk, or an executable XLA cannot serialize)
    return executable


def _key(computation, devices, compile_options, backend) -> str | None:
    """JAX's persistent-cache key of a program, or None for one that calls back into Python
    (a callback's address is part of the program)."""
    try:
        if b"callback" in _mlir.module_to_bytecode(computation):
            return None
        return _cache_key.get(computation, devices, compile_options, backend)
    except Exception:
        return None


def _serialize(executable, backend) -> bytes:
    if hasattr(executable, "serialize"):
        return executable.serialize()
    return backend.serialize_executable(executable)


def install() -> bool:
    """Route JAX's compilations through :func:`_compile_or_load` (once; JAX's own behaviour is
    unchanged outside jaxgrad's code). False where this JAX has no such entry point."""
    original = getattr(_jax_compiler, "compile_or_get_cached", None)
    if original is None or not hasattr(_cache_key, "get"):
        return False
    try:  # (the arguments this module reads, in the order JAX 0.10 passes them)
        names = list(inspect.signature(original).parameters)[:6]
    except (TypeError, ValueError):
        names = []
    if getattr(original, "_jaxgrad_original", None) is None and names != [
            "backend", "computation", "devices", "compile_options", "host_callbacks",
            "executable_devices"]:
        return False
    if getattr(original, "_jaxgrad_original", None) is not None:
        return True

    def compile_or_get_cached(*args: Any, **kwargs: Any) -> Any:
        return _compile_or_load(original, *args, **kwargs)

    compile_or_get_cached._jaxgrad_original = original  # type: ignore[attr-defined]
    _jax_compiler.compile_or_get_cached = compile_or_get_cached
    return True


INSTALLED = install()
