"""Differential tests of the argument checks of ``autograd.grad``, ``autograd.backward`` and
``Tensor.backward``: empty, duplicate, non-tensor, dict and grad-less inputs; grad_outputs /
grad_tensors of the wrong count, shape, dtype or type; implicit gradients of non-scalar or
non-float outputs; allow_unused / materialize_grads; is_grads_batched; the deprecated
``only_inputs`` and ``grad_variables`` (their FutureWarnings); retain_graph defaults.
Results, errors and warnings are compared with torch.
"""

from __future__ import annotations

import pytest
import torch

import jaxgrad
from differential import attempt, captured_warnings, same


def cases(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    w = T.tensor(3.0, requires_grad=True)
    y = (x * w)
    s = y.sum()
    p = T.tensor([5.0])
    i = T.tensor([1, 2])
    return x, w, y, s, p, i

G = {
 "grad_basic": lambda T, x, w, y, s, p, i: T.autograd.grad(s, x),
 "grad_empty_inputs": lambda T, x, w, y, s, p, i: T.autograd.grad(s, []),
 "grad_empty_outputs": lambda T, x, w, y, s, p, i: T.autograd.grad([], x),
 "grad_dup_inputs": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, x]),
 "grad_input_noreq": lambda T, x, w, y, s, p, i: T.autograd.grad(s, p),
 "grad_input_nontensor": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, 3]),
 "grad_input_none": lambda T, x, w, y, s, p, i: T.autograd.grad(s, None),
 "grad_output_nontensor": lambda T, x, w, y, s, p, i: T.autograd.grad(3.0, x),
 "grad_output_noreq": lambda T, x, w, y, s, p, i: T.autograd.grad(p.sum(), x),
 "grad_nonscalar": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x),
 "grad_go_len": lambda T, x, w, y, s, p, i: T.autograd.grad([s], x, grad_outputs=[T.ones(()), T.ones(())]),
 "grad_go_len2": lambda T, x, w, y, s, p, i: T.autograd.grad([s, y], x, grad_outputs=[T.ones(())]),
 "grad_go_shape": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=T.ones(3)),
 "grad_go_shape2": lambda T, x, w, y, s, p, i: T.autograd.grad([s, y], x, grad_outputs=[T.ones(()), T.ones(3)]),
 "grad_go_dtype": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=T.ones(2, dtype=T.float64)),
 "grad_go_int": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=T.ones(2, dtype=T.int64)),
 "grad_go_bool": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=T.ones(2, dtype=T.bool)),
 "grad_go_complex": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=T.ones(2, dtype=T.complex64)),
 "grad_go_nontensor": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=[3.0]),
 "grad_go_none_nonscalar": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=[None]),
 "grad_go_none_scalar": lambda T, x, w, y, s, p, i: T.autograd.grad(s, x, grad_outputs=[None]),
 "grad_go_tensor_not_seq": lambda T, x, w, y, s, p, i: T.autograd.grad(s, x, grad_outputs=T.ones(())),
 "grad_unused": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, p.requires_grad_()]),
 "grad_unused_allow": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, T.ones(1, requires_grad=True)], allow_unused=True),
 "grad_unused_mat": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, T.ones(1, requires_grad=True)], materialize_grads=True),
 "grad_unused_mat_allowF": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, T.ones(1, requires_grad=True)], materialize_grads=True, allow_unused=False),
 "grad_unused_mat_allowT": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, T.ones(1, requires_grad=True)], materialize_grads=True, allow_unused=True),
 "grad_only_inputs_F": lambda T, x, w, y, s, p, i: T.autograd.grad(s, x, only_inputs=False),
 "grad_only_inputs_T": lambda T, x, w, y, s, p, i: T.autograd.grad(s, x, only_inputs=True),
 "grad_retain_default": lambda T, x, w, y, s, p, i: (T.autograd.grad(s, x), attempt(lambda: T.autograd.grad(s, x))),
 "grad_retain_T": lambda T, x, w, y, s, p, i: (T.autograd.grad(s, x, retain_graph=True), T.autograd.grad(s, x)),
 "grad_create_retains": lambda T, x, w, y, s, p, i: ([g.detach() for g in T.autograd.grad(s, x, create_graph=True)], T.autograd.grad(s, x)),
 "grad_batched": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=T.eye(2), is_grads_batched=True),
 "grad_batched_scalar": lambda T, x, w, y, s, p, i: T.autograd.grad(s, (x, w), grad_outputs=T.tensor([1.0, 2.0, 3.0]), is_grads_batched=True),
 "grad_batched_shape": lambda T, x, w, y, s, p, i: T.autograd.grad(y, x, grad_outputs=T.ones(2), is_grads_batched=True),
 "grad_int_input": lambda T, x, w, y, s, p, i: T.autograd.grad(s, i),
 "grad_input_leaf_not_in_graph_noreq": lambda T, x, w, y, s, p, i: T.autograd.grad(s, [x, y]),
 "grad_tuple_inputs_gen": lambda T, x, w, y, s, p, i: T.autograd.grad(s, (t for t in [x, w])),
 "grad_nonleaf_input": lambda T, x, w, y, s, p, i: T.autograd.grad(s, y),
 "bw_basic": lambda T, x, w, y, s, p, i: (s.backward(), x.grad)[1],
 "bw_nonscalar": lambda T, x, w, y, s, p, i: y.backward(),
 "bw_gt_shape": lambda T, x, w, y, s, p, i: y.backward(T.ones(3)),
 "bw_gt_dtype": lambda T, x, w, y, s, p, i: (y.backward(T.ones(2, dtype=T.float64)), x.grad)[1],
 "bw_gt_int": lambda T, x, w, y, s, p, i: (y.backward(T.ones(2, dtype=T.int64)), x.grad)[1],
 "bw_gt_list": lambda T, x, w, y, s, p, i: y.backward([1.0, 1.0]),
 "bw_noreq": lambda T, x, w, y, s, p, i: p.sum().backward(),
 "bw_inputs_empty": lambda T, x, w, y, s, p, i: s.backward(inputs=[]),
 "bw_inputs_dup": lambda T, x, w, y, s, p, i: (s.backward(inputs=[x, x]), x.grad)[1],
 "bw_inputs_noreq": lambda T, x, w, y, s, p, i: s.backward(inputs=[p]),
 "bw_inputs_nontensor": lambda T, x, w, y, s, p, i: s.backward(inputs=[3]),
 "bw_inputs_tensor": lambda T, x, w, y, s, p, i: (s.backward(inputs=x), x.grad, w.grad)[1:],
 "bw_inputs_unused": lambda T, x, w, y, s, p, i: (s.backward(inputs=[x, T.ones(1, requires_grad=True)]), x.grad)[1],
 "bw_inputs_nonleaf": lambda T, x, w, y, s, p, i: (s.backward(inputs=[y]), y.grad, x.grad)[1:],
 "bw_retain_default": lambda T, x, w, y, s, p, i: (s.backward(), attempt(lambda: s.backward()))[1],
 "bw_create": lambda T, x, w, y, s, p, i: (s.backward(create_graph=True), x.grad, s.backward(), x.grad)[1:],
 "abw_len": lambda T, x, w, y, s, p, i: T.autograd.backward([s, y], [None]),
 "abw_len2": lambda T, x, w, y, s, p, i: T.autograd.backward([s], [T.ones(()), T.ones(())]),
 "abw_none_grad": lambda T, x, w, y, s, p, i: (T.autograd.backward([s, y], [None, T.ones(2)]), x.grad)[1],
 "abw_empty": lambda T, x, w, y, s, p, i: T.autograd.backward([]),
 "abw_nontensor": lambda T, x, w, y, s, p, i: T.autograd.backward([3.0]),
 "abw_grad_variables": lambda T, x, w, y, s, p, i: (T.autograd.backward(y, grad_variables=T.ones(2)), x.grad)[1],
 "abw_both": lambda T, x, w, y, s, p, i: T.autograd.backward(y, grad_tensors=T.ones(2), grad_variables=T.ones(2)),
 "abw_dup_tensors": lambda T, x, w, y, s, p, i: (T.autograd.backward([s, s]), x.grad)[1],
 "grad_dup_outputs": lambda T, x, w, y, s, p, i: T.autograd.grad([s, s], x),
 "grad_complex_out": lambda T, x, w, y, s, p, i: T.autograd.grad((x * (1 + 1j)).sum(), x),
 "grad_int_out_scalar": lambda T, x, w, y, s, p, i: T.autograd.grad(s.long(), x),
}


@pytest.mark.parametrize("name", list(G))
def test_argument_checks(name):
    def program(T):
        return G[name](T, *cases(T))

    same(program)
    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)


def test_dict_inputs():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor(3.0, requires_grad=True)
        s = (x * w).sum()
        grads = T.autograd.grad(s, {"x": x, "w": w}, retain_graph=True)
        s.backward(inputs={"w": w})
        return sorted(grads), grads["x"], grads["w"], w.grad, x.grad

    same(program)


def test_grad_outputs_of_a_narrower_dtype_are_cast_as_a_recorded_op():
    """A float32 grad_output of a float64 output is cast to float64 (not rounded through
    float32), and under create_graph the cast is recorded (torch's validate_outputs): the
    gradient of the gradient reaches the grad_output."""
    def program(T):
        x = T.tensor([0.1, 0.2, 0.3], dtype=T.float64, requires_grad=True)
        g = T.tensor([1.1, 2.2, 3.3], requires_grad=True)
        gx, = T.autograd.grad(x * x, x, g, create_graph=True)
        second = T.autograd.grad((gx * gx).sum(), (x, g))
        (x * 3).backward(g.detach())
        return gx.detach(), second, x.grad

    same(program)
