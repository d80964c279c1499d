"""Differential tests of ``stft``/``istft`` (function and method): values and dtypes (float32,
float64, complex64, complex128 signals and windows), graphs (torch's composition: pads, views,
AsStrided, Mul, FftR2C/FftC2C/FftC2R, UnfoldBackwardBackward0, Slice, Div...), first and second
derivatives of the signal and the window, ``center``/``pad_mode``/``normalized``/``onesided``/
``align_to_window``/``length``/``return_complex``, torch's errors and warnings."""

from __future__ import annotations

import numpy as np
import pytest

from differential import captured_warnings, next_functions, ok, raises, val

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402

_RS = np.random.RandomState(0)
SIGNAL = _RS.randn(2, 21)
NOISE = _RS.randn(2, 21)
WINDOW = _RS.rand(6) + 0.5
HANN8 = np.hanning(10)[1:-1]  # no zeros: every overlap-add envelope is positive


def _signal(T, dtype="float64", batched=True):
    values = SIGNAL + 1j * NOISE if dtype.startswith("complex") else SIGNAL
    x = T.tensor(values, dtype=getattr(T, dtype), requires_grad=True)
    return x if batched else x[1]


def _window(T, dtype="float64", values=WINDOW):
    return T.tensor(values, dtype=getattr(T, dtype), requires_grad=True)


def _loss(T, y):
    """A fixed non-linear real function of a real or complex tensor."""
    r = T.view_as_real(y) if y.is_complex() else y
    w = T.tensor(np.cos(np.arange(r.numel())).reshape(tuple(r.shape)), dtype=r.dtype)
    return ((r * w) ** 2).sum() + (r * w).sum()


# name -> (a call of (T, signal, window), the kinds of signal and window it runs on)
STFT = {
    "plain": (lambda T, x, w: T.stft(x, 8, return_complex=True), ("f64", "c128")),
    "window_short": (
        lambda T, x, w: T.stft(x, 8, hop_length=3, win_length=6, window=w, return_complex=True),
        ("f64", "f64_1d", "c_window"),
    ),
    "real_out_normalized": (
        lambda T, x, w: T.stft(x, 8, 3, 6, w, normalized=True, return_complex=False),
        ("f64",),
    ),
    "twosided_circular": (
        lambda T, x, w: T.stft(
            x, 7, 2, 6, w, pad_mode="circular", onesided=False, return_complex=True
        ),
        ("f64", "c128"),
    ),
    "constant_rect_short": (
        lambda T, x, w: T.stft(x, 8, 4, 5, pad_mode="constant", return_complex=True),
        ("f64",),
    ),
    "replicate": (
        lambda T, x, w: T.stft(x, 8, 2, pad_mode="replicate", return_complex=True),
        ("f64_1d",),
    ),
    "uncentred": (
        lambda T, x, w: T.stft(x, 6, 5, window=w, center=False, return_complex=True),
        ("f64",),
    ),
    "align": (
        lambda T, x, w: T.stft(
            x, 8, 2, 6, w, center=False, align_to_window=True, return_complex=True
        ),
        ("f64", "c128"),
    ),
    "align_odd_rect": (
        lambda T, x, w: T.stft(x, 8, 3, 5, center=False, align_to_window=True, return_complex=True),
        ("f64",),
    ),
    "align_false": (
        lambda T, x, w: T.stft(
            x, 6, 2, window=w, center=False, align_to_window=False, return_complex=True
        ),
        ("f64",),
    ),
    "method": (lambda T, x, w: x.stft(6, 2, window=w, return_complex=True), ("f64_1d",)),
}
# kind -> (signal dtype, batched, window dtype)
KINDS = {
    "f64": ("float64", True, "float64"),
    "f64_1d": ("float64", False, "float64"),
    "c128": ("complex128", True, "float64"),
    "c_window": ("float64", False, "complex128"),
}


def _stft_calls():
    for name, (f, kinds) in STFT.items():
        for kind in kinds:
            yield name, kind, f, *KINDS[kind]


def test_stft_values_graphs_and_dtypes_like_torch():
    def program(T):
        out = {}
        for name, kind, f, sig, batched, win in _stft_calls():
            y = f(T, _signal(T, sig, batched), _window(T, win))
            out[name, kind] = (y, next_functions(y.grad_fn))
        low = T.tensor(SIGNAL, dtype=T.float32)
        out["f32"] = STFT["window_short"][0](T, low, T.tensor(WINDOW, dtype=T.float32))
        out["f32_f64_window"] = STFT["window_short"][0](T, low, T.tensor(WINDOW))
        out["c64_real_out"] = T.stft(
            T.tensor(SIGNAL, dtype=T.complex64),
            8,
            3,
            6,
            T.tensor(WINDOW, dtype=T.float32),
            return_complex=False,
        )
        out["noncontiguous"] = T.stft(
            T.tensor(SIGNAL.T.copy()).t(),
            8,
            3,
            center=False,
            window=T.ones(8, dtype=T.float64),
            return_complex=True,
        )
        return out

    ok(program, rtol=1e-5)


def test_stft_first_and_second_derivatives_like_torch():
    """``.grad`` of the signal and the window; create_graph gradients differentiated again. (The
    window's create_graph gradient is compared without its grad_fn: see the xfail below.)"""

    def program(T):
        out = {}
        for name, kind, f, sig, batched, win in _stft_calls():
            if (name, kind) not in (
                ("window_short", "f64"),
                ("twosided_circular", "c128"),
                ("constant_rect_short", "f64"),
            ):
                continue
            x, w = _signal(T, sig, batched), _window(T, win)
            _loss(T, f(T, x, w)).backward()
            x2, w2 = _signal(T, sig, batched), _window(T, win)
            grads = T.autograd.grad(
                _loss(T, f(T, x2, w2)), (x2, w2), create_graph=True, allow_unused=True
            )
            used = [(t, g) for t, g in zip((x2, w2), grads) if g is not None]
            again = T.autograd.grad(sum(_loss(T, g) for _, g in used), [t for t, _ in used])
            out[name, kind] = (
                [val(x.grad), val(w.grad)],
                val(grads[0]),
                [(g.detach(), g.requires_grad) for _, g in used[1:]],
                [val(g) for g in again],
            )
        return out

    ok(program)


def test_stft_window_create_graph_gradient_node_like_torch():
    def program(T):
        w = _window(T)
        y = STFT["window_short"][0](T, T.tensor(SIGNAL), w)
        (g,) = T.autograd.grad(_loss(T, y), w, create_graph=True)
        return g

    ok(program)


# name -> (a call of (T, spectrum, window), the spectrum's stft: onesided or not)
ISTFT = {
    "roundtrip": (lambda T, s, w: T.istft(s, 8, 2, window=w), True),
    "length_crop": (lambda T, s, w: T.istft(s, 8, 2, window=w, length=15), True),
    "length_pad_uncentred_rect": (
        lambda T, s, w: T.istft(s, 8, 4, center=False, normalized=True, length=50),
        True,
    ),
    "window_short": (lambda T, s, w: T.istft(s, 8, 3, 6, window=w[1:7]), True),
    "twosided_real": (lambda T, s, w: T.istft(s, 8, 2, window=w), False),
    "twosided_complex_short": (
        lambda T, s, w: T.istft(s, 8, 3, 6, w[1:7], length=20, return_complex=True),
        False,
    ),
    "method": (lambda T, s, w: s.istft(8, 2, window=w, onesided=True), True),
}
# the cases also run on one signal (3-D spectra) and differentiated twice
_UNBATCHED = ("roundtrip", "twosided_complex_short")
_TWICE = ("twosided_complex_short",)


def _spectrum(T, onesided, batched=True, dtype="complex128"):
    x = T.tensor(SIGNAL if batched else SIGNAL[0])
    s = T.stft(x, 8, 2, window=T.tensor(HANN8), onesided=onesided, return_complex=True)
    return s.to(getattr(T, dtype)).detach().requires_grad_()


def test_istft_values_graphs_and_derivatives_like_torch():
    def program(T):
        out = {}
        for name, (f, onesided) in ISTFT.items():
            for batched in (True, False) if name in _UNBATCHED else (True,):
                s, w = _spectrum(T, onesided, batched), _window(T, "float64", HANN8)
                y = f(T, s, w)
                _loss(T, y).backward()
                out[name, batched] = (y, next_functions(y.grad_fn), val(s.grad), val(w.grad))
            if name not in _TWICE:
                continue
            s, w = _spectrum(T, onesided), _window(T, "float64", HANN8)
            grads = T.autograd.grad(
                _loss(T, f(T, s, w)), (s, w), create_graph=True, allow_unused=True
            )
            used = [(t, g) for t, g in zip((s, w), grads) if g is not None]
            again = T.autograd.grad(sum(_loss(T, g) for _, g in used), [t for t, _ in used])
            out[name, "second"] = ([val(g) for _, g in used], [val(g) for g in again])
        low = _spectrum(T, True, dtype="complex64")
        out["c64"] = T.istft(low, 8, 2, window=T.tensor(HANN8, dtype=T.float32))
        out["c64_f64_window"] = T.istft(low, 8, 2, window=T.tensor(HANN8))
        out["conj"] = T.istft(_spectrum(T, True).conj(), 8, 2, window=T.tensor(HANN8))
        out["complex_window"] = T.istft(
            _spectrum(T, False), 8, 2, return_complex=True, window=T.tensor(HANN8 * (1 + 0.5j))
        )
        return out

    ok(program, rtol=1e-5)


def test_stft_of_a_window_that_requires_grad_alone_like_torch():
    def program(T):
        w = _window(T)
        y = T.stft(T.tensor(SIGNAL), 8, 3, 6, w, return_complex=True)
        _loss(T, y).backward()
        return y, val(w.grad)

    ok(program)


STFT_ERRORS = [
    lambda T, x, w: T.stft(x, 8),
    lambda T, x, w: T.stft(x, 0, return_complex=True),
    lambda T, x, w: T.stft(x, 30, center=False, return_complex=True),
    lambda T, x, w: T.stft(x, 8, hop_length=0, return_complex=True),
    lambda T, x, w: T.stft(x, 8, win_length=9, return_complex=True),
    lambda T, x, w: T.stft(x, 8, win_length=5, window=w, return_complex=True),
    lambda T, x, w: T.stft(x, 8, window=w.to(T.complex128), onesided=True, return_complex=True),
    lambda T, x, w: T.stft(x.to(T.complex64), 8, 2, window=T.ones(8), onesided=True),
    lambda T, x, w: T.stft(x.to(T.int32), 8, return_complex=True),
    lambda T, x, w: T.stft(x.reshape(2, 3, 7), 4, center=False, return_complex=True),
    lambda T, x, w: T.stft(x.reshape(1, 2, 21), 4, return_complex=True),
    lambda T, x, w: T.stft(x, 8, return_complex=True, align_to_window=True),
    lambda T, x, w: T.stft(
        x[0, :6], 8, 3, 4, center=False, align_to_window=True, return_complex=True
    ),
    lambda T, x, w: T.stft(
        x[:, :10], 8, 3, 7, center=False, align_to_window=True, return_complex=True
    ),
    lambda T, x, w: T.stft(x, 8, return_complex=True, pad_mode="wrap"),
    lambda T, x, w: T.stft(x[0, :5], 12, return_complex=True),
    lambda T, x, w: T.stft(x.to(T.float16), 8, return_complex=True),
    lambda T, x, w: T.stft(x[:0], 8, return_complex=True),
]


@pytest.mark.parametrize("case", range(len(STFT_ERRORS)))
def test_stft_errors_like_torch(case):
    raises(lambda T: STFT_ERRORS[case](T, T.tensor(SIGNAL), T.tensor(WINDOW)))


ISTFT_ERRORS = [
    lambda T, s, w: T.istft(s.real, 8, 2, window=w),
    lambda T, s, w: T.istft(s[:, :0], 8, 2, window=w),
    lambda T, s, w: T.istft(s[0, :, :, None], 8, 2, window=w),
    lambda T, s, w: T.istft(s[0, :, 0], 8, 2, window=w),
    lambda T, s, w: T.istft(s[None], 8, 2, window=w),
    lambda T, s, w: T.istft(s, 8, 2, window=w, onesided=False),
    lambda T, s, w: T.istft(s, 10, 2, window=w),
    lambda T, s, w: T.istft(s, 8, 9, window=w),
    lambda T, s, w: T.istft(s, 8, 0, window=w),
    lambda T, s, w: T.istft(s, 8, 2, 9, window=w),
    lambda T, s, w: T.istft(s, 8, 2, 6, window=w),
    lambda T, s, w: T.istft(s, 8, 2, window=w, return_complex=True),
    lambda T, s, w: T.istft(s, 8, 2, window=w.to(T.complex128)),
    lambda T, s, w: T.istft(s, 8, 2, window=T.zeros(8, dtype=T.float64)),
    lambda T, s, w: T.istft(s, 8, 2, window=T.hann_window(8, dtype=T.float64), center=False),
    lambda T, s, w: T.istft(s, 8, 2, window=w, length=0),
    lambda T, s, w: T.istft(s, 8, 2, window=w, length=-30),
]


@pytest.mark.parametrize("case", range(len(ISTFT_ERRORS)))
def test_istft_errors_like_torch(case):
    raises(lambda T: ISTFT_ERRORS[case](T, _spectrum(T, True), T.tensor(HANN8)))


def test_warnings_like_torch():
    def program(T):
        x, s = T.tensor(SIGNAL), _spectrum(T, True)
        T.set_warn_always(True)
        try:
            T.stft(x, 8, return_complex=True)
            T.stft(x, 8, window=T.ones(8, dtype=T.float64), return_complex=False)
            T.istft(s, 8, 2)
            T.istft(s, 8, 2, window=T.tensor(HANN8), length=40)
        finally:
            T.set_warn_always(False)

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
