"""Fixes found while writing functorch_notes (grad_modes.md): an in-place op on an inference
tensor outside inference mode. torch refuses it when the version counter is bumped, which is
after the kernel wrote: the tensor keeps the new values (or the new shape, for in-place view
ops, ``resize_``, ``set_``) and the error follows, with no history recorded."""

from __future__ import annotations

import pytest

from differential import attempt, ok

UPDATES = {
    "add_": lambda T, k, x: k.add_(1),
    "add_ requiring-grad other": lambda T, k, x: k.add_(x),
    "mul_ requiring-grad other": lambda T, k, x: k.mul_(x),
    "setitem": lambda T, k, x: k.__setitem__(0, 5.0),
    "fill_": lambda T, k, x: k.fill_(7),
    "zero_": lambda T, k, x: k.zero_(),
    "copy_": lambda T, k, x: k.copy_(T.zeros(2, 3)),
    "clamp_": lambda T, k, x: k.clamp_(max=0.5),
    "through a view": lambda T, k, x: k[1:].add_(1),
    "index_put_": lambda T, k, x: k.index_put_((T.tensor([0]),), T.tensor([9.0])),
    "out=": lambda T, k, x: T.exp(T.zeros(2, 3), out=k),
    "t_": lambda T, k, x: k.t_(),
    "unsqueeze_": lambda T, k, x: k.unsqueeze_(0),
    "transpose_": lambda T, k, x: k.transpose_(0, 1),
    "as_strided_": lambda T, k, x: k.as_strided_((3,), (1,)),
    "resize_": lambda T, k, x: k.resize_(3),
    "set_": lambda T, k, x: k.set_(T.zeros(4)),
}


@pytest.mark.parametrize("name", UPDATES)
def test_inplace_on_inference_tensor_writes_then_raises(name):
    def program(T):
        with T.inference_mode():
            k = T.ones(2, 3)
        x = T.full((2, 3), 2.0, requires_grad=True)
        error = attempt(lambda: UPDATES[name](T, k, x))
        # (values as a list: torch's clone of an inference tensor starts at _version 1)
        return error, k.tolist(), tuple(k.shape), k.stride(), k.requires_grad, k.grad_fn is None

    ok(program)


@pytest.mark.parametrize("name", ["add_", "transpose_", "unsqueeze_", "resize_", "set_"])
def test_inference_tensor_requiring_grad(name):
    """A leaf inference tensor that requires grad: the leaf check refuses ``add_``/``set_``
    first (nothing changes); in-place view ops and ``resize_`` change it, then raise."""
    def program(T):
        with T.inference_mode():
            k = T.ones(1, 2, 3, requires_grad=True)
        error = attempt(lambda: UPDATES[name](T, k, None))
        return error, k.tolist(), tuple(k.shape), k.stride(), k.requires_grad

    ok(program)


def test_inplace_inside_inference_mode_and_on_a_clone_still_work():
    def program(T):
        with T.inference_mode():
            k = T.ones(3)
            k.add_(1).unsqueeze_(0)
        c = k * 1
        c.mul_(3)
        return k.tolist(), c, c._version

    ok(program)
