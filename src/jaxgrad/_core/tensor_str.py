"""Torch-compatible text formatting of tensor data.

This module reproduces, byte for byte, the text that ``repr(torch_tensor)`` produces for dense
real and complex tensors (see ``torch/_tensor_str.py``), working only on a numpy array holding
the data.
It depends on numpy alone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = [
    "PRINT_OPTS",
    "PrintOptions",
    "format_tensor",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
]


@dataclasses.dataclass
class PrintOptions:
    """Options that control tensor printing (same fields and defaults as torch)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors, with the semantics of ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point for floating point output (default 4).
        threshold: total number of elements above which the output is summarized (default 1000).
        edgeitems: items shown at the beginning and end of each summarized dimension (default 3).
        linewidth: characters per line used to insert line breaks (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; applied first, then the options above.
        sci_mode: force (True) or forbid (False) scientific notation; None chooses automatically.
            Like torch, this option is always reset, to None when it is not given.

    Example::

        >>> import numpy as np
        >>> set_printoptions(precision=2)
        >>> format_tensor(np.array([1.12345], dtype=np.float32),
        ...               dtype_name="jaxgrad.float32", is_default_dtype=True)
        'tensor([1.12])'
        >>> set_printoptions(threshold=5)
        >>> format_tensor(np.arange(10), dtype_name="jaxgrad.int64", is_default_dtype=True)
        'tensor([0, 1, 2,  ..., 7, 8, 9])'
        >>> set_printoptions(profile="default")
        >>> format_tensor(np.array([1.12345], dtype=np.float32),
        ...               dtype_name="jaxgrad.float32", is_default_dtype=True)
        'tensor([1.1235])'
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict accepted by :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options (same arguments as :func:`set_printoptions`)."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ----------------------------------------------------------------------------------------------
# Element formatting
# ----------------------------------------------------------------------------------------------


def _is_float(values: np.ndarray) -> bool:
    return values.dtype.kind in "fc"


def _py_values(values: np.ndarray) -> list[Any]:
    """Flat list of python scalars (floats as exact doubles, complex, ints, bools)."""
    flat = values.reshape(-1)
    if flat.dtype.kind == "c":
        return flat.astype(np.complex128).tolist()
    if _is_float(flat):
        return flat.astype(np.float64).tolist()
    return flat.tolist()


class _Formatter:
    """Chooses a common style/width for all elements, the way torch's ``_Formatter`` does."""

    def __init__(self, sample: np.ndarray) -> None:
        self.floating = _is_float(sample)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = PRINT_OPTS.precision
        if not self.floating:
            for value in _py_values(sample):
                self.max_width = max(self.max_width, len(str(value)))
            return
        flat = sample.reshape(-1).astype(np.float64)
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return
        magnitudes = np.abs(nonzero_finite)
        low, high = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(np.ceil(nonzero_finite) == nonzero_finite))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        for value in nonzero_finite.tolist():
            if self.sci_mode:
                width = len(f"{value:.{precision}e}")
            elif self.int_mode:
                width = len(f"{value:.0f}") + 1
            else:
                width = len(f"{value:.{precision}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        """Format one python scalar, right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.max_width)


class _ComplexFormatter:
    """torch formats the real and imaginary parts with a formatter each: ``1.5000-2.j``."""

    def __init__(self, sample: np.ndarray) -> None:
        self.real, self.imag = _Formatter(sample.real), _Formatter(sample.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # + the "j"

    def format(self, value: complex) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sign + imag


# ----------------------------------------------------------------------------------------------
# Summarization and layout
# ----------------------------------------------------------------------------------------------


def _summarized_sample(values: np.ndarray) -> np.ndarray:
    """The elements torch's ``get_summarized_data`` keeps, flattened (order is irrelevant)."""
    edge = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values.reshape(-1)
    if values.ndim == 1:
        if values.shape[0] > 2 * edge:
            return np.concatenate((values[:edge], values[-edge:]))
        return values
    if not edge:
        return values.reshape(-1)[:0]
    if values.shape[0] > 2 * edge:
        rows = [*range(edge), *range(values.shape[0] - edge, values.shape[0])]
    else:
        rows = list(range(values.shape[0]))
    parts = [_summarized_sample(values[i]).reshape(-1) for i in rows]
    return np.concatenate(parts) if parts else values.reshape(-1)[:0]


def _vector_str(values: np.ndarray, indent: int, summarize: bool,
                fmt: _Formatter | _ComplexFormatter) -> str:
    edge = PRINT_OPTS.edgeitems
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    if summarize and not edge:
        items = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        head = [fmt.format(v) for v in _py_values(values[:edge])]
        tail = [fmt.format(v) for v in _py_values(values[-edge:])]
        items = [*head, " ...", *tail]
    else:
        items = [fmt.format(v) for v in _py_values(values)]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values: np.ndarray, indent: int, summarize: bool,
                fmt: _Formatter | _ComplexFormatter) -> str:
    if values.ndim == 0:
        return fmt.format(_py_values(values)[0])
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    size = values.shape[0]
    if summarize and size > 2 * edge:
        head = [_nested_str(values[i], indent + 1, summarize, fmt) for i in range(edge)]
        tail = [
            _nested_str(values[i], indent + 1, summarize, fmt) for i in range(size - edge, size)
        ]
        slices = [*head, "...", *tail]
    else:
        slices = [_nested_str(values[i], indent + 1, summarize, fmt) for i in range(size)]
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(slices) + "]"


def _body_str(values: np.ndarray, indent: int) -> str:
    """Text of the data between ``tensor(`` and the suffixes (torch's ``_tensor_str``)."""
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTS.threshold
    sample = _summarized_sample(values) if summarize else values
    fmt = _ComplexFormatter(sample) if values.dtype.kind == "c" else _Formatter(sample)
    return _nested_str(values, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    """Append ``, suffix`` items, wrapping onto a new indented line past the line width."""
    pieces = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line_len += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def format_tensor(
    values: np.ndarray,
    *,
    dtype_name: str,
    is_default_dtype: bool,
    suffixes: Sequence[str] = (),
    prefix: str = "tensor(",
    device_suffix: str | None = None,
) -> str:
    """Return torch's repr text for a tensor whose data is ``values``.

    Args:
        values: the tensor's data (any shape; float16/32/64, complex64/128, signed/unsigned
            ints or bool; bfloat16 data already converted to float32).
        dtype_name: text shown after ``dtype=``, e.g. ``"jaxgrad.float64"``.
        is_default_dtype: True when torch would not show the dtype of a non-empty tensor
            (the default float dtype, its complex counterpart, int64 or bool). Empty tensors
            show every dtype but the default float one, as torch does.
        suffixes: extra formatted items (``"grad_fn=<MulBackward0>"``, ``"requires_grad=True"``)
            placed after the dtype.
        prefix: text before the data; indentation is taken from its last line, so
            ``"Parameter containing:\\ntensor("`` works like torch's Parameter repr.
        device_suffix: item such as ``"device='cuda:0'"``, placed first like torch does.

    Example::

        >>> import numpy as np
        >>> format_tensor(np.array([1.5, 2.0]), dtype_name="jaxgrad.float64",
        ...               is_default_dtype=False, suffixes=["requires_grad=True"])
        'tensor([1.5000, 2.0000], dtype=jaxgrad.float64, requires_grad=True)'
    """
    values = np.asarray(values)
    head, newline, prefix = prefix.rpartition("\n")
    indent = len(prefix)
    items: list[str] = [] if device_suffix is None else [device_suffix]
    if values.size == 0:
        if values.ndim != 1:
            items.append(f"size={tuple(values.shape)}")
        if not (is_default_dtype and values.dtype.kind == "f"):
            items.append(f"dtype={dtype_name}")
    else:
        if not PRINT_OPTS.edgeitems:
            items.append(f"size={tuple(values.shape)}")
        if not is_default_dtype:
            items.append(f"dtype={dtype_name}")
    items.extend(suffixes)
    text = _add_suffixes(prefix + _body_str(values, indent), items, indent)
    return head + newline + text
