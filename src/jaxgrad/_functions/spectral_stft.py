"""``stft`` and ``istft``, composed op for op as torch composes them (torch's Python ``stft``
pads the centred signal with ``nn.functional.pad``; SpectralOps.cpp frames it with
``as_strided``, windows it, transforms it with ``_fft_r2c``/``_fft_c2c``; ``istft`` inverts the
frames with ``_fft_c2r``/``_fft_c2c`` and overlap-adds them with ``unfold_backward``), so their
values, graphs (grad_fn names), gradients of any order, errors and warnings are torch's.
"""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import spectral as SP
from .._ops import views as V
from . import complex_numbers, pointwise, shapes
from .arguments import warn_once_as_jaxgrad
from .creation import ones, zeros
from .opgen import declare
from .padding import constant_pad, pad

_STFT_WINDOW_WARNING = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`."
)
_STFT_REAL_WARNING = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
    "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
    "still call torch.view_as_real on the complex output to recover the old return format."
)
_ISTFT_WINDOW_WARNING = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`."
)
_ISTFT_LENGTH_WARNING = (
    "The length of signal is shorter than the length parameter. Result is being padded with "
    "zeros in the tail. Please check your center and hop_length settings."
)
_FFT_DTYPES = (_dtypes.float32, _dtypes.float64, _dtypes.complex64, _dtypes.complex128)


def _type_text(x: Tensor) -> str:
    """A tensor's type as torch's C++ ``toString`` prints it (``torch.DoubleTensor``; complex
    dtypes have no legacy tensor type: ``CPUComplexDoubleType``)."""
    if x.is_complex():
        return f"CPU{_dtypes.scalar_type_name(x.dtype)}Type"
    return x.type()


def _optional(value: Any) -> str:
    """An optional argument as torch's messages print it (booleans as 0/1)."""
    return "None" if value is None else str(int(value) if isinstance(value, bool) else value)


def _window_text(window: Tensor | None) -> str:
    return "None" if window is None else f"{_type_text(window)}{{{list(window.shape)}}}"


def _stft_call(
    x: Tensor,
    n_fft: int,
    hop: int,
    win: int,
    window: Tensor | None,
    normalized: bool,
    onesided: bool | None,
    return_complex: bool | None,
    align_to_window: bool | None,
) -> str:
    """The ``stft(...)`` call torch's messages start with (its REPR macro)."""
    return (
        f"stft({_type_text(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_text(window)}, normalized={int(normalized)}, "
        f"onesided={_optional(onesided)}, return_complex={_optional(return_complex)}, "
        f"align_to_window={_optional(align_to_window)}) "
    )


@declare(
    "stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
    'Tensor? window=None, bool center=True, str pad_mode="reflect", bool normalized=False, '
    "bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor",
    variants="function method",
    python_level=True,
)
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform of a 1-D signal or a batch of them (2-D): frames of
    ``n_fft`` points every ``hop_length`` (``n_fft // 4``), each multiplied by ``window`` (of
    ``win_length`` points, zero-padded to ``n_fft`` about its centre; none: a rectangular
    window), transformed; ``center``: the signal padded by ``n_fft // 2`` on both sides with
    ``pad_mode`` first; ``normalized``: scaled by ``1 / sqrt(n_fft)``; ``onesided`` (real
    signals): only the ``n_fft // 2 + 1`` non-redundant frequencies; ``align_to_window`` (only
    without ``center``): frames start where the window starts. The result is
    ``(batch?, freq, frames)``, complex; real input needs ``return_complex`` (``False``: its
    ``view_as_real``, deprecated).

    >>> import jaxgrad
    >>> x = jaxgrad.arange(8.0)
    >>> spec = jaxgrad.stft(x, 4, window=jaxgrad.hann_window(4), return_complex=True)
    >>> spec.shape
    jaxgrad.Size([3, 9])
    >>> spec[0, 4]
    tensor(8.+0.j)
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        signal_dim = input.ndim
        extended = [1] * (3 - signal_dim) + list(input.shape)
        half = n_fft // 2
        input = pad(shapes.view(input, extended), [half, half], pad_mode)
        input = shapes.view(input, input.shape[len(input.shape) - signal_dim :])
    return _stft_frames(
        input,
        n_fft,
        hop_length,
        win_length,
        window,
        normalized,
        onesided,
        return_complex,
        align_to_window,
    )


def _stft_frames(
    x: Tensor,
    n_fft: int,
    hop_length: int | None,
    win_length: int | None,
    window: Tensor | None,
    normalized: bool,
    onesided: bool | None,
    return_complex: bool | None,
    align_to_window: bool | None,
) -> Tensor:
    """torch's native ``stft`` (SpectralOps.cpp): the frames of an uncentred signal."""
    if window is None:
        warn_once_as_jaxgrad(_STFT_WINDOW_WARNING)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    as_complex = (
        return_complex
        if return_complex is not None
        else (x.is_complex() or (window is not None and window.is_complex()))
    )
    if not as_complex:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        warn_once_as_jaxgrad(_STFT_REAL_WARNING)
    call = _stft_call(
        x, n_fft, hop, win, window, normalized, onesided, return_complex, align_to_window
    )
    if not (x.dtype.is_floating_point or x.is_complex()):
        raise RuntimeError(call + ": expected a tensor of floating point or complex values")
    if x.ndim not in (1, 2):
        raise RuntimeError(call + ": expected a 1D or 2D tensor")
    framed = shapes.unsqueeze(x, 0) if x.ndim == 1 else x
    length = framed.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(call + f": expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(call + f": expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(call + f": expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(
            call + f": expected a 1D window tensor of size equal to win_length="
            f"{win}, but got window with size {list(window.shape)}"
        )
    left = (n_fft - win) // 2
    aligned = bool(align_to_window)
    if aligned:  # (torch pads by ``left`` on both sides, also where n_fft - win is odd)
        framed = constant_pad(framed, (left, left), 0)
    padded_window = window
    if win < n_fft:
        padded_window = zeros(n_fft, dtype=(x if window is None else window).dtype)
        middle = shapes.narrow(padded_window, 0, left, win)
        if window is None:
            pointwise.fill_(middle, 1)
        else:
            pointwise.copy_(middle, window)
    frames = 1 + (length - (win if aligned else n_fft)) // hop
    strides = framed.stride()
    framed = shapes.as_strided(
        framed, (framed.shape[0], frames, n_fft), (strides[0], hop * strides[1], strides[1])
    )
    if padded_window is not None:
        framed = pointwise.mul(framed, padded_window)
    if framed.dtype not in _FFT_DTYPES:
        raise RuntimeError(
            f"MKL FFT doesn't support tensors of type: {_dtypes.scalar_type_name(framed.dtype)}"
        )
    complex_fft = framed.is_complex()
    sided = (not complex_fft) if onesided is None else onesided
    norm = SP.NORM_BY_ROOT_N if normalized else SP.NORM_NONE
    if complex_fft:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = apply(SP.FFT_C2C, framed, dim=(2,), normalization=norm, forward=True)
    else:
        out = apply(SP.FFT_R2C, framed, dim=(2,), normalization=norm, onesided=sided)
    shapes.transpose_(out, 1, 2)
    if x.ndim == 1:
        shapes.squeeze_(out, 0)
    return out if as_complex else complex_numbers.view_as_real(out)


def _istft_call(
    x: Tensor,
    n_fft: int,
    hop: int,
    win: int,
    window: Tensor | None,
    center: bool,
    normalized: bool,
    onesided: bool | None,
    length: int | None,
    return_complex: bool,
) -> str:
    """The ``istft(...)`` call torch's messages start with (its REPR macro)."""
    return (
        f"istft({_type_text(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_text(window)}, center={int(center)}, "
        f"normalized={int(normalized)}, onesided={_optional(onesided)}, "
        f"length={_optional(length)}, return_complex={int(return_complex)}) "
    )


def _overlap_add(frames: Tensor, signal_length: int, hop: int) -> Tensor:
    """torch's ``unfold_backward`` over dim 1: the (batch, frames, n_fft) frames added where
    they overlap into (batch, signal_length) (UnfoldBackwardBackward0)."""
    return apply(
        V.UNFOLD_BACKWARD,
        frames,
        input_sizes=(frames.shape[0], signal_length),
        dim=1,
        size=frames.shape[2],
        step=hop,
    )


@declare(
    "istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
    "Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, "
    "int? length=None, bool return_complex=False) -> Tensor",
    variants="function method",
)
def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of :func:`stft`: each complex frame of ``input`` (``(batch?, freq,
    frames)``) transformed back, multiplied by ``window`` and overlap-added, divided by the
    overlap-added squared window (which must not vanish: torch's "window overlap add min"
    error); ``center``: the ``n_fft // 2`` padded points trimmed; ``length``: the signal's
    length (cropped, or zero-padded with a warning); ``return_complex``: a complex signal (from
    a two-sided spectrum).

    >>> import jaxgrad
    >>> x = jaxgrad.arange(8.0)
    >>> w = jaxgrad.hann_window(4)
    >>> spec = jaxgrad.stft(x, 4, window=w, return_complex=True)
    >>> jaxgrad.istft(spec, 4, window=w, length=8).round()
    tensor([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    if window is None:
        warn_once_as_jaxgrad(_ISTFT_WINDOW_WARNING)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output "
            "from stft with return_complex=True."
        )
    x = complex_numbers.view_as_real(complex_numbers.resolve_conj(input))
    ndim, frames, fft_size = x.ndim, x.size(-2), x.size(-3)
    signal_length = n_fft + hop * (frames - 1)
    call = _istft_call(
        input, n_fft, hop, win, window, center, normalized, onesided, length, return_complex
    )
    if x.numel() == 0:
        raise RuntimeError(call + ": input tensor cannot be empty.")
    if ndim not in (3, 4):
        raise RuntimeError(call + f": expected a tensor with 3 or 4 dimensions, but got {ndim}")
    sided = fft_size != n_fft if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(
            call + ": expected the frequency dimension (3rd to the last) of the "
            "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
            f"{fft_size}"
        )
    if not sided and n_fft != fft_size:
        raise RuntimeError(
            call + ": expected the frequency dimension (3rd to the last) of the "
            "input tensor to match n_fft when onesided=False, but got "
            f"{fft_size}"
        )
    if not 0 < hop <= win:
        raise RuntimeError(call + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(call + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(
            call + ": Invalid window shape. window has to be 1D and length of `win_length`"
        )
    full_window = ones(win, dtype=x.dtype) if window is None else window
    if win != n_fft:
        left = (n_fft - win) // 2
        full_window = constant_pad(full_window, (left, n_fft - win - left), 0)
    if ndim == 3:
        x = shapes.unsqueeze(x, 0)
    spectra = complex_numbers.view_as_complex(shapes.transpose(x, 1, 2))
    norm = SP.NORM_BY_ROOT_N if normalized else SP.NORM_BY_N
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        signal = apply(SP.FFT_C2C, spectra, dim=(2,), normalization=norm, forward=False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            spectra = shapes.narrow_slice(spectra, -1, 0, n_fft // 2 + 1, 1)
        signal = apply(SP.FFT_C2R, spectra, dim=(2,), normalization=norm, last_dim_size=n_fft)
    y = _overlap_add(
        pointwise.mul(signal, shapes.view(full_window, (1, 1, n_fft))), signal_length, hop
    )
    squared = shapes.expand(pointwise.pow(full_window, 2), (1, frames, n_fft))
    envelope = _overlap_add(squared, signal_length, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else signal_length
    y = shapes.narrow_slice(y, 1, start, end, 1)
    envelope = shapes.narrow_slice(envelope, 1, start, end, 1)
    if bool(envelope.abs().min().lt(1e-11)):
        raise RuntimeError(call + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = pointwise.div(y, envelope)
    if ndim == 3:
        y = shapes.squeeze(y, 0)
    if end > signal_length:
        warn_once_as_jaxgrad(_ISTFT_LENGTH_WARNING)
        y = constant_pad(y, (0, end - signal_length), 0)
    return y
