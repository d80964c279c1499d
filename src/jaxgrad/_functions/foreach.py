"""torch's ``_foreach_*`` functions: one op over lists of tensors.

Out of place, a foreach op is the per-tensor op on each tensor (or each pair, triple), recorded as
one node with torch's name (``ForeachAddBackward0List``) over every input: see
``_ops/foreach.py``. In place (``_foreach_add_``), torch runs the per-tensor in-place op on each
tensor, so each tensor gets that op's node (``AddBackward0``; ``AddBackward1`` with a number) and a
new version, and the list comes back; so does jaxgrad.

The unary and binary functions are generated from the lines of :data:`_UNARY` and
:data:`_BINARY`: which per-tensor row computes each overload (a list of tensors, one scalar, a
list of scalars, one tensor) and the suffix torch gives its node. lerp, addcmul/addcdiv, norm,
max, clone, zero_ and copy_ follow, written out."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core.tensor import Tensor
from .._core.typename import type_name
from .._engine.dispatch import apply, apply_inplace, promoted_dtype
from .._ops import elementwise as E
from .._ops import foreach as F
from .._ops import reductions as R
from .._ops import scalar_overloads as SO
from .._ops import views as V
from .._ops._table import Op
from .._ops.foreach import foreach_row
from . import linalg as _linalg
from . import pointwise
from .arguments import check_broadcast, scalar

# --- argument checks, with torch's messages -----


def _tensor_list(name: str, arg: str, position: int, value: Any) -> list[Tensor]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, Tensor) for v in value):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                        f"Tensors, not {type_name(value)}")
    if not value:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(value)


def _same_length(first: list, other: Sequence) -> None:
    if len(first) != len(other):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(first)} "
                           f"and {len(other)}")


def _scalar_list(first: list, scalars: Sequence) -> list:
    if len(first) != len(scalars):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return [scalar(s) for s in scalars]


def _is_scalar(value: Any) -> bool:
    """A number, or a 0-d tensor that does not require grad (torch's parser takes it as one)."""
    if isinstance(value, Tensor):
        return value.ndim == 0 and not value.requires_grad
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


# --- running a row over the groups -----


def _compute_dtype(row: Op, group: Sequence[Any]):
    """The dtype the per-tensor op computes ``group`` in (None: the row does not promote)."""
    return promoted_dtype(row, group) if row.promote else None


def _operand(value: Any, dtype) -> Any:
    """A number enters the kernel as an array of its group's dtype (no float32 round trip)."""
    if isinstance(value, Tensor) or dtype is None:
        return value
    return np.asarray(value, dtype)


def _run(row: Op, node: str, inputs: list[list[Any]], aux: list[list[Any]] = (),
         **static: Any) -> tuple[Tensor, ...]:
    """``row`` over the groups: ``inputs[j][i]`` is the j-th operand of group i, ``aux[j][i]``
    its j-th scalar operand."""
    n = len(inputs[0])
    for operands in inputs[1:]:
        for t, o in zip(inputs[0], operands):
            check_broadcast(t, o)
    if row.checks is not None:  # the per-tensor op's checks, on each group
        for i in range(n):
            row.checks(*[ops[i] for ops in (*inputs, *aux)])
    compute = tuple(_compute_dtype(row, [ops[i] for ops in (*inputs, *aux)]) for i in range(n))
    args = [_operand(ops[i], compute[i]) for ops in inputs for i in range(n)]
    extra = tuple(_operand(ops[i], compute[i]) for ops in aux for i in range(n))
    return apply(foreach_row(row, node, n), *args, aux=extra, compute=compute, **static)


def _node(name: str, suffix: str) -> str:
    return "Foreach" + "".join(w.capitalize() for w in name.split("_")) + "Backward" + suffix


# --- unary ops -----

# name -> per-tensor row (its node name gives the foreach node's: Log1PBackward0 ->
# ForeachLog1PBackward0)
_UNARY = {
    "abs": E.ABS, "acos": E.ACOS, "asin": E.ASIN, "atan": E.ATAN, "ceil": E.CEIL, "cos": E.COS,
    "cosh": E.COSH, "erf": E.ERF, "erfc": E.ERFC, "exp": E.EXP, "expm1": E.EXPM1,
    "floor": E.FLOOR, "frac": E.FRAC, "lgamma": E.LGAMMA, "log": E.LOG, "log10": E.LOG10,
    "log1p": E.LOG1P, "log2": E.LOG2, "neg": E.NEG, "reciprocal": E.RECIPROCAL,
    "round": E.ROUND, "rsqrt": E.RSQRT, "sigmoid": E.SIGMOID, "sign": E.SIGN, "sin": E.SIN,
    "sinh": E.SINH, "sqrt": E.SQRT, "tan": E.TAN, "tanh": E.TANH, "trunc": E.TRUNC,
}


# the per-tensor op's own refusals, checked on each tensor first
_UNARY_CHECKS = {"neg": pointwise._check_neg}


def _unary(name: str, row: Op) -> tuple[Callable, Callable]:
    public = f"_foreach_{name}"
    check = _UNARY_CHECKS.get(name)

    def out_of_place(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
        tensors = _tensor_list(public, "self", 1, self)
        for t in tensors if check is not None else ():
            check(t)
        return _run(row, "Foreach" + row.node, [tensors])

    def in_place(self: Sequence[Tensor]) -> Any:
        for t in _tensor_list(public + "_", "self", 1, self):
            getattr(t, f"{name}_")()
        return self

    out_of_place.__doc__ = (
        f"``{name}`` of each tensor, as one node ({'Foreach' + row.node}).\n\n"
        f">>> import jaxgrad\n>>> jaxgrad.{public}([jaxgrad.tensor([0.5]), jaxgrad.tensor(0.25)])"
        f"[1].shape\njaxgrad.Size([])")
    in_place.__doc__ = (
        f"``{name}_`` on each tensor (each gets that op's node and a new version).\n\n"
        f">>> import jaxgrad\n>>> ts = [jaxgrad.tensor([0.5])]\n>>> _ = jaxgrad.{public}_(ts)\n"
        f">>> ts[0]._version\n1")
    return out_of_place, in_place


# --- binary ops -----

class _Binary:
    """How one binary foreach op computes each overload: ``rows`` maps ``"List"``,
    ``"Scalar"``, ``"ScalarList"``, ``"Tensor"`` to the per-tensor row (for Scalar forms, the
    row taking the number as a traced ``aux`` operand where there is one) and the suffix of
    torch's node name; ``alpha_rows`` the rows used when ``alpha != 1``; ``scalar_aux``:
    whether the Scalar rows take the number as ``aux`` (pow's exponent) or as the second
    input (``x * 2``); ``method``: the per-tensor in-place method."""

    def __init__(self, name: str, rows: dict[str, tuple[Op, str]], *, scalar_aux: bool = False,
                 alpha_rows: dict[str, Op] | None = None, method: str | None = None,
                 inplace_row: dict[str, Op] | None = None,
                 scalar_inplace: Op | None = None) -> None:
        self.name, self.rows, self.scalar_aux = name, rows, scalar_aux
        self.alpha_rows = alpha_rows or {}
        self.method = method
        self.inplace_row = inplace_row or {}
        self.scalar_inplace = scalar_inplace  # the per-tensor op's Scalar overload, in place

    def overload(self, other: Any, alpha: Any = 1) -> str:
        """The overload torch's parser picks for ``other``: a 0-d tensor that does not require
        grad is add's Scalar, unless an ``alpha`` asks for the Tensor overload."""
        if isinstance(other, (list, tuple)):
            if other and all(isinstance(o, Tensor) for o in other):
                return "List"
            return "ScalarList"
        plain_alpha = alpha == 1 and type(alpha) is int
        if isinstance(other, Tensor) and "Tensor" in self.rows and not (
                _is_scalar(other) and self.name in ("add", "sub") and plain_alpha):
            _check_zero_dim(other)
            return "Tensor"
        return "Scalar"


def _check_zero_dim(other: Tensor) -> None:
    """torch's check on the one tensor of a ``.Tensor`` overload, before any other."""
    if other.ndim != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.ndim} "
                           f"dimensions and {other.numel()} elements.")


_BINARY = {
    "add": _Binary("add", {"List": (E.ADD, "0List"), "Scalar": (E.ADD, "1Scalar"),
                           "ScalarList": (E.ADD, "1ScalarList"), "Tensor": (E.ADD, "0Tensor")},
                   alpha_rows={"List": E.ADD_ALPHA, "Tensor": E.ADD_ALPHA}, method="add_",
                   scalar_inplace=SO.ADD_SCALAR),
    "sub": _Binary("sub", {"List": (E.SUB, "0List"), "Scalar": (E.SUB, "1Scalar"),
                           "ScalarList": (E.SUB, "1ScalarList")},
                   alpha_rows={"List": E.SUB_ALPHA}, method="sub_",
                   scalar_inplace=SO.SUB_SCALAR),
    "mul": _Binary("mul", {"List": (E.MUL, "0List"), "Scalar": (E.MUL, "1Scalar"),
                           "ScalarList": (E.MUL, "1ScalarList"), "Tensor": (E.MUL, "0Tensor")},
                   method="mul_", scalar_inplace=SO.MUL_SCALAR),
    "div": _Binary("div", {"List": (E.DIV, "0"), "Scalar": (E.DIV, "1Scalar"),
                           "ScalarList": (E.DIV, "1ScalarList"), "Tensor": (E.DIV, "0Tensor")},
                   method="div_", scalar_inplace=SO.DIV_SCALAR),
    # (torch has no maximum_ method: a list runs the maximum row in place, a number torch's
    # NotImplemented node)
    "maximum": _Binary("maximum", {"List": (E.MAXIMUM, "0List"), "Scalar": (E.MAXIMUM, "0"),
                                   "ScalarList": (E.MAXIMUM, "1")},
                       inplace_row={"List": E.MAXIMUM},
                       scalar_inplace=F.MAXIMUM_SCALAR_INPLACE),
    "minimum": _Binary("minimum", {"List": (E.MINIMUM, "0List"), "Scalar": (E.MINIMUM, "0"),
                                   "ScalarList": (E.MINIMUM, "1")},
                       inplace_row={"List": E.MINIMUM},
                       scalar_inplace=F.MINIMUM_SCALAR_INPLACE),
    "clamp_min": _Binary("clamp_min", {"List": (E.CLAMP_MIN_TENSOR, "1List"),
                                       "Scalar": (E.CLAMP_MIN, "0Scalar"),
                                       "ScalarList": (E.CLAMP_MIN, "0ScalarList")},
                         scalar_aux=True, method="clamp_min_"),
    "clamp_max": _Binary("clamp_max", {"List": (E.CLAMP_MAX_TENSOR, "1List"),
                                       "Scalar": (E.CLAMP_MAX, "0Scalar"),
                                       "ScalarList": (E.CLAMP_MAX, "0ScalarList")},
                         scalar_aux=True, method="clamp_max_"),
    "pow": _Binary("pow", {"List": (E.POW_TENSOR, "0"), "Scalar": (E.POW, "0Scalar"),
                           "ScalarList": (E.POW, "1")}, scalar_aux=True, method="pow_"),
}


# the per-tensor op's own refusals, checked on each pair first
_BINARY_CHECKS = {"sub": pointwise._check_sub, "pow": pointwise._check_pow_exponent}


def _binary_out(spec: _Binary, tensors: list[Tensor], other: Any, alpha: Any) -> tuple:
    public = f"_foreach_{spec.name}"
    kind = spec.overload(other, alpha)
    check = _BINARY_CHECKS.get(spec.name)
    if check is not None:
        others = other if kind in ("List", "ScalarList") else [other] * len(tensors)
        for t, o in zip(tensors, others):
            check(t, o)
    if kind in spec.alpha_rows and type(alpha) is not int:  # (alpha=1.0 is checked too)
        for t, o in zip(tensors, other if kind == "List" else [other] * len(tensors)):
            spec.alpha_rows[kind].checks(t, o, scalar(alpha))
    row, suffix = spec.rows[kind]
    if alpha != 1:
        if kind not in spec.alpha_rows:
            raise TypeError(f"{public}() received an invalid combination of arguments")
        row = spec.alpha_rows[kind]
    node = _node(spec.name, suffix)
    if kind == "List":
        _same_length(tensors, other)
        operands = [tensors, list(other)]
    elif kind == "Tensor":
        operands = [tensors, [other] * len(tensors)]
    else:
        values = (_scalar_list(tensors, other) if kind == "ScalarList"
                  else [scalar(other)] * len(tensors))
        if spec.scalar_aux:
            return _run(row, node, [tensors], [values], **_pow_static(row))
        operands = [tensors, values]
    aux = [[scalar(alpha)] * len(tensors)] if row.aux else []
    return _run(row, node, operands, aux)


def _pow_static(row: Op) -> dict:
    """pow's scalar row picks a kernel by exponent; the foreach row takes the general one."""
    return {"_fast": None} if "_fast" in row.static_names() else {}


def _binary_inplace(spec: _Binary, tensors: list[Tensor], other: Any, alpha: Any) -> None:
    kind = spec.overload(other, alpha)
    if kind == "List":
        _same_length(tensors, other)
        others = list(other)
    elif kind == "ScalarList":
        others = _scalar_list(tensors, other)
    else:
        others = [other] * len(tensors)
    row = spec.inplace_row.get(kind)
    for t, o in zip(tensors, others):
        o = scalar(o) if kind in ("Scalar", "ScalarList") else o
        if kind in ("Scalar", "ScalarList") and spec.scalar_inplace is not None:
            value = (o,) + ((scalar(alpha),) if spec.scalar_inplace.aux[1:] else ())
            pointwise._check_inplace_result(t, *value)
            apply_inplace(spec.scalar_inplace, t, aux=value)
        elif row is not None:
            check_broadcast(t, o)
            apply_inplace(row, t, o)
        elif alpha != 1 or type(alpha) is not int:
            getattr(t, spec.method)(o, alpha=alpha)
        else:
            getattr(t, spec.method)(o)


def _binary(spec: _Binary) -> tuple[Callable, Callable]:
    public = f"_foreach_{spec.name}"

    def out_of_place(self: Sequence[Tensor], other: Any, *, alpha: Any = 1) -> tuple:
        return _binary_out(spec, _tensor_list(public, "self", 1, self), other, alpha)

    def in_place(self: Sequence[Tensor], other: Any, *, alpha: Any = 1) -> Any:
        _binary_inplace(spec, _tensor_list(public + "_", "self", 1, self), other, alpha)
        return self

    out_of_place.__doc__ = (
        f"``{spec.name}`` of each tensor with the matching tensor of a list, a number, the "
        f"matching number of a list, or one tensor; one node.\n\n>>> import jaxgrad\n"
        f">>> len(jaxgrad.{public}([jaxgrad.ones(2), jaxgrad.ones(3)], 2))\n2")
    in_place.__doc__ = (
        f"``{spec.name}`` into each tensor, as the per-tensor in-place op.\n\n"
        f">>> import jaxgrad\n>>> ts = [jaxgrad.ones(2)]\n>>> _ = jaxgrad.{public}_(ts, 2)\n"
        f">>> ts[0]._version\n1")
    return out_of_place, in_place


def _foreach_pow_scalar_base(self: Any, exponent: Sequence[Tensor]) -> tuple:
    """``self ** e`` for each tensor ``e`` of ``exponent`` (ForeachPowBackward2)."""
    tensors = _tensor_list("_foreach_pow", "exponent", 2, exponent)
    return _run(E.POW_SCALAR_BASE, _node("pow", "2"), [tensors],
                [[scalar(self)] * len(tensors)])


def _foreach_pow(self: Any, exponent: Any) -> tuple:
    """``pow`` of each tensor by the matching tensor, a number or the matching number; or, with a
    number first, that number to the power of each tensor.

    >>> import jaxgrad
    >>> jaxgrad._foreach_pow([jaxgrad.tensor([2.0]), jaxgrad.tensor([3.0])], [2, 3])
    (tensor([4.]), tensor([27.]))
    """
    if _is_scalar(self) and not isinstance(self, (list, tuple)):
        return _foreach_pow_scalar_base(self, exponent)
    return _binary_out(_BINARY["pow"], _tensor_list("_foreach_pow", "self", 1, self), exponent, 1)


# --- ternary ops: lerp, addcmul, addcdiv -----


def _foreach_lerp(self: Sequence[Tensor], tensors1: Sequence[Tensor], weight: Any) -> tuple:
    """``lerp`` of each pair with one weight, the matching weight of a list of numbers, or the
    matching tensor of a list of weights (one node).

    >>> import jaxgrad
    >>> jaxgrad._foreach_lerp([jaxgrad.zeros(1)], [jaxgrad.ones(1)], 0.25)
    (tensor([0.2500]),)
    """
    starts = _tensor_list("_foreach_lerp", "self", 1, self)
    ends = _tensor_list("_foreach_lerp", "tensors1", 2, tensors1)
    _same_length(starts, ends)
    if isinstance(weight, (list, tuple)) and weight and all(isinstance(w, Tensor)
                                                             for w in weight):
        _same_length(starts, weight)
        return _run(E.LERP_TENSOR, _node("lerp", "1List"), [starts, ends, list(weight)])
    if isinstance(weight, (list, tuple)):
        return _run(E.LERP, _node("lerp", "0ScalarList"), [starts, ends],
                    [_scalar_list(starts, weight)])
    return _run(E.LERP, _node("lerp", "0Scalar"), [starts, ends],
                [[scalar(weight)] * len(starts)])


def _foreach_lerp_(self: Sequence[Tensor], tensors1: Sequence[Tensor], weight: Any) -> Any:
    """``lerp_`` into each tensor (each gets LerpBackward0/1 and a new version).

    >>> import jaxgrad
    >>> ts = [jaxgrad.zeros(1)]
    >>> _ = jaxgrad._foreach_lerp_(ts, [jaxgrad.ones(1)], 0.5)
    >>> ts[0]
    tensor([0.5000])
    """
    starts = _tensor_list("_foreach_lerp_", "self", 1, self)
    ends = _tensor_list("_foreach_lerp_", "tensors1", 2, tensors1)
    _same_length(starts, ends)
    weights = (list(weight) if isinstance(weight, (list, tuple)) else [weight] * len(starts))
    if len(weights) != len(starts):
        _scalar_list(starts, weights)
    for t, e, w in zip(starts, ends, weights):
        t.lerp_(e, w)
    return self


def _pointwise(name: str, row: Op) -> tuple[Callable, Callable]:
    public = f"_foreach_{name}"

    def lists(self, tensor1, tensor2, suffix=""):
        a = _tensor_list(public + suffix, "self", 1, self)
        b = _tensor_list(public + suffix, "tensor1", 2, tensor1)
        c = _tensor_list(public + suffix, "tensor2", 3, tensor2)
        _same_length(a, b)
        _same_length(a, c)
        return a, b, c

    def values_of(a, value):
        if isinstance(value, (list, tuple)):
            return "0ScalarList", _scalar_list(a, value)
        return "0Scalar", [scalar(value)] * len(a)

    def out_of_place(self, tensor1, tensor2, value: Any = 1) -> tuple:
        a, b, c = lists(self, tensor1, tensor2)
        suffix, values = values_of(a, value)
        return _run(row, _node(name, suffix), [a, b, c], [values])

    def in_place(self, tensor1, tensor2, value: Any = 1) -> Any:
        a, b, c = lists(self, tensor1, tensor2, "_")
        _, values = values_of(a, value)
        for t, x, y, v in zip(a, b, c, values):
            getattr(t, f"{name}_")(x, y, value=v)
        return self

    out_of_place.__doc__ = (
        f"``{name}`` of each triple with one value or the matching value of a list (one "
        f"node).\n\n>>> import jaxgrad\n>>> jaxgrad.{public}([jaxgrad.ones(1)], "
        f"[jaxgrad.ones(1)], [jaxgrad.ones(1)], value=2)\n(tensor([3.]),)")
    in_place.__doc__ = (
        f"``{name}_`` into each tensor.\n\n>>> import jaxgrad\n>>> ts = [jaxgrad.ones(1)]\n"
        f">>> _ = jaxgrad.{public}_(ts, [jaxgrad.ones(1)], [jaxgrad.ones(1)])\n>>> ts[0]\n"
        f"tensor([2.])")
    return out_of_place, in_place


# --- the rest: norm, zero_, copy_ -----


def _foreach_norm(self: Sequence[Tensor], ord: Any = 2, dtype: Any = None) -> tuple:
    """``linalg.vector_norm(t, ord)`` of each tensor, as one ForeachNormBackward0 node.

    >>> import jaxgrad
    >>> jaxgrad._foreach_norm([jaxgrad.tensor([3.0, 4.0])])
    (tensor(5.),)
    """
    tensors = _tensor_list("_foreach_norm", "self", 1, self)
    ord = scalar(ord)
    computes = {_linalg._norm_dtype(t, dtype, "linalg.vector_norm") for t in tensors}
    for t in tensors:
        if not t.numel() and ord == math.inf:
            raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor "
                               "because the operation does not have an identity")
        if not t.numel() and ord < 0:  # linalg.vector_norm's refusal, with its message
            _linalg.linalg_vector_norm(t.detach(), ord)
    compute = computes.pop() if len(computes) == 1 else None
    return _run(R.VECTOR_NORM, "ForeachNormBackward0", [tensors], ord=float(ord), dim=None,
                keepdim=False, dtype=compute)


def _foreach_max(self: Sequence[Tensor]) -> tuple:
    """The largest element of each tensor (one ForeachMaxBackward1 node; ties share the
    gradient, as ``max()`` does).

    >>> import jaxgrad
    >>> jaxgrad._foreach_max([jaxgrad.tensor([1.0, 3.0]), jaxgrad.tensor(2.0)])
    (tensor(3.), tensor(2.))
    """
    tensors = _tensor_list("_foreach_max", "self", 1, self)
    if any(not t.numel() for t in tensors):
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over "
                           "zero elements is undefined.")
    return _run(R.MAX_ALL, "ForeachMaxBackward1", [tensors])


def _foreach_clone(self: Sequence[Tensor]) -> tuple:
    """A copy of each tensor (one ForeachCloneBackward0 node).

    >>> import jaxgrad
    >>> jaxgrad._foreach_clone([jaxgrad.ones(2)])
    (tensor([1., 1.]),)
    """
    return _run(V.CLONE, "Foreach" + V.CLONE.node,
                [_tensor_list("_foreach_clone", "self", 1, self)])


def _foreach_zero_(self: Sequence[Tensor]) -> Any:
    """``zero_`` on each tensor.

    >>> import jaxgrad
    >>> ts = [jaxgrad.ones(2)]
    >>> _ = jaxgrad._foreach_zero_(ts)
    >>> ts[0]
    tensor([0., 0.])
    """
    for t in _tensor_list("_foreach_zero_", "self", 1, self):
        t.zero_()
    return self


def _foreach_copy_(self: Sequence[Tensor], src: Sequence[Tensor],
                   non_blocking: bool = False) -> Any:
    """``copy_`` of each tensor of ``src`` into the matching tensor of ``self`` (torch records
    its NotImplemented node: no gradient flows through a foreach copy).

    >>> import jaxgrad
    >>> ts = [jaxgrad.zeros(2)]
    >>> _ = jaxgrad._foreach_copy_(ts, [jaxgrad.ones(2)])
    >>> ts[0]
    tensor([1., 1.])
    """
    dst = _tensor_list("_foreach_copy_", "self", 1, self)
    sources = _tensor_list("_foreach_copy_", "src", 2, src)
    _same_length(dst, sources)
    for t, s in zip(dst, sources):
        check_broadcast(t, s)
        apply_inplace(F.COPY_NOT_IMPLEMENTED, t, s)
    return self


def _named(fn: Callable, name: str) -> Callable:
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "jaxgrad"
    return fn


def _functions() -> dict[str, Callable]:
    found: dict[str, Callable] = {}
    pairs = [(name, _unary(name, row)) for name, row in _UNARY.items()]
    pairs += [(name, _binary(spec)) for name, spec in _BINARY.items()]
    pairs += [("addcmul", _pointwise("addcmul", E.ADDCMUL)),
              ("addcdiv", _pointwise("addcdiv", E.ADDCDIV))]
    for name, (out_of_place, in_place) in pairs:
        found[f"_foreach_{name}"] = _named(out_of_place, f"_foreach_{name}")
        found[f"_foreach_{name}_"] = _named(in_place, f"_foreach_{name}_")
    found["_foreach_pow"] = _foreach_pow
    for fn in (_foreach_lerp, _foreach_lerp_, _foreach_norm, _foreach_max, _foreach_clone,
               _foreach_zero_, _foreach_copy_):
        found[fn.__name__] = fn
    return found


# every foreach function by name; ``jaxgrad/__init__`` exports them
FUNCTIONS: dict[str, Callable] = _functions()
