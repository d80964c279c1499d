"""nn surface programs written for torch call: multi-class margin losses, the triplet loss with a
distance function, local response norm, channel shuffle, embedding bags, CTC loss, the deprecated
upsampling aliases, ``Unflatten``, ``NLLLoss2d``, ``SyncBatchNorm`` and torch-level aten forms of
nn functions. Differential against torch: values, grad_fn graphs, first and (float64) second
derivatives, errors and warnings."""

from __future__ import annotations

import numpy as np

import jaxgrad
from differential import (
    attempt,
    captured_warnings,
    next_functions,
    ok,
    torch,
    val,
    weighted,
)

RS = np.random.RandomState(7)


def _grads(T, out, *leaves, create_graph=True):
    """First derivatives of a weighting of ``out`` (with their graphs when ``create_graph``)."""
    gs = T.autograd.grad(weighted(T, out), leaves, create_graph=create_graph, allow_unused=True)
    return list(gs)


def _second(T, grads, *leaves):
    """Second derivatives: the gradient of a weighting of the first ones."""
    live = [g for g in grads if g is not None and g.requires_grad]
    if not live:  # (first derivatives constant: no graph)
        return None
    total = sum(weighted(T, g) for g in live)
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
        for kw in [{}, {"margin": 0.3, "reduction": "sum"}, {"weight": w, "reduction": "none"},
                   {"p": 2, "weight": w, "margin": 2.0}]:
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
        for kw in [{}, {"reduction": "none"}, {"reduce": False, "size_average": True}]:
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
        cosine = lambda u, v: 1.0 - F.cosine_similarity(u, v)
        for kw in [{"swap": True, "margin": 3.0}, {"distance_function": cosine},
                   {"distance_function": T.nn.PairwiseDistance(p=1), "reduction": "none"}]:
            loss = F.triplet_margin_with_distance_loss(*leaves, **kw)
            gs = _grads(T, loss, *leaves)
            out += [loss, next_functions(loss.grad_fn), gs,
                    _second(T, gs, *leaves) if kw.get("swap") else None]
        m = T.nn.TripletMarginWithDistanceLoss(margin=2.0, swap=True)
        out += [repr(m), m(*leaves)]
        return out

    ok(program)


# --- local response norm, channel shuffle ------------------------------------------------------


def test_local_response_norm():
    x3, x4 = RS.randn(2, 5, 3), RS.randn(2, 5, 2, 3)

    def program(T):
        F = T.nn.functional
        out = []
        a = T.tensor(x3, dtype=T.float64, requires_grad=True)
        y = F.local_response_norm(a, 2, 1e-2, 0.5, 2.0)
        gs = _grads(T, y, a)
        out += [y, next_functions(y.grad_fn), gs, _second(T, gs, a)]
        b = T.tensor(x4, dtype=T.float64, requires_grad=True)
        m = T.nn.LocalResponseNorm(4, alpha=0.1, beta=0.6, k=1.5)
        y = m(b)
        out += [repr(m), y, T.autograd.grad(weighted(T, y), b)[0], F.local_response_norm(b[:0], 2),
                attempt(lambda: F.local_response_norm(b[0, 0], 2))]
        return out

    ok(program)


def test_channel_shuffle():
    values = RS.randn(2, 6, 2)

    def program(T):
        F = T.nn.functional
        x = T.tensor(values, dtype=T.float64, requires_grad=True)
        out = []
        for f in (lambda x: F.channel_shuffle(x, 3), lambda x: T.channel_shuffle(x, 3),
                  T.nn.ChannelShuffle(3)):
            y = f(x)
            v = T.ones_like(y).cumsum(0).requires_grad_()
            g = T.autograd.grad(y, x, v, create_graph=True)[0]
            out += [y, next_functions(y.grad_fn), g, T.autograd.grad(weighted(T, g), v)[0]]
        n = F.native_channel_shuffle(x, 2)
        out += [repr(T.nn.ChannelShuffle(3)), n, attempt(lambda: n.sum().backward()),
                T.channel_shuffle(T.arange(8).reshape(1, 4, 2), 2),
                T.channel_shuffle(T.ones(2, 4, 1, 1, 1), 2).shape]
        for bad in [lambda: T.channel_shuffle(x, 4), lambda: T.channel_shuffle(x, 0),
                    lambda: T.channel_shuffle(x[0], 2), lambda: T.native_channel_shuffle(x, -1)]:
            out.append(attempt(bad))
        return out

    ok(program)


# --- upsampling aliases, in-place selu/celu, Unflatten, NLLLoss2d, SyncBatchNorm ---------------


def test_upsampling_aliases():
    x = RS.randn(1, 2, 2, 3)

    def program(T):
        F = T.nn.functional
        a = T.tensor(x, dtype=T.float64, requires_grad=True)
        out = []
        for y in [F.upsample(a, size=(3, 4), mode="bilinear"), F.upsample_nearest(a, (4, 5)),
                  F.upsample_bilinear(a, scale_factor=2),
                  T.nn.UpsamplingNearest2d(scale_factor=3)(a),
                  T.nn.UpsamplingBilinear2d(size=(3, 5))(a)]:
            out += [y, next_functions(y.grad_fn), T.autograd.grad(weighted(T, y), a)[0]]
        out += [repr(T.nn.UpsamplingNearest2d(scale_factor=3)),
                repr(T.nn.UpsamplingBilinear2d(size=(3, 5)))]
        return out

    ok(program)
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        def warns(T, name=name):
            getattr(T.nn.functional, name)(T.ones(1, 1, 2, 2), scale_factor=2)

        assert captured_warnings(warns, torch) == captured_warnings(warns, jaxgrad)
        assert captured_warnings(warns, torch)


def test_selu_celu_inplace_unflatten_nll_loss2d():
    values, logits = RS.randn(2, 6), RS.randn(2, 3, 2, 2)

    def program(T):
        F = T.nn.functional
        a = T.tensor(values, dtype=T.float64, requires_grad=True)
        s = a * 1.0
        F.selu_(s)
        c = a * 1.0
        F.celu_(c, 0.7)
        gs = _grads(T, s + c, a)
        out = [s, c, next_functions(s.grad_fn), next_functions(c.grad_fn), gs,
               _second(T, gs, a), F.celu_(T.tensor([-1.0, 2.0]))]
        u = T.nn.Unflatten(1, (2, 3))
        y = u(a)
        out += [repr(u), y, next_functions(y.grad_fn), T.nn.Unflatten(-1, [3, -1])(a).shape]
        for bad in [(1, (("a", 2), ("b", 3))), (1, 6), (1, (2.0, 3))]:
            out.append(attempt(lambda bad=bad: T.nn.Unflatten(*bad)))
        out.append(attempt(lambda: T.nn.Unflatten(1, (4, 2))(a)))
        loss = T.nn.NLLLoss2d(ignore_index=1)
        z = T.tensor(logits, dtype=T.float64, requires_grad=True)
        t = T.tensor([[[0, 1], [2, 2]], [[1, 0], [0, 2]]])
        r = loss(z.log_softmax(1), t)
        out += [repr(loss), r, T.autograd.grad(r, z)[0]]
        return out

    ok(program)


def test_sync_batchnorm():
    x = RS.randn(4, 3, 2)

    def program(T):
        nn = T.nn
        bn = nn.SyncBatchNorm(3, momentum=None)
        with T.no_grad():
            bn.weight.copy_(T.tensor([0.5, 1.0, 2.0]))
        a = T.tensor(x, dtype=T.float32, requires_grad=True)
        out = [repr(bn)]
        for _ in range(2):
            y = bn(a)
            out += [y, next_functions(y.grad_fn), dict(bn.state_dict())]
        out.append(T.autograd.grad(weighted(T, y), [a, bn.weight, bn.bias]))
        bn.eval()
        out += [bn(a), bn(a[:, :, 0])]
        out += [attempt(lambda: bn(a[0, 0])), attempt(lambda: bn(a[:, :0]))]
        free = nn.SyncBatchNorm(3, affine=False, track_running_stats=False)
        out += [repr(free), free(a), list(free.state_dict())]
        net = nn.Sequential(nn.Conv1d(3, 3, 1), nn.BatchNorm1d(3),
                            nn.Sequential(nn.BatchNorm2d(2, bias=False).eval()))
        converted = nn.SyncBatchNorm.convert_sync_batchnorm(net)
        out += [repr(converted), converted[1].weight is net[1].weight,
                converted[1].running_mean is net[1].running_mean, converted[2][0].training,
                type(converted[0]).__name__,
                type(nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(2))).__name__]
        return out

    ok(program)


# --- torch-level aten forms ---------------------------------------------------------------------

ATEN_FORMS = {
    "kl_div": lambda T, a, b, t: T.kl_div(a, b.abs()),
    "kl_div_sum_log": lambda T, a, b, t: T.kl_div(a, b, 2, log_target=True),
    "hinge": lambda T, a, b, t: T.hinge_embedding_loss(a, t, 0.5, 2),
    "cosine": lambda T, a, b, t: T.cosine_embedding_loss(a, b, t[:, 0], 0.1, 0),
    "ranking": lambda T, a, b, t: T.margin_ranking_loss(a, b, t, 0.2),
    "poisson": lambda T, a, b, t: T.poisson_nll_loss(a, b.abs(), True, True, 1e-8, 1),
    "poisson_rate": lambda T, a, b, t: T.poisson_nll_loss(a.abs(), b.abs(), False, False,
                                                          1e-8, 2),
    "bce_logits": lambda T, a, b, t: T.binary_cross_entropy_with_logits(
        a, b.sigmoid(), None, b.detach().abs(), 0),
    "rms_norm": lambda T, a, b, t: T.rms_norm(a, [4], b[0]),
    "layer_norm": lambda T, a, b, t: T.native_layer_norm(a, [4], b[0], b[1], 1e-5)[0],
    "group_norm": lambda T, a, b, t: T.native_group_norm(a[None], b[0, :3], None, 1, 3, 4, 3,
                                                         1e-5)[0],
    "batch_norm": lambda T, a, b, t: T.native_batch_norm(a, b[0], b[1], None, None,
                                                         True, 0.1, 1e-5)[0],
    "pad": lambda T, a, b, t: T.constant_pad_nd(a, [1, -1, 2, 0], 0.5),
    "feature_dropout_full": lambda T, a, b, t: T.feature_dropout(a, 1.0, True),
}


# jaxgrad names the create_graph gradient of binary_cross_entropy_with_logits after its row
# (``BinaryCrossEntropyWithLogitsBackward0Backward``), where torch's composite backward ends in
# MulBackward0 (a known difference of the existing row: values and second derivatives agree)
UNNAMED_DOUBLE_BACKWARD = {"bce_logits"}
# second derivatives where they are more than the existing F.* tests check
SECOND_ORDER = {"kl_div_sum_log", "poisson", "cosine", "rms_norm", "group_norm"}


def test_aten_forms():
    a_values, b_values = RS.randn(3, 4), RS.randn(3, 4)
    t_values = np.sign(RS.randn(3, 4))

    def program(T):
        out = {}
        for key, f in ATEN_FORMS.items():
            a, b = (T.tensor(v, dtype=T.float64, requires_grad=True) for v in (a_values,
                                                                               b_values))
            y = f(T, a, b, T.tensor(t_values, dtype=T.float64))
            gs = _grads(T, y, a, b, create_graph=key in SECOND_ORDER)
            seconds = _second(T, gs, a, b) if key in SECOND_ORDER else None
            if key in UNNAMED_DOUBLE_BACKWARD:  # (torch's composite writes it in place too)
                gs = [val(g)[0] for g in gs]
            out[key] = [y, next_functions(y.grad_fn), gs, seconds]
        return out

    ok(program)


def test_aten_forms_stats_and_errors():
    x_values = RS.randn(4, 3, 2)

    def program(T):
        x = T.tensor(x_values, dtype=T.float64, requires_grad=True)
        rm, rv = T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64)
        train = T.native_batch_norm(x, None, None, rm, rv, True, 0.3, 1e-5)
        evaluation = T.native_batch_norm(x, None, None, rm, rv, False, 0.3, 1e-5)
        layer = T.native_layer_norm(x, [3, 2], None, None, 1e-5)
        group = T.native_group_norm(x, None, None, 4, 3, 2, 3, 1e-5)
        y = T.ones(2, 3, 2)
        dropped = T.feature_dropout_(y, 1.0, True)
        return [list(train), rm, rv, list(evaluation), list(layer), group[0],
                [g.detach() for g in group[1:]], dropped is y, y,
                attempt(lambda: T.constant_pad_nd(x, [1])),
                attempt(lambda: T.constant_pad_nd(x, [1] * 8)),
                attempt(lambda: T.feature_dropout(x[0, 0], 0.5, True)),
                attempt(lambda: T.feature_dropout(x, 1.5, True)),
                attempt(lambda: T.native_layer_norm(x, [3], None, None, 1e-5)),
                T.kl_div(x, x.exp(), 7)]

    ok(program)


# --- embedding bags -----------------------------------------------------------------------------

BAG_CASES = {
    "mean": dict(offsets=[0, 2, 2, 5], mode="mean"),
    "sum_padding": dict(offsets=[0, 2, 2, 5], mode="sum", padding_idx=2),
    "max_padding": dict(offsets=[0, 2, 2, 5], mode="max", padding_idx=4),
    "last_offset": dict(offsets=[0, 2, 4], mode="sum", include_last_offset=True),
    "scale_by_freq": dict(offsets=[0, 3], mode="mean", scale_grad_by_freq=True),
    "per_sample": dict(offsets=[0, 2, 2, 5], mode="sum", per_sample_weights=True),
    "per_sample_padding": dict(offsets=[0, 4], mode="sum", per_sample_weights=True,
                               padding_idx=2),
}
BAG_INDICES = [0, 2, 2, 4, 1, 3]


def test_embedding_bag():
    w_values, psw_values = RS.randn(5, 3), RS.rand(6)

    def program(T):
        F = T.nn.functional
        out = {}
        for key, case in BAG_CASES.items():
            case = dict(case)
            w = T.tensor(w_values, dtype=T.float64, requires_grad=True)
            leaves = [w]
            if case.pop("per_sample_weights", False):
                psw = T.tensor(psw_values, dtype=T.float64, requires_grad=True)
                case["per_sample_weights"] = psw
                leaves.append(psw)
            offsets = T.tensor(case.pop("offsets"))
            y = F.embedding_bag(T.tensor(BAG_INDICES), w, offsets, **case)
            v = T.ones_like(y).cumsum(0).requires_grad_()
            gs = T.autograd.grad(y, leaves, v, create_graph=True)
            # (EmbeddingBagBackwardBackward0 raises when differentiated again, by any input)
            again = [attempt(lambda g=gs[0], x=x: T.autograd.grad(g.sum(), x, allow_unused=True))
                     for x in (v, *leaves)]
            out[key] = [y, next_functions(y.grad_fn), list(gs), again]
        return out

    ok(program)


def test_embedding_bag_native_form_module_and_errors():
    w_values = RS.randn(5, 3)

    def program(T):
        F = T.nn.functional
        w = T.tensor(w_values, dtype=T.float64, requires_grad=True)
        idx, off = T.tensor(BAG_INDICES), T.tensor([0, 2, 2, 5])
        out = [list(T.embedding_bag(w, idx, off, False, mode, False, None, False, 2))
               for mode in (0, 1, 2)]
        out.append(T.embedding_bag(w, idx, off)[0])
        out.append(F.embedding_bag(idx.reshape(2, 3), w, mode="max"))
        psw = T.ones(2, 3, dtype=T.float64, requires_grad=True)
        out.append(F.embedding_bag(idx.reshape(2, 3), w, mode="sum", per_sample_weights=psw))
        out.append(attempt(lambda: F.embedding_bag(idx, w, off, mode="sum",
                                                   per_sample_weights=T.ones(6))))
        bag = T.nn.EmbeddingBag(5, 3, mode="sum", padding_idx=-2, scale_grad_by_freq=True,
                                max_norm=1.0)
        out += [repr(bag), bag.padding_idx, bag.weight[3].detach()]
        pre = T.nn.EmbeddingBag.from_pretrained(w.detach(), freeze=False, mode="max")
        y = pre(idx, off)
        y.sum().backward()
        out += [repr(pre), y, pre.weight.grad]
        for bad in [
            lambda: F.embedding_bag(idx, w, off, padding_idx=7),
            lambda: F.embedding_bag(idx + 5, w, off),
            lambda: F.embedding_bag(idx, w, T.tensor([1, 2])),
            lambda: F.embedding_bag(idx, w, T.tensor([0, 7])),
            lambda: F.embedding_bag(idx, w, off, mode="max", scale_grad_by_freq=True),
            lambda: F.embedding_bag(idx, w, off, mode="max", sparse=True),
            lambda: F.embedding_bag(idx, w, off, mode="avg"),
            lambda: F.embedding_bag(idx, w, off, mode="mean", per_sample_weights=idx * 1.0),
            lambda: F.embedding_bag(idx, w, off, per_sample_weights=T.ones(2)),
            lambda: F.embedding_bag(idx, w[0], off),
            lambda: F.embedding_bag(idx.reshape(2, 3), w, off),
            lambda: F.embedding_bag(idx, w),
            lambda: F.embedding_bag(idx, w, off[None]),
            lambda: F.embedding_bag(idx[None, None], w),
            lambda: T.nn.EmbeddingBag(5, 3, padding_idx=5),
            lambda: T.nn.EmbeddingBag.from_pretrained(w[0]),
        ]:
            out.append(attempt(bad))
        return out

    ok(program)


# --- CTC loss -----------------------------------------------------------------------------------

CTC_CASES = {
    "mean": dict(targets=[[1, 2, 2], [3, 1, 0]], input_lengths=[6, 5], target_lengths=[3, 2]),
    "sum_blank": dict(targets=[[1, 2, 0], [3, 3, 0]], input_lengths=[6, 6],
                      target_lengths=[3, 2], blank=2, reduction="sum"),
    "none_concat_empty": dict(targets=[1, 3, 3], input_lengths=(4, 6), target_lengths=(3, 0),
                              reduction="none"),
    "zero_infinity": dict(targets=[[1, 1, 1], [2, 3, 1]], input_lengths=[4, 6],
                          target_lengths=[3, 3], zero_infinity=True),
}


def test_ctc_loss():
    logits = RS.randn(6, 2, 4)

    def program(T):
        F = T.nn.functional
        out = {}
        for key, case in CTC_CASES.items():
            case = dict(case)
            x = T.tensor(logits, dtype=T.float64, requires_grad=True)
            lp = x.log_softmax(2)
            targets = T.tensor(case.pop("targets"))
            lengths = [case.pop("input_lengths"), case.pop("target_lengths")]
            if isinstance(lengths[0], tuple):
                lengths = [T.tensor(v) for v in lengths]
            y = F.ctc_loss(lp, targets, *lengths, **case)
            g = T.autograd.grad(weighted(T, y), x, create_graph=True)[0]
            out[key] = [y, next_functions(y.grad_fn), g, attempt(lambda g=g: g.sum().backward())]
        x = T.tensor(logits[:, 0], dtype=T.float32, requires_grad=True)
        y = F.ctc_loss(x.log_softmax(1), T.tensor([1, 2]), T.tensor(6), T.tensor(2),
                       reduction="none")
        out["unbatched"] = [y, next_functions(y.grad_fn), T.autograd.grad(y, x)[0]]
        loss = T.nn.CTCLoss(blank=3, zero_infinity=True)
        out["module"] = [repr(loss), loss(x[:, None].log_softmax(2), T.tensor([[1, 2]]), [6], [2]),
                         T.ctc_loss(x[:, None].log_softmax(2), T.tensor([[1, 2]]), [6], [2])]
        return out

    ok(program)


def test_ctc_loss_errors():
    def program(T):
        F = T.nn.functional
        lp = T.randn(5, 2, 4).log_softmax(2)
        tg = T.tensor([[1, 2], [1, 1]])
        return [attempt(f) for f in [
            lambda: F.ctc_loss(lp, tg, [5, 5], [2, 2], blank=4),
            lambda: F.ctc_loss(lp, tg, [5], [2, 2]),
            lambda: F.ctc_loss(lp, tg, [5, 5], [2]),
            lambda: F.ctc_loss(lp, tg, [6, 5], [2, 2]),
            lambda: F.ctc_loss(lp, tg, [5, 5], [3, 2]),
            lambda: F.ctc_loss(lp, tg.flatten(), [5, 5], [2, 3]),
            lambda: F.ctc_loss(lp, tg, T.tensor([5.0, 5.0]), T.tensor([2, 2])),
            lambda: F.ctc_loss(lp, tg, [5, 5], [2, 2], reduction="foo"),
            lambda: F.ctc_loss(lp, tg, [5, 5], [-1, 2]),
        ]]

    ok(program)


def test_cross_map_lrn2d():
    x = RS.randn(2, 6, 2, 2)

    def program(T):
        a = T.tensor(x, dtype=T.float64, requires_grad=True)
        out = []
        for args in [(3,), (4, 0.5, 0.6, 2.0), (5, 1.0, 1.0)]:
            m = T.nn.CrossMapLRN2d(*args)
            y = m(a)
            # (torch's backward fills its gradient in place: compared without its _version)
            out += [repr(m), y, next_functions(y.grad_fn),
                    val(T.autograd.grad(weighted(T, y), a)[0])]
        v = T.ones(2, 6, 2, 2, dtype=T.float64, requires_grad=True)
        out.append(attempt(lambda: T.autograd.grad(T.nn.CrossMapLRN2d(3)(a), a, v,
                                                   create_graph=True)))
        out.append(attempt(lambda: T.nn.CrossMapLRN2d(3)(a[0])))
        return out

    ok(program)


def test_adaptive_log_softmax_with_loss():
    x = RS.randn(5, 4)

    def program(T):
        nn = T.nn
        asm = nn.AdaptiveLogSoftmaxWithLoss(4, 7, [2, 4], div_value=2.0, head_bias=True)
        with T.no_grad():
            for i, (_, p) in enumerate(asm.named_parameters()):
                p.copy_(T.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (i + 1),
                                 dtype=T.float32))
        a = T.tensor(x, dtype=T.float32, requires_grad=True)
        output, loss = asm(a, T.tensor([0, 3, 6, 1, 4]))
        loss.backward()
        single = asm(a[0], T.tensor(5))
        out = [repr(asm), output, next_functions(output.grad_fn), loss, a.grad,
               [p.grad for p in asm.parameters()], list(single), asm.log_prob(a),
               asm.predict(a), asm.predict(a * 0), asm.predict(-a)]
        for bad in [lambda: asm(a, T.tensor([0, 3, 7, 1, 4])), lambda: asm(a, T.tensor([0])),
                    lambda: asm(a[0], T.tensor([0])), lambda: asm(a, T.zeros(5, 1).long()),
                    lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 7, []),
                    lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 7, [4, 2])]:
            out.append(attempt(bad))
        return out

    ok(program)
