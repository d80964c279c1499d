"""``LinearCrossEntropyOptions``: how ``linear_cross_entropy``'s chunked path splits the batch
(torch 2.13's frozen dataclass, its fields, checks and ``"auto"`` resolution)."""

from __future__ import annotations

import dataclasses
from typing import Literal, NamedTuple

from ... import cuda as _cuda
from ..._core import dtypes as _dtypes
from ..._core.dtypes import dtype as _dtype

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# torch's picks for the ``"auto"`` sentinels, keyed by (device type, input dtype)
_AUTO_DEFAULTS: dict[tuple[str, _dtype], _AutoDefault] = {
    ("cuda", _dtypes.bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", _dtypes.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", _dtypes.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", _dtypes.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_SUPPORTED_ACC_DTYPES = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Configuration of :func:`jaxgrad.nn.functional.linear_cross_entropy`'s chunked path.

    ``allow_retain_graph`` lets the scalar reductions backward twice; ``batch_chunk_size`` (or
    the ``chunking_method`` heuristic, ``"auto"``, ``"aspect_ratio"``, ``"aspect_ratio:N"``)
    sizes the batch chunks; ``acc_policy`` and ``acc_dtype`` pick the accumulation precision.

    >>> import jaxgrad
    >>> jaxgrad.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    LinearCrossEntropyOptions(allow_retain_graph=False, batch_chunk_size=2, \
chunking_method='auto', acc_policy='auto', acc_dtype=None)
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: _dtype | None = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (
            self.batch_chunk_size is None
            or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)
        ):
            raise ValueError(
                f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}"
            )
        if self.acc_dtype is not None and self.acc_dtype not in _SUPPORTED_ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, jaxgrad.float16, jaxgrad.bfloat16, "
                f"jaxgrad.float32, jaxgrad.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically."
            )

    @staticmethod
    def _ceil_div(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype: _dtype, device) -> _dtype | None:
        """float32 for half-precision input where torch has a mixed-precision mm (CPU, CUDA
        SM 7.0+ for float16, 8.0+ for bfloat16); None otherwise."""
        if device is None or dtype not in (_dtypes.float16, _dtypes.bfloat16):
            return None
        if device.type == "cuda":
            if not _cuda.is_available():
                return None
            major, _ = _cuda.get_device_capability(device)
            if major < (8 if dtype == _dtypes.bfloat16 else 7):
                return None
            return _dtypes.float32
        return _dtypes.float32 if device.type == "cpu" else None

    def _compute_batch_chunk_size(
        self, num_batches: int, in_features: int, num_classes: int, method: str | None = None
    ) -> int:
        """The chunk size of the ``aspect_ratio[:N]`` heuristic."""
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            factor = int(method.split(":", 1)[1]) if ":" in method else 1
            target = self._ceil_div(num_batches, self._ceil_div(num_classes, in_features))
            chunk_size = 1 << (target - 1).bit_length()  # the next power of 2 >= target
            return min(chunk_size // factor, num_batches)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _adjust(
        self, num_batches: int, in_features: int, num_classes: int, dtype: _dtype, device=None
    ) -> LinearCrossEntropyOptions:
        """These options with the ``"auto"`` sentinels and ``None`` defaults resolved for one
        call (``device=None`` takes the fallback picks)."""
        acc_policy, chunking_method = self.acc_policy, self.chunking_method
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None
        if acc_policy == "auto" or chunking_method == "auto":
            ap, cm = (
                _AUTO_FALLBACK
                if device is None
                else _AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)
            )
            acc_policy = ap if acc_policy == "auto" else acc_policy
            chunking_method = cm if chunking_method == "auto" else chunking_method
        if self.batch_chunk_size is None:
            batch_chunk_size = num_batches
        else:
            batch_chunk_size = min(self.batch_chunk_size, num_batches)
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(
                num_batches, in_features, num_classes, chunking_method
            )
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                    f"('{chunking_method}') give different chunk sizes "
                    f"({self.batch_chunk_size} vs {batch_chunk_size}); pass only one."
                )
        if self.acc_dtype is None:
            auto_acc = (
                self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto" else None
            )
            acc_dtype = auto_acc if auto_acc is not None else dtype
        else:
            acc_dtype = self.acc_dtype
        return dataclasses.replace(
            self,
            acc_policy=acc_policy,
            chunking_method=chunking_method,
            batch_chunk_size=max(1, batch_chunk_size),
            acc_dtype=acc_dtype,
        )
