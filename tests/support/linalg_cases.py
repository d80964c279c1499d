"""Shared pieces of the dense linear algebra tests (``test_linalg_triangular``,
``test_linalg_more``, ``test_linalg_lu``): well-conditioned inputs, a weighted loss, the
differential program (values, grad_fn edges, first and second derivatives) and torch's
warnings."""

from __future__ import annotations

import warnings

import numpy as np

import jaxgrad
from differential import captured_warnings, torch, val


def tensor(T, shape, dtype, seed=0, shift=3.0, requires_grad=True):
    """A well-conditioned matrix (batch): ``shift * I + R/2`` (complex where ``dtype`` is); a
    shape given as ``("factor", shape)`` has a real diagonal, as a Cholesky factor has."""
    factor = shape[0] == "factor"
    shape = shape[1] if factor else shape
    rs = np.random.RandomState(seed)
    m = rs.randn(*shape) / 2
    if "complex" in dtype:
        m = m + 1j * rs.randn(*shape) / 2
        if factor:
            m = m - 1j * np.imag(m) * np.eye(shape[-1])
    if shift and len(shape) >= 2:
        m = m + shift * np.eye(shape[-2], shape[-1])
    return T.tensor(m, dtype=getattr(T, dtype), requires_grad=requires_grad)


def loss(T, outs):
    """A real, non-uniform weighting of every output (real and imaginary parts)."""
    total = 0
    for o in outs:
        w = (T.arange(o.numel(), dtype=T.float64).reshape(o.shape) + 1).to(o.dtype) / o.numel()
        total = total + ((o * w).real.sum() + (o * w).imag.sum() / 3 if o.is_complex()
                         else (o * w).sum())
    return total


def edges(fn):
    """The grad_fn's name and its next functions' names (one level: the graphs below are those
    of the ops the program composes, tested with those ops)."""
    return (type(fn).__name__, [(type(n).__name__, i) for n, i in fn.next_functions])


def differential(f, shapes, dtype, order=2):
    """The program: ``f(T, *inputs)``'s outputs, grad_fn names and next functions, first
    gradients (create_graph) and, with ``order=2``, second gradients of a weighted loss."""
    def program(T):
        args = [tensor(T, s, dtype, seed=i) for i, s in enumerate(shapes)]
        out = f(T, *args)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if o.requires_grad]
        g = T.autograd.grad(loss(T, outs), args, create_graph=order > 1, allow_unused=True)
        used = [(x, a) for x, a in zip(g, args) if x is not None and x.requires_grad]
        gg = T.autograd.grad(loss(T, [x for x, _ in used]), [a for _, a in used],
                             allow_unused=True) if used else []
        return (out, [type(o.grad_fn).__name__ for o in outs],
                [edges(o.grad_fn) for o in outs],
                [None if x is None else x.detach() for x in g],
                [None if x is None else val(x) for x in gg])
    return program


def tol(dtype):
    return 1e-9 if dtype in ("float64", "complex128") else 5e-4


def quiet(f):
    """``f`` with torch's (and jaxgrad's) deprecation warnings silenced."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*args)
    return run



def warns_as_torch(program):
    """``program`` gives the same warnings (torch's once-per-process ones forced) on both."""
    torch.set_warn_always(True)
    jaxgrad.set_warn_always(True)
    try:
        assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
        assert captured_warnings(program, torch)
    finally:
        torch.set_warn_always(False)
        jaxgrad.set_warn_always(False)
