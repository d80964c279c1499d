"""``jaxgrad.nn.init``: torch.nn.init's initialisers, in place under ``no_grad``.

Random fills come from jaxgrad's seeded generator (``jaxgrad.manual_seed``): the values differ
from torch's, the distributions (bounds, mean, std) are the same.

>>> import jaxgrad
>>> import jaxgrad.nn.init as init
>>> w = init.constant_(jaxgrad.empty(2, 3), 0.5)
>>> w.sum()
tensor(3.)
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._functions import creation, indexing, pointwise
from .._functions import random as _random
from .._functions.linalg_decomp import linalg_qr
from .._functions.random import Generator

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch's table).

    >>> import jaxgrad.nn.init as init
    >>> init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): input/output feature maps times the receptive field size.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init._calculate_fan_in_and_fan_out(jaxgrad.empty(4, 3, 5))
    (15, 20)
    """
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor: Tensor) -> bool:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with samples from U(a, b).

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> bool((init.uniform_(jaxgrad.empty(100), -1, 1).abs() <= 1).all())
    True
    """
    with no_grad():
        return _random.uniform_(tensor, a, b, generator)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with samples from N(mean, std**2).

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.normal_(jaxgrad.empty(2, 2), std=0.0)
    tensor([[0., 0.],
            [0., 0.]])
    """
    with no_grad():
        return _random.normal_(tensor, mean, std, generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.constant_(jaxgrad.empty(2), 3.0)
    tensor([3., 3.])
    """
    with no_grad():
        return pointwise.fill_(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.ones_(jaxgrad.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.zeros_(jaxgrad.empty(2))
    tensor([0., 0.])
    """
    with no_grad():
        return pointwise.zero_(tensor)


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> bool((init.xavier_uniform_(jaxgrad.empty(3, 3)).abs() <= 1).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.xavier_normal_(jaxgrad.empty(3, 3), gain=0.0).abs().sum()
    tensor(0.)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> w = init.kaiming_uniform_(jaxgrad.empty(4, 3), nonlinearity="relu")
    >>> bool((w.abs() <= (6 / 3) ** 0.5).all())
    True
    """
    if _is_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.kaiming_normal_(jaxgrad.empty(2, 3)).shape
    jaxgrad.Size([2, 3])
    """
    if _is_empty(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fill with samples from N(mean, std**2) truncated to ``[a, b]`` (torch's algorithm: redraw
    rejected normals, or rejection-sample uniforms on ``[a, b]`` when little mass lies inside).

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> w = init.trunc_normal_(jaxgrad.empty(1000), a=-0.5, b=0.5)
    >>> bool(((w >= -0.5) & (w <= 0.5)).all())
    True
    """

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            _redraw_outside(tensor, mean, std, a, b, generator)
        else:
            _rejection_sample(tensor, mean, std, a, b, generator)
    return tensor


def _redraw_outside(
    tensor: Tensor, mean: float, std: float, a: float, b: float, generator: Generator | None
) -> None:
    # bounds cast to the tensor's dtype, so the mask agrees with representable values
    lo = tensor.new_tensor(a, device="cpu").item()
    hi = tensor.new_tensor(b, device="cpu").item()
    result = _random.normal_(tensor, mean, std, generator)
    while True:
        mask = (result < lo) | (result > hi)
        if not mask.any():
            break
        redrawn = _random.normal_(creation.empty_like(result), mean, std, generator)
        result = indexing.where(mask, redrawn, result)
    if result is not tensor:
        tensor.copy_(result)


def _log_acceptance(candidates: Tensor, mean: float, std: float, log_peak: float) -> Tensor:
    return ((candidates - mean) / std).pow(2).mul(-0.5).sub(log_peak)


def _rejection_sample(
    tensor: Tensor, mean: float, std: float, a: float, b: float, generator: Generator | None
) -> None:
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
    _random.uniform_(tensor, a, b, generator)
    pending = (
        _random.uniform_(creation.empty_like(tensor), 0.0, 1.0, generator)
        .log()
        .gt(_log_acceptance(tensor, mean, std, log_peak))
    )
    if not pending.any():
        return
    result = tensor
    while True:
        candidates = _random.uniform_(creation.empty_like(tensor), a, b, generator)
        result = indexing.where(pending, candidates, result)
        accept = (
            _random.uniform_(creation.empty_like(tensor), 0.0, 1.0, generator)
            .log()
            .gt(_log_acceptance(candidates, mean, std, log_peak))
        )
        pending = indexing.where(pending, accept, pending)
        if not pending.any():
            break
    tensor.copy_(result)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.eye_(jaxgrad.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(creation.eye(*tensor.shape, dtype=tensor.dtype))
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a {3, 4, 5}-D convolution weight with the Dirac delta: each group of channels
    passes its inputs through unchanged.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.dirac_(jaxgrad.empty(2, 2, 3))
    tensor([[[0., 1., 0.],
             [0., 0., 0.]],
    <BLANKLINE>
            [[0., 0., 0.],
             [0., 1., 0.]]])
    """
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    centre = tuple(size // 2 for size in sizes[2:])
    with no_grad():
        pointwise.zero_(tensor)
        for g in range(groups):
            for d in range(min(out_chans_per_grp, sizes[1])):
                tensor[(g * out_chans_per_grp + d, d, *centre)] = 1
    return tensor


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix times ``gain`` (trailing dimensions flattened), from
    the QR factorisation of a Gaussian matrix.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> w = init.orthogonal_(jaxgrad.empty(3, 5))
    >>> bool(jaxgrad.allclose(w @ w.T, jaxgrad.eye(3), atol=1e-5))
    True
    """
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = _random.normal_(tensor.new_empty((rows, cols)), 0, 1, generator)
    if rows < cols:
        flattened.t_()
    q, r = linalg_qr(flattened)
    # Q made uniform (Haar) by the signs of R's diagonal: arXiv math-ph/0609050
    q *= r.diag(0).sign()
    if rows < cols:
        q.t_()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """Fill a 2-D tensor with N(0, std**2) samples, then zero ``ceil(sparsity * rows)`` random
    entries of each column (which ones: the default generator, as torch's ``randperm``).

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> w = init.sparse_(jaxgrad.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(0).tolist()
    [2, 2, 2]
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        _random.normal_(tensor, 0, std, generator)
        for col_idx in range(cols):
            tensor[_random.randperm(rows)[:num_zeros], col_idx] = 0
    return tensor


def _make_deprecate(meth: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """torch's deprecated spelling without the trailing underscore: warns, then calls ``meth``."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    @functools.wraps(meth)
    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"""{old_name}(...): deprecated in favor of ``{new_name}``.

    >>> import jaxgrad.nn.init as init
    >>> init.{old_name}.__wrapped__ is init.{new_name}
    True
    """
    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)


__all__: list[Any] = [
    "calculate_gain",
    "constant",
    "constant_",
    "dirac",
    "dirac_",
    "eye",
    "eye_",
    "kaiming_normal",
    "kaiming_normal_",
    "kaiming_uniform",
    "kaiming_uniform_",
    "normal",
    "normal_",
    "ones_",
    "orthogonal",
    "orthogonal_",
    "sparse",
    "sparse_",
    "trunc_normal_",
    "uniform",
    "uniform_",
    "xavier_normal",
    "xavier_normal_",
    "xavier_uniform",
    "xavier_uniform_",
    "zeros_",
]
