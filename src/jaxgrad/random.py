"""``jaxgrad.random``: torch.random's functions (seeding, RNG state, ``fork_rng``), and
:func:`key`, which runs jaxgrad's random ops on a ``jax.random`` key the caller threads through
its own ``jax.jit``/``jax.grad``/``vmap`` (no tracer is ever stored in a generator).

>>> import jaxgrad
>>> with jaxgrad.random.fork_rng():
...     _ = jaxgrad.manual_seed(0)
...     a = jaxgrad.rand(2)
>>> with jaxgrad.random.fork_rng():
...     _ = jaxgrad.manual_seed(0)
...     bool((a == jaxgrad.rand(2)).all())
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import jax

from ._functions import random as _random
from ._functions.random import get_rng_state as get_rng_state
from ._functions.random import initial_seed as initial_seed
from ._functions.random import manual_seed as manual_seed
from ._functions.random import seed as seed
from ._functions.random import set_rng_state as set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "key", "manual_seed", "seed",
           "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True,
             device_type: str | None = None) -> Iterator[None]:
    """Restore the random state when the block ends, as ``torch.random.fork_rng``: the CPU
    generator's always, and the default generators of the GPUs in ``devices`` (all of them when
    None). ``enabled=False`` forks nothing.

    >>> import jaxgrad
    >>> before = jaxgrad.get_rng_state()
    >>> with jaxgrad.random.fork_rng():
    ...     _ = jaxgrad.randn(3)
    >>> bool((jaxgrad.get_rng_state() == before).all())
    True
    """
    if not enabled or device_type == "meta":
        yield
        return
    wanted = None if devices is None else {getattr(d, "index", d) or 0 for d in devices}
    gpus = [g for i, g in _random._cuda_generators.items() if wanted is None or i in wanted]
    saved = [(g, g.get_state(), g.initial_seed()) for g in [_random.default_generator, *gpus]]
    try:
        yield
    finally:
        for generator, state, initial in saved:
            generator.manual_seed(initial).set_state(state)


@contextlib.contextmanager
def key(rng_key: jax.Array) -> Iterator[None]:
    """Inside the block, in this thread, every random op (``rand``, ``dropout``, ``normal_``,
    ... with or without a ``generator=``) draws from ``rng_key``, split once per draw, instead
    of a generator's state: the form for random ops inside the user's own ``jax.jit``,
    ``jax.grad`` or ``vmap``, where ``rng_key`` may be a tracer. Generators' states are left
    untouched, and nothing of ``rng_key`` is kept after the block.

    >>> import jax, jaxgrad
    >>> def dropout_step(k, x):
    ...     with jaxgrad.random.key(k):
    ...         return jaxgrad.nn.functional.dropout(jaxgrad.from_jax(x), 0.5).jax()
    >>> out = jax.jit(dropout_step)(jax.random.key(0), jax.numpy.ones(4))
    >>> sorted(set(out.tolist())) in ([0.0, 2.0], [2.0], [0.0])
    True
    """
    with _random.keys_split_from(rng_key):
        yield
