"""``jaxgrad.utils.hooks``: torch.utils.hooks's names. ``RemovableHandle`` (what every
``register_*hook`` returns, with torch's ``extra_dict``) and ``BackwardHook`` (the machinery of
``nn.Module`` full backward hooks) are the classes jaxgrad's modules use;
``unserializable_hook`` and ``warn_if_has_hooks`` are torch's serialization-warning helpers.

>>> from collections import OrderedDict
>>> from jaxgrad.utils.hooks import RemovableHandle
>>> hooks = OrderedDict()
>>> handle = RemovableHandle(hooks)
>>> hooks[handle.id] = print
>>> handle.remove(); len(hooks)
0
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .._core.tensor import Tensor
from ..nn.modules._hooks import BackwardHook as BackwardHook
from ..nn.modules._hooks import RemovableHandle as RemovableHandle

_F = TypeVar("_F", bound=Callable[..., Any])


def unserializable_hook(f: _F) -> _F:
    """Mark ``f`` as a hook that is not meant to be serialized: :func:`warn_if_has_hooks` stays
    quiet about it (torch's ``__torch_unserializable__`` mark).

    >>> from jaxgrad.utils.hooks import unserializable_hook
    >>> hook = unserializable_hook(lambda grad: grad)
    >>> hook.__torch_unserializable__
    True
    """
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f


def warn_if_has_hooks(tensor: Tensor) -> None:
    """Warn, once per hook, that the backward hooks on ``tensor`` will not be serialized
    (hooks marked by :func:`unserializable_hook` excepted).

    >>> import warnings
    >>> import jaxgrad
    >>> from jaxgrad.utils.hooks import warn_if_has_hooks
    >>> x = jaxgrad.ones(1, requires_grad=True)
    >>> _ = x.register_hook(lambda grad: grad)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_if_has_hooks(x)
    >>> len(caught)
    1
    """
    if tensor._backward_hooks:
        for k in tensor._backward_hooks:
            hook = tensor._backward_hooks[k]
            if not hasattr(hook, "__torch_unserializable__"):
                warnings.warn(
                    f"backward hook {hook!r} on tensor will not be serialized.  If "
                    "this is expected, you can decorate the function with "
                    "@jaxgrad.utils.hooks.unserializable_hook to suppress this "
                    "warning",
                    stacklevel=2,
                )


__all__ = ["BackwardHook", "RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]
