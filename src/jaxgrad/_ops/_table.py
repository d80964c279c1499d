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

import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core.caches import cache
from .._core.jax_setup import jit, x64_scope
from .._core.transform_stack import is_differentiable_array
from ._schema import parse_schema
from .half_precision import HALF_DTYPES


def _params(fn: Callable) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


def identity_grad(grad):
    """The formula ``grad`` itself; the engine passes such gradients on without copying."""
    return grad


def sgn(x):
    """torch's ``sgn`` in a formula: ``x / |x|`` (0 at 0) for complex ``x``, differentiable as
    torch's is (JAX's ``sign`` has a zero derivative, right for reals only), else ``sign``.

    >>> import jax, jax.numpy as jnp
    >>> from jaxgrad._ops._table import sgn
    >>> jax.grad(lambda x: sgn(x * 1j).imag)(2.0).item(), sgn(jnp.array(0j)).item()
    (0.0, 0j)
    """
    if not jnp.iscomplexobj(x):
        return jnp.sign(x)
    zero = x == 0
    safe = jnp.where(zero, jnp.ones_like(x), x)
    return jnp.where(zero, jnp.zeros_like(x), safe / jnp.abs(safe))


_DERIVE = object()
# the names of all rows: the ops a dispatch can show (``jaxgrad.ops.aten`` has each)
ROW_NAMES: set[str] = set()
# ``Op(tangent=ELEMENTWISE)``: torch's ``auto_element_wise`` forward formula, the backward
# formulas evaluated on the tangents (not transposed: a masked lane stays masked, NaN-free)
ELEMENTWISE = "elementwise"
_ENGINE_NAMES = frozenset({"grad", "grads", "in_shapes"})


class Op:
    """One row of the op table: an immutable value.

    ``signature`` is torch's schema (``"exp(Tensor self) -> Tensor"``) for a row that is (or
    backs) a public op, or a bare name for an internal row. From a schema come the row's
    ``inputs`` (its ``Tensor`` parameters), its traced ``aux`` operands (its ``Scalar``
    parameters) and its static parameters; ``variants`` (``"function"``, ``"method"``) and
    ``inplace`` (the same for the ``exp_`` form) say which public forms are generated from the
    row (see ``jaxgrad._functions.opgen``); ``doc`` becomes their docstring. A formula may only
    name what the row provides (an input, output, aux or static argument, ``grad``/``grads``,
    ``<input>_shape``/``<input>_dtype``): a misspelt name fails when the row is built.
    """

    __slots__ = ("aux", "backward_checks", "checks", "delayed_errors", "doc", "extra_saves",
                 "formula_params", "forward",
                 "forward_ad",
                 "grad_layout", "grad_nodes", "grad_nodes_by_readers", "grad_not_implemented",
                 "grad_version", "grads", "identity", "identity_when", "inplace", "inputs",
                 "name", "node",
                 "nondiff_outputs", "numbers_as_tensors", "opmath", "outputs", "overlap",
                 "promote", "reinterprets", "scalar_overload", "schema", "tangent",
                 "undefined_grads", "variadic", "variants")

    def __init__(self, signature: str, node: str | None, forward: Callable, *,
                 inputs: Any = _DERIVE, outputs: tuple[str, ...] = ("result",),
                 grads: dict[str, Callable] | None = None, aux: Any = _DERIVE,
                 variadic: Callable | None = None, saves: tuple[str, ...] = (),
                 promote: str | None = None, nondiff_outputs: tuple[int, ...] = (),
                 grad_layout: str = "fresh", grad_version: int | Callable = 0, variants: str = "",
                 inplace: str = "", identity_when: Callable | None = None,
                 numbers_as_tensors: bool = False, forward_ad: bool = True,
                 scalar_overload: Op | None = None,
                 delayed_errors: dict[str, tuple[Callable, str]] | None = None,
                 overlap: str = "error", tangent: Callable | None = None,
                 reinterprets: str | None = None, opmath: str = "",
                 backward_checks: tuple[tuple[Callable, str], ...] = (),
                 checks: Callable | None = None,
                 undefined_grads: Callable | None = None,
                 grad_not_implemented: dict[str, str] | None = None,
                 grad_nodes: dict[str, str | Callable] | None = None,
                 grad_nodes_by_readers: bool = False, doc: str = "") -> None:
        schema = parse_schema(signature) if "(" in signature else None
        init = object.__setattr__
        init(self, "schema", schema)
        init(self, "name", schema.name if schema else signature)
        ROW_NAMES.add(self.name)
        init(self, "node", node)
        init(self, "forward", forward)
        if inputs is _DERIVE:
            inputs = schema.of_kind("tensor") if schema else ("self",)
        if aux is _DERIVE:
            aux = schema.of_kind("scalar") if schema else ()
        init(self, "inputs", inputs)
        init(self, "outputs", outputs)
        init(self, "aux", tuple(aux))
        init(self, "grads", dict(grads or {}))
        init(self, "variadic", variadic)  # formula returning a tuple, for *tensors inputs
        init(self, "promote", promote)  # None | "common" | "float" (int inputs become float)
        init(self, "nondiff_outputs", nondiff_outputs)
        # what torch's formula returns: a fresh dense tensor, an "expand"ed (non-dense) view of
        # grad, a "view" of grad, or "slices" of grad (cat's narrow: each a new view object);
        # Note [Gradient ownership and stealing] (_engine/accumulate.py)
        init(self, "grad_layout", grad_layout)
        # how many in-place writes torch's formula makes into the fresh tensor it returns (index's
        # index_put_ into zeros: 1; sort's zeros + scatter_: 2): the gradient's ``_version``;
        # a callable of static arguments where that depends on them (``_fft_c2r``'s ``mul_``)
        init(self, "grad_version", grad_version)
        init(self, "extra_saves", saves)
        init(self, "variants", _forms(variants, ("function", "method", "out")))
        init(self, "inplace", _forms(inplace, ("function", "method")))
        init(self, "numbers_as_tensors", numbers_as_tensors)
        # False where torch's derivatives.yaml gives no forward formula (igamma): a tangent
        # reaching the op raises torch's NotImplementedError (see _forward_ad)
        init(self, "forward_ad", forward_ad)
        # the row of torch's ``.Scalar`` overload, which the generated forms run when the operand
        # after ``self`` is a Python number (its own node: ``x.eq_(1)`` records EqBackward0)
        init(self, "scalar_overload", scalar_overload)
        # input -> (predicate, message): where ``predicate(**saved, **static)`` holds, the
        # gradient a create_graph backward gives that input cannot be differentiated again
        # (torch's DelayedError node in a formula: scatter_reduce's prod with repeated zeros)
        init(self, "delayed_errors", dict(delayed_errors or {}))
        # (predicate, message) pairs: before the formulas run, ``predicate(grads, **saved,
        # **static)`` true raises ``RuntimeError(message)`` (torch's TORCH_CHECKs on values in a
        # backward formula: eig/svd's phase-dependent losses). A value check: skipped where the
        # values are traced (a compiled backward does not take such graphs).
        init(self, "backward_checks", tuple(backward_checks))
        # ``undefined_grads(shapes)``, given per output the shape of its incoming gradient (None
        # where none arrived): true where torch's formula returns undefined gradients for every
        # input (linalg_lstsq_backward without a solution gradient and with empty residuals),
        # so nothing reaches the inputs (no ``.grad``, None from ``autograd.grad``)
        init(self, "undefined_grads", undefined_grads)
        # input -> the op torch names when a create_graph gradient of that input is
        # differentiated again (derivatives.yaml's ``not_implemented`` in its backward op's own
        # entry: ``_embedding_bag_backward``): the gradient keeps its grad_nodes name, and a
        # backward reaching that node raises torch's NotImplementedError
        init(self, "grad_not_implemented", dict(grad_not_implemented or {}))
        # torch's argument checks before its kernel runs (a meta function's TORCH_CHECKs on
        # dtypes and Scalar kinds: integer addcdiv, a float ``alpha`` for integers): a function
        # of the row's inputs then its aux operands, positionally, as the caller passes them
        # (tensors and Python numbers), raising torch's error. Every form generated from the row
        # and every foreach form over it call it; a hand-written public function calls it too.
        init(self, "checks", checks)
        # what torch does when the row writes in place into a tensor with internal overlap (a
        # dim of size > 1 and stride 0: an ``expand``): "error" (its kernels' assert, the
        # default), "allow" (fill_ with a number, zero_: no check) or "warn" (masked_fill_,
        # index_fill_, index_put_: a deprecation warning, which the public function gives
        # before its argument checks; see ``dispatch.warn_expanded_write``)
        if overlap not in ("error", "allow", "warn"):
            raise TypeError(f"overlap={overlap!r}: a row's overlap is error, allow or warn")
        init(self, "overlap", overlap)
        # torch's forward-mode formula (derivatives.yaml's ``result:`` line) where it is not the
        # backward formulas transposed (auto_element_wise/auto_linear) and differs from them at
        # some points (atan2 at the origin: NaN, where the backward formula gives 0). It names
        # ``<input>_t`` (an input's tangent, zeros when it has none) and what formulas name.
        init(self, "tangent", tangent)
        # a view row whose result reads its input's memory through a lens (``conj``, ``neg``,
        # ``as_real``, ``as_complex``: see ``_core.storage.ReinterpretedStorage``)
        init(self, "reinterprets", reinterprets)
        # where torch's CPU kernels compute half-precision (bfloat16/float16) operands in
        # float32, their "opmath" type, with Scalars (alpha, a number operand) in float32 too,
        # rounding once: "forward" (``half_as_float32``), "backward" (each formula), or both
        if set(opmath.split()) - {"forward", "backward"}:
            raise TypeError(f"opmath={opmath!r}: forward, backward or both")
        init(self, "opmath", frozenset(opmath.split()))
        # input -> the node torch's formula for it ends in (``MulBackward0`` for ``grad *
        # other``): the grad_fn of that gradient when made with create_graph (the engine's
        # sum_to and cast after it are named by the engine; see ``dispatch.grad_node_names``);
        # "*" names every input's, "sum_to" a formula that is torch's ``sum_to(grad, ...)``.
        # Where torch's name depends on a static argument, an aux operand or the shape of a
        # saved output (``reduction``: mean ends in ``DivBackward1``; ``alpha`` != 1 in
        # ``MulBackward1``; qr of a wide matrix in ``AddBackward0``), the entry is a
        # callable whose parameters name them, returning the name (``lambda alpha:
        # "MmBackward0" if alpha == 1 else "MulBackward1"``); a traced operand leaves it out
        init(self, "grad_nodes", dict(grad_nodes or {}))
        # a formula run as an op (create_graph): its inputs' gradients are named after the
        # operations of its own program that read them (``dispatch.grad_node_names``)
        init(self, "grad_nodes_by_readers", grad_nodes_by_readers)
        init(self, "doc", doc)
        params = {k: _params(f) for k, f in self.grads.items()}
        if tangent is not None and tangent != ELEMENTWISE:
            params["~"] = _params(tangent)
        if variadic is not None:
            params["*"] = _params(variadic)
        init(self, "formula_params", params)
        init(self, "identity", frozenset(k for k, f in self.grads.items() if f is identity_grad))
        # ``identity_when(self_shape, **static)``: the shapes for which torch's formula returns
        # ``grad`` itself (cumsum over a dim of size 1), handed on as identity grads are
        init(self, "identity_when", identity_when)
        self._check_formula_names()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Op rows are immutable (tried to set {name!r} of {self})")

    def __repr__(self) -> str:
        return f"Op({self.name})"

    def static_names(self) -> tuple[str, ...]:
        """The static (cache-key) arguments: the schema's, or the forward's keyword tail."""
        if self.schema is not None:
            return self.schema.of_kind("static")
        try:
            params = _params(self.forward)
        except (TypeError, ValueError):  # a builtin or ufunc: positional operands only
            return ()
        return params[len(self.inputs or ()) + len(self.aux):]

    def _check_formula_names(self) -> None:
        known = set(_ENGINE_NAMES) | set(self.outputs) | set(self.aux) | set(self.static_names())
        if self.inputs is None:
            known.add("inputs")
        else:
            known |= {f"{i}{suffix}" for i in self.inputs for suffix in ("", "_shape", "_dtype")}
        for key, params in self.formula_params.items():
            allowed = known | {f"{i}_t" for i in self.inputs or ()} if key == "~" else known
            unknown = [p for p in params if p not in allowed]
            input_formula = key not in ("*", "~") and self.inputs is not None
            if unknown or (input_formula and key not in self.inputs):
                raise TypeError(f"{self}: the formula for {key!r} names {unknown or key!r}, which "
                                f"the row does not provide (it has {sorted(known)})")
        for name in self.grad_not_implemented:
            if name not in (self.inputs or ()):
                raise TypeError(f"{self}: grad_not_implemented names {name!r}, not an input")
        for name in self.extra_saves:
            if name not in known:
                raise TypeError(f"{self}: saves={name!r} is not an input, output or aux")
        for name, node_name in self.grad_nodes.items():
            if name != "*" and name not in (self.inputs or ()):
                raise TypeError(f"{self}: grad_nodes names {name!r}, which is not an input")
            readable = (set(self.aux) | set(self.static_names()) | set(self.outputs)
                        | set(self.inputs or ()))
            unknown = [p for p in (_params(node_name) if callable(node_name) else ())
                       if p not in readable]
            if unknown:
                raise TypeError(f"{self}: grad_nodes[{name!r}] names {unknown}, which are not "
                                "static arguments, aux operands, inputs or outputs")

    def input_names(self, n: int) -> tuple[str, ...]:
        """Names of the inputs; a variadic op (``inputs=None``) calls them in0, in1, ..."""
        return self.inputs if self.inputs is not None else tuple(f"in{i}" for i in range(n))

    def saved_names(self, needs: tuple[bool, ...]) -> tuple[str, ...]:
        """Names of the inputs/outputs to save, given which inputs need a gradient."""
        return _saved_names(self, needs)

    def save_plan(self, needs: tuple[bool, ...], n_inputs: int) -> tuple:
        """``(name, "input"|"output"|"aux", position)`` of each value to save."""
        return _save_plan(self, needs, n_inputs)


def _forms(words: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """The public forms a row asks for; a misspelt one fails when the row is built."""
    forms = tuple(words.split())
    unknown = [w for w in forms if w not in allowed]
    if unknown:
        raise TypeError(f"unknown variants {unknown}; a row may ask for {allowed}")
    return forms


@cache(maxsize=8192)
def _saved_names(op: Op, needs: tuple[bool, ...]) -> tuple[str, ...]:
    savable = set(op.inputs or ()) | set(op.outputs) | set(op.aux)
    if op.variadic is not None:
        params = op.formula_params["*"] + op.extra_saves
        found = list(op.input_names(len(needs))) if "inputs" in params else []
        keys = [params]
    else:
        found = []
        keys = [op.formula_params[k] + op.extra_saves
                for k, need in zip(op.inputs, needs) if need and k in op.grads]
    for params in keys:
        for p in params:
            if p in savable and p not in found:
                found.append(p)
    # torch's generated nodes save their inputs in name order, then their outputs in name order
    # (svd's S, U, Vh; lu's L, P, U): the order saved-tensor pack hooks see them in
    outputs = sorted(p for p in op.outputs if p in found)
    return tuple(sorted(p for p in found if p not in outputs)) + tuple(outputs)


@cache(maxsize=8192)
def _save_plan(op: Op, needs: tuple[bool, ...], n_inputs: int) -> tuple:
    inputs = op.input_names(n_inputs)
    return tuple(
        (name, "output", op.outputs.index(name)) if name in op.outputs
        else (name, "input", inputs.index(name)) if name in inputs
        else (name, "aux", op.aux.index(name))
        for name in _saved_names(op, needs))


def half_as_float32(op: Op, compute_dtype, out_dtype) -> tuple:
    """(compute dtype, output dtype) of a forward: float32 then a rounding to the half dtype
    for an ``opmath`` row computing in bfloat16/float16, else as given.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._ops._table import half_as_float32
    >>> from jaxgrad._ops.elementwise import MUL
    >>> half_as_float32(MUL, jnp.dtype(jnp.bfloat16), None)
    (dtype('float32'), dtype(bfloat16))
    """
    if "forward" in op.opmath and compute_dtype in HALF_DTYPES:
        return np.dtype(np.float32), out_dtype if out_dtype is not None else compute_dtype
    return compute_dtype, out_dtype


def example_doc(summary: str, call: str, output: str) -> str:
    """A row's docstring: a summary line and a runnable example (``call`` prints ``output``)."""
    return f"{summary}\n\n>>> import jaxgrad\n>>> {call}\n{output}"


# --- jitted forward -----------------------------------------------------------------------

@cache(maxsize=8192, kernels=True)
def jitted_forward(op: Op, static: tuple, compute_dtype, out_dtype,
                   forward_mode: bool = False) -> Callable:
    """``op.forward`` with static args bound, inputs cast to ``compute_dtype``, jitted once;
    JAX differentiates it with the row's formulas (``with_formulas``)."""
    kernel = with_formulas(op, static, forward_mode)

    def forward(*arrays):
        if compute_dtype is not None:
            arrays = [a if a is None else jnp.asarray(a, compute_dtype) for a in arrays]
        out = kernel(*arrays)
        if out_dtype is not None:
            out = out.astype(out_dtype)
        return out

    return jit(forward)


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


def _static_env(names: tuple, static: tuple, in_meta: tuple) -> dict:
    """What formulas may name besides values: the static arguments, ``in_shapes`` and each
    input's ``<name>_shape``/``<name>_dtype``."""
    env = dict(static)
    env["in_shapes"] = tuple(shape for shape, _ in in_meta)
    for name, (shape, dtype) in zip(names, in_meta):
        env[f"{name}_shape"] = shape
        env[f"{name}_dtype"] = dtype
    return env


def _meta_of(arrays: tuple) -> tuple:
    """(shape, dtype) per array, (None, None) for an absent optional input."""
    return tuple((None, None) if a is None else (tuple(a.shape), a.dtype) for a in arrays)


def backward_function(op: Op, static: tuple, needs: tuple[bool, ...],
                      in_meta: tuple, viewed: list | None = None,
                      raw_meta: list | None = None) -> Callable:
    """Pure function (saved: dict, grads: tuple) -> tuple of input grads (None where not needed).

    ``in_meta`` holds (shape, dtype) per input; grads come back in those shapes and dtypes.
    When traced, ``viewed`` (if given) is filled with, per input, whether torch would hand its
    gradient on as a view: ``sum_to`` over leading dims ends in a ``view`` (see
    ``JittedBackward``); ``raw_meta`` with the (shape, dtype) each formula gave, before the
    engine's ``sum_to`` and cast (None where not computed).
    """
    names = op.input_names(len(in_meta))
    env_static = _static_env(names, static, in_meta)

    def compute(saved: dict, grads: tuple) -> tuple:
        low = _half_of(grads) if "backward" in op.opmath and _has_number(saved) else None
        if low is not None:  # torch's formula with a Scalar: float32, each gradient rounded
            saved, grads = _upcast_half(saved), _upcast_half(grads)
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
        if low is not None:
            raw = [None if g is None else jnp.asarray(g).astype(low) for g in raw]
        out, real_views = [], []
        for g, need, (shape, dtype) in zip(raw, needs, in_meta):
            real_view = False
            if not need or g is None or shape is None:
                out.append(None)
            else:
                g = jnp.asarray(g)
                if jnp.iscomplexobj(g) and not jnp.issubdtype(dtype, jnp.complexfloating):
                    # torch's handle_r_to_c: a real input's gradient is ``at::real`` of the
                    # complex one, a view of it (unless sum_to then makes a fresh tensor)
                    g = jnp.real(g)
                    real_view = g.shape == tuple(shape)
                out.append(unbroadcast(g, shape).astype(dtype))
            real_views.append(real_view)
        if viewed is not None:  # sum_to(grad, ()) is a plain sum, not a view
            viewed[:] = [o is not None and (jnp.ndim(g) > o.ndim > 0 or r)
                         for g, o, r in zip(raw, out, real_views)]
        if raw_meta is not None:
            raw_meta[:] = [None if o is None else (tuple(jnp.shape(g)), jnp.result_type(g))
                           for g, o in zip(raw, out)]
        return tuple(out)

    return compute


def _half_of(grads: tuple):
    """The half-precision dtype among ``grads``, or None."""
    return next((g.dtype for g in grads if getattr(g, "dtype", None) in HALF_DTYPES), None)


def _has_number(saved: dict) -> bool:
    """Whether a formula's saved values include a Scalar (a number, or a number's 0-d array)."""
    return any(isinstance(v, (int, float)) or getattr(v, "ndim", None) == 0
               for v in saved.values())


def _upcast_half(values: Any) -> Any:
    """``values`` (a dict or tuple) with half-precision arrays and Scalars (numbers, 0-d
    floating arrays) as float32."""
    def up(v):
        if isinstance(v, float) or (getattr(v, "ndim", None) == 0 and jnp.issubdtype(
                v.dtype, jnp.floating)) or getattr(v, "dtype", None) in HALF_DTYPES:
            return jnp.asarray(v, jnp.float32)
        return v

    if isinstance(values, dict):
        return {k: up(v) for k, v in values.items()}
    return tuple(up(v) for v in values)


class JittedBackward:
    """A row's backward, jitted for one static signature, and which of its gradients torch
    would return as views (``viewed``, known once traced).

    torch un-broadcasts a gradient with ``sum_to``, which sums over the leading dims and then
    ``view``s the result: such a gradient shares its storage with a base, so the engine may not
    later sum into it in place (InputBuffer's ``can_accumulate_inplace``) and AccumulateGrad
    keeps it as it is. That decides ``.grad._version``, which users can observe.
    """

    __slots__ = ("call", "viewed")

    def __init__(self, op: Op, static: tuple, needs: tuple[bool, ...], in_meta: tuple) -> None:
        self.viewed: list[bool] = []
        self.call = jit(backward_function(op, static, needs, in_meta, self.viewed))


@cache(maxsize=8192, kernels=True)
def jitted_backward(op: Op, static: tuple, needs: tuple[bool, ...],
                    in_meta: tuple) -> JittedBackward:
    return JittedBackward(op, static, needs, in_meta)


# --- the row's formulas as JAX's derivative -----------------------------------------------------

def with_formulas(op: Op, static: tuple, forward_mode: bool = False) -> Callable:
    """``op.forward`` with ``static`` bound, differentiated by JAX with the row's formulas.

    Wherever JAX differentiates a row's kernel (``jaxgrad.func``, a user's ``jax.grad`` or
    ``jax.jvp``, ``compile(model)``, forward AD), it uses torch's rule, not JAX's derivative of
    the forward: a ``jax.custom_jvp`` whose tangent is the transpose of the row's backward
    formulas (torch's ``auto_element_wise``/``auto_linear`` forward derivatives are the same
    transposition), so reverse mode, JAX's transposition of that, is the formula itself. The
    formulas follow torch's conjugate-Wirtinger convention, JAX's transposition does not
    conjugate: the tangent is ``conj(formulaᵀ(conj(t)))``. A ``Scalar`` operand (``aux``) that
    JAX perturbs (a traced number) differentiates as JAX does.

    JAX's reverse mode is always the transpose of its forward mode, so one kernel cannot give
    torch's forward formula to ``jvp`` and its backward formula to ``grad`` where the two differ
    (``Op.tangent``). A kernel known to run in forward mode only (``forward_mode``: forward AD's
    dual tensors, ``jaxgrad.func.jvp``/``jacfwd`` innermost) uses the row's ``tangent``.
    """
    kwargs = dict(static)

    def kernel(*arrays):
        return op.forward(*arrays, **kwargs)

    if not (op.grads or op.variadic):
        return kernel
    rule = jax.custom_jvp(kernel)

    def _jvp(primals: tuple, tangents: tuple) -> tuple:
        with x64_scope():  # JAX may trace the rule after the kernel's own jit call returned
            return _rule(primals, tangents)

    def _rule(primals: tuple, tangents: tuple) -> tuple:
        out = kernel(*primals)
        outs = out if isinstance(out, tuple) else (out,)
        n = len(primals) - len(op.aux)
        if forward_mode and op.tangent is not None:
            return out, _forward_formula(op, static, primals, tangents, n, out)
        tangent_out = _formula_tangents(op, static, primals, tangents, n, outs)
        if tangent_out is None:  # a formula JAX cannot transpose: JAX's derivative
            return jax.jvp(kernel, primals, tuple(_instantiate(t) for t in tangents))
        aux_tangents = tangents[n:]
        if any(_is_perturbed(t) for t in aux_tangents):
            inputs = primals[:n]
            _, extra = jax.jvp(lambda *aux: kernel(*inputs, *aux), primals[n:],
                               tuple(_instantiate(t) for t in aux_tangents))
            extra = extra if isinstance(extra, tuple) else (extra,)
            tangent_out = [t if not _is_perturbed(t) else e if not _is_perturbed(e) else t + e
                           for t, e in zip(tangent_out, extra)]
        tangent_out = [_instantiate(t) for t in tangent_out]
        return out, tuple(tangent_out) if isinstance(out, tuple) else tangent_out[0]

    rule.defjvp(_jvp, symbolic_zeros=True)
    return rule


# rows whose formula JAX could not transpose (xlogy's ``xlogy(grad, other)``: 0 where grad is 0,
# a select on ``grad``), which fell back to JAX's derivative of the kernel
UNTRANSPOSABLE: set[str] = set()


def _is_zero(tangent: Any) -> bool:
    return type(tangent) is jax.custom_derivatives.SymbolicZero


def _is_perturbed(tangent: Any) -> bool:
    """Whether a tangent (a pytree: ``index``'s indices are a tuple) is not all symbolic zeros."""
    return not all(map(_is_zero, jax.tree_util.tree_leaves(tangent, is_leaf=_is_zero)))


def _instantiate(tangent: Any) -> Any:
    return jax.tree_util.tree_map(
        lambda t: jnp.zeros(t.shape, t.aval.dtype) if _is_zero(t) else t, tangent,
        is_leaf=_is_zero)


def _forward_formula(op: Op, static: tuple, primals: tuple, tangents: tuple, n: int,
                     out: Any) -> Any:
    """The output's tangent by the row's forward-mode formula (``Op.tangent``)."""
    names = op.input_names(n)
    env = dict(_static_env(names, static, _meta_of(primals[:n])), result=out,
               **dict(zip(names, primals[:n])), **dict(zip(op.aux, primals[n:])))
    for name, p, t in zip(names, primals, tangents):
        if p is not None:
            env[f"{name}_t"] = (_instantiate(t) if is_differentiable_array(p)
                                else jnp.zeros(jnp.shape(p), out.dtype))
    if op.tangent == ELEMENTWISE:  # torch's auto_element_wise: each formula on its tangent
        value = jnp.zeros(out.shape, out.dtype)
        for name, t in zip(names, tangents):
            if name in op.grads and _is_perturbed(t) and is_differentiable_array(env[name]):
                env["grad"] = jnp.conj(jnp.broadcast_to(env[f"{name}_t"], out.shape))
                formula = op.grads[name]
                value = value + jnp.conj(formula(**{p: env.get(p)
                                                    for p in op.formula_params[name]}))
    else:
        value = op.tangent(**{p: env.get(p) for p in op.formula_params["~"]})
    value = jnp.asarray(value)
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(out):  # torch's handle_r_to_c
        value = jnp.real(value)
    return jnp.broadcast_to(value, out.shape).astype(out.dtype)


def _formula_tangents(op: Op, static: tuple, primals: tuple, tangents: tuple, n: int,
                      outs: tuple) -> list:
    """The outputs' tangents, from the row's backward formulas transposed."""
    inputs = primals[:n]
    needs = tuple(_is_perturbed(t) and is_differentiable_array(p)
                  for p, t in zip(inputs, tangents[:n]))
    zeros = [jax.custom_derivatives.SymbolicZero(jax.typeof(o).to_tangent_aval())
             for o in outs]
    differentiable = [i for i, o in enumerate(outs)
                      if is_differentiable_array(o) and i not in op.nondiff_outputs]
    if not any(needs) or not differentiable:
        return zeros
    compute = backward_function(op, static, needs, _meta_of(inputs))
    saved = {}
    for name, kind, pos in op.save_plan(needs, n):
        saved[name] = (outs if kind == "output" else inputs if kind == "input"
                       else primals[n:])[pos]

    def formula_vjp(*cotangents):  # grads of the differentiable outputs -> the needed input grads
        grads = [jnp.zeros(o.shape, o.dtype) for o in outs]
        for i, ct in zip(differentiable, cotangents):
            grads[i] = jnp.conj(ct)
        return tuple(jnp.conj(g) for g, need in zip(compute(saved, tuple(grads)), needs)
                     if need)

    cotangent = tuple(t for t, need in zip(tangents[:n], needs) if need)
    try:
        transposed = jax.linear_transpose(formula_vjp, *[
            jax.ShapeDtypeStruct(outs[i].shape, outs[i].dtype) for i in differentiable])
        result = transposed(cotangent)
    except (AssertionError, NotImplementedError):  # JAX: not linear in ``grad`` as written
        UNTRANSPOSABLE.add(op.name)
        return None
    for i, t in zip(differentiable, result):
        zeros[i] = t
    return zeros


def static_key(static: dict[str, Any]) -> tuple:
    """A hashable key of static arguments (lists become tuples)."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in static.items())


@cache(maxsize=1024)
def _rule_of(op: Op, static: tuple) -> Callable:
    return with_formulas(op, static)


def rule_of(op: Op, **static: Any) -> Callable:
    """``op``'s kernel differentiated by ``op``'s own formulas, for use inside another row's
    formula where torch's formula calls that op: a create_graph backward (``jax.vjp`` of the
    formula) then follows torch's derivative of it, not JAX's (``cholesky_solve``'s gradient for
    its factor is not projected on a triangle, as JAX's derivative of a triangular solve is).

    >>> import jax.numpy as jnp
    >>> from jaxgrad._ops._table import rule_of
    >>> from jaxgrad._ops.linalg_triangular import CHOLESKY_SOLVE
    >>> rule_of(CHOLESKY_SOLVE, upper=False)(jnp.ones((2, 1)), 2 * jnp.eye(2)).tolist()
    [[0.25], [0.25]]
    """
    return _rule_of(op, static_key(static))
