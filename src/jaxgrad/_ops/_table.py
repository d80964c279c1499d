"""The op table: one ``Op`` row per differentiable operation.

A row holds a JAX ``forward`` and, per differentiable input, a backward *formula* written
like a line of PyTorch's ``derivatives.yaml``. A formula's parameter names say what it needs:

- ``grad`` (the gradient of output 0) or ``grads`` (all output gradients),
- an input's name (``self``, ``other``...) or an output's name (``result``): a *saved* tensor,
- a static argument's name (``dim``, ``keepdim``...), or ``<input>_shape`` / ``<input>_dtype``.

So the saved set of a row is exactly what its formulas name, and only formulas for inputs that
require grad count, which is PyTorch's rule (``x * 2`` saves nothing of ``x``). Formulas return
a gradient of the *broadcast* shape; un-broadcasting and casting to the input's dtype happen once,
here, when the backward is jitted.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp


def _params(fn: Callable) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


def identity_grad(grad):
    """The formula ``grad`` itself; the engine passes such gradients on without copying."""
    return grad


class Op:
    """One row of the op table."""

    def __init__(self, name: str, node: str | None, forward: Callable, *,
                 inputs: tuple[str, ...] | None = ("self",), outputs: tuple[str, ...] = ("result",),
                 grads: dict[str, Callable] | None = None, aux: tuple[str, ...] = (),
                 variadic: Callable | None = None, saves: tuple[str, ...] = (),
                 promote: str | None = None, nondiff_outputs: tuple[int, ...] = (),
                 grad_layout: str = "fresh") -> None:
        self.name = name
        self.node = node
        self.forward = forward
        self.inputs = inputs
        self.outputs = outputs
        self.aux = aux
        self.grads = grads or {}
        self.variadic = variadic  # formula returning a tuple, for ops with *tensors inputs
        self.promote = promote  # None | "common" | "float" (int inputs become float)
        self.nondiff_outputs = nondiff_outputs
        # what torch's formula returns: a fresh dense tensor, an "expand"ed (non-dense) view of
        # grad, or a "view" of grad; decides whether AccumulateGrad may steal it (see _engine)
        self.grad_layout = grad_layout
        self.extra_saves = saves
        self.formula_params = {k: _params(f) for k, f in self.grads.items()}
        if variadic is not None:
            self.formula_params["*"] = _params(variadic)
        self._savable = set(inputs or ()) | set(outputs) | set(aux)
        self.identity = {k for k, f in self.grads.items() if f is identity_grad}
        self._save_cache: dict[tuple[bool, ...], tuple[str, ...]] = {}
        self._plan_cache: dict[tuple, tuple] = {}

    def __repr__(self) -> str:
        return f"Op({self.name})"

    @functools.cached_property
    def node_class(self) -> type:
        """The grad_fn class of this op, named as torch names it (``MulBackward0``)."""
        from .._dispatch import OpNode
        from .._graph import node_class

        return node_class(self.node, OpNode)

    def input_names(self, n: int) -> tuple[str, ...]:
        """Names of the inputs; a variadic op (``inputs=None``) calls them in0, in1, ..."""
        return self.inputs if self.inputs is not None else tuple(f"in{i}" for i in range(n))

    def save_plan(self, needs: tuple[bool, ...], n_inputs: int) -> tuple:
        """``(name, "input"|"output"|"aux", position)`` of each value to save."""
        key = (needs, n_inputs)
        plan = self._plan_cache.get(key)
        if plan is None:
            inputs = self.input_names(n_inputs)
            plan = self._plan_cache[key] = tuple(
                (name, "output", self.outputs.index(name)) if name in self.outputs
                else (name, "input", inputs.index(name)) if name in inputs
                else (name, "aux", self.aux.index(name))
                for name in self.saved_names(needs))
        return plan

    def saved_names(self, needs: tuple[bool, ...]) -> tuple[str, ...]:
        """Names of the inputs/outputs to save, given which inputs need a gradient."""
        names = self._save_cache.get(needs)
        if names is None:
            found: list[str] = []
            if self.variadic is not None:
                params = self.formula_params["*"] + self.extra_saves
                if "inputs" in params:
                    found.extend(self.input_names(len(needs)))
                keys = [params]
            else:
                keys = [self.formula_params[k] + self.extra_saves
                        for k, need in zip(self.inputs, needs) if need and k in self.grads]
            for params in keys:
                for p in params:
                    if p in self._savable and p not in found:
                        found.append(p)
            names = self._save_cache[needs] = tuple(found)
        return names


# --- jitted forward -----------------------------------------------------------------------

_forward_cache: dict[tuple, Callable] = {}


def jitted_forward(op: Op, static: tuple, compute_dtype, out_dtype) -> Callable:
    """``op.forward`` with static args bound, inputs cast to ``compute_dtype``, jitted once."""
    key = (op, static, compute_dtype, out_dtype)
    fn = _forward_cache.get(key)
    if fn is None:
        kwargs = dict(static)

        def forward(*arrays):
            if compute_dtype is not None:
                arrays = [a if a is None else jnp.asarray(a, compute_dtype) for a in arrays]
            out = op.forward(*arrays, **kwargs)
            if out_dtype is not None:
                out = out.astype(out_dtype)
            return out

        fn = _forward_cache[key] = jax.jit(forward)
    return fn


# --- jitted backward ----------------------------------------------------------------------

def unbroadcast(grad: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """Sum ``grad`` down to ``shape`` (undo broadcasting), torch's ``sum_to``."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and grad.shape[i + lead] != 1)
    out = grad.sum(axis=axes, keepdims=True) if axes else grad
    return out.reshape(shape)


def backward_function(op: Op, static: tuple, needs: tuple[bool, ...],
                      in_meta: tuple) -> Callable:
    """Pure function (saved: dict, grads: tuple) -> tuple of input grads (None where not needed).

    ``in_meta`` holds (shape, dtype) per input; grads come back in those shapes and dtypes.
    """
    names = op.input_names(len(in_meta))
    env_static = dict(static)
    env_static["in_shapes"] = tuple(shape for shape, _ in in_meta)
    for name, (shape, dtype) in zip(names, in_meta):
        env_static[f"{name}_shape"] = shape
        env_static[f"{name}_dtype"] = dtype

    def compute(saved: dict, grads: tuple) -> tuple:
        env = dict(env_static, **saved)
        env["grad"] = grads[0] if grads else None
        env["grads"] = grads
        if op.variadic is not None:
            env["inputs"] = tuple(saved.get(name) for name in names)
            raw = op.variadic(**{p: env.get(p) for p in op.formula_params["*"]})
        else:
            raw = [
                op.grads[name](**{p: env.get(p) for p in op.formula_params[name]})
                if need and name in op.grads else None
                for name, need in zip(names, needs)
            ]
        out = []
        for g, need, (shape, dtype) in zip(raw, needs, in_meta):
            if not need or g is None or shape is None:
                out.append(None)
            else:
                out.append(unbroadcast(jnp.asarray(g), shape).astype(dtype))
        return tuple(out)

    return compute


@functools.lru_cache(maxsize=8192)
def jitted_backward(op: Op, static: tuple, needs: tuple[bool, ...], in_meta: tuple) -> Callable:
    return jax.jit(backward_function(op, static, needs, in_meta))


def static_key(static: dict[str, Any]) -> tuple:
    """A hashable key of static arguments (lists become tuples)."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in static.items())
