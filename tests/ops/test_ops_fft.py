"""Differential tests of ``jaxgrad.fft``: every public name of ``torch.fft`` exists under torch's
``__name__``; each transform's values, dtypes (integers -> the default float, real -> complex),
graphs (FftR2C/FftC2R/FftC2CBackward0 over torch's casts, crops, pads and conjugates), ``n``/``s``,
``dim`` and ``norm``; first derivatives (``.grad`` with its ``_version``) and second derivatives
(``autograd.grad`` with create_graph: values, grad_fn names, requires_grad) in float64 and
complex128; ``out=``; ``fftfreq``/``rfftfreq``/``fftshift``/``ifftshift``; torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

from differential import next_functions, ok, raises, val

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402

_RS = np.random.RandomState(0)
REAL = _RS.randn(3, 6)
COMPLEX = _RS.randn(3, 5) + 1j * _RS.randn(3, 5)

# name -> (the call, its input: "real" (3, 6) or "complex" (3, 5))
CASES = {
    "fft": (lambda T, x: T.fft.fft(x), "complex"),
    "fft_real": (lambda T, x: T.fft.fft(x, dim=0), "real"),
    "fft_n_pad_ortho": (lambda T, x: T.fft.fft(x, 8, norm="ortho"), "complex"),
    "fft_n_crop_forward": (lambda T, x: T.fft.fft(x, n=4, norm="forward"), "real"),
    "ifft": (lambda T, x: T.fft.ifft(x, dim=0), "complex"),
    "ifft_real_n": (lambda T, x: T.fft.ifft(x, n=7), "real"),
    "rfft": (lambda T, x: T.fft.rfft(x), "real"),
    "rfft_odd_pad": (lambda T, x: T.fft.rfft(x, 9, dim=0, norm="forward"), "real"),
    "rfft_crop": (lambda T, x: T.fft.rfft(x, 5, norm="ortho"), "real"),
    "irfft": (lambda T, x: T.fft.irfft(x), "complex"),
    "irfft_odd": (lambda T, x: T.fft.irfft(x, 7, norm="ortho"), "complex"),
    "irfft_dim0": (lambda T, x: T.fft.irfft(x, dim=0, norm="forward"), "complex"),
    "irfft_n2": (lambda T, x: T.fft.irfft(x, 2), "complex"),
    "hfft": (lambda T, x: T.fft.hfft(x), "complex"),
    "hfft_odd": (lambda T, x: T.fft.hfft(x, 5, norm="forward"), "complex"),
    "ihfft": (lambda T, x: T.fft.ihfft(x), "real"),
    "ihfft_n": (lambda T, x: T.fft.ihfft(x, 8, dim=0, norm="ortho"), "real"),
    "fft2": (lambda T, x: T.fft.fft2(x), "complex"),
    "fft2_real_s": (lambda T, x: T.fft.fft2(x, s=(4, 7)), "real"),
    "ifft2": (lambda T, x: T.fft.ifft2(x, norm="ortho"), "complex"),
    "rfft2": (lambda T, x: T.fft.rfft2(x), "real"),
    "irfft2": (lambda T, x: T.fft.irfft2(x), "complex"),
    "irfft2_s": (lambda T, x: T.fft.irfft2(x, s=(2, 5), norm="forward"), "complex"),
    "hfft2": (lambda T, x: T.fft.hfft2(x), "complex"),
    "ihfft2": (lambda T, x: T.fft.ihfft2(x), "real"),
    "fftn": (lambda T, x: T.fft.fftn(x), "complex"),
    "fftn_s_minus1": (lambda T, x: T.fft.fftn(x, s=(-1, 4)), "real"),
    "ifftn_dim": (lambda T, x: T.fft.ifftn(x, dim=-1, norm="forward"), "complex"),
    "rfftn": (lambda T, x: T.fft.rfftn(x, dim=(1, 0)), "real"),
    "rfftn_s": (lambda T, x: T.fft.rfftn(x, s=(5,)), "real"),
    "irfftn": (lambda T, x: T.fft.irfftn(x, norm="ortho"), "complex"),
    "irfftn_s": (lambda T, x: T.fft.irfftn(x, s=(4, 3)), "complex"),
    "irfftn_one_point": (lambda T, x: T.fft.irfftn(x, s=(1,)), "complex"),
    "hfftn": (lambda T, x: T.fft.hfftn(x, dim=(1, 0)), "complex"),
    "hfftn_s": (lambda T, x: T.fft.hfftn(x, s=(2, 6), norm="ortho"), "complex"),
    "ihfftn": (lambda T, x: T.fft.ihfftn(x), "real"),
    "ihfftn_s": (lambda T, x: T.fft.ihfftn(x, s=(4,), norm="forward"), "real"),
    "fftshift": (lambda T, x: T.fft.fftshift(x), "complex"),
    "fftshift_dim": (lambda T, x: T.fft.fftshift(x, dim=1), "real"),
    "ifftshift": (lambda T, x: T.fft.ifftshift(x, dim=(-1,)), "real"),
}


def _input(T, kind, dtype=None, requires_grad=True):
    values = REAL if kind == "real" else COMPLEX
    dtype = dtype or (T.float64 if kind == "real" else T.complex128)
    return T.tensor(values, dtype=dtype, requires_grad=requires_grad)


def _loss(T, outs):
    """A fixed non-linear real function of complex or real tensors (second derivatives)."""
    total = 0
    for k, y in enumerate(outs):
        w = T.tensor(np.cos(np.arange(y.numel()) + k).reshape(tuple(y.shape)), dtype=T.float64)
        if y.is_complex():
            total = total + ((y.real * w) ** 2).sum() + (y.imag * (y.imag + w)).sum()
        else:
            total = total + ((y * w) ** 2).sum() + (y * w).sum()
    return total


def test_every_public_name_of_torch_fft_exists_under_torchs_name():
    names = [n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))
             and getattr(torch.fft, n).__module__ == "torch._C._fft"]
    assert sorted(jaxgrad.fft.__all__) == sorted(names)
    for n in names:
        assert getattr(jaxgrad.fft, n).__name__ == getattr(torch.fft, n).__name__, n


def test_values_dtypes_and_graphs_like_torch():
    """Every case in float64/complex128 with its graph; in float32/complex64 and from integer
    and bool input (the default float), without grad."""

    def program(T):
        out = {}
        for name, (f, kind) in CASES.items():
            y = f(T, _input(T, kind))
            out[name] = (y, next_functions(y.grad_fn))
            low = T.float32 if kind == "real" else T.complex64
            out[name + "_32"] = f(T, _input(T, kind, low, requires_grad=False))
        ints = T.tensor([[3, -1, 4, 1], [5, 9, -2, 6]])
        out["ints"] = [T.fft.fft(ints), T.fft.rfft2(ints), T.fft.irfft(ints), T.fft.fftn(ints > 2),
                       T.fft.ihfft(ints.to(T.float64)), T.fft.fftshift(ints)]
        return out

    ok(program, rtol=1e-5)


def test_first_and_second_derivatives_like_torch():
    """``.grad`` and create_graph gradients (values, grad_fn, requires_grad) differentiated
    again. (Versions of gradients are not compared: whether torch's AccumulateGrad copies a
    gradient depends on the strides of its kernels' outputs, ``real()`` of a complex tensor, a
    transform over a leading dim, which jaxgrad's dense arrays do not have.)"""

    def program(T):
        out = {}
        for name, (f, kind) in CASES.items():
            x = _input(T, kind)
            _loss(T, [f(T, x)]).backward()
            x2 = _input(T, kind)
            (g,) = T.autograd.grad(_loss(T, [f(T, x2)]), x2, create_graph=True)
            (gg,) = T.autograd.grad(_loss(T, [g]), x2)
            out[name] = (val(x.grad), val(g), val(gg))
        return out

    ok(program)


def test_linear_losses_give_constant_gradients_like_torch():
    """A gradient that depends on nothing requiring grad has no grad_fn under create_graph."""

    def program(T):
        out = []
        for f, kind in (CASES["irfft"][0], "complex"), (CASES["rfft"][0], "real"), (
                CASES["fft"][0], "complex"):
            x = _input(T, kind)
            y = f(T, x)
            (g,) = T.autograd.grad((y.real if y.is_complex() else y).sum(), x,
                                   create_graph=True)
            out.append(val(g))
        return out

    ok(program)


def test_out_like_torch():
    def program(T):
        x, z = _input(T, "real", requires_grad=False), _input(T, "complex", requires_grad=False)
        a, b = T.empty(0, dtype=T.complex128), T.empty(2, dtype=T.complex64)
        c = T.empty(0, dtype=T.float64)
        return T.fft.fft(x, out=a), a, T.fft.rfft(x, out=b), b, T.fft.irfft2(z, out=c), c

    ok(program)


def test_frequencies_and_shifts_like_torch():
    def program(T):
        out = [T.fft.fftfreq(n, d) for n in (0, 1, 4, 5) for d in (1.0, 0.1, 0.0)]
        out += [T.fft.rfftfreq(n, d) for n in (0, 1, 4, 5) for d in (1.0, 0.3)]
        out += [T.fft.fftfreq(5, dtype=T.float64), T.fft.rfftfreq(6, 0.5, dtype=T.float64),
                T.fft.fftfreq(3, requires_grad=True), T.fft.rfftfreq(3, requires_grad=True)]
        x = T.arange(12.0).reshape(3, 4)
        out += [T.fft.fftshift(x), T.fft.ifftshift(x), T.fft.fftshift(x, 0), T.fft.ifftshift(x, -1),
                T.fft.fftshift(T.fft.fftfreq(5)), T.fft.ifftshift(T.fft.fftshift(T.fft.fftfreq(6)))]
        return out

    ok(program)


ERRORS = [
    lambda T, x, z: T.fft.fft(x, 0),
    lambda T, x, z: T.fft.ifft(z, -2),
    lambda T, x, z: T.fft.fft(x, norm="bad"),
    lambda T, x, z: T.fft.rfft(z),
    lambda T, x, z: T.fft.ihfft(z),
    lambda T, x, z: T.fft.ihfft2(z),
    lambda T, x, z: T.fft.ihfftn(z, norm="sideways"),
    lambda T, x, z: T.fft.fft(x, -1),
    lambda T, x, z: T.fft.rfft2(z),
    lambda T, x, z: T.fft.fft(x, dim=2),
    lambda T, x, z: T.fft.fft(T.tensor(1.0)),
    lambda T, x, z: T.fft.fftn(T.tensor(1.0), dim=0),
    lambda T, x, z: T.fft.fftn(x, dim=(0, -2)),
    lambda T, x, z: T.fft.fftn(x, s=(2, 2, 2)),
    lambda T, x, z: T.fft.fftn(x, s=(2,), dim=(0, 1)),
    lambda T, x, z: T.fft.fftn(x, s=(0, 2)),
    lambda T, x, z: T.fft.irfft(z[:, :1]),
    lambda T, x, z: T.fft.irfftn(z, s=(2, 0)),
    lambda T, x, z: T.fft.rfftn(x, dim=()),
    lambda T, x, z: T.fft.irfftn(z, dim=[]),
    lambda T, x, z: T.fft.hfftn(z, dim=()),
    lambda T, x, z: T.fft.ihfftn(x, dim=()),
    lambda T, x, z: T.fft.fft(x.to(T.float16)),
    lambda T, x, z: T.fft.rfft(x.to(T.bfloat16)),
    lambda T, x, z: T.fft.fft(3),
    lambda T, x, z: T.fft.fft2(x[0]),
    lambda T, x, z: T.fft.fftshift(x, dim=3),
    lambda T, x, z: T.fft.fftshift(T.tensor(1.0)),
    lambda T, x, z: T.fft.fftfreq(4, dtype=T.int64),
    lambda T, x, z: T.fft.rfftfreq(4, dtype=T.complex64),
    lambda T, x, z: T.fft.fftfreq(-1),
    lambda T, x, z: T.fft.rfft(x.requires_grad_(), out=T.empty(0, dtype=T.complex128)),
    lambda T, x, z: T.fft.irfftn(z.requires_grad_(), out=T.empty(0, dtype=T.float64)),
    lambda T, x, z: T.fft.fft2(x.requires_grad_(), out=T.empty(0, dtype=T.complex128)),
]


def test_errors_like_torch():
    for f in ERRORS:
        raises(lambda T, f=f: f(T, _input(T, "real", requires_grad=False),
                                _input(T, "complex", requires_grad=False)))


def test_function_transforms_use_torchs_formulas():
    """Forward mode (``func.jvp``: torch's auto_linear, the kernels applied to tangents) and
    ``func.grad``/``jacrev`` through the transforms, against torch.func."""
    tangent = REAL[::-1].copy()

    def program(T):
        x, t = T.tensor(REAL), T.tensor(tangent)
        z, u = T.tensor(COMPLEX), T.tensor(COMPLEX * 1j + 0.5)
        return [T.func.jvp(lambda a: T.fft.rfft(a, norm="ortho"), (x,), (t,)),
                T.func.jvp(lambda a: T.fft.irfft(a, 7), (z,), (u,)),
                T.func.jvp(lambda a: T.fft.hfft2(a), (z,), (u,)),
                T.func.jvp(lambda a: T.fft.ihfftn(a), (x,), (t,)),
                T.func.grad(lambda a: (T.fft.irfft(a, 6) ** 2).sum())(z),
                T.func.grad(lambda a: T.fft.fft2(a).abs().sum())(x),
                T.func.jacrev(lambda a: T.fft.rfft(a).real)(x[0])]

    ok(program)


def test_edge_arguments_and_views_like_torch():
    """0-d and empty ``dim``, ``-1`` in ``s``, ``s`` as a Size, conjugate and transposed
    inputs; a round trip's gradient."""
    cube = np.random.RandomState(1).randn(2, 3, 4)

    def program(T):
        x = T.tensor(cube, requires_grad=True)
        z = T.tensor(COMPLEX[:, :4], requires_grad=True)
        c = x.to(T.complex128)
        outs = [T.fft.fftn(T.tensor(1.0 + 0j)), T.fft.fftn(x, dim=()), T.fft.fftn(x, dim=[]),
                T.fft.hfftn(c, s=(-1, 5)), T.fft.irfftn(c, s=(3, -1)),
                T.fft.fft2(x, s=T.Size([2, 2])), T.fft.rfftn(x, s=[3, 3], dim=[0, 2]),
                T.fft.ifftn(x, s=(4, -1, 2)), T.fft.fftshift(x, dim=(0, -1)),
                T.fft.hfft(c, dim=1), T.fft.ihfftn(x, dim=(2, 0)),
                T.fft.fft(z.conj()), T.fft.irfft(z.conj()), T.fft.fft(z.t()),
                T.fft.rfft(z.real.t()), T.fft.hfft(z.conj(), dim=0),
                T.fft.irfft(T.fft.rfft(x) * T.fft.rfft(x.flip(-1)), 4)]
        _loss(T, outs).backward()
        return [(o, next_functions(o.grad_fn)) for o in outs], val(x.grad), val(z.grad)

    ok(program)
