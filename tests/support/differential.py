"""Differential testing: run one program with ``torch`` and with ``jaxgrad`` and compare.

A program is a function of the library module (``T``) that returns any nesting of tensors,
numbers, strings, tuples/lists/dicts. ``same(program)`` runs it on both and compares:

- tensors: shape, dtype name, values (float32 ~1e-6 relative, float64 ~1e-12), requires_grad,
  is_leaf, grad_fn class name, ``_version``;
- exceptions: class name and message, with "torch" spelled "jaxgrad" (torch's "(Triggered
  internally at ...)" suffix dropped).
Nothing is compared against hand-typed numbers: torch is the oracle.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402


class Raised:
    """What a program raised: compared by class name and normalised message."""

    def __init__(self, exc: BaseException) -> None:
        self.cls = type(exc).__name__
        self.message = normalise(str(exc))

    def __repr__(self) -> str:
        return f"Raised({self.cls}: {self.message})"


def normalise(text: str) -> str:
    text = re.sub(r"\s*\(Triggered internally at [^)]*\)\.?", "", text)
    return text.replace("torch", "jaxgrad")


def run(program, lib) -> Any:
    try:
        return program(lib)
    except Exception as exc:
        return Raised(exc)


def describe(x: Any, lib) -> Any:
    """A comparable, library-independent description of a program's result."""
    if isinstance(x, lib.Tensor):
        fn = x.grad_fn
        if lib is torch:  # numpy has no bfloat16: compare its values as float32
            plain = x.detach().cpu().resolve_conj().resolve_neg()
            values = (plain.float() if plain.dtype == torch.bfloat16 else plain).numpy()
        else:
            values = np.asarray(x.detach()._value)
            values = values.astype(np.float32) if values.dtype.name == "bfloat16" else values
        return ("tensor", tuple(x.shape), str(x.dtype).split(".")[-1], values, x.requires_grad,
                x.is_leaf, type(fn).__name__ if fn is not None else None,
                None if x.is_inference() else x._version)
    if isinstance(x, Raised):
        return ("raised", x.cls, x.message)
    if isinstance(x, (list, tuple)):
        return type(x).__name__ if type(x) in (list, tuple) else "tuple", [
            describe(v, lib) for v in x]
    if isinstance(x, dict):
        return {k: describe(v, lib) for k, v in x.items()}
    if isinstance(x, str):
        return normalise(x)
    if isinstance(x, lib.Size):
        return ("size", tuple(x))
    if hasattr(x, "next_functions") and hasattr(x, "name"):
        return ("node", type(x).__name__)
    if isinstance(x, (lib.dtype,)):
        return ("dtype", str(x).split(".")[-1])
    return x


def assert_same(a: Any, b: Any, path: str = "result", rtol: float | None = None) -> None:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b and b[0] == "tensor", f"{path}: torch {a} vs {b}"
        _, shape_a, dt_a, va, rg_a, leaf_a, fn_a, ver_a = a
        _, shape_b, dt_b, vb, rg_b, leaf_b, fn_b, ver_b = b
        assert shape_a == shape_b, f"{path}: shape {shape_a} vs {shape_b}"
        assert dt_a == dt_b, f"{path}: dtype {dt_a} vs {dt_b}"
        tol = rtol if rtol is not None else (1e-12 if dt_a == "float64" else 2e-6)
        if va.dtype.kind in "fc":
            np.testing.assert_allclose(vb, va, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=f"{path}: values")
        else:
            np.testing.assert_array_equal(vb, va, err_msg=f"{path}: values")
        assert (rg_a, leaf_a, fn_a) == (rg_b, leaf_b, fn_b), (
            f"{path}: (requires_grad, is_leaf, grad_fn) torch {(rg_a, leaf_a, fn_a)} vs "
            f"jaxgrad {(rg_b, leaf_b, fn_b)}")
        assert ver_a == ver_b, f"{path}: _version {ver_a} vs {ver_b}"
        return
    if isinstance(a, tuple) and len(a) == 2 and a[0] in ("list", "tuple") and isinstance(
            a[1], list):
        assert isinstance(b, tuple) and len(b) == 2 and len(a[1]) == len(b[1]), (
            f"{path}: torch {a} vs jaxgrad {b}")
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            assert_same(x, y, f"{path}[{i}]", rtol)
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: {a} vs {b}"
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]", rtol)
        return
    if isinstance(a, float) and isinstance(b, float):
        assert np.isclose(a, b, rtol=rtol or 1e-6, equal_nan=True), f"{path}: {a} vs {b}"
        return
    assert a == b, f"{path}: torch {a!r} vs jaxgrad {b!r}"


def same(program, rtol: float | None = None) -> tuple[Any, Any]:
    """Run ``program`` on torch and jaxgrad; assert everything observable matches."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both libraries' warnings are tested separately
        ta = run(program, torch)
        jb = run(program, jaxgrad)
    assert_same(describe(ta, torch), describe(jb, jaxgrad), rtol=rtol)
    return ta, jb


def next_functions(fn) -> Any:
    """The grad_fn graph below ``fn`` as nested (name, [children]) tuples."""
    if fn is None:
        return None
    return (type(fn).__name__, [(next_functions(n), i) for n, i in fn.next_functions])


def captured_warnings(program, lib) -> list[tuple[str, str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(program, lib)
    return [(w.category.__name__, normalise(str(w.message))) for w in caught]


# --- helpers shared by the test modules ---------------------------------------------------


def ok(program, **kw):
    """Compare, and make sure torch itself ran the program without raising."""
    ta, jb = same(program, **kw)
    assert not isinstance(ta, Raised), f"torch raised: {ta}"
    return ta, jb


def raises(program):
    ta, jb = same(program)
    assert isinstance(ta, Raised), f"expected torch to raise, got {ta!r}"
    return ta, jb


def attempt(f):
    """Run ``f``; an exception becomes a Raised record (compared by class and message)."""
    try:
        return f()
    except Exception as exc:
        return Raised(exc)


def leaf(T, values):
    return T.tensor(values, dtype=T.float64, requires_grad=True)


def val(t):
    """A tensor's values, flags and grad_fn name, without its version counter (the version of
    gradient tensors is checked by dedicated tests only)."""
    if t is None:
        return None
    return (t.detach().clone(), t.requires_grad, t.is_leaf,
            None if t.grad_fn is None else type(t.grad_fn).__name__)


def bug(reason):
    """A strict xfail for a known jaxgrad difference (an XPASS means it got fixed)."""
    return pytest.mark.xfail(strict=True, reason=f"jaxgrad bug: {reason}")


def cases(keys, xfail=None):
    """One pytest param per key; keys listed in ``xfail`` (key -> reason) are strict xfails."""
    xfail = xfail or {}
    return [pytest.param(k, id=str(k), marks=[bug(xfail[k])] if k in xfail else [])
            for k in keys]


def distinct_leaf(T, shape=(3, 4), dtype=None):
    """A leaf of ``shape`` with distinct values (no ties: sort/topk/median orders are unique)."""
    n = int(np.prod(shape))
    values = ((np.arange(n) * 7) % n - n / 2).reshape(shape) / 4
    return T.tensor(values, dtype=dtype or T.float32, requires_grad=True)


def weighted_grads(T, out, *leaves):
    """Backward with a non-uniform gradient; the leaves' grads without their versions (torch's
    index/gather/sort backwards fill zeros in place, so torch's ``.grad`` starts at version 1:
    jaxgrad's rows cannot say that, see the README's list of differences)."""
    weight = T.arange(float(out.numel())).reshape(out.shape).to(out.dtype) + 1
    (out * weight).sum().backward()
    return [val(t.grad) for t in leaves]


def run_on_distinct_leaf(T, f):
    """``f(T, x)`` on a (3, 4) ``distinct_leaf``: its outputs (a list), the first output's
    grad_fn graph and ``x``'s ``weighted_grads`` (None when the first output needs no grad)."""
    x = distinct_leaf(T)
    out = f(T, x)
    outs = list(out) if isinstance(out, tuple) else [out]
    grads = weighted_grads(T, outs[0], x) if outs[0].requires_grad else None
    return outs, next_functions(outs[0].grad_fn), grads


# --- helpers of the nn tests: fixed weights, weighted backward ------------------------------------


def weighted(T, out):
    """A fixed, non-uniform weighting of ``out``, summed (a scalar to backpropagate)."""
    weights = T.tensor(np.linspace(-1.0, 1.5, out.numel()).reshape(tuple(out.shape)),
                       dtype=out.dtype)
    return (out * weights).sum()


def weighted_backward(T, out):
    """Backpropagate a fixed, non-uniform weighting of ``out``."""
    weighted(T, out).backward()


def grad_of(t):
    return None if t.grad is None else t.grad.clone()


def set_weights(T, module, seed=0, dtype="float64", scale=1.0):
    """``module`` cast to ``dtype`` with every parameter overwritten by fixed random values."""
    module = module.to(getattr(T, dtype))
    rs = np.random.RandomState(seed)
    with T.no_grad():
        for _, p in module.named_parameters():
            p.copy_(T.tensor(rs.randn(*p.shape) * scale))
    return module


def param_grads(module):
    return OrderedDict((name, grad_of(p)) for name, p in module.named_parameters())


def float_leaves(T, dtype, *arrays):
    """Leaves requiring grad, one per numpy array, of the floating dtype named ``dtype``."""
    return [T.tensor(a, dtype=getattr(T, dtype), requires_grad=True) for a in arrays]


def compiled_on_jaxgrad(T, fn):
    """``fn`` compiled when ``T`` is jaxgrad; eager on torch, the oracle (torch.compile needs a
    C++ toolchain here and keeps eager's side effects)."""
    return jaxgrad.compile(fn) if T is jaxgrad else fn


def traces(step) -> int:
    """How many signatures a compiled step has traced (0 for an eager one)."""
    return len(step._cache) if hasattr(step, "_cache") else 0


def op_log_mode(T):
    """A ``TorchDispatchMode`` of library ``T`` that logs the name of every op it sees in
    ``.ops`` (``mm.default``) and runs it."""

    class OpLog(importlib.import_module(f"{T.__name__}.utils._python_dispatch").TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return OpLog()
