"""``Tensor._view_func``/``_view_func_unsafe``: a view remade on a new base (as_strided at the
view's sizes, strides and offset, or the view's own ops where it reads its base through a lens),
None where the tensor is no view for autograd or the new base is laid out otherwise;
differential against torch."""

from __future__ import annotations

import pytest

from differential import same

pytest.importorskip("torch")


def _base(T):
    return T.arange(12.0).view(3, 4).clone()


def _new(T):
    return T.arange(100.0, 112.0).view(3, 4)


CASES = {
    "slice": lambda T: _base(T)[1:]._view_func(_new(T)),
    "not_a_view": lambda T: _base(T)._view_func(_new(T)),
    "detached": lambda T: _base(T).detach()._view_func(_new(T)),
    "transpose": lambda T: _base(T).t()._view_func(_new(T)),
    "view_of_view": lambda T: _base(T)[1:].t()._view_func(_new(T)),
    "base_of_a_view": lambda T: T.arange(12.0).view(3, 4)[1:]._view_func(_new(T)),
    "other_strides": lambda T: _base(T)[1:]._view_func(_new(T).t().contiguous().t()),
    "unsafe_other_strides": lambda T: _base(T)[1:]._view_func_unsafe(
        _new(T).t().contiguous().t()),
    "unsafe_flat": lambda T: _base(T).view(-1)[2:5]._view_func_unsafe(T.arange(50.0, 70.0)),
    "other_size": lambda T: _base(T)[1:]._view_func(T.zeros(5)),
    "other_dtype": lambda T: _base(T)[1:]._view_func(_new(T).double()),
    "ints": lambda T: T.arange(12).view(3, 4).clone()[1:]._view_func(T.arange(12).view(3, 4)),
    "unbind": lambda T: _base(T).unbind(0)[1]._view_func(_new(T)),
    "split": lambda T: _base(T).split(2)[0]._view_func(_new(T)),
    "expand": lambda T: _base(T).expand(2, 3, 4)._view_func(_new(T)),
    "diagonal": lambda T: _base(T).diagonal()._view_func(_new(T)),
    "not_a_tensor": lambda T: _base(T)._view_func(5),
    "view_as_real": lambda T: T.view_as_real(T.zeros(3, dtype=T.complex64))._view_func(
        T.ones(3, dtype=T.complex64)),
    "conj": lambda T: T.zeros(3, dtype=T.complex64).conj()._view_func(
        T.ones(3, dtype=T.complex64)),
    "real": lambda T: T.zeros(3, dtype=T.complex64).real._view_func(
        T.ones(3, dtype=T.complex64)),
}


def _no_grad_view(T):
    x = _base(T)
    with T.no_grad():
        v = x[1:]
    return v._view_func(_new(T))


def _inference_view(T):
    with T.inference_mode():
        v = _base(T)[1:]
    return v._view_func(_new(T))


def _with_history(T):
    w = T.ones(3, 4, requires_grad=True)
    out = w[1:]._view_func(w * 2)
    out.sum().backward()
    return out, out._base is not None, w.grad


@pytest.mark.parametrize("case", list(CASES))
def test_view_func_like_torch(case):
    same(lambda T: (lambda r: r if r is None else (r, r.stride(), r.storage_offset()))(
        CASES[case](T)))


@pytest.mark.parametrize("program", [_no_grad_view, _inference_view, _with_history],
                         ids=lambda f: f.__name__.strip("_"))
def test_view_func_grad_modes_like_torch(program):
    same(program)
