"""Losses against torch.nn: smooth L1, Huber and KL divergence; margin ranking, hinge and cosine
embedding, soft margin and multilabel soft margin, Poisson and Gaussian NLL, triplet margin.
Functional forms and modules: values, grad_fn graphs, gradients, reprs, errors and warnings."""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import (
    attempt,
    captured_warnings,
    float_leaves,
    grad_of,
    next_functions,
    ok,
    raises,
    torch,
    weighted,
    weighted_backward,
)

RS = np.random.RandomState(20)


# --- smooth L1, Huber, KL divergence --------------------------------------------------------------

SMOOTH_L1_HUBER_KL_LOSSES = {
    "smooth_l1": lambda F, a, b: F.smooth_l1_loss(a, b),
    "smooth_l1_beta_sum": lambda F, a, b: F.smooth_l1_loss(a, b, beta=0.3, reduction="sum"),
    "smooth_l1_beta0": lambda F, a, b: F.smooth_l1_loss(a, b, beta=0.0),
    "smooth_l1_none": lambda F, a, b: F.smooth_l1_loss(a, b, reduction="none", beta=2.0),
    "huber": lambda F, a, b: F.huber_loss(a, b),
    "huber_delta_none": lambda F, a, b: F.huber_loss(a, b, reduction="none", delta=0.5),
    "huber_weight": lambda F, a, b: F.huber_loss(a, b, delta=2.0, weight=b.detach().abs()),
    "huber_weight_sum": lambda F, a, b: F.huber_loss(a, b, reduction="sum",
                                                     weight=b.detach().abs()),
    "kl_batchmean": lambda F, a, b: F.kl_div(a.log_softmax(-1), b.softmax(-1),
                                             reduction="batchmean"),
    "kl_sum": lambda F, a, b: F.kl_div(a.log_softmax(-1), b.softmax(-1), reduction="sum"),
    "kl_none": lambda F, a, b: F.kl_div(a, b.abs(), reduction="none"),
    "kl_zero_target": lambda F, a, b: F.kl_div(a, b.relu(), reduction="sum"),
    "kl_log_target": lambda F, a, b: F.kl_div(a, b, reduction="batchmean", log_target=True),
    "kl_log_target_none": lambda F, a, b: F.kl_div(a, b, reduction="none", log_target=True),
}


@pytest.mark.parametrize("key", list(SMOOTH_L1_HUBER_KL_LOSSES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_smooth_l1_huber_kl_losses(key, dtype):
    arrays = [RS.randn(3, 4) * 2, RS.randn(3, 4)]

    def program(T):
        a, b = (T.tensor(x, dtype=getattr(T, dtype), requires_grad=True) for x in arrays)
        out = SMOOTH_L1_HUBER_KL_LOSSES[key](T.nn.functional, a, b)
        graph = next_functions(out.grad_fn)
        weighted_backward(T, out)
        return out, graph, grad_of(a), grad_of(b)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.smooth_l1_loss(T.ones(3), T.ones(3), beta=-1.0),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), delta=0.0),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), weight=T.ones(2)),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), reduction="avg"),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), reduction="avg",
                                         weight=T.ones(3)),
    lambda T: T.nn.functional.smooth_l1_loss(T.ones(3), T.ones(3), reduction="avg"),
    lambda T: T.nn.functional.kl_div(T.ones(3), T.ones(4), reduction="sum"),
    lambda T: T.nn.functional.kl_div(T.ones(3), T.ones(3), reduction="avg"),
])
def test_smooth_l1_huber_kl_loss_errors(call):
    raises(call)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.kl_div(T.zeros(2, 3), T.ones(2, 3)),
    lambda T: T.nn.functional.kl_div(T.zeros(2, 3), T.ones(2, 3), reduction="batchmean"),
    lambda T: T.nn.functional.smooth_l1_loss(T.zeros(2, 3), T.ones(3)),
    lambda T: T.nn.functional.huber_loss(T.zeros(2, 3), T.ones(1, 3)),
])
def test_smooth_l1_huber_kl_loss_warnings(call):
    ok(call)
    assert captured_warnings(call, jaxgrad) == captured_warnings(call, torch)


SMOOTH_L1_HUBER_KL_LOSS_MODULES = {
    "smooth": lambda T: T.nn.SmoothL1Loss(beta=0.5),
    "smooth_sum": lambda T: T.nn.SmoothL1Loss(reduction="sum"),
    "huber": lambda T: T.nn.HuberLoss(delta=0.7),
    "huber_none": lambda T: T.nn.HuberLoss(reduction="none"),
    "kl": lambda T: T.nn.KLDivLoss(reduction="batchmean"),
    "kl_log": lambda T: T.nn.KLDivLoss(reduction="sum", log_target=True),
}


@pytest.mark.parametrize("key", list(SMOOTH_L1_HUBER_KL_LOSS_MODULES))
def test_smooth_l1_huber_kl_loss_modules(key):
    arrays = [RS.randn(2, 5), RS.randn(2, 5)]

    def program(T):
        loss = SMOOTH_L1_HUBER_KL_LOSS_MODULES[key](T)
        a = T.tensor(arrays[0], requires_grad=True)
        b = T.tensor(arrays[1]).softmax(-1) if key == "kl" else T.tensor(arrays[1])
        out = loss(a, b)
        weighted_backward(T, out)
        return repr(loss), out, grad_of(a), loss.__dict__.get("beta"), loss.__dict__.get(
            "delta"), loss.__dict__.get("log_target"), loss.reduction

    ok(program)


# --- margin, embedding and likelihood losses ------------------------------------------------------

A6, B6, C6 = RS.randn(3, 4), RS.randn(3, 4), RS.randn(3, 4)
SIGNS = np.sign(RS.randn(3, 4))
ROW_SIGNS = np.array([1.0, -1.0, 1.0])
COUNTS = RS.poisson(2.0, (3, 4)).astype(np.float64)
PROBS = (RS.rand(3, 4) > 0.5).astype(np.float64)
VAR = RS.uniform(0.5, 2.0, (3, 4))

MARGIN_EMBEDDING_NLL_LOSSES = {
    "margin_ranking": (lambda F, T, a, b: F.margin_ranking_loss(
        a[:, 0], b[:, 0], T.tensor(ROW_SIGNS, dtype=a.dtype), margin=0.3), [A6, B6]),
    "margin_ranking_sum": (lambda F, T, a, b: F.margin_ranking_loss(
        a, b, T.tensor(SIGNS, dtype=a.dtype), reduction="sum"), [A6, B6]),
    "hinge_embedding": (lambda F, T, a: F.hinge_embedding_loss(
        a, T.tensor(SIGNS, dtype=a.dtype)), [A6]),
    "hinge_embedding_none": (lambda F, T, a: F.hinge_embedding_loss(
        a, T.tensor(SIGNS, dtype=a.dtype), margin=0.5, reduction="none"), [A6]),
    "soft_margin": (lambda F, T, a: F.soft_margin_loss(a, T.tensor(SIGNS, dtype=a.dtype)), [A6]),
    "soft_margin_none": (lambda F, T, a: F.soft_margin_loss(
        a, T.tensor(SIGNS, dtype=a.dtype), reduction="none"), [A6]),
    "multilabel_soft_margin": (lambda F, T, a: F.multilabel_soft_margin_loss(
        a, T.tensor(PROBS, dtype=a.dtype)), [A6]),
    "multilabel_soft_margin_weight": (lambda F, T, a, w: F.multilabel_soft_margin_loss(
        a, T.tensor(PROBS, dtype=a.dtype), weight=w, reduction="none"), [A6, B6[0]]),
    "cosine_embedding": (lambda F, T, a, b: F.cosine_embedding_loss(
        a, b, T.tensor(ROW_SIGNS, dtype=a.dtype), margin=-0.2), [A6, B6]),
    "cosine_embedding_0d": (lambda F, T, a, b: F.cosine_embedding_loss(
        a[0], b[0], T.tensor(-1.0, dtype=a.dtype), reduction="sum"), [A6, B6]),
    "poisson_nll": (lambda F, T, a: F.poisson_nll_loss(a, T.tensor(COUNTS, dtype=a.dtype)),
                    [A6]),
    "poisson_nll_full": (lambda F, T, a: F.poisson_nll_loss(
        a, T.tensor(COUNTS, dtype=a.dtype), full=True, reduction="sum"), [A6]),
    "poisson_nll_rate": (lambda F, T, a: F.poisson_nll_loss(
        a.abs(), T.tensor(COUNTS, dtype=a.dtype), log_input=False, reduction="none"), [A6]),
    "gaussian_nll": (lambda F, T, a, b, v: F.gaussian_nll_loss(a, b, v), [A6, B6, VAR]),
    "gaussian_nll_full_homo": (lambda F, T, a, b, v: F.gaussian_nll_loss(
        a, b, v[:, 0], full=True, reduction="sum"), [A6, B6, VAR]),
    "gaussian_nll_float_var": (lambda F, T, a, b: F.gaussian_nll_loss(
        a, b, 0.7, reduction="none"), [A6, B6]),
    "triplet_margin": (lambda F, T, a, b, c: F.triplet_margin_loss(a, b, c), [A6, B6, C6]),
    "triplet_margin_swap_p1": (lambda F, T, a, b, c: F.triplet_margin_loss(
        a, b, c, margin=2.0, p=1, swap=True, reduction="none"), [A6, B6, C6]),
}


@pytest.mark.parametrize("key", list(MARGIN_EMBEDDING_NLL_LOSSES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_margin_embedding_and_nll_losses(key, dtype):
    fn, arrays = MARGIN_EMBEDDING_NLL_LOSSES[key]

    def program(T):
        leaves = float_leaves(T, dtype, *arrays)
        out = fn(T.nn.functional, T, *leaves)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, graph, [grad_of(t) for t in leaves]

    ok(program, rtol=None if dtype == "float64" else 1e-5)


MARGIN_EMBEDDING_NLL_LOSS_MODULES = {
    "margin_ranking": (lambda T: T.nn.MarginRankingLoss(0.2), 3),
    "hinge_embedding": (lambda T: T.nn.HingeEmbeddingLoss(reduction="sum"), 2),
    "cosine_embedding": (lambda T: T.nn.CosineEmbeddingLoss(0.1), 3),
    "soft_margin": (lambda T: T.nn.SoftMarginLoss(size_average=False), 2),
    "multilabel_soft_margin": (lambda T: T.nn.MultiLabelSoftMarginLoss(
        weight=T.tensor(VAR[0])), 2),
    "poisson_nll": (lambda T: T.nn.PoissonNLLLoss(full=True), 2),
    "gaussian_nll": (lambda T: T.nn.GaussianNLLLoss(eps=0.6), 3),
    "triplet_margin": (lambda T: T.nn.TripletMarginLoss(swap=True, p=3.0), 3),
}


@pytest.mark.parametrize("key", list(MARGIN_EMBEDDING_NLL_LOSS_MODULES))
def test_margin_embedding_and_nll_loss_modules(key):
    build, _ = MARGIN_EMBEDDING_NLL_LOSS_MODULES[key]

    def program(T):
        m = build(T)
        a, b = float_leaves(T, "float64", A6, B6)
        third = {"margin_ranking": T.tensor(SIGNS), "cosine_embedding": T.tensor(ROW_SIGNS),
                 "gaussian_nll": T.tensor(VAR, requires_grad=True)}.get(key, C6)
        if key in ("hinge_embedding", "soft_margin"):
            args = (a, T.tensor(SIGNS))
        elif key == "multilabel_soft_margin":
            args = (a, T.tensor(PROBS))
        elif key == "poisson_nll":
            args = (a, T.tensor(COUNTS))
        else:
            args = (a, b, T.tensor(third) if isinstance(third, np.ndarray) else third)
        out = m(*args)
        weighted(T, out).backward()
        return repr(m), out, grad_of(a), grad_of(b), list(m.state_dict())

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.margin_ranking_loss(T.ones(3), T.ones(3, 1), T.ones(3)),
    lambda T: T.nn.functional.margin_ranking_loss(T.ones(3), T.ones(3), T.ones(3),
                                                  reduction="avg"),
    lambda T: T.nn.functional.cosine_embedding_loss(T.ones(3, 2), T.ones(3, 2), T.ones(3, 1)),
    lambda T: T.nn.functional.cosine_embedding_loss(T.ones(3), T.ones(3, 2), T.ones(3)),
    lambda T: T.nn.functional.cosine_embedding_loss(T.ones(3, 2), T.ones(3, 2), T.tensor(1.0)),
    lambda T: T.nn.functional.poisson_nll_loss(T.ones(3), T.ones(3), reduction="avg"),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3), T.ones(3), -1.0),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3), T.ones(3), -T.ones(3)),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3, 2), T.ones(3, 2), T.ones(2, 3)),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3), T.ones(3), T.ones(3),
                                                reduction="avg"),
    lambda T: T.nn.functional.multilabel_soft_margin_loss(T.ones(3, 2), T.ones(3, 2),
                                                          reduction="avg"),
    lambda T: T.nn.functional.triplet_margin_loss(T.ones(3, 2), T.ones(3, 2), T.ones(2)),
    lambda T: T.nn.TripletMarginLoss(margin=0.0),
])
def test_margin_embedding_and_nll_loss_errors(call):
    raises(call)


def test_integer_inputs_promote_as_torch():
    """The Scalar steps inside these losses (``+ margin``, ``+ eps``) follow torch's promotion:
    integer tensors give default-float results."""
    def program(T):
        F = T.nn.functional
        a, b = T.tensor([[1, 2], [3, 5]]), T.tensor([[3, 5], [1, 2]])
        f = T.tensor([[1.5, 2.5], [0.5, 3.0]])
        return [F.pairwise_distance(a, b), F.poisson_nll_loss(a, f, log_input=False),
                F.poisson_nll_loss(f, a, log_input=False, full=True),
                F.margin_ranking_loss(a[0], a[1], T.tensor([1, -1]), margin=0.5),
                F.cosine_embedding_loss(a, b, T.tensor([1, -1]), margin=0.5),
                F.triplet_margin_loss(a, b, a, margin=0.5)]
    ok(program)


def test_weights_apply_in_the_loss_dtype_as_torch():
    """torch's BCE kernels multiply a (pos_)weight in place: a float64 weight leaves a float32
    loss float32; BCE's input and target share one dtype; rms_norm takes no integers."""
    def program(T):
        F = T.nn.functional
        x = T.tensor([0.2, 0.7, 0.4], requires_grad=True)
        y, w = T.tensor([0.0, 1.0, 0.5]), T.tensor([0.5, 2.0, 1.5], dtype=T.float64)
        losses = [F.binary_cross_entropy(x, y, weight=w),
                  F.binary_cross_entropy(x, y, weight=w, reduction="none"),
                  F.binary_cross_entropy_with_logits(x, y, weight=w),
                  F.binary_cross_entropy_with_logits(x, y, pos_weight=w)]
        grads = T.autograd.grad(sum(loss.sum() for loss in losses), x)
        errors = [attempt(lambda: F.binary_cross_entropy(x.double(), y)),
                  attempt(lambda: F.binary_cross_entropy(x, y.double())),
                  attempt(lambda: F.rms_norm(T.tensor([[1, 2]]), [2])),
                  attempt(lambda: F.rms_norm(T.tensor([[True, False]]), [2]))]
        return losses, grads, errors
    ok(program)
