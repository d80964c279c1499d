"""A Module as a pure JAX function: :func:`to_jax` (torchax's ``extract_jax`` under the name
:func:`extract_jax`) and its inverse :func:`load_jax_state`.

``to_jax(module)`` returns ``(params, fn)``: ``params`` is a dict of the module's parameters as
``jax.Array`` s (each tied parameter once, under its first name) and ``fn(params, *args,
**kwargs)`` runs the module with those arrays swapped in (``functional_call``), taking and
returning JAX arrays, so it can be ``jax.jit``-ed, differentiated with ``jax.grad``, ``vmap``-ed
and stored in Flax or Equinox modules. The module's buffers and its random draws are explicit
state in ``fn.apply(params, buffers, args, kwargs, key=..., train=...)``, which also returns
the updated buffers (BatchNorm's running statistics in training mode).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._functions import random as _random
from .._functions.creation import from_jax
from .functional_call import functional_call

if TYPE_CHECKING:  # any object with torch's Module protocol works; nn sits above this layer
    from ..nn.modules.module import Module

__all__ = ["JaxModuleFunction", "extract_jax", "load_jax_state", "to_jax"]


def to_jax(module: Module) -> tuple[dict[str, jax.Array], JaxModuleFunction]:
    """The module as ``(params, fn)``: its parameters as a dict of ``jax.Array`` (no copies)
    and a pure JAX function ``fn(params, *args, **kwargs)`` running the module on them, with
    JAX arrays (or tracers) in and out. ``fn.buffers`` holds the buffers it reads; use
    ``fn.apply`` to pass buffers, a random key and the train flag explicitly.

    >>> import jax, jax.numpy as jnp, jaxgrad
    >>> lin = jaxgrad.nn.Linear(2, 1)
    >>> params, fn = jaxgrad.func.to_jax(lin)
    >>> sorted(params)
    ['bias', 'weight']
    >>> grads = jax.grad(lambda p, x: fn(p, x).sum())(params, jnp.ones((3, 2)))
    >>> grads["weight"].tolist(), grads["bias"].tolist()
    ([[3.0, 3.0]], [3.0])
    """
    params = {name: p.jax() for name, p in module.named_parameters()}
    return params, JaxModuleFunction(module)


class JaxModuleFunction:
    """``fn`` of :func:`to_jax`: calls its module with the parameters (and buffers) it is given.

    ``fn(params, *args, **kwargs)`` is the plain form: the module's current training mode, its
    buffers as ``fn.buffers`` (read only: an update the module makes to a buffer is dropped),
    random ops on jaxgrad's generator (outside ``jax.jit``) or on ``jaxgrad.random.key``'s key.
    ``fn.apply`` makes all of that explicit.

    >>> import jax.numpy as jnp, jaxgrad
    >>> params, fn = jaxgrad.func.to_jax(jaxgrad.nn.BatchNorm1d(2))
    >>> out, buffers = fn.apply(params, fn.buffers, (jnp.array([[0.0, 2.0], [2.0, 4.0]]),),
    ...                         train=True)
    >>> buffers["running_mean"].tolist(), int(buffers["num_batches_tracked"])
    ([0.10000000149011612, 0.30000001192092896], 1)
    """

    def __init__(self, module: Module):
        self.module = module

    @property
    def buffers(self) -> dict[str, jax.Array]:
        """The module's buffers now, as ``jax.Array`` s by their dotted names."""
        return {name: b.jax() for name, b in self.module.named_buffers()}

    def __call__(self, params: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        out, _ = self.apply(params, self.buffers, args, kwargs)
        return out

    def apply(self, params: Mapping[str, Any], buffers: Mapping[str, Any] | None = None,
              args: Any = (), kwargs: Mapping[str, Any] | None = None, *,
              key: jax.Array | None = None, train: bool | None = None) -> tuple[Any, dict]:
        """Run the module on ``params`` and ``buffers`` (dicts of JAX arrays by dotted name;
        ``buffers=None`` uses the module's own) with ``args``/``kwargs``; returns ``(output,
        new_buffers)`` with JAX arrays in place of tensors. ``key`` (a ``jax.random`` key) feeds
        every random op of the call (dropout), split once per draw; ``train`` sets the module's
        mode for the call (``None``: as it is), restored after it.
        """
        module = self.module
        buffers = self.buffers if buffers is None else dict(buffers)
        state = {name: _as_tensor(v) for name, v in {**buffers, **params}.items()}
        args = args if isinstance(args, tuple) else (args,)
        args, kwargs = _to_tensors((args, dict(kwargs or {})))
        with _training(module, train), _random_key(key):
            out = functional_call(module, state, args, kwargs)
        new_buffers = {name: state[name].jax() for name in buffers}
        return _to_arrays(out), new_buffers

    def __repr__(self) -> str:
        return f"JaxModuleFunction({type(self.module).__name__})"


def extract_jax(module: Module) -> tuple[dict[str, jax.Array], Any]:
    """torchax's ``extract_jax``: ``(states, jax_fn)`` with ``states`` the parameters *and*
    buffers as ``jax.Array`` s and ``jax_fn(states, args, kwargs=None)`` taking the module's
    positional arguments as one tuple (the form torchax programs call); see :func:`to_jax`.

    >>> import jax.numpy as jnp, jaxgrad
    >>> states, jax_fn = jaxgrad.func.extract_jax(jaxgrad.nn.Linear(2, 3))
    >>> jax_fn(states, (jnp.ones((4, 2)),)).shape
    (4, 3)
    """
    params, fn = to_jax(module)
    states = {**fn.buffers, **params}

    def jax_fn(states: Mapping[str, Any], args: Any, kwargs: Mapping[str, Any] | None = None):
        buffer_names = set(fn.buffers)
        return fn.apply({k: v for k, v in states.items() if k not in buffer_names},
                        {k: v for k, v in states.items() if k in buffer_names}, args, kwargs)[0]

    return states, jax_fn


def load_jax_state(module: Module, params: Mapping[str, Any],
                   buffers: Mapping[str, Any] | None = None, strict: bool = True) -> Module:
    """The inverse of :func:`to_jax`: copy ``params`` (and ``buffers``), dicts of JAX arrays by
    dotted name, into the module's own tensors in place (as ``load_state_dict``: versions bumped,
    optimizers keep their references). ``strict``: every parameter must be given, and no
    unknown name. Returns the module.

    >>> import jax, jaxgrad
    >>> lin = jaxgrad.nn.Linear(2, 1)
    >>> params, fn = jaxgrad.func.to_jax(lin)
    >>> params = jax.tree.map(jax.numpy.zeros_like, params)
    >>> jaxgrad.func.load_jax_state(lin, params).weight
    Parameter containing:
    tensor([[0., 0.]], requires_grad=True)
    """
    own = dict(module.named_parameters(remove_duplicate=False))
    own_buffers = dict(module.named_buffers(remove_duplicate=False))
    given = {**(buffers or {}), **params}
    unknown = sorted(set(given) - set(own) - set(own_buffers))
    missing = sorted(set(dict(module.named_parameters())) - set(params))
    if strict and (unknown or missing):
        raise RuntimeError(f"load_jax_state(): missing parameters {missing}, unknown names "
                           f"{unknown}")
    with no_grad():
        for name, value in given.items():
            target = own.get(name, own_buffers.get(name))
            if target is not None:
                target.copy_(_as_tensor(value))
    return module


def _as_tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else from_jax(jnp.asarray(value))


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def _to_tensors(tree: Any) -> Any:
    """Arrays (JAX's, tracers, numpy's: what a JAX function takes) as tensors."""
    return jax.tree.map(lambda x: from_jax(jnp.asarray(x))
                        if isinstance(x, (jax.Array, np.ndarray)) else x, tree, is_leaf=_is_tensor)


def _to_arrays(tree: Any) -> Any:
    return jax.tree.map(lambda x: x.jax() if isinstance(x, Tensor) else x, tree,
                        is_leaf=_is_tensor)


@contextlib.contextmanager
def _training(module: Module, train: bool | None) -> Iterator[None]:
    if train is None:
        yield
        return
    modes = [(m, m.training) for m in module.modules()]
    module.train(train)
    try:
        yield
    finally:
        for m, mode in modes:
            m.training = mode


@contextlib.contextmanager
def _random_key(rng_key: jax.Array | None) -> Iterator[None]:
    if rng_key is None:
        yield
        return
    with _random.keys_split_from(rng_key):
        yield
