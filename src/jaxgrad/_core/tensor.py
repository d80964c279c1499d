"""``Tensor``: a JAX array in a shared storage cell, with torch's autograd attributes.

The data lives in a ``Storage`` cell (shared by views, ``detach()`` and ``.data``); the version
counter is shared by views and ``detach()``. Autograd state (``requires_grad``, ``grad_fn``,
``grad``, hooks) follows torch. This layer knows no ops: their methods (``t.exp()``, ``t + u``)
are attached by ``jaxgrad._functions.methods`` from the op declarations, once, when jaxgrad is
imported.
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import dtypes as _dtypes
from . import layout as _layouts
from . import pytree as _pytree
from . import tracing as _compile_trace
from .device import first_of, local_devices, of_jax
from .epoch import changed as structure_changed
from .grad_mode import _state as _grad_state
from .grad_mode import is_inference_mode_enabled
from .graph import AccumulateGrad, HookDict, RemovableHandle, add_hook
from .jax_setup import host_to_device
from .storage import (
    TYPED_STORAGE_WARNING,
    Layout,
    Storage,
    TypedStorage,
    UntypedStorage,
    VersionCounter,
    contiguous_strides,
    gather,
    lens_of,
    physical,
    scatter,
    share_with_host,
    typed_storage_warning,
)
from .storage import is_contiguous as _is_contiguous
from .tensor_repr import (
    VMAP_CONTROL_FLOW,
    VMAP_ITEM,
    held_here,
    host_value,
    spans_processes_error,
    tensor_repr,
)
from .transform_stack import in_functorch_transform, stack, unsupported_inside_transform
from .typename import public_path
from .warn_once import warn_once

SCALAR_WARNING = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                  "behavior.\nConsider using tensor.detach() first.")
_ACCUMULATOR_LOCK = threading.Lock()  # guards creating a leaf's AccumulateGrad

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)


# set by ``detach_()``: forward AD (a layer above) drops the tensor's tangent when it sees this
FORWARD_GRAD_DROPPED = "_fw_grad_dropped"


def _undeletable(slot: str, message: str) -> property:
    """A field read and written through the slot ``slot`` whose deletion raises torch's
    ``message`` (a property: a ``__delattr__`` would slow every attribute store on tensors)."""
    def get(self: Any) -> Any:
        return getattr(self, slot)

    def put(self: Any, value: Any) -> None:
        setattr(self, slot, value)

    def refuse(self: Any) -> None:
        raise RuntimeError(message)

    return property(get, put, refuse)


@public_path("jaxgrad")
class Size(tuple):
    """A tensor's shape: a tuple that prints like torch's ``Size``.

    >>> import jaxgrad
    >>> s = jaxgrad.ones(2, 3).shape
    >>> s, s.numel(), s[1:]
    (jaxgrad.Size([2, 3]), 6, jaxgrad.Size([3]))
    """

    def __repr__(self) -> str:
        return f"jaxgrad.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    # slicing, concatenating and repeating a Size give a Size, as in torch
    def __getitem__(self, index):
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return Size(super().__add__(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n):
        return Size(super().__mul__(n))

    __rmul__ = __mul__


_OWN_DTYPE = object()  # a leaf's grad_dtype before it is set: the tensor's own dtype


class _WritesThrough(Storage):
    """The storage of ``detach()``/``.data`` of a tensor JAX differentiates inside a compiled
    step (its results' VJP): reads are constants, and an in-place write reaches the tensor
    detached from as torch's shared storage would, with the new value but not its derivative
    (autograd never sees a write through a detached alias)."""

    __slots__ = ("source",)

    def __init__(self, array: jax.Array, source: Tensor) -> None:
        super().__init__(array)
        self.source = source

    def write(self, array: jax.Array) -> None:
        super().write(array)
        old = self.source._value
        if jnp.issubdtype(old.dtype, jnp.inexact):
            array = old + jax.lax.stop_gradient(array.astype(old.dtype) - old)
        self.source._write(array)


@public_path("jaxgrad")  # printed as torch prints its own: <class 'jaxgrad.Tensor'>
class Tensor:
    """A multi-dimensional array with PyTorch's autograd semantics, backed by JAX.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    # numpy scalars on the left defer to our reflected operators; JAX arrays on the left return
    # NotImplemented for a Tensor (it has no __jax_array__), so ``jnp_array * t`` reaches
    # ``t.__rmul__`` and keeps the graph
    __array_priority__ = 1000

    # (no ``__setattr__``/``__delattr__`` on this class: either one makes every attribute
    # store on every tensor take CPython's slow, unspecialized path, 3x slower)
    __slots__ = ("__dict__", "__weakref__", "_arr", "_arr_gen", "_base",
                 "_cell", "_creation_meta", "_grad", "_grad_acc", "_grad_dtype", "_grad_hooks",
                 "_grad_node", "_inference", "_layout", "_lazy",
                 "_output_nr", "_post_acc_hooks", "_requires_grad", "_retains_grad",
                 "_rg_from_base", "_vc", "_view_fn", "_view_version")

    _python_dispatch = False  # (a subclass defining __torch_dispatch__ sets it)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _pytree.register(cls)  # a Parameter unflattens as a Parameter
        cls._python_dispatch = getattr(cls, "__torch_dispatch__", None) is not None
        if cls._python_dispatch:
            PYTHON_DISPATCH[0] += 1

    @staticmethod
    def _make_wrapper_subclass(cls: type, size: Any, strides: Any = None,
                               storage_offset: Any = None, memory_format: Any = None,
                               dtype: Any = None, layout: Any = None, device: Any = None,
                               pin_memory: bool = False, requires_grad: bool = False,
                               **kwargs: Any) -> Tensor:
        """A tensor of the subclass ``cls`` with a size, dtype and device but no storage: the
        subclass's ``__torch_dispatch__`` computes every op on it (torch's wrapper subclass)."""
        np_dtype = (dtype or _dtypes.get_default_dtype()).np
        return cls._make(NoStorage(tuple(size), np_dtype, device), requires_grad)

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def _make(cls, array: jax.Array | None, requires_grad: bool = False,
              cell: Storage | None = None, vc: VersionCounter | None = None) -> Tensor:
        t = object.__new__(cls)
        t._cell = Storage(array) if cell is None else cell
        t._vc = VersionCounter() if vc is None else vc
        t._layout = None
        t._arr = None
        t._arr_gen = 0
        t._lazy = None  # a view not computed yet: (its op's jitted forward, the source tensor)
        t._requires_grad = requires_grad
        t._grad_node = None
        t._output_nr = 0
        t._grad = None
        t._grad_dtype = _OWN_DTYPE
        t._grad_acc = None
        t._grad_hooks = None
        t._post_acc_hooks = None
        t._retains_grad = False
        t._base = None
        t._view_version = 0
        t._view_fn = None  # a view made under view replay: how to remake it from its base
        t._creation_meta = None  # torch's CreationMeta of a view (None: DEFAULT)
        t._rg_from_base = False  # a view requiring grad only because its base does
        t._inference = _grad_state.inference
        if _nurseries.open:
            _nurseries.open[-1].append(weakref.ref(t))
        return t

    def _alias(self, share_version: bool) -> Tensor:
        """A tensor over the same storage (and layout); shares the version counter if asked."""
        cls = type(self) if dispatches_in_python(self) else Tensor  # (a wrapper stays one)
        t = cls._make(None, cell=self._cell, vc=self._vc if share_version else None)
        if cls is not Tensor:
            t.__dict__.update(self.__dict__)
        t._layout = self._layout
        t._arr, t._arr_gen, t._lazy = self._arr, self._arr_gen, self._lazy
        t._inference = self._inference
        return t

    # -- data ---------------------------------------------------------------------------------
    @property
    def _value(self) -> jax.Array:
        layout = self._layout
        if layout is None:
            return self._cell.array
        if self._arr_gen != self._cell.generation or self._arr is None:
            pending = self._pending_view()
            if pending is not None:
                self._arr = pending[0](pending[1]._value)  # the view op's own kernel
            else:
                self._arr = gather(self._cell.array, layout)
                self._arr_gen = self._cell.generation
            self._lazy = None
        return self._arr

    def _pending_view(self) -> tuple | None:
        """(the view op's jitted kernel, its source tensor) of a view not computed yet whose
        base has not changed since (else None): whoever needs its value may run that kernel
        on the source itself, inside a larger XLA program."""
        if self._arr is None and self._lazy is not None and \
                self._arr_gen == self._cell.generation:
            return self._lazy
        return None

    def _write(self, array: jax.Array) -> None:
        """Store ``array`` as this tensor's new contents (through to the base for a view)."""
        cell = self._cell
        if self._layout is None:
            cell.write(array)
        else:
            cell.write(scatter(cell.array, self._layout, array))
            self._arr, self._arr_gen, self._lazy = array, cell.generation, None

    def _write_inplace(self, array: jax.Array, ops: int = 1) -> None:
        """:meth:`_write` as ``ops`` of torch's in-place ops: contents, then version counter."""
        self._write(array)
        self._vc.value += ops

    def _resize_storage(self, shape: tuple[int, ...]) -> None:
        """Take ``shape``, contiguous from the current storage offset (torch's resize_): over
        the same storage when it is large enough, else over a larger copy of it (new elements
        zero); one version bump."""
        offset = self.storage_offset()
        needed = offset + math.prod(shape)
        old = self._cell.array
        if needed > old.size:
            flat = jnp.zeros(needed, old.dtype).at[:old.size].set(old.reshape(-1))
            self._cell = Storage(flat)
        self._layout = Layout(shape, contiguous_strides(shape), offset)
        self._arr, self._lazy = None, None
        self._vc.value += 1
        structure_changed()

    @property
    def data(self) -> Tensor:
        """A tensor sharing storage but not history or version counter (torch's ``.data``)."""
        return self._detached(share_version=False)

    @data.setter
    def data(self, other: Tensor) -> None:
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(other).__name__}")
        if self._requires_grad and not (other.dtype.is_floating_point or other.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._cell, self._layout = other._cell, other._layout
        self._arr, self._arr_gen, self._lazy = other._arr, other._arr_gen, other._lazy
        structure_changed()

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._layout.shape if self._layout is not None else self._cell.array.shape)

    def size(self, dim: int | None = None) -> Size | int:
        """The shape, or the size of one dimension."""
        shape = self.shape
        if dim is None:
            return shape
        return shape[_wrap_dim(dim, len(shape))]

    @property
    def dtype(self) -> _dtypes.dtype:
        return _dtypes.from_numpy_dtype(self._cell.array.dtype)

    @property
    def device(self):
        array = self._cell.array
        if isinstance(array, jax.core.Tracer):  # placed by the trace: the default device
            return of_jax(jax.local_devices()[0])
        devices = array.devices()
        return of_jax(next(iter(devices)) if len(devices) == 1 else first_of(devices))

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def layout(self) -> _layouts.layout:
        """Always ``jaxgrad.strided``: jaxgrad tensors are dense.

        >>> import jaxgrad
        >>> jaxgrad.ones(2).layout
        jaxgrad.strided
        """
        return _layouts.strided

    # torch's flags for representations and backends a jaxgrad tensor never has: it is dense,
    # unquantized, not nested, and lives on a JAX device (cpu, cuda or a TPU)
    is_sparse = is_sparse_csr = is_quantized = is_nested = is_mkldnn = is_meta = False
    is_mps = is_xpu = is_ipu = is_maia = is_mtia = is_vulkan = is_xla = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def ndimension(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return self.shape.numel()

    def nelement(self) -> int:
        return self.numel()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def stride(self, dim: int | None = None):
        strides = self._layout.strides if self._layout is not None else contiguous_strides(
            self.shape)
        return strides if dim is None else strides[_wrap_dim(dim, self.ndim)]

    def data_ptr(self) -> int:
        """The address of this tensor's first element: its storage's address plus
        ``storage_offset() * element_size()`` (views of one storage agree).

        >>> import jaxgrad
        >>> x = jaxgrad.zeros(4)
        >>> x[1:].data_ptr() - x.data_ptr(), x.detach().data_ptr() == x.data_ptr()
        (4, True)
        """
        return self._cell.address() + self.storage_offset() * self.element_size()

    def storage_offset(self) -> int:
        return self._layout.offset if self._layout is not None else 0

    def storage(self) -> TypedStorage:
        """This tensor's storage as elements of its dtype (torch's deprecated TypedStorage:
        warns once); a view's storage is its base's whole storage.

        >>> import warnings
        >>> import jaxgrad
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     s = jaxgrad.tensor([1.0, 2.0, 3.0])[1:].storage()
        >>> len(s), s.data_ptr() == jaxgrad.tensor([0.0]).data_ptr()
        (3, False)
        """
        if not typed_storage_warning.warned:
            typed_storage_warning.warned = True
            warnings.warn(TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
        return TypedStorage(physical(self._cell))

    def untyped_storage(self) -> UntypedStorage:
        """This tensor's storage as bytes (torch's UntypedStorage).

        >>> import jaxgrad
        >>> x = jaxgrad.zeros(3, dtype=jaxgrad.float64)
        >>> u = x[1:].untyped_storage()
        >>> u.nbytes(), u.data_ptr() == x.data_ptr()
        (24, True)
        """
        return UntypedStorage(physical(self._cell))

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if self._layout is None:
            return True
        return _is_contiguous(self._layout.shape, self._layout.strides)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_conj(self) -> bool:
        """Whether this tensor is a conjugate view (torch's conjugate bit: ``x.conj()`` of a
        complex ``x`` shares its memory and conjugates on reading).

        >>> import jaxgrad
        >>> z = jaxgrad.tensor([1 + 2j])
        >>> z.conj().is_conj(), z.is_conj(), z.conj().resolve_conj().is_conj()
        (True, False, False)
        """
        return lens_of(self._cell) == "conj"

    def is_neg(self) -> bool:
        """Whether this tensor is a negative view (torch's negative bit: the ``imag`` of a
        conjugate view).

        >>> import jaxgrad
        >>> jaxgrad.tensor([1 + 2j]).conj().imag.is_neg()
        True
        """
        return lens_of(self._cell) == "neg"

    def is_inference(self) -> bool:
        return self._inference

    def _is_view(self) -> bool:
        return self._base is not None

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def _geometry(self) -> Layout:
        if self._layout is not None:
            return self._layout
        shape = self._cell.array.shape
        return Layout(shape, contiguous_strides(shape), 0)

    # -- autograd attributes --------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._requires_grad:
            return True
        base = self._base  # torch: a view requires grad when its base does
        return base is not None and base._requires_grad

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not self.is_leaf and value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place on a leaf; returns self."""
        if isinstance(self._cell.array, jax.core.Tracer) and in_functorch_transform():
            raise unsupported_inside_transform("requires_grad_")
        if not self.is_leaf:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._inference and not is_inference_mode_enabled():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        self._rg_from_base = False
        structure_changed()
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad_fn(self):
        fn = self._grad_node
        if self._base is not None and self._view_version != self._vc.value:
            fn = self._regenerate_view_grad_fn()
        return fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc.value

    @property
    def grad(self) -> Tensor | None:
        # torch tests the grad_fn field itself: reading .grad never regenerates a view's grad_fn
        if self._grad is None and self._grad_node is not None and not self._retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            grad_dtype = self._leaf_grad_dtype()
            if grad_dtype is not None and value.dtype is not grad_dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{_dtypes.c_type_name(value.dtype)}' to a tensor with grad_dtype "
                    f"'{_dtypes.scalar_type_name(grad_dtype)}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                    "gradient may break downstream systems that assume they match.")
        self._grad = value
        structure_changed()

    @grad.deleter
    def grad(self) -> None:
        self._grad = None
        structure_changed()

    @property
    def grad_dtype(self) -> _dtypes.dtype | None:
        """The dtype a gradient of this leaf must have (by default its own dtype; None: any).

        >>> import jaxgrad
        >>> x = jaxgrad.ones(2, requires_grad=True)
        >>> x.grad_dtype = jaxgrad.float16; x.grad_dtype
        jaxgrad.float16
        """
        if self._grad_node is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self._leaf_grad_dtype()

    def _leaf_grad_dtype(self) -> _dtypes.dtype | None:
        return self.dtype if self._grad_dtype is _OWN_DTYPE else self._grad_dtype

    @grad_dtype.setter
    def grad_dtype(self, value: _dtypes.dtype | None) -> None:
        if self._grad_node is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dtypes.dtype):
            raise RuntimeError("grad_dtype must be a jaxgrad.dtype or None, but got "
                               f"{type(value).__name__}")
        grad = self._grad
        if value is not None and grad is not None and grad.dtype is not value:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{_dtypes.scalar_type_name(value)}' because there is "
                f"already a gradient with dtype '{_dtypes.c_type_name(grad.dtype)}'. Please clear "
                "the gradient (.grad = None) before changing grad_dtype, or ensure the new "
                "grad_dtype matches the existing gradient's dtype.")
        self._grad_dtype = value

    @property
    def volatile(self) -> bool:
        """Always False: torch removed volatile (use ``no_grad``) and warns when it is read."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def _grad_accumulator(self) -> AccumulateGrad | None:
        acc = self._grad_acc() if self._grad_acc is not None else None
        if acc is None and self._requires_grad and self._grad_node is None and \
                not self._rg_from_base:  # torch: such a view has no accumulator
            with _ACCUMULATOR_LOCK:  # one accumulator (one lock) per leaf across threads
                acc = self._grad_acc() if self._grad_acc is not None else None
                if acc is None:
                    acc = AccumulateGrad(self)
                    self._grad_acc = weakref.ref(acc)
        return acc

    def _gradient_edge(self):
        """(node, input_nr) through which a gradient reaches this tensor, or None (also for a
        view made under no_grad that requires grad only through its base: torch's edge to no
        node, where gradients are dropped)."""
        fn = self.grad_fn
        if fn is not None:
            return (fn, self._output_nr)
        if self._requires_grad:
            acc = self._grad_accumulator
            return None if acc is None else (acc, 0)
        return None

    def _set_history(self, node, output_nr: int) -> None:
        """Make ``node`` this tensor's grad_fn (so it requires grad), rebasing hooks that follow
        the tensor."""
        old = self._grad_node
        if old is not None and self._retains_grad and old._retains:
            ref = old._retains.pop(self._output_nr, None)
            if ref is not None:
                if node._retains is None:
                    node._retains = {}
                node._retains[output_nr] = ref
        self._grad_node = node
        self._output_nr = output_nr
        self._requires_grad = True
        structure_changed()
        self._grad_hooks = None  # hooks registered before stay with the old grad_fn
        self._view_version = self._vc.value

    # -- hooks ----------------------------------------------------------------------------------
    def register_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle with ``remove()``.

        >>> import jaxgrad
        >>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 10)
        >>> (x * 1).sum().backward(); x.grad
        tensor([10., 10.])
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_hooks is None:
            fn = self.grad_fn
            self._grad_hooks = (HookDict() if fn is None
                                    else fn.tensor_hooks_for(self._output_nr))
        return add_hook(self._grad_hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """On a leaf: call ``hook(tensor)`` after its ``.grad`` has been accumulated."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = HookDict()
        return add_hook(self._post_acc_hooks, hook)

    def retain_grad(self) -> None:
        """Populate ``.grad`` for this non-leaf tensor during backward (no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if isinstance(self._cell.array, jax.core.Tracer) and in_functorch_transform():
            raise unsupported_inside_transform("retain_grad")
        fn = self.grad_fn
        if fn is None or self._retains_grad:
            return
        if fn._retains is None:
            fn._retains = {}
        fn._retains[self._output_nr] = weakref.ref(self)
        self._retains_grad = True
        structure_changed()

    def detach(self) -> Tensor:
        """A new tensor sharing storage and version counter, with no history."""
        if dispatches_in_python(self):
            return SUBCLASS_ROUTE[0]("detach", lambda t: t._detached(share_version=True),
                                     (self,), {})
        return self._detached(share_version=True)

    def _detached(self, share_version: bool) -> Tensor:
        """``detach()``/``.data``: an alias; for a tensor JAX is differentiating (its array a
        tracer inside ``jaxgrad.func`` or the user's ``jax.grad``, or in the trace JAX
        differentiates for a compiled function's results with history; not the forward trace of
        ``jaxgrad.compile``, whose ``.data`` writes must reach the parameter) a constant to
        JAX's autodiff, as torch.func's levels detach (``stop_gradient``), in a storage of its
        own (inside a compiled step, one whose writes reach this tensor: ``_WritesThrough``)."""
        if isinstance(self._cell.array, jax.core.Tracer) and (
                _compile_trace.current() is None or stack.kinds):
            value = jax.lax.stop_gradient(self._value)
            cell = None if _compile_trace.current() is None else _WritesThrough(value, self)
            t = Tensor._make(value, cell=cell, vc=self._vc if share_version else None)
            t._inference = self._inference
            return t
        return self._alias(share_version)

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place (not allowed on views; inside
        ``inference_mode`` autograd is bypassed and this does nothing, as in torch)."""
        if _grad_state.inference:
            return self
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_node = None
        self._output_nr = 0
        self._requires_grad = False
        self.__dict__[FORWARD_GRAD_DROPPED] = True  # forward AD forgets its tangent on sight
        structure_changed()
        return self

    # -- conversion -----------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a numpy array sharing the tensor's memory (on CPU), as torch's does:
        writes through either show in the other. Refused for a tensor requiring grad while
        grad mode is on (unless ``force``).

        >>> import jaxgrad
        >>> t = jaxgrad.zeros(3)
        >>> a = t.numpy(); a[0] = 1.0
        >>> t
        tensor([1., 0., 0.])
        """
        if self._requires_grad and _grad_state.grad_mode and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        lens = lens_of(self._cell)
        if lens in ("conj", "neg") and not force:
            bit, resolve = ("conjugate", "conj") if lens == "conj" else ("negative", "neg")
            raise RuntimeError(f"Can't call numpy() on Tensor that has {bit} bit set. Use "
                               f"tensor.resolve_{resolve}().numpy() instead.")
        shared = self._shared_with_host() if lens is None else None
        if shared is not None:
            return shared
        return np.array(host_value(self._value, what="numpy()"))  # (a copy of its own)

    def _shared_with_host(self) -> np.ndarray | None:
        """The numpy array over this tensor's memory (see ``storage.share_with_host``); None
        where the memory is not this process's CPU memory."""
        cell = self._cell
        if not isinstance(cell, Storage):
            return None
        host = share_with_host(cell)
        layout = self._layout
        if host is None or layout is None:
            return host
        item = host.itemsize
        return np.lib.stride_tricks.as_strided(
            host.reshape(-1)[layout.offset:], layout.shape,
            tuple(stride * item for stride in layout.strides))

    def __array__(self, dtype=None):  # no copy keyword: numpy then warns, as with torch's
        """numpy's view of the data; like ``numpy()``, refused for a tensor requiring grad."""
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def jax(self) -> jax.Array:
        """The tensor's ``jax.Array`` itself (no copy; a view's array is materialised), with its
        device and sharding; a tracer inside a JAX transformation. No history goes with it.

        >>> import jax.numpy as jnp
        >>> import jaxgrad
        >>> a = jnp.arange(3, dtype=jnp.float32)
        >>> t = jaxgrad.from_jax(a)
        >>> t.jax() is a, jnp.sin(t.jax()).dtype
        (True, dtype('float32'))
        """
        return self._value

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """Export through DLPack (``np.from_dlpack(t)``, ``torch.from_dlpack(t)``,
        ``jax.dlpack.from_dlpack(t)``); refused for a tensor requiring grad, as torch does.

        >>> import numpy as np
        >>> import jaxgrad
        >>> np.from_dlpack(jaxgrad.tensor([1.0, 2.0]))
        array([1., 2.], dtype=float32)
        """
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        kwargs = {"stream": stream, "max_version": max_version, "dl_device": dl_device,
                  "copy": copy}
        return self._value.__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def __dlpack_device__(self) -> tuple:
        """The DLPack (device type, device id) of the tensor's array."""
        return self._value.__dlpack_device__()

    def _host(self, *batched_error: str, what: str = "Reading it") -> np.ndarray:
        """The values on the host (``what``: the read, for errors); a ``__torch_dispatch__``
        subclass gives them through its dispatch (torch's ``_local_scalar_dense``)."""
        if dispatches_in_python(self):
            return SUBCLASS_ROUTE[0](
                "_local_scalar_dense", lambda t: host_value(t._value, *batched_error, what=what),
                (self,), {})
        return host_value(self._value, *batched_error, what=what)

    def item(self) -> float | int | bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._host(VMAP_ITEM, what="item()").reshape(()).item()

    def tolist(self) -> Any:
        if dispatches_in_python(self):
            raise RuntimeError(".tolist() is not supported for tensor subclasses, got "
                               f"{type(self).__name__}")
        return self._host(what="tolist()").tolist()

    def __float__(self) -> float:
        if self._requires_grad:
            warn_once(SCALAR_WARNING, UserWarning, stacklevel=2)
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def _scalar(self) -> float | int | bool:
        """The single element, for float()/int()/complex() (whose error differs from item's)."""
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._host(VMAP_CONTROL_FLOW, what="bool()").reshape(()).item())

    # torch's raw fields: ``_grad_fn`` without a view's regeneration, ``_backward_hooks`` the
    # tensor's hook dict (or None); neither may be deleted
    _grad_fn = _undeletable("_grad_node",
                            "Deletion of _grad_fn not allowed. Detach tensor instead!")
    _backward_hooks = _undeletable("_grad_hooks", "Deletion of _backwards_hooks not allowed!")

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, *, tensor_contents: str | None = None) -> str:
        if tensor_contents is None:
            return tensor_repr(self)
        # a subclass printing what it holds (torch's ``tensor_contents``)
        fn = self.grad_fn
        dtype = "" if self.dtype is _dtypes.get_default_dtype() else f", dtype={self.dtype}"
        suffix = dtype + (f", grad_fn=<{type(fn).__name__}>" if fn is not None
                          else ", requires_grad=True" if self.requires_grad else "")
        return f"{type(self).__name__}({tensor_contents}{suffix})"

    def __format__(self, spec: str) -> str:
        if self.dim() == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reduce_ex__(self, protocol):
        if not held_here(self._value):
            raise spans_processes_error("Pickling it")
        return (_rebuild, (np.asarray(self._value), self._requires_grad, dict(self.__dict__)))

    def __copy__(self):
        """``copy.copy``, as torch's (its ``__reduce_ex__`` without pickling): a new leaf over
        this tensor's storage (a write through either shows in both), geometry and dtype, filled
        by ``set_`` (its own version counter, at 1), with ``requires_grad`` and the Python
        attributes copied; no ``.grad``, no ``grad_fn``, not a view."""
        if not held_here(self._value):
            raise spans_processes_error("Pickling it")
        new = self._alias(share_version=False)
        new._vc.value = 1  # torch fills the copy with set_(), an in-place op
        new._requires_grad = self._requires_grad
        new = as_subclass(new, type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        new = as_subclass(Tensor._make(self._value, self._requires_grad), type(self))
        new._vc.value = 1  # torch fills the copy with set_(), an in-place op
        new.__dict__.update(self.__dict__)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new


_pytree.register(Tensor)


PYTHON_DISPATCH = [0]  # Tensor subclasses defining __torch_dispatch__ + dispatch modes pushed
SUBCLASS_ROUTE: list = [None]  # the engine's dispatch_function, for methods defined here
_MODES = threading.local()  # each thread's pushed TorchDispatchModes (torch's are per thread)


def dispatch_modes() -> list:
    """This thread's pushed ``TorchDispatchMode``s, innermost last."""
    modes = getattr(_MODES, "stack", None)
    if modes is None:
        modes = _MODES.stack = []
    return modes


def push_dispatch_mode(mode: Any) -> None:
    """Push a ``TorchDispatchMode``: every op this thread runs goes through it until popped."""
    dispatch_modes().append(mode)
    PYTHON_DISPATCH[0] += 1


def pop_dispatch_mode() -> Any:
    """Pop this thread's innermost ``TorchDispatchMode``."""
    mode = dispatch_modes().pop()
    PYTHON_DISPATCH[0] -= 1
    return mode


def dispatches_in_python(t: Any) -> bool:
    """Whether ``t`` is a tensor whose class defines ``__torch_dispatch__`` (one integer check
    while no such class exists)."""
    return bool(PYTHON_DISPATCH[0]) and isinstance(t, Tensor) and type(t)._python_dispatch


def refuse_python_dispatch(what: str, tensors: Any) -> None:
    """Raise NotImplementedError when one of ``tensors`` is a ``__torch_dispatch__`` subclass:
    ``what`` runs on JAX arrays, which such a tensor does not hold (torch runs it on them)."""
    if PYTHON_DISPATCH[0]:
        for t in tensors:
            if dispatches_in_python(t):
                raise NotImplementedError(
                    f"{what} of a __torch_dispatch__ subclass ({type(t).__name__}) is not "
                    "supported by jaxgrad: it runs on JAX arrays, and such a tensor holds none")


class NoStorage:
    """A wrapper subclass's stand-in for an array: its size and dtype, no values."""

    __slots__ = ("_device", "dtype", "shape")

    def __init__(self, shape: tuple, dtype: Any, device: Any) -> None:
        self.shape, self.dtype, self._device = shape, dtype, device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def devices(self) -> set:
        return set(local_devices("cpu")[:1])


class _Nurseries(threading.local):
    def __init__(self) -> None:
        self.open: list[list] = []  # per running jaxgrad.func call: its new tensors (weakly)


_nurseries = _Nurseries()


@contextlib.contextmanager
def nursery() -> Iterator[list]:
    """Collect (weak references to) the tensors made while a transform call runs in this
    thread; those still alive afterwards pass on to the enclosing call's list too."""
    made: list = []
    _nurseries.open.append(made)
    try:
        yield made
    finally:
        _nurseries.open.pop()
        if _nurseries.open:
            _nurseries.open[-1].extend(made)


def _rebuild(array: np.ndarray, requires_grad: bool, state: dict | None = None) -> Tensor:
    """Unpickle: torch rebuilds through ``set_()`` (version 1) and restores Python attributes."""
    t = Tensor._make(host_to_device(array, array.dtype), requires_grad)
    t._vc.value = 1
    t.__dict__.update(state or {})
    return t


def as_subclass(t: Tensor, cls: type) -> Tensor:
    """``t`` itself, or an instance of the Tensor subclass ``cls`` holding ``t``'s state."""
    if cls is Tensor:
        return t
    new = object.__new__(cls)
    for name in Tensor.__slots__:
        if name not in ("__dict__", "__weakref__"):
            object.__setattr__(new, name, getattr(t, name))
    return new


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a jaxgrad Tensor.

    >>> import jaxgrad
    >>> jaxgrad.is_tensor(jaxgrad.ones(1)), jaxgrad.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)
