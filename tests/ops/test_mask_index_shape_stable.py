"""``x[mask] = value`` with a lone bool mask and a value that broadcasts without the masked
count (a number, a 0-d tensor, a row): jaxgrad writes it as a ``where`` over the mask, so a new
True-count compiles no new kernel. Against torch 2.13: values, versions, grad_fn graphs, first
and second derivatives of ``x`` and of the value, for ``__setitem__`` and ``index_put_``; the
count-dim forms (a full-count value), which keep the gather/scatter rows, alongside; and the
number of kernels ten new counts compile."""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import cases, next_functions, ok, op_log_mode, same
from jaxgrad._core import kernel_cache

MASK = [True, False, True, True, False]
MASK_2D = [
    [True, False, True],
    [False, False, False],
    [True, True, False],
    [False, True, True],
    [False, False, True],
]


def _mask(T, values=MASK):
    return T.tensor(values)


def _x(T, shape, dtype, requires_grad):
    """A non-leaf (when it requires grad) of distinct values, written in place by the cases."""
    n = int(np.prod(shape))
    values = ((np.arange(n) * 7) % n - n / 2).reshape(shape) / 4
    if dtype == "bool":
        return T.tensor(values > 0), None
    x0 = T.tensor(values, dtype=getattr(T, dtype), requires_grad=requires_grad)
    return (x0 * 1 if requires_grad else x0.clone()), x0


def _value(T, spec, dtype, requires_grad):
    """The written value: a Python number, or a tensor of shape ``spec`` (1-based arange)."""
    if not isinstance(spec, tuple):
        return spec
    n = int(np.prod(spec))
    v = T.arange(1.0, n + 1.0).reshape(spec).to(getattr(T, dtype))
    return v.requires_grad_() if requires_grad else v


# (x shape, index (of the mask T), value spec)
FORMS = {
    "number": ((5, 3), lambda m: m, 2.5),
    "zero": ((5, 3), lambda m: m, 0),
    "0-d tensor": ((5, 3), lambda m: m, ()),
    "one-element tensor": ((5, 3), lambda m: m, (1,)),
    "row": ((5, 3), lambda m: m, (3,)),
    "row with a leading 1": ((5, 3), lambda m: m, (1, 3)),
    "row with two leading 1s": ((5, 3), lambda m: m, (1, 1, 3)),
    "2-d mask": ((5, 3, 2), lambda m: m, (2,)),
    "1-d x": ((5,), lambda m: m, ()),
    "trailing dims": ((5, 2, 3), lambda m: m, (2, 1)),
    "after a slice": ((2, 5, 3), lambda m: (slice(None), m), (2, 1, 3)),
    "after a slice, row": ((2, 5, 3), lambda m: (slice(None), m), (3,)),
    "after an int": ((2, 5, 3), lambda m: (1, m), (3,)),
    "after an ellipsis": ((2, 5), lambda m: (Ellipsis, m), (2, 1)),
    "after None": ((5, 3), lambda m: (None, m), (1, 1, 3)),
    "full count": ((5, 3), lambda m: m, (3, 3)),
    "full count column": ((5, 3), lambda m: m, (3, 1)),
}


def _setitem(T, form, dtype, x_grad, v_grad):
    shape, index, spec = FORMS[form]
    x, x0 = _x(T, shape, dtype, x_grad)
    mask = _mask(T, MASK_2D if form == "2-d mask" else MASK)
    value = _value(T, spec, dtype if dtype != "bool" else "float32", v_grad)
    if dtype == "bool" and isinstance(value, T.Tensor):
        value = value > 1
    x[index(mask)] = value
    return x, x0, value


def _derivatives(T, x, leaves):
    """First derivatives (create_graph; their grad_fn names) of a weighted square of ``x``,
    then second ones. (The edges below a create_graph gradient's node are listed in another
    order than torch's for every row, an engine matter: only the names are compared.)"""
    w = T.arange(float(x.numel())).reshape(x.shape).to(x.dtype) + 1
    firsts = T.autograd.grad((x * x * w).sum(), leaves, create_graph=True)
    seconds = T.autograd.grad(sum((g * g).sum() for g in firsts), leaves, allow_unused=True)
    return list(firsts), list(seconds)


@pytest.mark.parametrize(
    "form,dtype",
    [(form, "float64") for form in FORMS]
    + [(form, "float32") for form in ("number", "0-d tensor", "row", "after a slice")],
)
def test_setitem_values_graph_and_derivatives(form, dtype):
    def program(T):
        x, x0, value = _setitem(T, form, dtype, True, True)
        leaves = [x0] + [value] if isinstance(value, T.Tensor) else [x0]
        return x, next_functions(x.grad_fn), _derivatives(T, x, leaves)

    ok(program)


@pytest.mark.parametrize(
    "form", cases(["number", "0-d tensor", "row", "trailing dims", "after a slice", "full count"])
)
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
def test_setitem_without_grad(form, dtype):
    def program(T):
        x, _, value = _setitem(T, form, dtype, False, False)
        return x, x._version, value

    ok(program)


@pytest.mark.parametrize("x_grad,v_grad", [(False, True), (True, False)])
@pytest.mark.parametrize("form", cases(["0-d tensor", "row", "after a slice"]))
def test_setitem_one_side_requires_grad(form, x_grad, v_grad):
    def program(T):
        x, x0, value = _setitem(T, form, "float64", x_grad, v_grad)
        leaves = [t for t, need in ((x0, x_grad), (value, v_grad)) if need]
        grads = T.autograd.grad((x * x).sum(), leaves)
        return x, next_functions(x.grad_fn), list(grads)

    ok(program)


def test_setitem_into_a_view_bumps_the_base():
    def program(T):
        base = T.zeros(4, 5, 3, dtype=T.float64)
        leaf = T.tensor(1.5, dtype=T.float64, requires_grad=True)
        view = base[1]
        view[_mask(T)] = leaf
        grads = T.autograd.grad((base * base).sum(), [leaf])
        return base, base._version, view._version, next_functions(base.grad_fn), list(grads)

    ok(program)


@pytest.mark.parametrize(
    "values",
    [[False] * 5, [False, True, False, False, False], [True] * 5],
    ids=["none", "one", "all"],
)
def test_empty_single_and_full_masks(values):
    """Counts 0, 1 and all, into a value of the result's rank (torch's gradient of the value
    needs a ``sum_to`` unless one element is masked: its grad_fn says which)."""

    def program(T):
        out = []
        for how in ("setitem", "index_put_"):
            x0 = T.arange(15.0, dtype=T.float64).reshape(5, 3).requires_grad_()
            v = T.tensor([[1.0, 2.0, 3.0]], dtype=T.float64, requires_grad=True)
            x = x0 * 1
            if how == "setitem":
                x[_mask(T, values)] = v
            else:
                x.index_put_((_mask(T, values),), v)
            out.append((x, x._version, _derivatives(T, x, [x0, v])))
        return out

    ok(program)


INDEX_PUT = {
    "0-d value": (lambda T: (_mask(T),), ()),
    "row value": (lambda T: (_mask(T),), (3,)),
    "(1, 3) value": (lambda T: (_mask(T),), (1, 3)),
    "2-d mask": (lambda T: (_mask(T, MASK_2D),), (2,)),
    "full count value": (lambda T: (_mask(T),), (3, 3)),
}


@pytest.mark.parametrize("name", cases(INDEX_PUT))
@pytest.mark.parametrize("inplace", [True, False])
def test_index_put(name, inplace):
    def program(T):
        indices, spec = INDEX_PUT[name]
        shape = (5, 3, 2) if name == "2-d mask" else (5, 3)
        x0 = T.arange(float(np.prod(shape)), dtype=T.float64).reshape(shape).requires_grad_()
        v = _value(T, spec, "float64", True)
        x = x0 * 1
        out = x.index_put_(indices(T), v) if inplace else T.index_put(x, indices(T), v)
        return (out, x._version, next_functions(out.grad_fn), _derivatives(T, out, [x0, v]))

    ok(program)


def _kernels_compiled(monkeypatch):
    """A counter of the kernels jaxgrad compiles (or loads from its disk cache) from now on."""
    seen = [0]
    original = kernel_cache._count_live_kernel

    def counting():
        seen[0] += 1
        original()

    monkeypatch.setattr(kernel_cache, "_count_live_kernel", counting)
    return seen


SHAPE_STABLE = {
    "x[m] = 0": lambda T, x, m, v, row: x.__setitem__(m, 0.0),
    "x[m] = 0-d tensor": lambda T, x, m, v, row: x.__setitem__(m, v),
    "x[m] = row": lambda T, x, m, v, row: x.__setitem__(m, row),
    "index_put_": lambda T, x, m, v, row: x.index_put_((m,), v),
}


@pytest.mark.parametrize("form", cases(SHAPE_STABLE))
def test_new_counts_compile_no_new_kernel(form, monkeypatch):
    rng = np.random.default_rng(0)
    n = 64 + list(SHAPE_STABLE).index(form)  # (a shape of each form's own: no shared kernels)
    x0 = jaxgrad.randn(n, 4, requires_grad=True)
    v = jaxgrad.tensor(2.0, requires_grad=True)
    row = jaxgrad.ones(4, requires_grad=True)

    def step(count):
        mask = np.zeros(n, bool)
        mask[rng.choice(n, count, replace=False)] = True
        x = x0 * 1
        SHAPE_STABLE[form](jaxgrad, x, jaxgrad.tensor(mask), v, row)
        (x * x).sum().backward()

    step(1)  # the kernels of every shape this program has
    step(2)
    seen = _kernels_compiled(monkeypatch)
    for count in range(3, 13):
        step(count)
    assert seen[0] == 0


def test_a_dispatch_mode_sees_index_put():
    """Under a ``TorchDispatchMode`` the writes stay ``index_put_`` (the mode sees torch's op)."""

    def program(T):
        x = T.zeros(5, 3)
        with op_log_mode(T) as log:
            x[_mask(T)] = 2.0
            x[_mask(T)] = T.tensor([1.0, 2.0, 3.0])
            x.index_put_((_mask(T),), T.tensor(1.0))
        return [name for name in log.ops if name.startswith("index_put")], x

    ok(program)


MIXED_DTYPES = {
    "0-d float64 into float32": ("float32", lambda T: T.tensor(2.7, dtype=T.float64)),
    "[1] float64 into float32": ("float32", lambda T: T.tensor([2.7], dtype=T.float64)),
    "0-d float64 into int64": ("int64", lambda T: T.tensor(-2.7, dtype=T.float64)),
    "0-d int64 into float32": ("float32", lambda T: T.tensor(3)),
    "row float64 into float32": ("float32", lambda T: T.tensor([1.0, 2.0, 3.0], dtype=T.float64)),
}


@pytest.mark.parametrize("name", cases(MIXED_DTYPES))
@pytest.mark.parametrize("index", ["mask", "uint8 mask", "mask accumulate"], ids=lambda s: s)
def test_index_put_one_element_value_of_another_dtype(name, index):
    """torch hands a one-element value at a lone mask to masked_fill_, which takes any dtype
    (a uint8 mask: masked_fill_'s refusal; accumulate or a longer value: index_put's error)."""

    def program(T):
        dtype, make = MIXED_DTYPES[name]
        x = T.zeros(5, 3, dtype=getattr(T, dtype))
        mask = {
            "mask": lambda: _mask(T),
            "uint8 mask": lambda: _mask(T).to(T.uint8),
            "mask accumulate": lambda: _mask(T),
        }[index]()
        return x.index_put_((mask,), make(T), accumulate=index == "mask accumulate"), x._version

    same(program)


def test_index_put_one_element_value_of_another_dtype_gradient():
    def program(T):
        x0 = T.arange(15.0).reshape(5, 3).requires_grad_()
        v = T.tensor(2.5, dtype=T.float64, requires_grad=True)
        x = x0 * 1
        x.index_put_((_mask(T),), v)
        return x, next_functions(x.grad_fn), _derivatives(T, x, [x0, v])

    ok(program)


def test_under_func_transforms():
    """``func.grad`` and ``jacfwd`` over a masked write (the mask's values known when traced):
    the row's formulas on JAX's routes, reverse and forward."""

    def program(T):
        def f(x, v):
            y = x * 1
            y[_mask(T)] = v
            return (y * y).sum()

        x = T.arange(15.0, dtype=T.float64).reshape(5, 3)
        v = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
        grads = T.func.grad(f, argnums=(0, 1))(x, v)
        hessian = T.func.jacfwd(T.func.grad(f, argnums=1), argnums=1)(x, v)
        return list(grads), hessian

    ok(program)
