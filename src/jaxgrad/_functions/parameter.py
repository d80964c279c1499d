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

