"""``autograd.Function``: user-defined forward and backward, with torch's ctx semantics.

As in torch, the ``ctx`` a forward receives *is* the graph node: an instance of the class
``<Name>Backward`` made for each Function subclass, so attributes set on ``ctx`` are visible as
``y.grad_fn.<attr>``. ``apply`` runs the forward without recording (grad mode off), then wraps
its outputs: each tensor output gets the node as ``grad_fn`` (unless marked non-differentiable),
an input returned as-is becomes a view of it, a ``mark_dirty`` input keeps its identity and has
its history rebased. The node's backward calls the user's ``backward`` (under grad mode when
``create_graph``, so double backward works when it uses differentiable jaxgrad ops) and checks
what comes back exactly as torch's engine does.

A forward may run any JAX code on ``tensor.jax()`` and return ``jaxgrad.from_jax(array)``.
"""

from __future__ import annotations

import copy
import functools
import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax._src.interpreters.batching import BatchTracer  # (a vmap rule's outputs; not public API)

from .._core.caches import cache
from .._core.grad_mode import _state, no_grad, recording_off
from .._core.graph import DELAYED_ERROR, FREED_MESSAGE, DelayedError, Node, SavedTensor
from .._core.jax_setup import x64_scope
from .._core.tensor import Tensor
from .._core.transform_stack import (
    FORWARD_KINDS,
    FUNCTORCH_DIFFERENTIATING,
    REVERSE_KINDS,
    VMAP_KINDS,
    is_differentiable_array,
    stack,
)
from .._core.typename import public_path
from .._engine import forward_ad as _forward_ad
from .._engine import profiling as _profiler
from .._engine.dispatch import (
    _FORWARD_AD,
    DIFFERENTIABLE_DTYPES,
    check_differentiable_inplace,
    rebase_history,
)
from .._func import torch_pytree as P
from .._functions import reductions
from .._functions import shapes as _shapes

MODIFIED_VIEW_MESSAGE = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change.")
MARK_DIRTY_NOT_INPUT_MESSAGE = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
    "mutated should be passed to ctx.mark_dirty().")
PURE_VIEW_MESSAGE = (
    "Pure view custom Function can only have one input Tensor and one output Tensor. Open an "
    "issue if you need to support more.")
CLEARED_ON_ACCESS_MESSAGE = (
    "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is set on "
    "the autograd.Function. Either access saved_tensors only once, or set "
    "clear_saved_tensors_on_access=False.")
ONCE_DIFFERENTIABLE_MESSAGE = (
    "trying to differentiate twice a function that was marked with @once_differentiable")
RETURNED_INPUT_SAVED_MESSAGE = (
    "An input that has been returned as-is as output is being saved for backward. This is not "
    "supported if you override setup_context. You should return and save a view of the input "
    "instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself.")
SETUP_CONTEXT_MESSAGE = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")
NO_VMAP_MESSAGE = (
    "You tried to vmap over {}, but it does not have vmap support. Please override and implement "
    "the vmap staticmethod or set generate_vmap_rule=True. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")
BOTH_VMAP_RULES_MESSAGE = (
    "You tried to vmap over {}, but it has both generate_vmap_rule=True and an overridden vmap "
    "staticmethod. Please set generate_vmap_rule=False or delete the overridden vmap "
    "staticmethod to avoid ambiguity. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")
VMAP_RETURNS_MESSAGE = ("Expected the vmap staticmethod to have two returns, an output and "
                        "out_dims with pytree structure compatible with the output. ")
INCOMPATIBLE_OUT_DIMS_MESSAGE = (
    "The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) "
    "tuple. Expected out_dims={} to be compatible with the structure of `output`. out_dims has "
    "structure {} but output has structure {}. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")
NO_JVP_MESSAGE = ("You must implement the jvp function for custom autograd.Function to use it "
                  "with forward mode AD.")


# --- Functions inside JAX transformations --------------------------------------------------
# Note [Function under a transform]: jaxgrad.func's transforms and the trace of compile(model)'s
# backward are JAX transformations of a function of arrays; JAX would differentiate the ops of
# a Function's forward and never call its backward. While one is active (``under_transform``),
# ``Function.apply`` runs the forward as usual, then passes its outputs through an identity
# ``jax.custom_vjp`` (``jax.custom_jvp`` when the innermost differentiating transform is
# forward mode) of (float tensor inputs, outputs, residuals): its rule calls the user's
# ``backward`` (``jvp``) on a copy of ctx whose saved tensors (and tensor attributes) hold the
# residual arrays, and gives the outputs and residuals no cotangent, so JAX's derivative of the
# forward's own ops is never used. Higher orders are JAX's: the rule's jaxgrad ops are traced,
# and each differentiating level has its own rule (the rule of one level returns its outputs
# through the next level's). Under vmap alone, the ``vmap`` staticmethod batches the call
# (``_apply_vmap_rule`` runs it at the level below and makes its outputs the level's batched
# values, JAX's ``BatchTracer``s); under vmap of a differentiating
# transform JAX batches the forward and the rule.

@public_path("jaxgrad.autograd.function")
class FunctionCtx:
    """What ``forward``/``setup_context`` may call on ``ctx`` (torch's FunctionCtx).

    >>> import jaxgrad
    >>> class Pair(jaxgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         doubled, copy = x * 2, x * 1
    ...         ctx.mark_non_differentiable(copy)
    ...         return doubled, copy
    ...     @staticmethod
    ...     def backward(ctx, grad, _):
    ...         return grad * 2
    >>> y, copy = Pair.apply(jaxgrad.tensor([1.5], requires_grad=True))
    >>> isinstance(y.grad_fn, jaxgrad.autograd.function.FunctionCtx), copy.requires_grad
    (True, False)
    """


    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors (inputs, outputs or intermediates) for ``backward``; version-checked."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{i} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``jvp``, where ``ctx.saved_tensors`` returns them."""
        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (they must be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that never get a gradient (their grads arrive as zeros or None)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether undefined output gradients reach ``backward`` as zeros (default) or None."""
        self._materialize_grads = value

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against in-place changes (in
        ``jvp``: those given to ``save_for_forward``)."""
        if self._in_jvp:
            return tuple(self._saved_for_forward)
        if self._saved is None:
            if self._cleared_on_access:
                raise RuntimeError(CLEARED_ON_ACCESS_MESSAGE)
            raise RuntimeError(FREED_MESSAGE)
        tensors = tuple(s.unpack(self) for s in self._saved)
        if self._forward_cls.clear_saved_tensors_on_access:
            self.release_variables()
            self._cleared_on_access = True
        return tensors

    @property
    def saved_variables(self) -> tuple:
        """The deprecated name of ``saved_tensors`` (it warns, then returns them)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The saved tensors as ``SavedTensor`` objects (``register_hooks`` on each)."""
        return tuple(self._saved if self._saved is not None else self._freed)


@public_path("jaxgrad.autograd.function")
class BackwardCFunction(Node, FunctionCtx):
    """The grad_fn (and ctx) of a custom Function call; subclassed once per Function.

    >>> import jaxgrad
    >>> class Double(jaxgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.scale = 2.0
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad * ctx.scale
    >>> y = Double.apply(jaxgrad.tensor([1.0], requires_grad=True))
    >>> type(y.grad_fn).__name__, y.grad_fn.scale
    ('DoubleBackward', 2.0)
    """


    _forward_cls: type

    def __init__(self, edges: tuple, inputs: tuple) -> None:
        super().__init__(edges, ())
        self._is_tensor_input = tuple(isinstance(a, Tensor) for a in inputs)
        self._input_meta = tuple((a.shape, a.dtype) for a in inputs if isinstance(a, Tensor))
        self.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in inputs)
        self._to_save: tuple = ()
        self._saved: list | None = []
        self._freed: list = []
        self._cleared_on_access = False
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self._materialize_grads = True
        self._materialize_non_diff_grads = True  # False: marked non-differentiable get None
        self._non_differentiable_outputs: frozenset = frozenset()
        self._saved_for_forward: tuple = ()
        self._in_jvp = False

    def __repr__(self) -> str:
        return f"<jaxgrad.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        """Run the user's ``backward`` on ``grads`` and check the gradients it returns.

        >>> import jaxgrad
        >>> class Triple(jaxgrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x * 3
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad * 3
        >>> y = Triple.apply(jaxgrad.tensor([1.0], requires_grad=True))
        >>> y.grad_fn.apply([jaxgrad.tensor([1.0])], create_graph=False)
        [tensor([3.])]
        """
        if self._materialize_grads:
            kept_none = (frozenset() if self._materialize_non_diff_grads
                         else self._non_differentiable_outputs)
            grads = [_materialized_zeros(meta)
                     if g is None and meta is not None and i not in kept_none else g
                     for i, (g, meta) in enumerate(zip(grads, self.out_meta))]
        if self._forward_cls.boxed_grads_call:  # backward(ctx, grads) with one mutable list
            result = self._forward_cls._backward_rule(self, list(grads))
        else:
            result = self._forward_cls._backward_rule(self, *grads)
        return self._check_gradients(result if isinstance(result, tuple) else (result,))

    def _check_gradients(self, result: tuple) -> list:
        """torch's checks of what ``backward`` returned; grads summed to the inputs' shapes (the
        engine casts them to the dtypes the next nodes expect)."""
        name, expected = type(self).__name__, len(self._is_tensor_input)
        if len(result) > expected and all(g is None for g in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
        grads = []
        for position, (g, is_tensor) in enumerate(zip(result, self._is_tensor_input), 1):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{position}, but the corresponding forward input was not a Variable")
            elif g is None or isinstance(g, Tensor):
                grads.append(g)
            else:
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return [g if g is None else _fit_gradient(name, i, g, shape)
                for i, (g, (shape, _)) in enumerate(zip(grads, self._input_meta))]

    def release_variables(self) -> None:
        """Free the saved tensors (after backward without ``retain_graph``)."""
        if self._saved is not None:
            for s in self._saved:
                s.release()
            self._freed, self._saved = self._saved, None


def _materialized_zeros(meta: tuple) -> Tensor:
    with x64_scope():
        zeros = Tensor._make(jnp.zeros(*meta))
    zeros._vc.value = 1  # torch fills a new tensor with zero_()
    return zeros


def _fit_gradient(name: str, index: int, grad: Tensor, shape) -> Tensor:
    """torch's validate_outputs: sum a broadcast gradient down to the input's shape."""
    if tuple(grad.shape) != tuple(shape):
        if not reductions.is_expandable_to(tuple(shape), tuple(grad.shape)):
            raise RuntimeError(
                f"Function {name} returned an invalid gradient at index {index} - got "
                f"{list(grad.shape)} but expected shape compatible with {list(shape)}")
        grad = reductions.sum_to_size(grad, *shape)
    return grad  # the engine casts to the dtype the next node expects (validate_outputs)


@public_path("jaxgrad.autograd.function")
class Function:
    """Base class for operations with a custom backward (``torch.autograd.Function``).

    >>> import jaxgrad
    >>> class Exp(jaxgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         result = x.exp()
    ...         ctx.save_for_backward(result)
    ...         return result
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         result, = ctx.saved_tensors
    ...         return grad_output * result
    >>> x = jaxgrad.tensor([0.0, 1.0], requires_grad=True)
    >>> Exp.apply(x).sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """


    clear_saved_tensors_on_access = False  # ctx.saved_tensors may be read once, then freed
    boxed_grads_call = False  # backward(ctx, grads) receives one list instead of *grads
    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # torch.func runs a Function inside its grad/jvp levels as a generated copy, whose
        # node is <Name>GeneratedBackward
        cls._backward_cls, cls._generated_backward_cls = (
            type(f"{cls.__name__}{suffix}", (BackwardCFunction,),
                 {"_forward_cls": cls, "__module__": "jaxgrad.autograd.function"})
            for suffix in ("Backward", "GeneratedBackward"))

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """``forward(ctx, *inputs)``, or ``forward(*inputs)`` with ``setup_context``."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        """Save what backward needs when ``forward`` does not take ``ctx`` (torch 2 style)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """One gradient (or None) per forward input, given one per forward output."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def vmap(info: Any, in_dims: tuple, *args: Any) -> Any:
        """The rule under ``vmap``: ``(output, out_dims)`` given ``info`` (``batch_size``,
        ``randomness``), one in_dim per argument and the arguments; override it or set
        ``generate_vmap_rule = True``."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def _backward_rule(cls, ctx: Any, *grads: Any) -> Any:
        has_backward, has_vjp = cls.backward is not Function.backward, cls.vjp is not Function.vjp
        if has_backward and has_vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return (cls.vjp if has_vjp else cls.backward)(ctx, *grads)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and record one ``<Name>Backward`` node for its outputs."""
        split = cls.setup_context is not Function.setup_context
        if split:  # torch binds the forward's signature, defaults included
            bound = _signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        elif kwargs:
            args = _keywords_as_positions(cls.forward, args, kwargs)
        if stack.kinds or stack.functionalizing:
            cls._check_transforms(split, args)
            if _runs_vmap_rule(cls, args):
                return _apply_vmap_rule(cls, args, kwargs)
        differentiable = _state.grad and any(
            isinstance(a, Tensor) and a.requires_grad for a in args)
        edges = tuple(a._gradient_edge() if differentiable and a.requires_grad else None
                      for a in args if isinstance(a, Tensor))
        generated = any(k in FUNCTORCH_DIFFERENTIATING for k in stack.kinds)
        ctx = (cls._generated_backward_cls if generated else cls._backward_cls)(edges, args)
        if _profiler.active:
            return _profiler.record_op(cls.__name__, args,
                                       lambda: cls._forward(ctx, args, split, differentiable))
        return cls._forward(ctx, args, split, differentiable)

    @classmethod
    def _check_transforms(cls, split: bool, args: tuple) -> None:
        """torch.func's requirements on a Function used inside its transforms (checked where
        an input is traced, or inside functionalize: a Function of constants is not
        transformed, and gradcheck's batched checks, on torch's legacy vmap, accept any Function
        there)."""
        functional = stack.functionalizing and any(isinstance(a, Tensor) for a in args)
        if not functional and not any(isinstance(a, Tensor) and isinstance(
                a._value, jax.core.Tracer) for a in args):
            return
        kinds = stack.kinds
        if not split and (functional or any(k != "eager" for k in kinds)):
            raise RuntimeError(SETUP_CONTEXT_MESSAGE)
        if functional:
            raise RuntimeError("NYI: Functionalize rule for custom_function_call")
        if any(k in VMAP_KINDS for k in kinds):
            overridden = cls.vmap is not Function.vmap
            if cls.generate_vmap_rule and overridden:
                raise RuntimeError(BOTH_VMAP_RULES_MESSAGE.format(cls.__name__))
            if not cls.generate_vmap_rule and not overridden:
                raise RuntimeError(NO_VMAP_MESSAGE.format(cls.__name__))
        if any(k in FORWARD_KINDS for k in kinds) and getattr(cls, "jvp", None) is None:
            raise NotImplementedError(NO_JVP_MESSAGE)

    @classmethod
    def _forward(cls, ctx: BackwardCFunction, args: tuple, split: bool,
                 differentiable: bool) -> Any:
        forward_ad = _forward_ad.active  # tangents come from jvp, not from forward's ops
        inputs = [a._value if isinstance(a, Tensor) else None for a in args]
        with no_grad(), _forward_ad.suspended():
            if split:
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
                _refuse_saving_returned_input(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args)
        dirty = {id(t) for t in ctx._dirty}
        saved = (ctx._to_save, ctx._saved_for_forward)
        wrapped = _wrap_outputs(ctx, args, outputs, differentiable)
        modes = _differentiating() or _users_own_transform(args)
        if modes:
            _CustomRule(cls, ctx, args, inputs, saved, wrapped).attach(modes)
        if forward_ad:
            _forward_tangents(cls, ctx, args, outputs, wrapped, dirty)
        return wrapped


def _refuse_saving_returned_input(ctx: BackwardCFunction, args: tuple, outputs: Any) -> None:
    """torch's error when ``setup_context`` saves (for backward or forward) an input that
    ``forward`` returned as-is without ``mark_dirty``: the output is a view of that input, so
    the tensor saved is not the one returned."""
    raw = outputs if isinstance(outputs, tuple) else (outputs,)
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in ctx._dirty}
    as_is = {id(o) for o in raw if isinstance(o, Tensor) and id(o) in inputs
             and id(o) not in dirty}
    saved = (*ctx._to_save, *(ctx._saved_for_forward or ()))
    if any(t is not None and id(t) in as_is for t in saved):
        raise RuntimeError(RETURNED_INPUT_SAVED_MESSAGE)


class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod is told about the vmap level (torch's)."""

    batch_size: int
    randomness: str


def _runs_vmap_rule(cls: type, args: tuple) -> bool:
    """Whether this call is batched by the Function's own ``vmap`` staticmethod: vmap is the
    innermost transform, no differentiating transform is active, and an input is batched."""
    return (stack.kinds and stack.kinds[-1] == "vmap" and cls.vmap is not Function.vmap
            and not _differentiating()
            and any(isinstance(a, Tensor) and _batch_trace(a._value) is not None
                    for a in P.flatten(args)[0]))


def _apply_vmap_rule(cls: type, args: tuple, kwargs: dict) -> Any:
    """``cls.apply`` under vmap as torch.func runs it: only the ``vmap`` staticmethod, called
    with the level's batch size, each argument's batch dim where it lies and the batched values
    one level down (concrete outside ``jax.jit``: a forward that calls numpy works); its
    ``out_dims`` say where each output is batched, and the outputs become the level's batched
    values there (``forward`` is not run at this level)."""
    if any(isinstance(v, Tensor) for v in P.flatten(kwargs)[0]):
        raise NotImplementedError(
            "Run vmap on autograd.Function with kwarg-only Tensor args. Please do not pass "
            f"kwarg-only Tensors to autograd.Function. Got: {kwargs}")
    leaves, spec = P.flatten(args)
    level = _innermost_batch_trace([a._value for a in leaves if isinstance(a, Tensor)])
    in_dims, below = [], []
    for a in leaves:
        batched = isinstance(a, Tensor) and _batch_trace(a._value) is level
        in_dims.append(a._value.batch_dim if batched else None)
        below.append(Tensor._make(a._value.val) if batched else a)
    size = next(b.shape[d] for b, d in zip(below, in_dims) if d is not None)
    randomness = stack.randomness[-1] if stack.randomness else "error"
    with _level_below():
        result = cls.vmap(VmapInfo(size, randomness), P.unflatten(in_dims, spec),
                          *P.unflatten(below, spec), **kwargs)
    out, out_dims = _checked_vmap_returns(result)
    flat, spec = P.flatten(out)
    dims = P.broadcast_to_and_flatten(out_dims, spec)
    if dims is None:
        raise RuntimeError(INCOMPATIBLE_OUT_DIMS_MESSAGE.format(
            out_dims, P.pprint(P.flatten(out_dims)[1]), P.pprint(spec)))
    return P.unflatten([_batched_output(level, o, d) for o, d in zip(flat, dims)], spec)


def _batch_trace(value: Any) -> Any:
    return getattr(value, "_trace", None) if hasattr(value, "batch_dim") else None


def _innermost_batch_trace(values: list) -> Any:
    """The vmap level (JAX batch trace) of the innermost batched value: the one no other
    value's batched value lies inside of."""
    chains = []
    for v in values:
        chain = []
        while _batch_trace(v) is not None:
            chain.append(v._trace)
            v = v.val
        chains.append(chain)
    inner = {id(t) for chain in chains for t in chain[1:]}
    return next(chain[0] for chain in chains if chain and id(chain[0]) not in inner)


def _batched_output(level: Any, out: Any, out_dim: Any) -> Any:
    """A vmap rule's output as a value of the vmap level: batched at ``out_dim``."""
    if out_dim is None or not isinstance(out, Tensor):
        return out
    value = out._value
    return Tensor._make(BatchTracer(level, value, out_dim % max(value.ndim, 1)))


def _checked_vmap_returns(result: Any) -> tuple[Any, Any]:
    """A vmap staticmethod's ``(output, out_dims)``, with torch's errors for anything else."""
    if not isinstance(result, tuple):
        raise RuntimeError(VMAP_RETURNS_MESSAGE + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(VMAP_RETURNS_MESSAGE + f"Got {len(result)} returns instead")
    return result


@contextmanager
def _level_below() -> Iterator[None]:
    """Run a vmap rule at the level below the innermost vmap (its values are unbatched there)."""
    kind = stack.kinds.pop()
    try:
        yield
    finally:
        stack.kinds.append(kind)


def _differentiating(kinds: bool = False) -> list[str]:
    """"reverse" or "forward" for each active transform that differentiates, innermost first
    (``kinds``: the transforms' own kinds, ``grad``, ``eager``, ``jvp``...)."""
    return [kind if kinds else "reverse" if kind in REVERSE_KINDS else "forward"
            for kind in reversed(stack.kinds)
            if kind in REVERSE_KINDS or kind in FORWARD_KINDS]


def _users_own_transform(args: tuple) -> list[str]:
    """``["reverse"]`` where the Function runs on tracers of the user's own JAX transformation
    (``jax.grad``/``jax.jit`` of code calling ``apply`` on tensors made from tracers, no
    jaxgrad transform active): its outputs pass through the ``custom_vjp`` of its ``backward``,
    so JAX, differentiating it later or now, uses the Function's rule (see Note [Function under
    a transform])."""
    if stack.kinds or not any(isinstance(a, Tensor) and isinstance(a._value, jax.core.Tracer)
                              for a in args):
        return []
    return ["reverse"]


@jax.custom_vjp
def _refuse_differentiation(x: Any, anchor: Any) -> Any:
    """``x``, the gradient from a ``once_differentiable`` backward, which jaxgrad's engine must
    not differentiate: torch raises when its backward reaches one, even where ``x`` is a
    constant, so the refusal hangs on the incoming gradient (``anchor``) too."""
    return x


def _refuse_fwd(x: Any, anchor: Any) -> tuple:
    return x, None


def _refuse_bwd(_: Any, g: Any) -> tuple:
    raise RuntimeError(ONCE_DIFFERENTIABLE_MESSAGE)


_refuse_differentiation.defvjp(_refuse_fwd, _refuse_bwd)


_CTX_FIELDS = frozenset(("_is_tensor_input", "_input_meta", "needs_input_grad", "_to_save",
                         "_saved", "_freed", "_cleared_on_access", "_dirty",
                         "_non_differentiable", "_materialize_grads",
                         "_materialize_non_diff_grads", "_non_differentiable_outputs",
                         "_saved_for_forward", "_in_jvp"))


class _Held:
    """A saved tensor inside a transform's rule: the residual, unpacked as-is."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor | None) -> None:
        self.tensor = tensor

    def unpack(self, owner: Any = None) -> Tensor | None:
        return self.tensor

    def release(self) -> None:
        pass


class _CustomRule:
    """One Function call under a differentiating JAX transform: its outputs pass through an
    identity ``custom_vjp``/``custom_jvp`` whose rule is the user's ``backward``/``jvp`` (see
    Note [Function under a transform])."""

    def __init__(self, cls: type, ctx: BackwardCFunction, args: tuple, inputs: list,
                 saved: tuple, wrapped: Any) -> None:
        self.cls, self.ctx = cls, ctx
        self.to_save, self.for_forward = saved
        tensor_args = [(a, v) for a, v in zip(args, inputs) if isinstance(a, Tensor)]
        # (ordinal among tensor inputs, array before forward) of the float inputs
        self.xs = [(k, v) for k, (_, v) in enumerate(tensor_args) if is_differentiable_array(v)]
        self.n_args = len(args)
        self.arg_ordinal = {}  # argument position -> ordinal among tensor inputs
        k = 0
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                self.arg_ordinal[i] = k
                k += 1
        self.outs = list(wrapped) if isinstance(wrapped, tuple) else [wrapped]
        nondiff = ctx._non_differentiable_outputs
        self.diff = [j for j, o in enumerate(self.outs) if isinstance(o, Tensor)
                     and is_differentiable_array(o._value) and j not in nondiff]
        self.stopped = [j for j, o in enumerate(self.outs) if isinstance(o, Tensor)
                        and is_differentiable_array(o._value) and j in nondiff]
        held: dict[int, Tensor] = {}
        for t in (*self.to_save, *self.for_forward, *self._attribute_tensors()):
            if t is not None:
                held.setdefault(id(t), t)
        self.held = list(held.values())
        out_position = {id(self.outs[j]): k for k, j in enumerate(self.diff)}
        self.held_outputs = [out_position.get(id(t)) for t in self.held]  # output or None

    def _attribute_tensors(self) -> list:
        return [t for k, v in vars(self.ctx).items() if k not in _CTX_FIELDS
                for t in P.flatten(v)[0] if isinstance(t, Tensor)]

    def attach(self, modes: list[str]) -> None:
        """``modes``: one per differentiating transform, innermost first; each level's rule
        passes the outputs it returns through the next level's (so that JAX, differentiating
        the rule of one level at the next, uses the user's rule there too)."""
        for j in self.stopped:  # marked non-differentiable: no derivative at all
            _replace_array(self.outs[j], jax.lax.stop_gradient(self.outs[j]._value))
        if not self.xs or not self.diff:
            return
        self.identities = []
        kinds = _differentiating(kinds=True)
        for level, mode in enumerate(modes):
            if mode == "reverse":
                identity = jax.custom_vjp(_identity)
                outer = next((k for k in kinds[level + 1:] if k in REVERSE_KINDS), None)
                # symbolic zeros: an output no gradient reaches comes to backward as None
                # unless ctx materializes grads (torch.func's set_materialize_grads(False))
                identity.defvjp(functools.partial(self._forward_residuals, level),
                                functools.partial(self._backward, outer),
                                symbolic_zeros=True)
            else:
                identity = jax.custom_jvp(_identity)
                identity.defjvp(functools.partial(self._jvp, level))
            self.identities.append(identity)
        ys = self.identities[0]([v for _, v in self.xs], [self.outs[j]._value for j in self.diff],
                                [t._value for t in self.held])
        for j, y in zip(self.diff, ys):
            _replace_array(self.outs[j], y)

    def _ctx(self, residuals: list) -> BackwardCFunction:
        """A copy of ctx whose tensors hold the residual arrays of this trace."""
        fresh = {id(t): Tensor._make(r) for t, r in zip(self.held, residuals)}

        def swap(v: Any) -> Any:
            leaves, spec = P.flatten(v)
            if not any(isinstance(t, Tensor) for t in leaves):
                return v
            return P.unflatten([fresh.get(id(t), t) if isinstance(t, Tensor) else t
                                for t in leaves], spec)

        ctx = copy.copy(self.ctx)
        for k, v in vars(self.ctx).items():
            if k not in _CTX_FIELDS:
                setattr(ctx, k, swap(v))
        ctx._saved = [_Held(None if t is None else fresh[id(t)]) for t in self.to_save]
        ctx._saved_for_forward = tuple(None if t is None else fresh[id(t)]
                                       for t in self.for_forward)
        ctx._cleared_on_access = False
        return ctx

    def _outer(self, level: int, xs: list, ys: list, held: list) -> tuple[list, list]:
        """The outputs and residuals seen by the transform outside ``level``: the outputs pass
        through that level's rule, and residuals that are outputs are those outputs."""
        if level + 1 == len(self.identities):
            return ys, held
        ys = self.identities[level + 1](xs, ys, held)
        return ys, [r if k is None else ys[k] for r, k in zip(held, self.held_outputs)]

    def _forward_residuals(self, level: int, xs: list, ys: list, held: list) -> tuple:
        xs, ys, held = (_primal_values(a) for a in (xs, ys, held))
        return self._outer(level, xs, ys, held)

    def _backward(self, outer_reverse: str | None, held: list, cotangents: list) -> tuple:
        """The user's backward as this level's rule; ``outer_reverse``: the kind of the
        reverse-mode transform outside, which differentiates the rule (None: none)."""
        grads: list = [None] * len(self.outs)
        for j, c in zip(self.diff, cotangents):
            if type(c) is not jax.custom_derivatives.SymbolicZero:
                grads[j] = Tensor._make(c)
        with recording_off():
            got = self._ctx(held).apply(grads, create_graph=False)
        xs = [None if got[k] is None else got[k]._value.astype(v.dtype) for k, v in self.xs]
        if outer_reverse == "grad" and _is_once_differentiable(self.cls):
            xs = [None if g is None else jax.lax.stop_gradient(g) for g in xs]  # no_grad: zeros
        elif outer_reverse and _is_once_differentiable(self.cls):  # torch's engine refuses
            anchor = next((g._value for g in grads if g is not None), None)
            if anchor is not None:
                xs = [None if g is None else _refuse_differentiation(g, anchor) for g in xs]
        return xs, [None] * len(self.diff), [None] * len(held)

    def _jvp(self, level: int, primals: tuple, tangents: tuple) -> tuple:
        xs, ys, held = primals
        ys, held = self._outer(level, xs, ys, held)
        by_ordinal = {k: Tensor._make(t) for (k, _), t in zip(self.xs, tangents[0])}
        given = [by_ordinal.get(self.arg_ordinal[i]) if i in self.arg_ordinal else None
                 for i in range(self.n_args)]
        ctx = self._ctx(held)
        ctx._in_jvp = True
        with recording_off():
            result = self.cls.jvp(ctx, *given)
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != len(self.outs):
            raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                               f"(expected {len(self.outs)} but got {len(result)})")
        out = []
        for j, y in zip(self.diff, ys):
            t = result[j]
            out.append(jnp.zeros_like(y) if t is None
                       else jnp.broadcast_to(t._value, y.shape).astype(y.dtype))
        return ys, out


def _primal_values(tree: Any) -> Any:
    """The arrays of a ``custom_vjp`` forward rule's arguments (``symbolic_zeros`` wraps them)."""
    return jax.tree_util.tree_map(
        lambda p: p.value, tree,
        is_leaf=lambda p: isinstance(p, jax.custom_derivatives.CustomVJPPrimal))


def _is_once_differentiable(cls: type) -> bool:
    rule = cls.vjp if cls.vjp is not Function.vjp else cls.backward
    return getattr(rule, "_once_differentiable", False)


def _identity(xs: list, ys: list, held: list) -> list:
    return ys


def _replace_array(t: Tensor, array: Any) -> None:
    """Give output ``t`` the array JAX derives through (a view keeps its base untouched)."""
    if t._layout is None:
        t._cell.array = array
    else:
        t._arr, t._arr_gen, t._lazy = array, t._cell.generation, None


def _forward_tangents(cls: type, ctx: BackwardCFunction, args: tuple, outputs: Any,
                      wrapped: Any, dirty: set) -> None:
    """Forward-mode AD through a custom Function: its ``jvp`` gets one tangent per input (zeros
    for a differentiable tensor without one, None for others) and returns one per output,
    checked as torch checks them."""
    level = _forward_ad.current_level()
    given = [_forward_ad.tangent_of(_FORWARD_AD, a, level) if isinstance(a, Tensor) else None
             for a in args]
    if all(g is None for g in given):
        return
    jvp = getattr(cls, "jvp", None)
    if jvp is None:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    tangents = [g if g is not None or not _differentiable(a)
                else Tensor._make(jnp.zeros_like(a._value)) for g, a in zip(given, args)]
    versions = {id(a): g._version for a, g in zip(args, tangents) if id(a) in dirty}
    ctx._in_jvp = True
    try:
        with _forward_ad.suspended():
            result = jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    raw = outputs if isinstance(outputs, tuple) else (outputs,)
    outs = wrapped if isinstance(outputs, tuple) else (wrapped,)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(raw):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(raw)} but got {len(result)})")
    non_differentiable = ctx._non_differentiable_outputs  # (indices: _wrap_outputs let go)
    by_input = {id(a): g for a, g in zip(args, tangents)}
    for j, (out, wrapped_out, t) in enumerate(zip(raw, outs, result)):
        if not (isinstance(out, Tensor) and _differentiable(out)) or j in non_differentiable:
            if t is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {j}, but  the corresponding "
                    "forward output is not a differentiable Tensor.You should return None at that "
                    "position instead.")
            continue
        if t is None:
            continue
        if id(out) in dirty:
            _check_inplace_tangent(t, by_input.get(id(out)), versions.get(id(out)))
        elif wrapped_out._base is not None:
            _check_view_tangent(t, wrapped_out._base, args, tangents)
        _forward_ad.set_tangent(wrapped_out, level, t)


def _check_view_tangent(returned: Tensor, base: Tensor, args: tuple, tangents: list) -> None:
    """A view output's tangent must be a view of the tangent of the input it views."""
    if returned._base is None:
        raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) "
                           "but the jvp is not returning a view.")
    for a, g in zip(args, tangents):
        if not isinstance(a, Tensor) or g is None or (
                a._base if a._base is not None else a) is not base:
            continue
        if returned._base is not (g._base if g._base is not None else g):
            # as torch: the message depends on whether the input's tangent is itself a view
            raise RuntimeError(
                "A custom Function is returning a view but the jvp is not returning a view of "
                + ("the same base as the given grad input." if g._base is not None
                   else "the given grad input."))
        return


def _differentiable(t: Tensor) -> bool:
    return isinstance(t, Tensor) and t._cell.array.dtype in DIFFERENTIABLE_DTYPES


def _check_inplace_tangent(returned: Tensor, given: Tensor | None, version: int | None) -> None:
    """The jvp of an in-place Function must modify its input's tangent in place and return it."""
    if given is not None and given._version == version:
        raise RuntimeError(
            "An inplace custom Function is not modifying the forward mode gradients inplace. If "
            "the forward is modifying an input inplace, then the jvp function must modify the "
            "corresponding gradient inplace.")
    if returned is not given:
        raise RuntimeError(
            "An inplace custom Function is not returning the forward mode gradients as-is. If "
            "the forward is modifying an input inplace, then the jvp function must modify the "
            "gradient inplace and return it as-is.")


@cache(maxsize=1024)
def _signature(forward: Callable) -> inspect.Signature:
    return inspect.signature(forward)


def _keywords_as_positions(forward: Callable, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments of ``apply`` become positional ones, as torch's C++ apply does."""
    names = list(_signature(forward).parameters)[1:]  # after ctx
    args, kwargs = list(args), dict(kwargs)
    for position, name in enumerate(names[len(args):], len(args)):
        if not kwargs:
            break
        if name not in kwargs:
            raise TypeError(f"forward() missing required argument: '{name}' (position "
                            f"{position})")
        args.append(kwargs.pop(name))
    if kwargs:
        raise TypeError(f"forward() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return tuple(args)


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, outputs: Any, differentiable: bool):
    """Give the outputs their history (torch's ``_wrap_outputs``) and save ctx's tensors."""
    raw = outputs if isinstance(outputs, tuple) else (outputs,)
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    for t in ctx._dirty:
        t._vc.value += 1
    pure_view = bool(getattr(ctx, "_is_pure_view", False))
    if pure_view and (sum(isinstance(a, Tensor) for a in args) != 1 or len(raw) != 1):
        raise RuntimeError(PURE_VIEW_MESSAGE)
    dirty = {id(t) for t in ctx._dirty}
    non_differentiable = {id(t) for t in ctx._non_differentiable}
    wrapped, meta, n_differentiable = [], [], 0
    for i, out in enumerate(raw):
        if isinstance(out, Tensor):
            is_input, is_dirty = id(out) in inputs, id(out) in dirty
            out_differentiable = (differentiable and id(out) not in non_differentiable
                                  and out._value.dtype in DIFFERENTIABLE_DTYPES)
            out = _wrap_output(ctx, out, i, is_input, is_dirty, out_differentiable, len(raw))
            if not (is_input and is_dirty) and out._base is not None:
                out._creation_meta = None if pure_view else "custom_function"
            n_differentiable += out_differentiable
            meta.append((out._value.shape, out._value.dtype))
        else:
            meta.append(None)
        wrapped.append(out)
    if n_differentiable > 1:  # none of several views may be modified in place
        for out in wrapped:
            if isinstance(out, Tensor) and out._base is not None:
                out._creation_meta = "multi_output"
    returned = {id(o) for o in raw}
    if any(id(t) not in returned for t in ctx._dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all be "
                           "outputs of the Function.")
    ctx.out_meta = tuple(meta)
    ctx._non_differentiable_outputs = frozenset(
        i for i, o in enumerate(raw) if id(o) in non_differentiable)
    # saved as outputs: those ctx is now the history of (torch: ``grad_fn is ctx``); an input
    # returned as-is was replaced by a view of it, and is saved as the input it is
    outputs_by_id = {id(o): i for i, o in enumerate(wrapped) if isinstance(o, Tensor) and (
        o._grad_node is ctx or id(o) in dirty)}
    # let go of the tensors before saving them: a pack hook that raises (checkpoint's early
    # stop) must not leave ctx -> output -> ctx cycles behind
    to_save, ctx._to_save = ctx._to_save, ()
    ctx._dirty = ctx._non_differentiable = ()  # (no cycles through outputs)
    ctx._saved = [SavedTensor(t, None if t is None else outputs_by_id.get(id(t)))
                  for t in to_save]
    return tuple(wrapped) if isinstance(outputs, tuple) else wrapped[0]


def _wrap_output(ctx: BackwardCFunction, out: Tensor, output_nr: int, is_input: bool,
                 is_dirty: bool, differentiable: bool, num_outputs: int) -> Tensor:
    """One output's history, following torch's ``set_history`` of custom functions."""
    if not differentiable:
        if not out.requires_grad:
            if is_input and not is_dirty:
                with no_grad():
                    out = _shapes.alias(out)
            return out
        if is_input:  # a detached alias of the input, its requires_grad left alone
            return out.detach()
        if out._base is None:
            out.detach_()
        return out
    if is_dirty:
        if out._requires_grad and out._grad_node is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an "
                               "in-place operation.")
        if not is_input:
            if out._base is not None:
                raise RuntimeError(MARK_DIRTY_NOT_INPUT_MESSAGE)
            warnings.warn(MARK_DIRTY_NOT_INPUT_MESSAGE, UserWarning, stacklevel=5)
        if out._base is not None and num_outputs > 1:
            raise RuntimeError(MODIFIED_VIEW_MESSAGE)
        check_differentiable_inplace(out)
        rebase_history(out, ctx, output_nr)
        return out
    if is_input:  # an input returned as-is: torch hands back a view of it
        with no_grad():
            out = _shapes.alias(out)
    out._set_history(ctx, output_nr)
    return out


def once_differentiable(backward: Callable) -> Callable:
    """Decorate a ``backward`` that is not itself differentiable: double backward raises.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.function import once_differentiable
    >>> class Square(jaxgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> x = jaxgrad.tensor(3.0, requires_grad=True)
    >>> jaxgrad.autograd.grad(Square.apply(x), x)
    (tensor(6.),)
    """

    @functools.wraps(backward)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = backward(ctx, *args)
        if not _state.grad or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        fakes = [None if o is None else o.detach().requires_grad_() for o in outputs]
        node = DELAYED_ERROR(tuple(None if f is None else f._gradient_edge() for f in fakes),
                             tuple(None if o is None else (o._value.shape, o._value.dtype)
                                   for o in outputs))
        node.message = ONCE_DIFFERENTIABLE_MESSAGE
        wrapped = tuple(None if f is None else _delayed_output(f, node, i)
                        for i, f in enumerate(fakes))
        return wrapped[0] if single else wrapped

    wrapper._once_differentiable = True  # type: ignore[attr-defined]
    return wrapper


def _delayed_output(fake: Tensor, node: DelayedError, output_nr: int) -> Tensor:
    out = Tensor._make(fake._value)
    out._set_history(node, output_nr)
    return out



@public_path("jaxgrad.autograd.function")
class InplaceFunction(Function):
    """A Function with an ``inplace`` flag, kept (as in torch) for backward compatibility.

    >>> import warnings, jaxgrad
    >>> from jaxgrad.autograd.function import InplaceFunction
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     InplaceFunction(inplace=True).inplace
    True
    """


    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


@public_path("jaxgrad.autograd.function")
class NestedIOFunction(Function):
    """torch's legacy Function with nested inputs (``forward_extended``/``backward_extended``).

    It is kept for backward compatibility only, and, as in torch 2.13, calling an instance fails:
    it relies on the legacy ``_do_forward`` that new-style Functions no longer have.

    >>> import warnings, jaxgrad
    >>> from jaxgrad.autograd.function import NestedIOFunction
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     f = NestedIOFunction()
    >>> f(jaxgrad.ones(1))
    Traceback (most recent call last):
    AttributeError: 'super' object has no attribute '_do_forward'
    """


    def _do_forward(self, *input: Any) -> Any:
        self._nested_input = input
        return super()._do_forward(*input)  # type: ignore[misc]

    __call__ = _do_forward

    def save_for_backward(self, *args: Any) -> None:
        """Keep the tensors of ``args`` (nested) for backward."""
        self.to_save = tuple(_tensors_in(args))
        self._to_save_nested = args

    def mark_dirty(self, *args: Any, **kwargs: Any) -> None:
        """Record the tensors of ``args``/``kwargs`` as modified in place."""
        self.dirty_tensors = tuple(_tensors_in((args, kwargs)))

    def mark_non_differentiable(self, *args: Any, **kwargs: Any) -> None:
        """Record the tensors of ``args``/``kwargs`` as not differentiable."""
        self.non_differentiable = tuple(_tensors_in((args, kwargs)))

    def forward_extended(self, *input: Any) -> None:
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> None:
        """User defined backward."""
        raise NotImplementedError


def _tensors_in(obj: Any) -> Any:
    """The tensors of a nested structure of tuples, lists and dicts, in order."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _tensors_in(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors_in(item)
