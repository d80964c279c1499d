"""The public surface generated from op declarations: ``jaxgrad.exp``, ``Tensor.exp``,
``Tensor.exp_``, their signatures, docstrings and torch's argument-type errors.

An op is declared once, by its schema (torch's ``native_functions.yaml`` line):

- a row of the op table with ``variants`` (``"function method out"``) is *generated* whole:
  :func:`generate` writes the function from the schema (``Tensor`` parameters become the
  kernel's operands, ``Scalar`` ones its traced ``aux`` operands, the rest static arguments)
  and, with ``inplace``, its ``exp_``; ``out`` adds torch's ``out=`` to the function;
- an op torch decomposes or whose arguments need normalising (``add``'s alpha, ``sum``'s dims,
  ``matmul``) is written by hand in ``_functions`` and declared with :func:`declare`.

Either way the op is registered here under its public name; ``jaxgrad/__init__`` exports the
functions and ``methods`` attaches the methods, both from :data:`DECLARED`. The argument-type
error (``exp(): argument 'input' (position 1) must be Tensor, not int``) is worked out from the
schema, and only after the call failed, so a correct call costs one extra frame: the generated
wrapper knows whether it is the function or the method form, so no frame is inspected.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import linecache
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.grad_mode import is_grad_enabled, no_grad
from .._core.graph import NOT_IMPLEMENTED
from .._core.jax_setup import SCOPE, x64_scope
from .._core.tensor import PYTHON_DISPATCH, Tensor
from .._core.typename import type_name
from .._engine import autocast as _autocast
from .._engine import forward_ad as _forward_ad
from .._engine.dispatch import (
    _FORWARD_AD,
    apply,
    apply_inplace,
    check_out_overlap,
    dispatch_function,
    rebase_history,
    write_out,
)
from .._ops._schema import Schema, parse_schema
from .._ops._table import Op
from .arguments import (
    broadcast_operands,
    check_inplace_broadcast,
    number_or_tensor,
    require_tensors,
    scalar,
)

_EXPECTED = {"tensor": "Tensor", "tensors": "tuple of Tensors", "scalar": "Number"}

# torch's python arg parser also takes numpy's names for four parameters of its native ops
# (python_arg_parser.cpp's numpy_compatibility_arg_names): ``x.sum(axis=1, keepdims=True)``
NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
               "other": ("x2",)}
def numpy_aliases(schema: Schema) -> dict[str, str]:
    """The numpy-style keyword names torch accepts for ``schema``'s parameters (alias -> name).

    >>> from jaxgrad._functions.opgen import numpy_aliases
    >>> from jaxgrad._ops._schema import parse_schema
    >>> dict(numpy_aliases(parse_schema("sum(Tensor self, int[1]? dim=None) -> Tensor")))
    {'axis': 'dim', 'x': 'input', 'a': 'input', 'x1': 'input'}
    """
    names = {p.python_name for p in schema.params}
    return {alias: name for name, aliases in NUMPY_NAMES.items() if name in names
            for alias in aliases}


def _unalias(kwargs: dict, aliases: dict[str, str]) -> dict:
    """``kwargs`` with numpy's names replaced by torch's (unless torch's is given too)."""
    return {(aliases[k] if k in aliases and aliases[k] not in kwargs else k): v
            for k, v in kwargs.items()}


@dataclass(frozen=True)
class Declared:
    """One public op: the implementation, which forms torch has, and per parameter torch's
    parser checks, its kind (``"tensor"`` or ``"tensors"``); ``optional`` ones take None."""

    name: str
    schema: Schema | None
    impl: Callable
    variants: tuple[str, ...]
    numbers_as_tensors: bool | tuple[str, ...]  # all Tensor parameters, or these ones
    doc: str
    kinds: dict[str, str]
    optional: frozenset[str]
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)  # numpy's names: axis=
    # False: torch records nothing, so it allows any ``out=``; FALLBACK: torch's autograd
    # fallback runs it (no formula), whose ``out=`` records a NotImplemented node
    differentiable: bool | str = True
    out_name: str = ""  # the op torch's ``out=`` error names, where not this one (its kernel's)

    @classmethod
    def of_schema(cls, name: str, schema: Schema, impl: Callable, variants: tuple[str, ...],
                  numbers_as_tensors: bool | tuple[str, ...], doc: str,
                  python_level: bool = False) -> Declared:
        """The declaration of ``impl`` under torch's ``schema`` (``python_level``: torch
        defines the op in Python, so its parser's numpy aliases do not apply)."""
        checked = [p for p in schema.params if p.kind in _EXPECTED]
        return cls(name, schema, impl, variants, numbers_as_tensors, doc,
                   {p.python_name: p.kind for p in checked},
                   frozenset(p.python_name for p in checked if p.optional),
                   {} if python_level else numpy_aliases(schema))

    def argument_error(self, args: tuple, kwargs: dict, method: bool) -> TypeError | None:
        """torch's TypeError for the first argument that does not fit its parameter, if any."""
        signature = inspect.signature(self.impl)
        try:
            bound = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return None
        params = list(signature.parameters)
        for param, value in bound.items():
            kind = self.kinds.get(param)
            if kind is None or self._fits(kind, value, param):
                continue
            index = params.index(param)
            if kind == "tensors" and isinstance(value, (list, tuple)):
                bad = next(i for i, v in enumerate(value) if not isinstance(v, Tensor))
                return TypeError(f"expected Tensor as element {bad} in argument "
                                 f"{index - method}, but got {type_name(value[bad])}")
            where = "" if param in kwargs else f" (position {index + 1 - method})"
            return TypeError(f"{self.name}(): argument '{param}'{where} must be "
                             f"{_EXPECTED[kind]}, not {type_name(value)}")
        return None

    def _fits(self, kind: str, value: Any, param: str) -> bool:
        if kind == "scalar":  # a number, or a 0-d tensor that does not require grad
            if isinstance(value, Tensor):
                return value.ndim == 0 and not value.requires_grad
            return (value is None and param in self.optional) or _is_number(value)
        if isinstance(value, Tensor):
            return True
        if kind == "tensors":
            return isinstance(value, (list, tuple)) and all(isinstance(v, Tensor) for v in value)
        if value is None:
            return param in self.optional
        return self.takes_numbers(param) and _is_number(value)

    def takes_numbers(self, param: str) -> bool:
        """Whether the Tensor parameter ``param`` also takes a Python number (``t * 2``)."""
        return self.numbers_as_tensors is True or param in (self.numbers_as_tensors or ())


def _is_number(value: Any) -> bool:
    """What torch's parser takes as a Number: Python's and numpy's numbers (not Fraction)."""
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


DECLARED: dict[str, Declared] = {}
# ``Declared.differentiable`` of an op torch runs through its autograd fallback
FALLBACK = "fallback"
FORMS: dict[str, Callable] = {}  # each declared op's function form (``jaxgrad.<name>``), by name


def declare(schema: str, *, variants: str = "function method",
            numbers_as_tensors: bool | tuple[str, ...] = False,
            python_level: bool = False, differentiable: bool = True,
            out_name: str = "") -> Callable[[Callable], Callable]:
    """Register a hand-written op under torch's ``schema``; returns its public function form.
    ``python_level``: torch writes this op in Python (``torch.norm``), so it takes no numpy
    keyword aliases (``axis=``). ``differentiable=False``: derivatives.yaml marks the op's
    inputs non_differentiable, so its ``out=`` accepts tensors that require grad. ``out_name``:
    the op torch's ``out=`` refusal names where torch decomposes this one (``linalg_eigvalsh``
    writes through ``_linalg_eigh``).

    >>> from jaxgrad._functions.opgen import DECLARED
    >>> str(DECLARED["matmul"].schema)
    'matmul(Tensor self, Tensor other) -> Tensor'
    """

    def register(impl: Callable) -> Callable:
        parsed = parse_schema(schema)
        _check_against_schema(parsed, impl)
        decl = Declared.of_schema(parsed.name, parsed, impl, tuple(variants.split()),
                                  numbers_as_tensors, impl.__doc__ or "", python_level)
        return _register(dataclasses.replace(decl, differentiable=differentiable,
                                             out_name=out_name))

    return register


def declare_alias(name: str, target: str) -> Callable:
    """Declare ``name`` as another name of the declared op ``target`` (torch's ``clip`` for
    ``clamp``): the same implementation and forms, its own name in errors and reprs.

    >>> import jaxgrad
    >>> jaxgrad.clip(jaxgrad.tensor([-2.0, 3.0]), -1, 1)
    tensor([-1.,  1.])
    """
    return _register(dataclasses.replace(DECLARED[target], name=name))


def namespaced_alias(target: str, name: str) -> Callable:
    """The function form of the declared op ``target`` under ``name`` (its name in errors), for
    a namespace's function that is not a top-level op (``jaxgrad.special.gammainc`` is
    ``special_gammainc``, torch's alias of ``igamma``).

    >>> import jaxgrad
    >>> from jaxgrad._functions.opgen import namespaced_alias
    >>> namespaced_alias("igamma", "special_gammainc").__name__
    'special_gammainc'
    """
    return function_form(dataclasses.replace(DECLARED[target], name=name))


def _register(decl: Declared) -> Callable:
    """Record the declaration; returns its function form (kept in ``FORMS``)."""
    if decl.name in DECLARED:
        raise TypeError(f"{decl.name} is declared twice")
    DECLARED[decl.name] = decl
    FORMS[decl.name] = function_form(decl)
    return FORMS[decl.name]


def _check_against_schema(schema: Schema, impl: Callable) -> None:
    """A hand-written op must take every parameter of its schema, by the same name and kind
    (keyword-only where the schema says so), unless it gathers them in ``*args``."""
    params = inspect.signature(impl).parameters
    if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        return
    for p in schema.params:
        found = params.get(p.python_name)
        if found is None or (p.kwarg_only and found.kind is not found.KEYWORD_ONLY):
            raise TypeError(f"{impl.__name__}{inspect.signature(impl)} does not take {p.type} "
                            f"{p.name}{' as a keyword' if p.kwarg_only else ''} of its schema "
                            f"{schema}")


def _read_no_storage(error: Exception) -> bool:
    """Whether a function read the values of a ``__torch_dispatch__`` wrapper subclass, which
    has none: the whole function then goes to the subclass's dispatch (as torch dispatches
    that aten op), except where autograd would record it (its formula is not a row's)."""
    return PYTHON_DISPATCH[0] and isinstance(error, (TypeError, AttributeError)) and \
        "NoStorage" in str(error)


def _dispatch_whole(name: str, impl: Callable, args: tuple, kwargs: dict) -> Any:
    if is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args):
        raise NotImplementedError(
            f"{name}: jaxgrad computes this function on values, which a __torch_dispatch__ "
            "subclass does not hold, and cannot record its gradient through the subclass")
    return dispatch_function(name, impl, args, kwargs)


# the x64 scope already entered (by the caller, itself jaxgrad's code): nothing to switch
_INSIDE = contextlib.nullcontext()


def function_form(decl: Declared) -> Callable:
    """``jaxgrad.<name>``: the implementation, with torch's argument errors (and ``out=`` where
    the op declares that variant)."""
    impl = decl.impl
    with_out = "out" in decl.variants
    aliases = decl.aliases

    def function(*args: Any, **kwargs: Any) -> Any:
        if kwargs and aliases and not aliases.keys().isdisjoint(kwargs):
            kwargs = _unalias(kwargs, aliases)
        if with_out and kwargs and "out" in kwargs:
            return _call_with_out(function, decl.out_name or decl.name, args, kwargs,
                                  decl.differentiable)
        try:
            with _INSIDE if SCOPE.on else x64_scope():
                if _autocast.active:  # torch's autocast kernel: casts, then the op as it is
                    return _autocast.autocast_call(decl.name, impl, args, kwargs, apply)
                return impl(*args, **kwargs)
        except Exception as exc:
            if _read_no_storage(exc):
                return _dispatch_whole(decl.name, impl, args, kwargs)
            error = decl.argument_error(args, kwargs, method=False)
            if error is None:
                raise
            raise error from None

    signature = inspect.signature(impl)
    if with_out:
        out = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                                annotation="Tensor | None")
        params = list(signature.parameters.values())
        at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
        signature = signature.replace(parameters=[*params[:at], out, *params[at:]])
    return _named(function, decl, signature)


def _call_with_out(function: Callable, name: str, args: tuple, kwargs: dict,
                   differentiable: bool = True) -> Any:
    """``op(..., out=t)``: torch refuses it where autograd would record (never for an op that is
    not ``differentiable``), else writes the result into ``t`` (see ``dispatch.write_out``) and
    returns ``t``."""
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if out is None:
        return function(*args, **kwargs)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type_name(out)}")
    operands = [*args, *kwargs.values()]
    operands = [t for a in operands for t in (a if isinstance(a, (list, tuple)) else (a,))
                if isinstance(t, Tensor)]
    if differentiable == FALLBACK:
        return _out_through_fallback(function, name, args, kwargs, out, operands)
    if differentiable and is_grad_enabled() and (out.requires_grad or
                                                 any(a.requires_grad for a in operands)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    check_out_overlap(out, operands)
    with _forward_ad.suspended(), x64_scope():  # (an out= function computes no tangents)
        result = write_out(out, function(*args, **kwargs))
    if differentiable and any(_forward_ad.has_tangent(_FORWARD_AD, t) for t in (out, *operands)):
        # as torch: checked once the result is written
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not "
                                  "support it because it is an out= function")
    return result


def _out_through_fallback(function: Callable, name: str, args: tuple, kwargs: dict, out: Tensor,
                          operands: list[Tensor]) -> Tensor:
    """``out=`` of an op torch's autograd fallback runs (``floor_divide``, ``heaviside``): ``out``
    is written as an in-place op writes its input, then gets a NotImplemented node whose edges
    are the tensors requiring grad among the operands and ``out``; a leaf ``out`` requiring grad
    is refused."""
    grad = is_grad_enabled()
    if grad and out.requires_grad and out.is_leaf:
        raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    check_out_overlap(out, operands)
    edges = tuple(t._gradient_edge() for t in (*operands, out) if grad and t.requires_grad)
    with no_grad(), _forward_ad.suspended(), x64_scope():
        result = write_out(out, function(*args, **kwargs))
    if edges:
        node = NOT_IMPLEMENTED(edges, ((tuple(out.shape), out._value.dtype),))
        node.message = f"derivative for aten::{name} is not implemented"
        rebase_history(out, node, 0)
    return result


def method_form(decl: Declared) -> Callable:
    """``Tensor.<name>``: the implementation with the tensor as its first argument."""
    impl = decl.impl
    aliases = decl.aliases

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if kwargs and aliases and not aliases.keys().isdisjoint(kwargs):
            kwargs = _unalias(kwargs, aliases)
        try:
            with _INSIDE if SCOPE.on else x64_scope():
                if _autocast.active:
                    return _autocast.autocast_call(decl.name, impl, (self, *args), kwargs,
                                                   apply)
                return impl(self, *args, **kwargs)
        except Exception as exc:
            if _read_no_storage(exc):
                return _dispatch_whole(decl.name, impl, (self, *args), kwargs)
            error = decl.argument_error((self, *args), kwargs, method=True)
            if error is None:
                raise
            raise error from None

    signature = inspect.signature(impl)
    params = list(signature.parameters.values())
    params[0] = params[0].replace(name="self")
    _named(method, decl, signature.replace(parameters=params))
    # found again where it lives, as pickle and doctest look for it
    method.__qualname__, method.__module__ = f"Tensor.{decl.name}", "jaxgrad._core.tensor"
    return method


_ANNOTATED_KINDS = {"Tensor": "tensor", "Tensor | None": "tensor", "Sequence[Tensor]": "tensors"}


def tensor_args(fn: Callable | None = None, *, name: str | None = None) -> Callable:
    """torch's argument-type errors for a function without a schema (``nn.functional``): its
    parameters annotated ``Tensor`` (``Tensor | None``: or None; ``Sequence[Tensor]``: a list
    of tensors) are checked, after a failed call, as torch's parser checks them.

    >>> import jaxgrad
    >>> jaxgrad.nn.functional.linear(3, jaxgrad.ones(2, 2))
    Traceback (most recent call last):
    TypeError: linear(): argument 'input' (position 1) must be Tensor, not int
    """
    if fn is None:
        return lambda f: tensor_args(f, name=name)
    params = inspect.signature(fn).parameters.items()
    annotated = {p: (_ANNOTATED_KINDS[q.annotation], q.annotation == "Tensor | None")
                 for p, q in params if q.annotation in _ANNOTATED_KINDS}
    decl = Declared(name or fn.__name__, None, fn, ("function",), False, fn.__doc__ or "",
                    {p: kind for p, (kind, _) in annotated.items()},
                    frozenset(p for p, (_, optional) in annotated.items() if optional))
    wrapper = function_form(decl)
    wrapper.__name__ = wrapper.__qualname__ = fn.__name__
    wrapper.__doc__, wrapper.__module__ = fn.__doc__, fn.__module__
    return wrapper


def _named(fn: Callable, decl: Declared, signature: inspect.Signature) -> Callable:
    fn.__name__ = fn.__qualname__ = decl.name
    fn.__signature__ = signature  # type: ignore[attr-defined]
    fn.__doc__ = f"{decl.doc.strip()}\n\ntorch's schema: ``{decl.schema}``"
    fn.__module__ = "jaxgrad"
    return fn


# --- ops generated whole from their rows -----------------------------------------------------

def generate(*tables: Any) -> dict[str, Callable]:
    """Declare every row with ``variants`` in the op-table modules ``tables``; returns the
    function forms by name (``exp``, ``exp_``, ...)."""
    functions: dict[str, Callable] = {}
    for table in tables:
        for row in vars(table).values():
            if isinstance(row, Op) and (row.variants or row.inplace):
                functions.update(_declare_row(row))
    return functions


def _declare_row(op: Op) -> dict[str, Callable]:
    out = {}
    for inplace, variants in ((False, op.variants), (True, op.inplace)):
        if not variants:
            continue
        name = op.name + "_" if inplace else op.name
        schema, doc = (_inplace_schema(op.schema), _inplace_doc(op)) if inplace else (
            op.schema, op.doc)
        decl = Declared.of_schema(name, schema, _row_impl(op, name, inplace), variants,
                                  op.numbers_as_tensors, doc)
        # a row without formulas (comparisons) records nothing: torch allows its out= with
        # inputs that require grad; a NotImplemented row's out= records that node
        differentiable = FALLBACK if op.node == "NotImplemented" else bool(op.grads)
        out[name] = _register(dataclasses.replace(decl, differentiable=differentiable))
    return out


def _inplace_schema(schema: Schema) -> Schema:
    """``exp(Tensor self) -> Tensor`` -> ``exp_(Tensor(a!) self) -> Tensor(a!)``."""
    text = re.sub(r"^(\w+)", r"\1_", str(schema), count=1)
    text = text.replace("(Tensor self", "(Tensor(a!) self", 1)
    return parse_schema(text.rsplit("->", 1)[0] + "-> Tensor(a!)")


def _inplace_doc(op: Op) -> str:
    """The row's docstring for its in-place form (its example calls the in-place function)."""
    if not op.variants:  # the row only has its in-place form: its doc already is about it
        return op.doc
    form = "jaxgrad." if "function" in op.inplace else "jaxgrad.Tensor."
    doc = op.doc.replace(f"jaxgrad.{op.name}(", f"{form}{op.name}_(")
    return f"In place: writes into ``input`` and returns it. {doc}"


def _row_impl(op: Op, name: str, inplace: bool) -> Callable:
    """The implementation of a row, written from its schema: checks, then one dispatch."""
    params = op.schema.params
    signature, tensors, aux, static = [], [], [], []
    star = False
    for p in params:
        if p.kwarg_only and not star:
            signature.append("*")
            star = True
        py = p.python_name
        signature.append(f"{py}={p.default!r}" if p.has_default else py)
        if p.kind == "tensor":
            tensors.append(f"number_or_tensor({py})" if op.numbers_as_tensors and tensors else py)
        elif p.kind == "scalar":
            aux.append(f"None if {py} is None else scalar({py})" if p.optional else f"scalar({py})")
        else:
            static.append(f"{p.name}={py}")
    operands = [p.python_name for p in params if p.kind == "tensor"]
    required = [p.python_name for p in params if p.kind == "tensor" and not p.optional]
    lines = [f"def {name}({', '.join(signature)}):"]
    if len(required) > 1 and not op.numbers_as_tensors:
        lines.append(f"    require_tensors({', '.join(required[1:])})")
    if op.checks is not None:  # torch's checks of dtypes and Scalar kinds, before its shapes
        checked = [p.python_name for p in params if p.kind in ("tensor", "scalar")]
        lines.append(f"    _OP.checks({', '.join(checked)})")
    if inplace and len(operands) > 1:
        lines.append(f"    check_inplace_broadcast({', '.join(operands)})")
    elif op.promote and len(operands) > 1:
        lines.append(f"    broadcast_operands({', '.join(operands)})")
    dispatch = 'apply_inplace' if inplace else 'apply'
    if op.scalar_overload is not None:  # torch's .Scalar overload for a number after self
        lines.append(f"    if not isinstance({operands[1]}, Tensor):")
        lines.append(f"        return {dispatch}(_SCALAR_OP, {operands[0]}, "
                     f"aux=(scalar({operands[1]}),))")
    call = ", ".join([f"_OP, {', '.join(tensors)}",
                      *([f"aux=({', '.join(aux)},)"] if aux else []), *static])
    lines.append(f"    return {dispatch}({call})")
    namespace = {"_OP": op, "_SCALAR_OP": op.scalar_overload, "Tensor": Tensor,
                 "apply": apply, "apply_inplace": apply_inplace, "scalar": scalar,
                 "number_or_tensor": number_or_tensor, "broadcast_operands": broadcast_operands,
                 "require_tensors": require_tensors,
                 "check_inplace_broadcast": check_inplace_broadcast}
    schema = _inplace_schema(op.schema) if inplace else op.schema
    return _compile_generated("\n".join(lines) + "\n", name, schema, namespace)


def _compile_generated(source: str, name: str, schema: Schema, namespace: dict) -> Callable:
    """Compile a generated function under a file name that names its schema, with its source in
    ``linecache``: a traceback through it reads ``File ".../opgen.py <generated: exp(Tensor self)
    -> Tensor>", line 2, in exp`` followed by the generated line."""
    filename = f"{__file__} <generated: {schema}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]
