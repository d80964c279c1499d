"""torch's LoggingTensor (``torch.testing._internal.logging_tensor``): a wrapper subclass whose
``__torch_dispatch__`` runs each op on the tensor it holds and logs the op's name."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from ..._core.tensor import Tensor
from ...utils._pytree import tree_map

logger = logging.getLogger("LoggingTensor")


class LoggingTensor(Tensor):
    """A tensor that logs every op run on it (``elem`` holds the values).

    >>> import jaxgrad
    >>> from jaxgrad.testing._internal.logging_tensor import LoggingTensor
    >>> (LoggingTensor(jaxgrad.ones(2)) * 2).elem
    tensor([2., 2.])
    """

    context = contextlib.nullcontext

    @staticmethod
    def __new__(cls, elem: Tensor, *args: Any, **kwargs: Any) -> LoggingTensor:
        r = Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, layout=elem.layout, device=elem.device,
            requires_grad=kwargs.get("requires_grad", False))
        r.elem = elem.detach() if r.requires_grad else elem
        return r

    def __repr__(self) -> str:
        return super().__repr__(tensor_contents=f"{self.elem}")

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        def unwrap(e: Any) -> Any:
            return e.elem if isinstance(e, cls) else e

        def wrap(e: Any) -> Any:
            return cls(e) if isinstance(e, Tensor) else e

        with cls.context():
            rs = tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))
        logger.info(f"{func.__module__}.{func.__name__}", args, kwargs, rs)
        return rs
