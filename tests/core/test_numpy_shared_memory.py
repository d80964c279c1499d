"""``Tensor.numpy()``, ``from_numpy`` and ``np.asarray(tensor)`` share memory with the tensor
on CPU, as torch's do: each program writes through one side and reads the other, and must
print what torch prints (differential, against live torch)."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

from differential import captured_warnings, same

pytest.importorskip("torch")


def _numpy_write_shows_in_tensor(T):
    t = T.zeros(4)
    a = t.numpy()
    a[1] = 3.0
    return t.clone(), t * 2, t._version


def _inplace_op_shows_in_array(T):
    t = T.arange(4.0)
    a = t.numpy()
    t.mul_(2)
    t[0] = 7
    return a.tolist(), t._version


def _views_share(T):
    base = T.arange(12.0).reshape(3, 4)
    v = base[1:, ::2]  # a strided view
    a = v.numpy()
    a += 100
    tr = base.t().numpy()
    tr[0, 0] = -1  # through a transposed view
    base.add_(1)
    return base.clone(), a.tolist(), v.clone(), tr.strides == base.t().numpy().strides


def _kinds(T):
    out = []
    for dtype in (T.float64, T.int32, T.int64, T.bool, T.complex64):
        t = T.zeros(3, dtype=dtype)
        a = t.numpy()
        a[0] = 1
        out.append(t.clone())
    s = T.tensor(2.0)  # 0-d
    s.numpy()[...] = 5.0
    out.append(s.clone())
    return out


def _gradient_sees_numpy_write(T):
    w = T.ones(3, requires_grad=True)
    w.detach().numpy()[0] = 5.0
    (w * w).sum().backward()
    return w.grad, w.clone()


def _no_grad_numpy_of_parameter(T):
    w = T.ones(2, 2, requires_grad=True)
    with T.no_grad():
        w.numpy()[:] = 3.0
    loss = (w ** 2).sum()
    loss.backward()
    return w.grad


def _from_numpy_shares(T):
    a = np.arange(6.0).reshape(2, 3)
    t = T.from_numpy(a)
    a[0, 0] = 50.0
    t[1, 2] = -5.0
    t.add_(1)
    return t.clone(), a.tolist(), t._version


def _from_numpy_strided(T):
    big = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    t = T.from_numpy(big[1:3, ::2].T)  # non-contiguous, positive strides
    big[1, 0] = -7.0
    t.mul_(10)
    return t.clone(), t.stride(), t.is_contiguous(), big.tolist()


def _from_numpy_row_of_a_larger_array(T):
    big = np.zeros((3, 4), np.int64)
    t = T.from_numpy(big[1])
    big[1, 2] = 9
    t[0] = 4
    return t.clone(), big.tolist()


def _from_numpy_negative_strides(T):
    return T.from_numpy(np.arange(4.0)[::-1])


def _as_array_shares(T):
    t = T.zeros(3)
    np.asarray(t)[2] = 1.0
    return t.clone()


def _mark_dirty_docstring(T):
    class Inplace(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()  # x_npy shares storage with x
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    a = T.tensor(1.0, requires_grad=True, dtype=T.double).clone()
    b = a * a
    out = Inplace.apply(a)
    try:
        b.backward()
    except RuntimeError as error:
        return out, str(error)
    return out, "no error"


def _requires_grad_refused(T):
    return T.ones(2, requires_grad=True).numpy()


@pytest.mark.parametrize("program", [
    _numpy_write_shows_in_tensor, _inplace_op_shows_in_array, _views_share, _kinds,
    _gradient_sees_numpy_write, _no_grad_numpy_of_parameter, _from_numpy_shares,
    _from_numpy_strided, _from_numpy_row_of_a_larger_array, _from_numpy_negative_strides,
    _as_array_shares, _mark_dirty_docstring, _requires_grad_refused,
], ids=lambda f: f.__name__.strip("_"))
def test_shared_memory_like_torch(program):
    same(program)


def test_not_writable_array_warns_like_torch():
    def program(T):
        a = np.arange(3.0)
        a.flags.writeable = False
        return T.from_numpy(a)

    import torch

    import jaxgrad

    torch_warnings = captured_warnings(program, torch)
    with warnings.catch_warnings():
        jaxgrad.set_warn_always(True)
        try:
            assert captured_warnings(program, jaxgrad) == torch_warnings
        finally:
            jaxgrad.set_warn_always(False)


def test_memory_let_go_once_no_array_holds_it():
    """When every numpy array over a tensor's memory is gone, the tensor keeps the last values
    and reads no longer copy from the host."""
    import jaxgrad
    from jaxgrad._core.storage import Storage

    t = jaxgrad.zeros(3)
    a = t.numpy()
    view = a[1:]
    del a
    view[0] = 4.0
    assert t.tolist() == [0.0, 4.0, 0.0]
    del view
    gc.collect()
    assert t.tolist() == [0.0, 4.0, 0.0]
    assert type(t._cell) is Storage
    t.add_(1)
    assert t.tolist() == [1.0, 5.0, 1.0]


def test_compiled_step_writes_through_to_the_array():
    import jaxgrad

    w = jaxgrad.zeros(3)
    a = w.numpy()

    @jaxgrad.compile
    def step(x):
        w.add_(x)

    step(jaxgrad.ones(3))
    a[0] = 10.0
    step(jaxgrad.ones(3))
    assert a.tolist() == [11.0, 2.0, 2.0]
    assert w.tolist() == [11.0, 2.0, 2.0]
