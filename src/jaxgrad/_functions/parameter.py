"""``jaxgrad.nn.Parameter`` and ``jaxgrad.nn.Buffer``: tensors that a Module registers as one of
its parameters or buffers when they are assigned as attributes."""

from __future__ import annotations

from typing import Any

from .._core.tensor import Tensor, as_subclass
from .._core.tensor_repr import tensor_repr
from .._core.typename import public_path
from .creation import empty


@public_path("jaxgrad.nn.parameter")  # as torch prints it, and as pickles name it
class Parameter(Tensor):
    """A Tensor that is a module parameter: a leaf sharing ``data``'s storage and version counter.

    Operations on a Parameter return plain Tensors, as in torch.

    >>> import jaxgrad
    >>> p = jaxgrad.nn.Parameter(jaxgrad.tensor([1.0, 2.0]))
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    >>> type(p * 2).__name__
    'Tensor'
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = empty(0)
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        alias = data._alias(share_version=True)  # a leaf over data's storage, as torch's detach
        alias._requires_grad = requires_grad
        return as_subclass(alias, cls)

    def __copy__(self) -> Parameter:
        """``copy.copy``, as torch's ``__reduce_ex__``: a Parameter over ``self.data`` (the same
        storage, its own version counter, at 0), with the Python attributes."""
        copied = super().__copy__()
        copied._vc.value = 0
        return copied

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return tensor_repr(self, prefix="Parameter containing:\ntensor(")

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.detach(), self.requires_grad, dict(self.__dict__)))


@public_path("jaxgrad.nn.parameter")
def _rebuild_parameter(data: Tensor, requires_grad: bool, state: dict) -> Parameter:
    """Unpickle a Parameter as torch does: over the rebuilt data, with its Python attributes."""
    param = Parameter(data, requires_grad)
    param.__dict__.update(state)
    return param


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for any Tensor that ``Buffer(...)`` marked, as in torch."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer",
                                                                      False):
            return True
        return super().__instancecheck__(instance)


@public_path("jaxgrad.nn.parameter")
class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer: assigned as a Module attribute, it is registered with
    ``register_buffer(name, t, persistent)``.

    As in torch, the result is a plain Tensor (``data.detach()``, keeping ``requires_grad``)
    carrying ``persistent`` and ``_is_buffer`` attributes; ``isinstance(t, Buffer)`` is true.

    >>> import jaxgrad
    >>> m = jaxgrad.nn.Module()
    >>> m.steps = jaxgrad.nn.Buffer(jaxgrad.zeros(1))
    >>> m.cache = jaxgrad.nn.Buffer(jaxgrad.ones(1), persistent=False)
    >>> list(m.state_dict()), [name for name, _ in m.named_buffers()]
    (['steps'], ['steps', 'cache'])
    >>> type(m.steps).__name__, isinstance(m.steps, jaxgrad.nn.Buffer)
    ('Tensor', True)
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t



class _UninitializedTensorMixin:
    """What the uninitialized parameters and buffers of lazy modules share: no shape until
    ``materialize`` gives them data and turns them into their ``cls_to_become``."""

    __slots__ = ()
    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this tensor an (uninitialized) ``shape`` and make it a ``cls_to_become``.

        >>> import jaxgrad
        >>> p = jaxgrad.nn.UninitializedParameter()
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', jaxgrad.Size([2, 3]))
        """
        data = Tensor.data.fget(self)  # type: ignore[attr-defined]
        device = data.device if device is None else device
        dtype = data.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        """Refused: an uninitialized tensor has no shape yet."""
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self) -> Any:
        """Refused: an uninitialized tensor has no storage to share."""
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (type(self), (self.requires_grad,))  # type: ignore[attr-defined]


@public_path("jaxgrad.nn.parameter")
class UninitializedParameter(_UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module whose shape is not known yet; ``materialize`` (called by
    the module's first forward) makes it a :class:`Parameter`.

    >>> import jaxgrad
    >>> jaxgrad.nn.UninitializedParameter()
    <UninitializedParameter>
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> UninitializedParameter:
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __deepcopy__(self, memo: dict) -> UninitializedParameter:
        if id(self) in memo:
            return memo[id(self)]
        data = Tensor.data.fget(self)  # type: ignore[attr-defined]
        result = type(self)(self.requires_grad, data.device, data.dtype)
        memo[id(self)] = result
        return result


@public_path("jaxgrad.nn.parameter")
class UninitializedBuffer(_UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module whose shape is not known yet; ``materialize`` (called by the
    module's first forward) makes it a plain Tensor.

    >>> import jaxgrad
    >>> jaxgrad.nn.UninitializedBuffer()
    <UninitializedBuffer>
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> UninitializedBuffer:
        t = as_subclass(empty(0, device=device, dtype=dtype), cls)
        t.requires_grad_(requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an :class:`UninitializedParameter` or :class:`UninitializedBuffer`.

    >>> import jaxgrad
    >>> from jaxgrad.nn.parameter import is_lazy
    >>> is_lazy(jaxgrad.nn.UninitializedParameter()), is_lazy(jaxgrad.ones(1))
    (True, False)
    """
    return isinstance(param, _UninitializedTensorMixin)
