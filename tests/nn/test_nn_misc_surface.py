"""nn surface programs written for torch call: multi-class margin losses, the triplet loss with a
distance function, local response norm, channel shuffle, embedding bags, CTC loss, the deprecated
upsampling aliases, ``Unflatten``, ``NLLLoss2d``, ``SyncBatchNorm`` and torch-level aten forms of
nn functions. Differential against torch: values, grad_fn graphs, first and (float64) second
derivatives, errors and warnings."""

from __future__ import annotations

import numpy as np
import pytest

from differential import (
    attempt,
    captured_warnings,
    grad_of,
    next_functions,
    ok,
    torch,
    weighted,
)

RS = np.random.RandomState(7)


def _grads(T, out, *leaves):
    """First derivatives of a weighting of ``out`` (create_graph) and the graph of each."""
    gs = T.autograd.grad(weighted(T, out), leaves, create_graph=True, allow_unused=True)
    return list(gs)


def _second(T, grads, *leaves):
    """Second derivatives: the gradient of a weighting of the first ones."""
    total = sum(weighted(T, g) for g in grads if g is not None)
    seconds = T.autograd.grad(total, leaves, allow_unused=True)
    # (torch's ZeroTensor gradients read as plain zeros)
    return [None if g is None else T.zeros(g.shape, dtype=g.dtype) + g for g in seconds]


# --- multi-class margin losses ------------------------------------------------------------------

X = RS.randn(3, 4)


def test_multi_margin_losses():
    def program(T):
        F = T.nn.functional
        x = T.tensor(X, dtype=T.float64, requires_grad=True)
        t = T.tensor([0, 2, 3])
        w = T.tensor([0.5, 1.0, 2.0, 1.5], dtype=T.float64)
        out = []
        for kw in [{}, {"p": 2}, {"margin": 0.3, "reduction": "sum"},
                   {"weight": w, "reduction": "none"}, {"p": 2, "weight": w, "margin": 2.0},
                   {"size_average": False}]:
            loss = F.multi_margin_loss(x, t, **kw)
            g = T.autograd.grad(weighted(T, loss), x, create_graph=True)[0]
            out += [loss, next_functions(loss.grad_fn), g,
                    attempt(lambda g=g: g.sum().backward())]
        v = x[1].detach().requires_grad_()
        for tt in (T.tensor(2), T.tensor([2])):
            loss = F.multi_margin_loss(v, tt, reduction="none")
            out += [loss, T.autograd.grad(loss.sum(), v)[0]]
        m = T.nn.MultiMarginLoss(p=2, margin=0.5, weight=w)
        out += [repr(m), m(x, t), list(m.state_dict())]
        return out

    ok(program)


def test_multilabel_margin_losses():
    def program(T):
        F = T.nn.functional
        x = T.tensor(X, dtype=T.float64, requires_grad=True)
        t = T.tensor([[3, 0, -1, 1], [1, 1, 2, -1], [-1, 0, 1, 2]])
        out = []
        for kw in [{}, {"reduction": "sum"}, {"reduction": "none"}, {"reduce": False}]:
            loss = F.multilabel_margin_loss(x, t, **kw)
            g = T.autograd.grad(weighted(T, loss), x, create_graph=True)[0]
            out += [loss, next_functions(loss.grad_fn), g,
                    attempt(lambda g=g: g.sum().backward())]
        v = x[0].detach().requires_grad_()
        loss = F.multilabel_margin_loss(v, t[0], reduction="none")
        out += [loss, T.autograd.grad(loss, v)[0]]
        m = T.nn.MultiLabelMarginLoss(reduction="sum")
        out += [repr(m), m(x, t)]
        return out

    ok(program)


MARGIN_ERRORS = {
    "target_range": lambda F, x: F.multi_margin_loss(x, x.new_tensor([0, 1, 4]).long()),
    "target_size": lambda F, x: F.multi_margin_loss(x, x.new_tensor([[0, 1, 2]]).long()),
    "weight_size": lambda F, x: F.multi_margin_loss(x, x.new_tensor([0, 1, 2]).long(),
                                                    weight=x.new_ones(3)),
    "weight_dim": lambda F, x: F.multi_margin_loss(x, x.new_tensor([0, 1, 2]).long(),
                                                   weight=x.new_ones(4, 1)),
    "weight_grad": lambda F, x: F.multi_margin_loss(x, x.new_tensor([0, 1, 2]).long(),
                                                    weight=x.new_ones(4).requires_grad_()),
    "p": lambda F, x: F.multi_margin_loss(x, x.new_tensor([0, 1, 2]).long(), p=3),
    "reduction": lambda F, x: F.multi_margin_loss(x, x.new_tensor([0, 1, 2]).long(),
                                                  reduction="foo"),
    "float_target": lambda F, x: F.multi_margin_loss(x, x.new_tensor([0, 1, 2])),
    "3d": lambda F, x: F.multi_margin_loss(x[None], x.new_tensor([0]).long()),
    "empty_classes": lambda F, x: F.multi_margin_loss(x[:, :0], x.new_tensor([0, 0, 0]).long()),
    "int_input": lambda F, x: F.multi_margin_loss(x.int(), x.new_tensor([0, 1, 2]).long()),
    "label_range": lambda F, x: F.multilabel_margin_loss(x, (x * 0 + 5).long()),
    "label_negative": lambda F, x: F.multilabel_margin_loss(x, (x * 0 - 2).long()),
    "label_size": lambda F, x: F.multilabel_margin_loss(x, x[:, :3].long()),
    "label_1d_size": lambda F, x: F.multilabel_margin_loss(x[0], x[:1].long()),
    "label_int": lambda F, x: F.multilabel_margin_loss(x, (x * 0).int()),
    "triplet_margin": lambda F, x: F.triplet_margin_with_distance_loss(x, x, x, margin=0.0),
    "triplet_reduction": lambda F, x: F.triplet_margin_with_distance_loss(x, x, x,
                                                                          reduction="avg"),
    "triplet_dims": lambda F, x: F.triplet_margin_with_distance_loss(x, x[0], x),
}


def test_margin_loss_errors():
    def program(T):
        x = T.tensor(X, requires_grad=True)
        return {k: attempt(lambda f=f: f(T.nn.functional, x)) for k, f in MARGIN_ERRORS.items()}

    ok(program)


def test_triplet_margin_with_distance_loss():
    a, p, n = RS.randn(3, 4), RS.randn(3, 4), RS.randn(3, 4)

    def program(T):
        F = T.nn.functional
        leaves = [T.tensor(v, dtype=T.float64, requires_grad=True) for v in (a, p, n)]
        out = []
        cosine = lambda u, v: 1.0 - F.cosine_similarity(u, v)  # noqa: E731
        for kw in [{}, {"swap": True, "margin": 3.0}, {"distance_function": cosine},
                   {"distance_function": T.nn.PairwiseDistance(p=1), "reduction": "none"},
                   {"reduction": "sum", "swap": True, "margin": 2.5}]:
            loss = F.triplet_margin_with_distance_loss(*leaves, **kw)
            gs = _grads(T, loss, *leaves)
            out += [loss, next_functions(loss.grad_fn), gs, _second(T, gs, *leaves)]
        m = T.nn.TripletMarginWithDistanceLoss(margin=2.0, swap=True)
        out += [repr(m), m(*leaves)]
        return out

    ok(program)
