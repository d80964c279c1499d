"""Which gradients made with ``create_graph`` require grad, and how their graphs are freed,
differential against torch. torch's formulas are ops: a gradient requires grad when ``grad``
does or when the formula reaches an input along floating values (``grad * self.sgn()``), not
when it reads the input only as a mask or an index (``clamp``'s ``grad * (lo <= self <= hi)``,
``max``'s index) or for its shape (``zeros_like(self)``); a formula that is one of torch's
backward ops (``threshold_backward(grad, self, ...)``) takes the input, and one without a
formula of its own is ``NotImplemented``. Each input's formula is its own op, freed apart."""

from __future__ import annotations

import math

import pytest

from differential import attempt, bug, same

torch = pytest.importorskip("torch")


def _inputs(T, shapes):
    return [(T.arange(1, 1 + math.prod(s), dtype=T.float64).reshape(s).sin() * 1.3)
            .requires_grad_() for s in shapes]


def _cases(T):
    F = T.nn.functional

    def zeros(n):
        return T.zeros(n, dtype=T.float64)

    return {
        # read as masks or indices only: the gradient does not require grad
        "clamp": (lambda a: a.clamp(-0.5, 0.5), [(5,)]),
        "clamp_tensor": (lambda a: a.clamp(min=zeros(5)), [(5,)]),
        "clamp_max": (lambda a: a.clamp_max(0.2), [(5,)]),
        "amax_dim": (lambda a: a.amax(0), [(2, 3)]),
        "amin": (lambda a: a.amin(), [(2, 3)]),
        "max": (lambda a: a.max(), [(2, 3)]),
        "max_dim": (lambda a: a.max(0)[0], [(2, 3)]),
        "min_dim": (lambda a: a.min(1).values, [(2, 3)]),
        "maximum_constant": (lambda a: T.maximum(a, zeros(5)), [(5,)]),
        "minimum_constant": (lambda a: T.minimum(a, zeros(5)), [(5,)]),
        "maximum_of_itself": (lambda a: T.maximum(a, a.flip(0)), [(5,)]),
        "median": (lambda a: a.median(), [(5,)]),
        "kthvalue": (lambda a: a.kthvalue(2)[0], [(5,)]),
        "cummax": (lambda a: a.cummax(0)[0], [(5,)]),
        "sort": (lambda a: a.sort(0)[0], [(5,)]),
        "topk": (lambda a: a.topk(2)[0], [(5,)]),
        "gather": (lambda a: a.gather(0, T.tensor([0, 1])), [(5,)]),
        "nan_to_num": (lambda a: a.nan_to_num(), [(5,)]),
        "where": (lambda a: T.where(a > 0, a, zeros(5)), [(5,)]),
        "masked_fill": (lambda a: a.masked_fill(a > 0, 0.0), [(5,)]),
        "pow_0": (lambda a: a.pow(0), [(5,)]),
        # reached along floating values: it does
        "abs": (lambda a: a.abs(), [(5,)]),
        "sign_mul": (lambda a: a.sign() * a, [(5,)]),
        "pow_1": (lambda a: a.pow(1), [(5,)]),
        "pow_2": (lambda a: a.pow(2), [(5,)]),
        "prod": (lambda a: a.prod(), [(5,)]),
        "norm_inf": (lambda a: a.norm(float("inf")), [(5,)]),
        "l1_loss": (lambda a, b: F.l1_loss(a, b), [(5,), (5,)]),
        # torch's backward ops take the input
        "relu": (lambda a: F.relu(a), [(5,)]),
        "threshold": (lambda a: F.threshold(a, 0.1, 2.0), [(5,)]),
        "hardtanh": (lambda a: F.hardtanh(a), [(5,)]),
        "relu6": (lambda a: F.relu6(a), [(5,)]),
        "leaky_relu": (lambda a: F.leaky_relu(a, 0.1), [(5,)]),
        "hardshrink": (lambda a: F.hardshrink(a), [(5,)]),
        "softshrink": (lambda a: F.softshrink(a), [(5,)]),
        "hardswish": (lambda a: F.hardswish(a), [(5,)]),
        "hardsigmoid": (lambda a: F.hardsigmoid(a), [(5,)]),
        "celu": (lambda a: F.celu(a), [(5,)]),
        "logsigmoid": (lambda a: F.logsigmoid(a), [(5,)]),
        "glu": (lambda a: F.glu(a), [(6,)]),
        "rrelu_eval": (lambda a: F.rrelu(a), [(5,)]),
        "smooth_l1": (lambda a, b: F.smooth_l1_loss(a, b), [(5,), (5,)]),
        "huber": (lambda a, b: F.huber_loss(a, b), [(5,), (5,)]),
        "mse": (lambda a, b: F.mse_loss(a, b), [(5,), (5,)]),
        "max_pool2d": (lambda a: F.max_pool2d(a, 2), [(1, 1, 4, 4)]),
        "max_pool1d": (lambda a: F.max_pool1d(a, 2), [(1, 2, 6)]),
        "avg_pool2d": (lambda a: F.avg_pool2d(a, 2), [(1, 1, 4, 4)]),
        "adaptive_avg_pool2d": (lambda a: F.adaptive_avg_pool2d(a, 2), [(1, 1, 4, 4)]),
        "adaptive_max_pool2d": (lambda a: F.adaptive_max_pool2d(a, 2), [(1, 1, 4, 4)]),
        "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                       [(3, 2), (2,), (2,)]),
        "prelu": (lambda x, w: F.prelu(x, w), [(2, 3), (1,)]),
        "linear": (lambda x, w, b: F.linear(x, w, b), [(2, 3), (4, 3), (4,)]),
        "kl_div": (lambda a, b: F.kl_div(a, b), [(5,), (5,)]),
        "poisson_nll": (lambda a, b: F.poisson_nll_loss(a, b), [(5,), (5,)]),
    }


XFAIL = {"prelu": "torch's weight gradient is a view of the shared PreluKernelBackwardBackward0 "
                  "node's output; jaxgrad records the view as its own op, not freed with it"}
NAMES = list(_cases(torch))


@pytest.mark.parametrize("case", [pytest.param(n, marks=[bug(XFAIL[n])] if n in XFAIL else [])
                                  for n in NAMES])
def test_create_graph_gradients_require_grad_and_free_as_torch(case):
    def program(T):
        fn, shapes = _cases(T)[case]
        xs = _inputs(T, shapes)
        out = fn(*xs)
        grads = T.autograd.grad(out.sum(), xs, create_graph=True, allow_unused=True)
        seen = [None if g is None else (type(g.grad_fn).__name__ if g.grad_fn else None,
                                        g.requires_grad) for g in grads]
        # each gradient's own graph, backpropagated in turn without retain_graph: torch frees
        # per formula (and raises through NotImplemented)
        second = [attempt(lambda g=g: T.autograd.grad(g.sum(), xs, allow_unused=True) and "ran")
                  for g in grads if g is not None and g.requires_grad]
        return seen, second

    same(program)
