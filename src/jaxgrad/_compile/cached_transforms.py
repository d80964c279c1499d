"""``jaxgrad.func`` transforms called eagerly, run as one cached XLA program per signature.

torch.func is fast when called eagerly because its transforms run as C++ wrappers around each
op. ``jaxgrad.func`` transforms run JAX's transformations op by op, which costs several
milliseconds for a small model. So an eager call of ``grad``/``grad_and_value``/``vmap``/
``jacrev``/``jacfwd``/``hessian`` goes through :class:`CachedTransform`, a ``jaxgrad.compile``
of the transformed function that falls back to eager without a word. It uses compile's state
walk, so the tensors, modules and Python values the function reads are inputs and guards, not
baked-in constants. A call is compiled only where the compiled program's observables are the
eager ones:

- a *recipe* (the transform, the function it transforms, and the transform's arguments such as
  ``in_dims``) runs eagerly for its first calls (``EAGER_CALLS_BEFORE_COMPILING``), so a
  transform rebuilt around a new lambda on every call stays eager, and is compiled afterwards
  unless those calls showed Python that runs per call (a module or tensor hook, a print of a
  transformed tensor, ``debug_unwrap``) or results with autograd history (captured tensors
  that require grad connect through the transform's own node);
- the call is outermost: no transform, forward-AD level, profiler, anomaly mode, inference
  mode or saved-tensor hooks are active, no argument is a ``__torch_dispatch__`` subclass, it
  is not inside a compiled step or the user's own JAX trace, and no argument requires grad in
  grad mode;
- a signature whose trace raises, needs a value, runs per-call Python or gives results with
  history runs eagerly, which gives the eager error or result.

What still differs is what differs for ``jaxgrad.compile``: the function's other Python side
effects (appending to a list, a ``print`` of a Python value) happen when a signature is traced.
A step whose reachable Python state changes on every call is traced again on every call, up to
the recompile limit, and then runs eagerly.
"""

from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Callable
from typing import Any

from .._core.anomaly import is_anomaly_enabled
from .._core.grad_mode import is_grad_enabled, is_inference_mode_enabled
from .._core.graph import saved_hooks_state
from .._core.tensor import PYTHON_DISPATCH, Tensor, dispatches_in_python
from .._core.tracing import per_call_notes
from .._core.transform_stack import stack
from .._engine import forward_ad as _forward_ad
from .._engine import profiling as _profiler
from .._func import torch_pytree as P
from .._func.transforms import transform_depth
from . import compiler as _compiler

__all__ = ["CachedTransform", "cached"]

EAGER_CALLS_BEFORE_COMPILING = 2  # a recipe's first calls run eagerly (one-offs stay cheap)
STATES_COMPILED = 2  # walked states compiled per recipe (a module's train and eval, say)
RECIPES_KEPT = 64  # the recipes (and their compiled programs) kept, least recently used dropped


class CachedTransform(_compiler.CompiledFunction):
    """``jaxgrad.compile`` of a transformed function that falls back to eager silently."""

    fallback_errors = (Exception,)
    quiet = True

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__(fn, fullgraph=False, dynamic=None)

    def _runs_eagerly(self, entry: _compiler._Entry) -> bool:
        """Results with history (captured tensors requiring grad) connect to the graph through
        the transform's own node, eagerly; Python that runs per call with values (a hook, a
        print of a traced tensor, ``debug_unwrap``) runs eagerly too."""
        return bool(entry.program.diff_outputs) or entry.per_call_python

    def _new_entry(self, key: tuple) -> _compiler._Entry:
        """A signature whose walked state (``key[0]``) is a third one runs eagerly: a function
        that changes what it reads on every call (appends to a list it reaches) would be traced
        on every call."""
        states = {k[0] for k in self._cache}
        if len(states) >= STATES_COMPILED and key[0] not in states:
            entry = _compiler._Entry(key, self._policy)
            entry.eager = True
            return entry
        return super()._new_entry(key)

    def _graph_break(self, error: Exception) -> None:
        pass  # the eager call that follows raises the error, or gives the eager result

    def _warn_recompile_limit(self, key: tuple) -> None:
        pass


class _Recipes(threading.local):
    def __init__(self) -> None:
        self.seen: collections.OrderedDict[Any, _RecipeEntry] = collections.OrderedDict()


_recipes = _Recipes()


def cached(transform: Callable[..., Callable]) -> Callable[..., Callable]:
    """``transform`` (``grad``, ``vmap``, ...) whose results are :class:`_CachedCall` s."""
    @functools.wraps(transform)
    def make(func: Callable, *args: Any, **kwargs: Any) -> Callable:
        wrapper = transform(func, *args, **kwargs)
        recipe = _recipe_key(transform.__name__, func, args, kwargs)
        return wrapper if recipe is None else _CachedCall(wrapper, recipe)

    return make


class _CachedCall:
    """A transformed function: eager, or its recipe's :class:`CachedTransform`."""

    def __init__(self, wrapper: Callable, recipe: Any) -> None:
        functools.update_wrapper(self, wrapper, updated=())
        self._wrapper, self._recipe = wrapper, recipe

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _outermost(args, kwargs):
            return self._wrapper(*args, **kwargs)
        entry = _recipe_entry(self._recipe)
        if entry.compiled is not None:
            return entry.compiled(*args, **kwargs)
        notes = per_call_notes()
        result = self._wrapper(*args, **kwargs)
        entry.observe(self._wrapper, per_call_notes() != notes, result)
        return result

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)


class _RecipeEntry:
    """A recipe's eager calls so far, and its compiled function once it has one."""

    __slots__ = ("calls", "compiled", "eager_only")

    def __init__(self) -> None:
        self.calls, self.compiled, self.eager_only = 0, None, False

    def observe(self, wrapper: Callable, per_call_python: bool, result: Any) -> None:
        """After an eager call: a recipe whose calls run per-call Python (hooks, prints of
        traced tensors) or give results with history stays eager; otherwise it is compiled
        after enough calls."""
        history = any(isinstance(t, Tensor) and t._requires_grad for t in P.tree_leaves(result))
        self.eager_only = self.eager_only or per_call_python or history
        self.calls += 1
        if not self.eager_only and self.calls >= EAGER_CALLS_BEFORE_COMPILING:
            self.compiled = CachedTransform(wrapper)


def _recipe_entry(recipe: Any) -> _RecipeEntry:
    seen = _recipes.seen
    entry = seen.get(recipe)
    if entry is None:
        entry = seen[recipe] = _RecipeEntry()
        if len(seen) > RECIPES_KEPT:
            seen.popitem(last=False)
    else:
        seen.move_to_end(recipe)
    return entry


def _recipe_key(name: str, func: Callable, args: tuple, kwargs: dict) -> Any:
    """What makes two transformed functions the same: the transform, the function transformed
    (a transformed function: its own recipe) and the transform's arguments; None when an
    argument cannot be a key."""
    key = (name, func._recipe if isinstance(func, _CachedCall) else func, _frozen(args),
           _frozen(tuple(sorted(kwargs.items()))))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _frozen(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, *(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("dict", *((k, _frozen(v)) for k, v in value.items()))
    return value


def _outermost(args: tuple, kwargs: dict) -> bool:
    """Whether this call may run compiled: see the module's docstring."""
    if (transform_depth() or stack.kinds or stack.functionalizing or _forward_ad.active
            or _profiler.active or saved_hooks_state.stack
            or _compiler.is_compiling() or is_anomaly_enabled()
            or is_inference_mode_enabled()):
        return False
    leaves = P.tree_leaves((args, kwargs))
    if PYTHON_DISPATCH[0] and any(map(dispatches_in_python, leaves)):
        return False  # the transform refuses them, eagerly
    if not is_grad_enabled():
        return True
    return not any(isinstance(t, Tensor) and t._requires_grad for t in leaves)
