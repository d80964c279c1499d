"""``torch.func``'s transforms on JAX's: grad, vjp, jvp, jacrev, jacfwd, hessian, vmap.

Each transform flattens its tensor arguments (torch's pytrees, ``torch_pytree``) to their JAX
arrays, hands a function of arrays to ``jax.value_and_grad``/``jax.vjp``/``jax.jvp``/``jax.vmap``,
and inside that function wraps the tracers as fresh jaxgrad tensors and calls the user's function
(jaxgrad ops run on tracers). Results come back as tensors. Signatures, argument checks and error
texts are torch.func's (``torch/_functorch/eager_transforms.py``, ``apis.py``, ``vmap.py``).

Explicit tensor arguments that require grad (outside any transform, in grad mode) connect the
results to jaxgrad's graph: the transform's whole computation becomes one node whose backward is
``jax.vjp`` of it. Tensors the function closes over are constants to the transform.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
from jax._src import core as _jax_core  # (the running traces, for escaped tensors; not public)

from .._core.grad_mode import enable_grad, inference_mode, is_grad_enabled
from .._core.graph import (
    ACCUMULATE_SEQ,
    Node,
    node_class,
    saved_tensors_hooks_disabled,
    sequence_mark,
)
from .._core.jax_compat import conj_complex, torch_vjp
from .._core.jax_setup import x64_scope
from .._core.tensor import PYTHON_DISPATCH, Tensor, nursery, refuse_python_dispatch
from .._core.tensor_repr import unwrap_levels
from .._core.tracing import note_per_call_python
from .._core.transform_stack import (
    capturing_outer_tensors,
    is_differentiable_array,
    stack,
    under_transform,
)
from .._engine import forward_ad
from .._engine.dispatch import apply, constant_if_no_grad, vjp_op
from .._engine.forward_ad import check_tangent_size
from .._functions import random as _random
from .._functions.joins import cat
from . import torch_pytree as P

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "vmap"]

argnums_t = int | tuple[int, ...]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
                "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                "operation out of vmap")


class _Depth(threading.local):
    value = 0  # how many jaxgrad.func transforms are tracing on this thread
    user_x64 = False  # JAX's x64 setting where the outermost one was called


_depth = _Depth()


@contextlib.contextmanager
def _tracing() -> Iterator[None]:
    if not _depth.value:
        _depth.user_x64 = jax.config.jax_enable_x64
    _depth.value += 1
    try:
        yield
    finally:
        _depth.value -= 1


def _as_user_configured() -> contextlib.AbstractContextManager:
    """JAX's settings as the user had them, for the user's function: JAX's transformations run
    in jaxgrad's 64-bit scope (their transposition builds constants of the arrays' dtypes, which
    64-bit arrays need), the function they trace does not."""
    return jax.enable_x64(_depth.user_x64)


_NO_SAVED_TENSOR_HOOKS = ("jaxgrad.func.{grad, vjp, jacrev, hessian} don't yet support saved "
                          "tensor hooks. Please open an issue with your use case.")


@contextlib.contextmanager
def _transform_level() -> Iterator[None]:
    """How torch.func runs the function of a differentiating transform: grad mode and forward
    grad on, inference mode off, whatever the caller's modes (they apply to its own level)."""
    forward_grad = forward_ad.is_enabled()
    forward_ad.set_enabled(True)
    try:
        with inference_mode(False), enable_grad():
            yield
    finally:
        forward_ad.set_enabled(forward_grad)


def transform_depth() -> int:
    """How many jaxgrad.func transforms this thread is running inside (0: none)."""
    return _depth.value


def _wrap(array: Any, requires_grad: bool = False) -> Tensor:
    return Tensor._make(array, requires_grad=requires_grad)


def _result(array: Any) -> Tensor:
    """A transform's result: a normal tensor even in inference mode (torch.func's levels unwrap
    to tensors made outside it; vmap's results then take its function's, ``_flat_vmap``)."""
    t = _wrap(array)
    t._inference = False
    return t


# --- torch's reverse mode on JAX's: complex conjugation -----------------------------------------
# torch's gradient of a real function of z is dL/d(conj z), JAX's is its conjugate; torch's VJP of
# a holomorphic function multiplies by the conjugate derivative, JAX's by the derivative itself.
# So each JAX reverse-mode result reaching a user is conjugated (``jax_compat.torch_vjp``).

def _value_and_grad(f: Callable, has_aux: bool = False) -> Callable:
    """``jax.value_and_grad`` with torch's gradient of complex inputs (the conjugate of JAX's)."""
    def call(*args: Any) -> tuple:
        with x64_scope():
            value, g = jax.value_and_grad(f, has_aux=has_aux)(*args)
        return value, jax.tree_util.tree_map(conj_complex, g)
    return call


# --- argnums (torch's messages) --------------------------------------------------------------

def _wrap_argnum(argnum: Any, n: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -n <= argnum < n:
        return argnum % n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def _check_argnums(argnums: Any, n: int) -> argnums_t:
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, n)
    wrapped = tuple(_wrap_argnum(a, n) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def _slice(args: tuple, argnums: argnums_t, as_tuple: bool) -> Any:
    if isinstance(argnums, int):
        return (args[argnums],) if as_tuple else args[argnums]
    return tuple(args[i] for i in argnums)


def _differentiable_leaves(tree: Any) -> tuple[list[Tensor], P.Spec]:
    leaves, spec = P.flatten(tree)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return leaves, spec


def _unwrap_aux(aux: Any) -> Any:
    """Aux outputs as arrays (torch's ``_undo_create_differentiable``: tensors only)."""
    leaves, spec = P.flatten(aux)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return [x._value for x in leaves], spec


# --- tensors that escape a transform ------------------------------------------------------------

_TRACE_CONTEXT = getattr(_jax_core, "trace_ctx", None)


def _releases_escaped(transform: Callable) -> Callable:
    """Run ``transform``, then release the tensors made inside it that escaped (kept in a list,
    on an object) from its finished grad, vjp and jvp levels: torch.func's dead wrappers act as
    the value underneath them, where JAX would refuse the dead level's tracer. An escaped vmap
    value stays batched, and ops on it fail, as torch's do."""
    @functools.wraps(transform)
    def run(*args: Any, **kwargs: Any) -> Any:
        if PYTHON_DISPATCH[0]:
            refuse_python_dispatch("A jaxgrad.func transform", P.tree_leaves((args, kwargs)))
        with nursery() as made, x64_scope():  # (64-bit types for the traced function too)
            result = transform(*args, **kwargs)
        _release(made)
        return result

    return run


def _release(made: list) -> None:
    if _TRACE_CONTEXT is None:  # (a JAX without one current trace: escaped tensors stay)
        return
    live, released = None, {}
    for ref in made:
        t = ref()
        if t is None or (id(t._cell) not in released
                         and not isinstance(t._cell.array, jax.core.Tracer)):
            continue
        live = live if live is not None else _live_traces()
        cell = t._cell
        if id(cell) not in released:
            array = cell.array
            while (isinstance(array, jax.core.Tracer) and id(array._trace) not in live
                   and hasattr(array, "primal")):
                array = array.primal
            released[id(cell)] = array is not cell.array
            if released[id(cell)]:
                cell.array, cell.generation = array, cell.generation + 1
        if released[id(cell)]:  # (its history belonged to the finished level)
            t._grad_node, t._requires_grad = None, False


def _live_traces() -> set[int]:
    """The JAX traces running now in this thread: the current one and its parents."""
    trace, live = _TRACE_CONTEXT.trace, set()
    while trace is not None:
        live.add(id(trace))
        trace = getattr(trace, "parent_trace", None)
    return live


# --- connecting a transform to jaxgrad's graph -------------------------------------------------

class _TransformNode(Node):
    """The grad_fn of a transform's results: ``jax.vjp`` of the whole transformed computation."""

    __slots__ = ("fn", "inputs", "pullback")

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        if all(g is None for g in grads):
            return [None] * len(self.next_edges)
        with x64_scope():
            cts = [g._value if g is not None else jnp.zeros(s, d)
                   for g, (s, d) in zip(grads, self.out_meta)]
        if create_graph:  # differentiable: an op whose backward is jax.vjp of this pullback
            fn, k = self.fn, len(self.inputs)

            def pullback(*arrays: Any) -> tuple:
                return torch_vjp(fn, *arrays[:k])[1](tuple(arrays[k:]))

            out = apply(vjp_op(type(self).__name__, pullback), *self.inputs,
                        *[_wrap(c) for c in cts])
            return list(out if isinstance(out, tuple) else (out,))
        if self.pullback is None:
            raise RuntimeError("Trying to backward through the graph a second time (or directly "
                               "access saved tensors after they have already been freed).")
        return [_wrap(c) for c in self.pullback(tuple(cts))]

    def release_variables(self) -> None:
        self.pullback = None


def _connecting(tensors: list[Tensor]) -> list[int]:
    """Which of ``tensors`` connect a transform's results to the graph: float tensors that
    require grad, in grad mode, outside any transform."""
    if not is_grad_enabled() or _depth.value:
        return []
    return [i for i, t in enumerate(tensors)
            if t._requires_grad and is_differentiable_array(t._value)]


def _run(name: str, fn: Callable[..., tuple], tensors: list[Tensor]) -> list[Tensor]:
    """``fn`` (arrays -> tuple of arrays) on ``tensors``; in grad mode, outside transforms, the
    results connect to the graph through one node whose inputs are the float ``tensors`` that
    require grad and the tensors from outside that ``fn`` uses and that require grad (a
    module's parameters inside ``vmap``: torch.func keeps their history too)."""
    arrays = [t._value for t in tensors]
    if not is_grad_enabled() or _depth.value:
        with _tracing():
            outs = fn(*arrays)
        # under no_grad inside an outer transform: constants to the outer levels, as torch.func's
        return [_result(constant_if_no_grad(a)) for a in outs]
    diff = _connecting(tensors)
    mark = sequence_mark()
    with capturing_outer_tensors() as found:
        outs, pullback = _traced_vjp(fn, arrays, diff, [])
    captured = _liftable(found, tensors, mark)
    if captured:
        outs, pullback = _traced_vjp(fn, arrays, diff, captured)
    inputs = [tensors[i] for i in diff] + captured
    results = [_result(o) for o in outs]
    if not inputs:
        return results
    meta = tuple((o.shape, o.dtype) for o in outs)
    node = node_class(name, _TransformNode)(tuple(t._gradient_edge() for t in inputs), meta)
    node.fn, node.inputs, node.pullback = _lifted(fn, arrays, diff, captured), inputs, pullback
    for j, r in enumerate(results):
        if is_differentiable_array(outs[j]):
            r._requires_grad, r._grad_node, r._output_nr = True, node, j
    return results


def _traced_vjp(fn: Callable[..., tuple], arrays: list, diff: list[int],
                captured: list[Tensor]) -> tuple[tuple, Callable | None]:
    """``fn``'s outputs and, when anything is differentiable, the pullback of ``jax.vjp``."""
    f = _lifted(fn, arrays, diff, captured)
    primals = [arrays[i] for i in diff] + [t._cell.array for t in captured]
    if not primals:
        with _tracing():
            return f(), None
    with _tracing(), under_transform("eager"):
        return torch_vjp(f, *primals)


def _lifted(fn: Callable[..., tuple], arrays: list, diff: list[int],
            captured: list[Tensor]) -> Callable[..., tuple]:
    """``fn`` as a function of the arrays of the ``diff`` arguments, then of the ``captured``
    outer tensors (whose storages hold the given arrays while it runs)."""
    def on_diff(*d: Any) -> tuple:
        full = list(arrays)
        for i, a in zip(diff, d):
            full[i] = a
        with _substituted(captured, d[len(diff):]):
            return tuple(fn(*full))

    return on_diff


@contextlib.contextmanager
def _substituted(captured: list[Tensor], arrays: tuple) -> Iterator[None]:
    cells = [t._cell for t in captured]
    kept = [c.array for c in cells]
    for cell, a in zip(cells, arrays):
        cell.array, cell.generation = a, cell.generation + 1
    try:
        yield
    finally:
        for cell, a in zip(cells, kept):
            cell.array, cell.generation = a, cell.generation + 1


def _liftable(found: dict[int, Tensor], explicit: list[Tensor], mark: int) -> list[Tensor]:
    """The outer tensors a transform's results connect to: each captured float tensor that owns
    its whole storage (a captured view connects through its base), not an explicit argument, and
    not computed inside the transform (a value JAX holds concretely there, such as the result of
    an op with a zero derivative, has a grad_fn numbered after ``mark``)."""
    seen = {id(t) for t in explicit}
    out = []
    for t in found.values():
        base = t._base if t._base is not None else t
        fn = base._grad_node
        if fn is not None and fn.seq != ACCUMULATE_SEQ and fn.seq > mark:
            continue
        if (id(base) not in seen and base._requires_grad and base._layout is None
                and is_differentiable_array(base._cell.array)):
            seen.add(id(base))
            out.append(base)
    return out


class _Args:
    """A call's ``(args, kwargs)`` flattened: its tensors go through JAX as arrays and come back
    into the call as fresh tensors (``rebuild``)."""

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.leaves, self.spec = P.flatten((tuple(args), dict(kwargs)))
        self.where = [i for i, x in enumerate(self.leaves) if isinstance(x, Tensor)]
        self.tensors = [self.leaves[i] for i in self.where]
        _remember_inputs(self.tensors)
        starts = [0]
        for a in args:
            starts.append(starts[-1] + P.flatten(a)[1].num_leaves)
        self.starts = starts

    def positions(self, argnums: argnums_t) -> list[int]:
        """Indices into ``tensors`` of the tensors of ``args[argnums]`` (all tensors)."""
        leaf = [j for i in _as_tuple(argnums) for j in range(self.starts[i], self.starts[i + 1])]
        return [self.where.index(j) for j in leaf]

    def rebuild(self, arrays: list, requires_grad: frozenset = frozenset()) -> tuple[tuple, dict]:
        full = list(self.leaves)
        self.fresh: list[tuple[int, Tensor, int, int]] = []
        for k, (i, a) in enumerate(zip(self.where, arrays)):
            full[i] = t = _wrap(a, k in requires_grad)
            self.fresh.append((k, t, t._vc.value, t._cell.generation))
        return P.unflatten(full, self.spec)

    def mutations(self) -> tuple[list[tuple[int, int]], list]:
        """The tensors of the last ``rebuild`` that the function wrote in place (their storage
        written: by ops, or as batch norm writes its running statistics): ``(index into
        tensors, version increments)`` each, and their final arrays."""
        changed = [(k, t, t._vc.value - v) for k, t, v, g in self.fresh
                   if t._cell.generation != g or t._vc.value != v]
        return [(k, n) for k, _, n in changed], [t._value for _, t, _ in changed]


_INPUTS: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()


def _remember_inputs(tensors: list[Tensor]) -> None:
    """Note the tensors passed into a transform, so that ``debug_unwrap`` of their wrappers
    gives them back (torch.func's unwrapped value is the tensor itself)."""
    for t in tensors:
        _INPUTS[id(t._value)] = t


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor under torch.func's transform wrappers (one level with ``recurse=False``): the
    tensor passed in, or one holding the value underneath; unchanged under ``jax.jit``, where
    JAX holds no value (torch.func.debug_unwrap).

    >>> import jaxgrad
    >>> from jaxgrad.func import debug_unwrap, vmap
    >>> x = jaxgrad.ones(2, 3)
    >>> seen = []
    >>> _ = vmap(lambda row: seen.append(debug_unwrap(row)) or row.sin())(x)
    >>> seen[0] is x
    True
    """
    if not isinstance(tensor, Tensor):
        return tensor
    note_per_call_python()  # (eager mode hands the tensor passed in back)
    array = unwrap_levels(tensor._value, None if recurse else 1)
    if array is None or array is tensor._value:
        return tensor
    outer = _INPUTS.get(id(array))
    return outer if outer is not None and outer._value is array else _wrap(array)


def _versions(tree: Any) -> list[int]:
    return [t._vc.value for t in P.flatten(tree)[0] if isinstance(t, Tensor)]


def _keep_versions(results: list[Tensor], versions: list[int]) -> None:
    """A transform's results carry the version counts their tensors reached inside (torch.func
    unwraps the tensor the function wrote: ``vmap(lambda a: a.clone().add_(1))`` gives 1)."""
    for result, version in zip(results, versions):
        result._vc.value = version


def _write_back(targets: list[Tensor], mutations: list[tuple[int, int]], values: list) -> None:
    """What torch.func does to an input its function wrote in place: the write reaches the tensor
    passed in (its contents, and its version counter by as much)."""
    for (k, increments), value in zip(mutations, values):
        targets[k]._write_inplace(value._value if isinstance(value, Tensor) else value,
                                  increments)


def _as_tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _call(name: str, tensors: list[Tensor], body: Callable[[list], tuple[list, Any]]
          ) -> tuple[list[Tensor], Any]:
    """``body(arrays) -> (list of output arrays, static info)`` run on ``tensors``' arrays
    (through ``_run``); returns the output tensors and the static info."""
    info: list = [None]

    def fn(*arrays: Any) -> tuple:
        outs, info[0] = body(list(arrays))
        return tuple(outs)

    return _run(name, fn, tensors), info[0]


def _check_has_aux(out: Any, api: str) -> tuple[Any, Any]:
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


# --- grad ------------------------------------------------------------------------------------

def grad_and_value(func: Callable, argnums: argnums_t = 0,
                   has_aux: bool = False) -> Callable[..., tuple[Any, Any]]:
    """``func``'s gradient with respect to ``args[argnums]`` and its value, computed by
    ``jax.value_and_grad`` (torch.func.grad_and_value).

    >>> import jaxgrad
    >>> from jaxgrad.func import grad_and_value
    >>> grad_and_value(lambda x: (x ** 2).sum())(jaxgrad.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return _grad_and_value(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(func: Callable, argnums: argnums_t = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of scalar-valued ``func`` with respect to ``args[argnums]``, computed by
    ``jax.grad`` (torch.func.grad); with ``has_aux``, ``func`` returns ``(output, aux)``.

    >>> import jaxgrad
    >>> from jaxgrad.func import grad
    >>> x = jaxgrad.tensor([0.0, 1.0])
    >>> grad(lambda x: x.sin().sum())(x)
    tensor([1.0000, 0.5403])
    >>> grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(x, x + 1)
    (tensor([1., 2.]), tensor([0., 1.]))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


@saved_tensors_hooks_disabled(_NO_SAVED_TENSOR_HOOKS)
@_releases_escaped
def _grad_and_value(func: Callable, argnums: Any, has_aux: bool, args: tuple,
                    kwargs: dict) -> tuple[Any, Any]:
    argnums = _check_argnums(argnums, len(args))
    flat_diff, diff_spec = _differentiable_leaves(_slice(args, argnums, as_tuple=False))
    call = _Args(args, kwargs)
    pos = call.positions(argnums)
    rg = frozenset(pos)
    api = "grad_and_value(f)(*args)"

    def body(arrays: list) -> tuple[list, Any]:
        def value(d: list) -> tuple:
            for k, a in zip(pos, d):
                arrays[k] = a
            with _transform_level(), under_transform("grad"), _as_user_configured():
                a, kw = call.rebuild(arrays, rg)  # (tensors of this level: not captured)
                out = func(*a, **kw)
            aux = None
            if has_aux:
                out, aux = _check_has_aux(out, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(
                    f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            aux_arrays, aux_spec[0] = _unwrap_aux(aux) if has_aux else ([], None)
            versions[0] = [out._vc.value, *(_versions(aux) if has_aux else [])]
            mutations[0], written = call.mutations()
            v = out._value
            # torch: an output that cannot carry a gradient (an integer one) gives zeros
            r = v if is_differentiable_array(v) else jnp.zeros((), d[0].dtype)
            return r, (v, aux_arrays, written)

        aux_spec: list = [None]
        mutations: list = [[]]
        versions: list = [[]]
        primals = [arrays[k] for k in pos]
        (_, (v, aux_arrays, written)), g = _value_and_grad(value, has_aux=True)(primals)
        return [*g, v, *aux_arrays, *written], (aux_spec[0], len(aux_arrays), mutations[0],
                                                versions[0])

    outs, (aux_spec, n_aux, mutations, versions) = _call("GradBackward", call.tensors, body)
    n = len(flat_diff)
    _keep_versions(outs[n:n + 1 + n_aux], versions)
    _write_back(call.tensors, mutations, outs[n + 1 + n_aux:])
    g = P.unflatten(outs[:n], diff_spec)
    if has_aux:
        return g, (outs[n], P.unflatten(outs[n + 1:n + 1 + n_aux], aux_spec))
    return g, outs[n]


# --- vjp, jvp, jacobians -----------------------------------------------------------------------

def _flat_outputs(out: Any, api: str) -> tuple[list[Tensor], P.Spec]:
    leaves, spec = P.flatten(out)
    if (len(leaves) == 1 and leaves[0] is None) or not leaves:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got "
                           f"output = {leaves})")
    for o in leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
    return leaves, spec


def _no_complex(api: str, leaves: list, is_input: bool) -> None:
    for i, x in enumerate(leaves):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            what = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


class _Traced:
    """The user's function as a function of the differentiated arrays: calls ``func`` on fresh
    tensors and records the structure of what it returned (outputs, aux)."""

    def __init__(self, func: Callable, call: _Args, pos: list[int], arrays: list, api: str,
                 has_aux: bool, requires_grad: bool = True, check_float: bool = False,
                 kind: str = "grad") -> None:
        self.func, self.call, self.pos, self.arrays, self.api = func, call, pos, arrays, api
        self.kind = kind  # the transform, for autograd.Function (under_transform)
        self.has_aux, self.check_float = has_aux, check_float
        self.rg = frozenset(pos) if requires_grad else frozenset()
        self.out_spec = self.aux_spec = None
        self.independent: list[bool] = []
        self.n_aux = 0  # the user's aux arrays come first, then the inputs written in place
        self.mutations: list[tuple[int, int]] = []
        self.versions: list[int] = []  # the outputs' version counters inside
        self.aux_versions: list[int] = []

    def __call__(self, d: list) -> tuple:
        arrays = list(self.arrays)
        for k, a in zip(self.pos, d):
            arrays[k] = a
        with _transform_level(), under_transform(self.kind), _as_user_configured():
            a, kw = self.call.rebuild(arrays, self.rg)  # (tensors of this level: not captured)
            out = self.func(*a, **kw)
        aux = None
        if self.has_aux:
            out, aux = _check_has_aux(out, self.api)
        flat, self.out_spec = _flat_outputs(out, self.api)
        self.versions = [o._vc.value for o in flat]
        if self.check_float:
            for o in flat:
                if not (o.dtype.is_floating_point or o.dtype.is_complex):
                    raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                       f"complex Tensors, got Tensor with dtype {o.dtype}")
        traces = {id(getattr(x, "_trace", None)) for x in d}
        self.independent = [id(getattr(o._value, "_trace", None)) not in traces for o in flat]
        outs = tuple(o._value for o in flat)
        aux_arrays, self.aux_spec = _unwrap_aux(aux) if self.has_aux else ([], None)
        self.aux_versions = _versions(aux) if self.has_aux else []
        self.n_aux = len(aux_arrays)
        self.mutations, written = self.call.mutations()
        return outs, [*aux_arrays, *written]


@_releases_escaped
def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)`` where ``vjp_fn(cotangents)`` gives the vector-Jacobian
    product with respect to each primal, from ``jax.vjp`` (torch.func.vjp).

    >>> import jaxgrad
    >>> from jaxgrad.func import vjp
    >>> out, vjp_fn = vjp(jaxgrad.sin, jaxgrad.tensor([0.0, 1.0]))
    >>> vjp_fn(jaxgrad.ones(2))
    (tensor([1.0000, 0.5403]),)
    """
    flat_primals, primals_spec = _differentiable_leaves(primals)
    call = _Args(primals, {})
    pos = list(range(len(call.tensors)))
    f = _Traced(func, call, pos, [t._value for t in call.tensors], "vjp(f, *primals)", has_aux,
                check_float=True)
    with _tracing(), saved_tensors_hooks_disabled(_NO_SAVED_TENSOR_HOOKS):
        outs, pullback, aux = torch_vjp(f, [t._value for t in flat_primals], has_aux=True)
    out_spec, aux, written, mutations = f.out_spec, aux[:f.n_aux], aux[f.n_aux:], f.mutations
    outputs_of = lambda *arrays: f(list(arrays))[0]  # primals -> outputs
    # primals that require grad connect the outputs and the vjp_fn's results to the outer graph
    connected = bool(_connecting(flat_primals))
    results = (_run("VjpBackward", outputs_of, flat_primals) if connected
               else [_result(o) for o in outs])
    _keep_versions(results, f.versions)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None
               ) -> Any:
        flat, spec = P.flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {P.pprint(spec)}, primal output: "
                f"{P.pprint(out_spec)}")
        cts = []
        for i, (c, o) in enumerate(zip(flat, outs)):
            if tuple(c.shape) != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                    f"output[{i}] has a shape of {results[i].shape}.")
            cts.append(c.to(o.dtype))
        n = len(flat_primals)

        def products(*arrays: Any) -> tuple:
            return tuple(torch_vjp(outputs_of, *arrays[:n])[1](tuple(arrays[n:])))

        if _connecting(flat_primals) or _connecting(cts):  # (grad mode now, as torch's)
            return P.unflatten(_run("VjpBackward", products, [*flat_primals, *cts]),
                               primals_spec)
        (g,) = pullback(tuple(c._value for c in cts))
        return P.unflatten([_result(x) for x in g], primals_spec)

    _write_back(call.tensors, mutations, written)
    result = P.unflatten(results, out_spec)
    if has_aux:
        aux_out = [_wrap(a) for a in aux]
        _keep_versions(aux_out, f.aux_versions)
        return result, vjp_fn, P.unflatten(aux_out, f.aux_spec)
    return result, vjp_fn


@_releases_escaped
def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """``(func(*primals), Jacobian-vector product)``: forward-mode AD from ``jax.jvp``
    (torch.func.jvp).

    >>> import jaxgrad
    >>> from jaxgrad.func import jvp
    >>> jvp(jaxgrad.sin, (jaxgrad.tensor([0.0, 1.0]),), (jaxgrad.ones(2),))
    (tensor([0.0000, 0.8415]), tensor([1.0000, 0.5403]))
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, p_spec = P.flatten(primals)
    flat_t, t_spec = P.flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with "
            f"structure {p_spec} and tangents with structure {t_spec}")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got "
                                   f"{type(x)}")
    for p, t in zip(flat_p, flat_t):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                             f"{t.dtype}")
        check_tangent_size(p.shape, t.shape)
    call = _Args(primals + tuple(flat_t), {})
    n = len(flat_p)

    def body(arrays: list) -> tuple[list, Any]:
        f = _Traced(func, _Args(primals, {}), list(range(n)), arrays[:n], api, has_aux,
                    requires_grad=False, kind="jvp")
        tans = [t.astype(p.dtype) for p, t in zip(arrays[:n], arrays[n:])]
        outs, touts, aux = jax.jvp(f, (arrays[:n],), (tans,), has_aux=True)
        if strict and any(f.independent):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                               "independent of the inputs. This is not allowed with strict=True.")
        return [*outs, *touts, *aux], (f.out_spec, f.aux_spec, len(outs), f.n_aux, f.mutations,
                                       f.versions, f.aux_versions)

    outs, (out_spec, aux_spec, k, n_aux, mutations, versions, aux_versions) = _call(
        "JvpBackward", call.tensors, body)
    _keep_versions(outs[:k], versions)
    _keep_versions(outs[k:2 * k], versions)  # (an in-place op writes a dual's tangent too)
    _keep_versions(outs[2 * k:2 * k + n_aux], aux_versions)
    _write_back(flat_p, mutations, outs[2 * k + n_aux:])
    primal_out = P.unflatten(outs[:k], out_spec)
    tangent_out = P.unflatten(outs[k:2 * k], out_spec)
    if has_aux:
        return primal_out, tangent_out, P.unflatten(outs[2 * k:2 * k + n_aux], aux_spec)
    return primal_out, tangent_out


@_releases_escaped
def linearize(func: Callable, *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is the Jacobian-vector product
    of ``func`` at ``primals`` (torch.func.linearize; as torch's, ``func`` runs again for the
    products, here once per call of ``jvp_fn``).

    >>> import jaxgrad
    >>> from jaxgrad.func import linearize
    >>> output, jvp_fn = linearize(jaxgrad.sin, jaxgrad.zeros(2))
    >>> jvp_fn(jaxgrad.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    output = func(*primals)
    flat_primals, primals_spec = P.flatten(primals)

    def jvp_fn(*tangents: Any) -> Any:
        flat_tangents, tangents_spec = P.flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argspec "
                               f"as the primals {primals_spec}")
        for idx, (p, t) in enumerate(zip(flat_primals, flat_tangents)):
            for attribute in ("shape", "device", "dtype"):
                if getattr(t, attribute) != getattr(p, attribute):
                    raise RuntimeError(
                        f"tangent:{idx} with {attribute} {getattr(t, attribute)} in flattened "
                        f"pytree doesn't match the {attribute} {getattr(p, attribute)} of the "
                        "corresponding primal.")
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


@_releases_escaped
def _jacobian(kind: str, func: Callable, argnums: argnums_t, has_aux: bool,
              chunk_size: int | None, args: tuple) -> Any:
    _no_complex(kind, P.flatten(args)[0], is_input=True)
    argnums = _check_argnums(argnums, len(args))
    flat_primals, primals_spec = _differentiable_leaves(_slice(args, argnums, as_tuple=True))
    call = _Args(args, {})
    pos = call.positions(argnums)
    api = "vjp(f, *primals)" if kind == "jacrev" else "jvp(f, primals, tangents)"

    def body(arrays: list) -> tuple[list, Any]:
        f = _Traced(func, call, pos, arrays, api, has_aux, requires_grad=kind == "jacrev",
                    check_float=kind == "jacrev", kind="grad" if kind == "jacrev" else "jacfwd")
        primals = [arrays[k] for k in pos]
        if kind == "jacrev":
            outs, pullback, aux = torch_vjp(f, primals, has_aux=True)
            _no_complex(kind, [_wrap(o) for o in outs], is_input=False)
            rows = _reverse_rows(pullback, outs, chunk_size)
            jac = [[r[start:start + o.size].reshape(o.shape + p.shape) for r, p in
                    zip(rows, primals)] for o, start in zip(outs, _starts(outs))]
        else:
            def real_outputs(d: list) -> tuple:
                outs, aux = f(d)
                _no_complex(kind, [_wrap(o) for o in outs], is_input=False)
                return outs, aux

            jac, aux = jax.jacfwd(real_outputs, has_aux=True)(primals)
        return ([a for row in jac for a in row] + list(aux),
                (f.out_spec, f.aux_spec, f.n_aux, f.mutations, f.aux_versions))

    outs, (out_spec, aux_spec, n_aux, mutations, aux_versions) = _call(
        "JacobianBackward", call.tensors, body)
    m = len(flat_primals)
    first_aux = out_spec.num_leaves * m
    _keep_versions(outs[first_aux:first_aux + n_aux], aux_versions)
    _write_back(call.tensors, mutations, outs[first_aux + n_aux:])
    per_out = [P.unflatten(outs[i * m:(i + 1) * m], primals_spec)
               for i in range(out_spec.num_leaves)]
    if isinstance(argnums, int):
        per_out = [j[0] for j in per_out]
    result = P.unflatten(per_out, out_spec)
    if has_aux:
        return result, P.unflatten(outs[first_aux:first_aux + n_aux], aux_spec)
    return result


def _starts(outs: tuple) -> list[int]:
    starts, total = [], 0
    for o in outs:
        starts.append(total)
        total += o.size
    return starts


def _reverse_rows(pullback: Callable, outs: tuple, chunk_size: int | None) -> list:
    """Per primal, the Jacobian rows ``(total output numel, *primal.shape)``: the pullback
    vmapped over the standard basis of the outputs, ``chunk_size`` rows at a time (one row at a
    time without vmap for a ``chunk_size`` of 1)."""
    total = sum(o.size for o in outs)
    step = chunk_size or total
    chunks = []
    for lo in range(0, total, step):
        hi = min(lo + step, total)
        eye = jnp.eye(hi - lo, total, lo, dtype=jnp.float32)
        basis = tuple(eye[:, s:s + o.size].reshape((hi - lo, *o.shape)).astype(o.dtype)
                      for o, s in zip(outs, _starts(outs)))
        if chunk_size == 1:  # torch.func calls the pullback without vmap (for ops vmap lacks)
            chunks.append(tuple(a[None] for a in pullback(tuple(b[0] for b in basis))[0]))
        else:
            chunks.append(jax.vmap(lambda b: pullback(b)[0])(basis))
    return [jnp.concatenate([c[j] for c in chunks]) for j in range(len(chunks[0]))]


def jacrev(func: Callable, argnums: argnums_t = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` with respect to ``args[argnums]`` by reverse mode: ``jax.vjp``
    vmapped over the output basis, ``chunk_size`` rows at a time (torch.func.jacrev).

    >>> import jaxgrad
    >>> from jaxgrad.func import jacrev
    >>> jacrev(lambda x: x ** 2)(jaxgrad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        with saved_tensors_hooks_disabled(_NO_SAVED_TENSOR_HOOKS):
            return _jacobian("jacrev", func, argnums, has_aux, chunk_size, args)

    return wrapper


def jacfwd(func: Callable, argnums: argnums_t = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` with respect to ``args[argnums]`` by forward mode, from
    ``jax.jacfwd`` (torch.func.jacfwd).

    >>> import jaxgrad
    >>> from jaxgrad.func import jacfwd
    >>> jacfwd(lambda x: x.sin())(jaxgrad.tensor([0.0, 1.0]))
    tensor([[1.0000, 0.0000],
            [0.0000, 0.5403]])
    """
    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _check_randomness(randomness)
        with _randomness(randomness, None):
            return _jacobian("jacfwd", func, argnums, has_aux, None, args)

    return wrapper


def hessian(func: Callable, argnums: argnums_t = 0) -> Callable:
    """The Hessian of scalar ``func``: ``jacfwd(jacrev(func, argnums), argnums)`` as in
    torch.func.hessian.

    >>> import jaxgrad
    >>> from jaxgrad.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(jaxgrad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# --- vmap ------------------------------------------------------------------------------------

def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


@contextlib.contextmanager
def _randomness(mode: str, keys: Any) -> Iterator[None]:
    """Random draws inside a vmapped function: refused (``error``), one draw broadcast over the
    batch (``same``: JAX's behaviour for an unbatched key), or one key per batch element
    (``different``: ``keys`` is the batched key, folded with a counter per draw). The mode is
    on the transform stack for the level's ``autograd.Function`` vmap rules (``info``)."""
    stack.randomness.append(mode)
    try:
        if mode == "same":
            yield
            return
        count = [0]

        def next_key() -> Any:
            if mode == "error":
                raise RuntimeError(RANDOM_ERROR)
            count[0] += 1
            return jax.random.fold_in(keys, count[0])

        with _random.keys_from(next_key):
            yield
    finally:
        stack.randomness.pop()


def _name(func: Any) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Vectorize ``func`` over dimension ``in_dims`` of its inputs with ``jax.vmap``
    (torch.func.vmap / torch.vmap): ``func`` sees one example, results gain the batch dimension
    at ``out_dims``; ``chunk_size`` maps that many examples at a time.

    >>> import jaxgrad
    >>> from jaxgrad.func import vmap
    >>> vmap(jaxgrad.dot)(jaxgrad.ones(3, 2), jaxgrad.ones(3, 2))
    tensor([2., 2., 2.])
    >>> vmap(lambda x, y: x * y, in_dims=(0, None), out_dims=1)(jaxgrad.ones(3, 2),
    ...                                                         jaxgrad.tensor([1.0, 2.0]))
    tensor([[1., 1., 1.],
            [2., 2., 2.]])
    """
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return _vmap(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _check_out_dims(out_dims: Any, func: Callable) -> None:
    for d in P.flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
                "or a python collection of ints representing where in the outputs the vmapped "
                "dimension should appear.")


def _batched_inputs(in_dims: Any, args: tuple, func: Callable) -> tuple[int, list, list]:
    """torch's checks of ``in_dims`` against ``args``: batch size, flat in_dims, flat args."""
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{head}expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. The "
                         "latter is unsupported.")
    flat_args, spec = P.flatten(args)
    _remember_inputs([a for a in flat_args if isinstance(a, Tensor)])
    flat_dims = P.broadcast_to_and_flatten(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"{head}in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {P.flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(f"{head}Got in_dim={d} for an input but in_dim must be either an "
                             "integer dimension or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"{head}Got in_dim={d} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(f"{head}Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_dims[i] = d % arg.dim()
    return _batch_size(flat_dims, flat_args), flat_dims, flat_args


def _batch_size(flat_dims: list, flat_args: list) -> int:
    sizes = [a.size(d) for d, a in zip(flat_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


@_releases_escaped
def _vmap(func: Callable, in_dims: Any, out_dims: Any, randomness: str, chunk_size: int | None,
          args: tuple, kwargs: dict) -> Any:
    _check_out_dims(out_dims, func)
    size, flat_dims, flat_args = _batched_inputs(in_dims, args, func)
    spec = P.flatten(args)[1]
    if chunk_size is None or chunk_size >= size:
        return _flat_vmap(func, size, flat_dims, flat_args, spec, out_dims, randomness, kwargs)
    state = _random.default_generator._key
    results = []
    for lo in range(0, size, chunk_size):
        n = min(chunk_size, size - lo)
        part = [a if d is None else a.narrow(d, lo, n) for a, d in zip(flat_args, flat_dims)]
        if randomness == "same":  # torch restores the RNG state for every chunk
            _random.default_generator._key = state
        results.append(_flat_vmap(func, n, flat_dims, part, spec, out_dims, randomness, kwargs))
    flat_chunks = [P.flatten(r)[0] for r in results]
    out_spec = P.flatten(results[0])[1]
    dims = P.broadcast_to_and_flatten(out_dims, out_spec)
    return P.unflatten([cat([c[i] for c in flat_chunks], dim=d) for i, d in enumerate(dims)],
                       out_spec)


def _is_batched(t: Any, trace_ids: set) -> bool:
    v = t._value if isinstance(t, Tensor) else None
    return id(getattr(v, "_trace", None)) in trace_ids and getattr(v, "batch_dim", None) is not None


def _flat_out_dims(out: Any, out_spec: P.Spec, out_dims: Any, func: Callable) -> list:
    dims = None
    if isinstance(out, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            dims = list(out_dims)
    else:
        dims = P.broadcast_to_and_flatten(out_dims, out_spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                         "not compatible with the structure of `outputs`. out_dims has structure "
                         f"{P.flatten(out_dims)[1]} but outputs has structure {out_spec}.")
    return dims


def _rewrapped(outer: Tensor, array: Any) -> Tensor:
    """An unbatched argument inside vmap: itself, or a fresh tensor over the array that
    connects it to the outer graph (a tracer of the outer VJP)."""
    return outer if array is outer._value else _wrap(array, outer._requires_grad)


def _flat_vmap(func: Callable, size: int, flat_dims: list, flat_args: list, spec: P.Spec,
               out_dims: Any, randomness: str, kwargs: dict) -> Any:
    batched = [i for i, d in enumerate(flat_dims) if d is not None]
    # unbatched tensor arguments go through too, so that those requiring grad keep history
    tensors = batched + [i for i, d in enumerate(flat_dims)
                         if d is None and isinstance(flat_args[i], Tensor)]
    name = _name(func)
    keys = (jax.random.split(_random.default_generator.next_key(), size)
            if randomness == "different" else None)

    def body(arrays: list) -> tuple[list, Any]:
        info: dict = {}

        def f(inputs: list, key: Any) -> tuple:
            full = list(flat_args)
            for i, a in zip(tensors, inputs):
                full[i] = _wrap(a) if flat_dims[i] is not None else _rewrapped(flat_args[i], a)
            # (version counters read directly: inference tensors' _version refuses)
            before = {i: (full[i]._vc.value, full[i]._cell.generation) for i in batched}
            traces = {id(getattr(a, "_trace", None)) for a in inputs[:len(batched)]}
            with _randomness(randomness, key), under_transform("vmap"), _as_user_configured():
                out = func(*P.unflatten(full, spec), **kwargs)
            # batched inputs written in place: their new values leave as outputs too
            written = [i for i in batched
                       if (full[i]._vc.value, full[i]._cell.generation) != before[i]]
            info["written"] = [(i, full[i]._vc.value - before[i][0]) for i in written]
            leaves, out_spec = P.flatten(out)
            dims = _flat_out_dims(out, out_spec, out_dims, func)
            kept, inference, versions = [], [], []
            for o, d in zip(leaves, dims):
                if d is None:
                    if _is_batched(o, traces):
                        raise ValueError(f"vmap({name}, ...): `{name}` can not return a "
                                         "BatchedTensor when out_dim is None")
                elif not isinstance(o, Tensor):
                    raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                     f"type {type(o)}. Did you mean to set out_dims= to None for "
                                     "output?")
                else:
                    kept.append(o._value)
                    inference.append(o._inference)
                    versions.append(o._vc.value)
            info.update(spec=out_spec, dims=dims, leaves=leaves, inference=inference,
                        versions=versions)
            return (*kept, *(full[i]._value for i in written))

        outs = jax.vmap(f, in_axes=([flat_dims[i] for i in tensors], None if keys is None else 0),
                        axis_size=size)(arrays, keys)
        out_dims_kept = [d for d in info["dims"] if d is not None]
        moved = [jnp.moveaxis(o, 0, d) for o, d in zip(
            outs, out_dims_kept + [flat_dims[i] for i, _ in info["written"]])]
        return moved, info

    outs, info = _call("VmapBackward", [flat_args[i] for i in tensors], body)
    n_kept = sum(d is not None for d in info["dims"])
    for result, inference in zip(outs, info["inference"]):
        result._inference = inference  # (torch: vmap's result is its function's, unbatched)
    _keep_versions(outs, info["versions"])
    _write_back(flat_args, [(i, n) for i, n in info["written"]], outs[n_kept:])
    it = iter(outs[:n_kept])
    return P.unflatten([leaf if d is None else next(it)
                        for leaf, d in zip(info["leaves"], info["dims"])], info["spec"])
