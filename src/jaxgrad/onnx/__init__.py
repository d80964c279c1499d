"""``jaxgrad.onnx``: importable so that torch programs load; jaxgrad cannot export ONNX.

A jaxgrad model is a JAX program: ``jaxgrad.func.to_jax`` turns a ``Module`` into a pure JAX
function, and ``jax.export`` exports that as StableHLO (``Exported.serialize()`` writes it to
bytes; it needs the ``flatbuffers`` package), which is what jaxgrad offers in
ONNX's place:

>>> import jax, jax.numpy as jnp
>>> import jaxgrad
>>> params, fn = jaxgrad.func.to_jax(jaxgrad.nn.Linear(3, 1))
>>> exported = jax.export.export(jax.jit(fn))(params, jnp.ones((2, 3)))
>>> exported.call(params, jnp.ones((2, 3))).shape, "stablehlo" in exported.mlir_module()
((2, 1), True)
>>> jaxgrad.onnx.is_in_onnx_export()
False
"""

from __future__ import annotations

from typing import Any

__all__ = ["export", "is_in_onnx_export"]

EXPORT_UNSUPPORTED = (
    "jaxgrad cannot export ONNX: its models run as JAX programs. Export one with jax.export "
    "instead: params, fn = jaxgrad.func.to_jax(model); "
    "jax.export.export(jax.jit(fn))(params, *args).serialize()")


def export(model: Any, args: tuple[Any, ...] = (), f: Any = None, **kwargs: Any) -> None:
    """torch's ``torch.onnx.export``: raises ``NotImplementedError``, since jaxgrad cannot
    write ONNX (its message points to ``jax.export``).

    >>> import jaxgrad
    >>> model = jaxgrad.nn.Linear(1, 1)
    >>> jaxgrad.onnx.export(model, (jaxgrad.ones(1),), "m.onnx")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotImplementedError: jaxgrad cannot export ONNX: ...
    """
    raise NotImplementedError(EXPORT_UNSUPPORTED)


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is tracing the caller: never in jaxgrad.

    >>> import jaxgrad
    >>> jaxgrad.onnx.is_in_onnx_export()
    False
    """
    return False
