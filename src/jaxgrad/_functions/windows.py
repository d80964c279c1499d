"""Window functions (``hann_window``, ``hamming_window``, ``bartlett_window``,
``blackman_window``, ``kaiser_window``: new leaf tensors, as torch's factories) and
``combinations`` (composed as torch composes it: a meshgrid of the input, masked_select of each
grid, stacked).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor
from .creation import tensor, zeros
from .indexing import masked_select
from .joins import meshgrid, stack
from .opgen import declare


def _window(name: str, window_length: int, periodic: bool, dtype: Any, device: Any,
            requires_grad: bool, values: Any) -> Tensor:
    """torch's checks, then ``values(n)`` (float64 numpy, the symmetric window of ``n``) over
    ``window_length`` (+1 and the last dropped where ``periodic``) as a leaf tensor."""
    d = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if not d.is_floating_point:
        flag = "true" if requires_grad else "false (default)"
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_dtypes.c_type_name(d)}, device=cpu, layout=Strided (default), "
            f"requires_grad={flag}, pinned_memory=false, memory_format=(nullopt))")
    if window_length <= 1:
        array = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        array = values(n)[:window_length]
    return tensor(array, dtype=d, device=device, requires_grad=requires_grad)


def _cosine_sum(n: int, *coefficients: float) -> np.ndarray:
    phase = np.arange(n) * (2 * np.pi / (n - 1))
    return sum(((-1) ** k) * c * np.cos(k * phase) for k, c in enumerate(coefficients))


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (periodic: of ``N + 1`` points,
    the last dropped).

    >>> import jaxgrad
    >>> jaxgrad.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: _cosine_sum(n, 0.5, 0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window, ``alpha - beta cos(2 pi n / (N - 1))``.

    >>> import jaxgrad
    >>> jaxgrad.hamming_window(5, False, 0.5, 0.4)
    tensor([0.1000, 0.5000, 0.9000, 0.5000, 0.1000])
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: _cosine_sum(n, alpha, beta))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window, ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.

    >>> import jaxgrad
    >>> jaxgrad.blackman_window(4)[2]
    tensor(1.)
    """
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: _cosine_sum(n, 0.42, 0.5, 0.08))


def _bartlett(n: int) -> np.ndarray:
    window = np.arange(n) * (2.0 / (n - 1))
    first_half = ((n - 1) >> 1) + 1
    window[first_half:] = 2 - window[first_half:]
    return window


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window.

    >>> import jaxgrad
    >>> jaxgrad.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Kaiser window, ``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)`` with
    ``a = (N - 1) / 2``.

    >>> import jaxgrad
    >>> jaxgrad.kaiser_window(5, False, 3.0)
    tensor([0.2049, 0.7269, 1.0000, 0.7269, 0.2049])
    """
    def values(n: int) -> np.ndarray:
        alpha = (n - 1) / 2.0
        ratio = (np.arange(n) - alpha) / alpha
        return np.i0(beta * np.sqrt(np.maximum(1 - ratio * ratio, 0.0))) / np.i0(beta)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   values)


@declare('combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor',
         variants='function')
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of the 1-d ``input`` (itertools'
    ``combinations``, or ``combinations_with_replacement``), as rows.

    >>> import jaxgrad
    >>> jaxgrad.combinations(jaxgrad.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return zeros(0, dtype=input.dtype)
    n = input.shape[0]
    grids = meshgrid(*([input] * r), indexing="ij")
    mask = np.ones((n,) * r, dtype=bool)
    index = np.indices((n,) * r) if n else np.zeros((r,) + (0,) * r, dtype=int)
    for a, b in itertools.pairwise(range(r)):
        mask &= index[a] <= index[b] if with_replacement else index[a] < index[b]
    mask_t = tensor(mask)
    return stack([masked_select(g, mask_t) for g in grids], 1)
