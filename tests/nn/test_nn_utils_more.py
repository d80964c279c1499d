"""nn.utils against torch, beyond clipping: the hook forms of weight_norm and spectral_norm,
fusion of batch norm into conv/linear, stateless.functional_call, skip_init, weight memory
formats, the deprecated clip_grad_norm, and pruning."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

from differential import (
    Raised,
    attempt,
    captured_warnings,
    jaxgrad,
    next_functions,
    ok,
    raises,
    set_weights,
    torch,
    val,
)


def _grads(module):
    return [(name, val(p.grad)) for name, p in module.named_parameters()]


def _weighted_sum(T, w):
    weights = T.arange(float(w.numel()), dtype=w.dtype).view(w.shape) - 2
    return (w * weights).sum()


def _input(T, *shape, seed=0):
    return T.tensor(np.random.RandomState(seed).randn(*shape))


# --- weight_norm (hooks) ------------------------------------------------------------------------


@pytest.mark.parametrize("make,dim", [("linear", 0), ("linear", None), ("conv", 1), ("conv", 2)])
def test_weight_norm_hook(make, dim):
    def program(T):
        module = T.nn.Linear(3, 2) if make == "linear" else T.nn.Conv1d(3, 2, 2)
        m = T.nn.utils.weight_norm(set_weights(T, module), dim=dim)
        x = _input(T, 2, 3) if make == "linear" else _input(T, 1, 3, 4)
        before = m.weight
        y = m(x)
        _weighted_sum(T, y).backward()
        return (
            list(m.state_dict()),
            [n for n, _ in m.named_parameters()],
            before,
            m.weight,
            next_functions(m.weight.grad_fn),
            y,
            _grads(m),
            len(m._forward_pre_hooks),
            repr(m),
        )

    ok(program)


def test_weight_norm_hook_removal_and_errors():
    def program(T):
        m = T.nn.utils.weight_norm(set_weights(T, T.nn.Linear(3, 2)))
        twice = attempt(lambda: T.nn.utils.weight_norm(m))
        with T.no_grad():
            m.weight_g.mul_(2)
        m(_input(T, 1, 3))
        T.nn.utils.remove_weight_norm(m)
        missing = attempt(lambda: T.nn.utils.remove_weight_norm(m))
        lazy = attempt(lambda: T.nn.utils.weight_norm(T.nn.LazyLinear(2)))
        return (
            twice,
            list(m.state_dict()),
            m.weight,
            type(m.weight).__name__,
            len(m._forward_pre_hooks),
            missing,
            lazy,
        )

    ta, _ = ok(program)
    assert isinstance(ta[0], Raised) and isinstance(ta[-1], Raised)


def test_weight_norm_hook_warns():
    def program(T):
        T.nn.utils.weight_norm(T.nn.Linear(2, 2))

    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
    assert captured_warnings(program, jaxgrad)


# --- spectral_norm (hooks) ----------------------------------------------------------------------


def _fix_vectors(T, m, name="weight"):
    with T.no_grad():
        rs = np.random.RandomState(7)
        for suffix in ("_u", "_v"):
            buf = getattr(m, name + suffix)
            buf.copy_(T.nn.functional.normalize(T.tensor(rs.randn(*buf.shape)), dim=0))


@pytest.mark.parametrize("make", ["linear", "conv", "conv_transpose"])
def test_spectral_norm_hook(make):
    def program(T):
        module = {
            "linear": lambda: T.nn.Linear(4, 3),
            "conv": lambda: T.nn.Conv2d(2, 3, 2),
            "conv_transpose": lambda: T.nn.ConvTranspose2d(2, 3, 2),
        }[make]()
        m = T.nn.utils.spectral_norm(set_weights(T, module), n_power_iterations=2)
        _fix_vectors(T, m)
        x = _input(T, 2, 4) if make == "linear" else _input(T, 1, 2, 3, 3)
        y = m(x)
        _weighted_sum(T, y).backward()
        trained = (
            m.weight_u.clone(),
            m.weight_v.clone(),
            m.weight_u._version,
            m.weight_v._version,
            m.weight,
            next_functions(m.weight.grad_fn),
        )
        m.eval()
        y_eval = m(x)
        sd = m.state_dict()
        return (
            list(sd),
            dict(sd._metadata),
            y,
            _grads(m),
            trained,
            y_eval,
            m.weight_u._version,
            repr(m),
        )

    ok(program)


def test_spectral_norm_hook_removal_and_state_dict_hooks():
    def program(T):
        m = T.nn.utils.spectral_norm(set_weights(T, T.nn.Linear(4, 3)))
        _fix_vectors(T, m)
        m(_input(T, 1, 4))
        twice = attempt(lambda: T.nn.utils.spectral_norm(m))
        hooks = (len(m._state_dict_hooks), len(m._load_state_dict_pre_hooks))
        T.nn.utils.remove_spectral_norm(m)
        missing = attempt(lambda: T.nn.utils.remove_spectral_norm(m))
        none_weight = T.nn.Linear(2, 2)
        none_weight.weight = None
        return (
            twice,
            hooks,
            list(m.state_dict()),
            m.weight,
            len(m._forward_pre_hooks),
            len(m._state_dict_hooks),
            len(m._load_state_dict_pre_hooks),
            missing,
            attempt(lambda: T.nn.utils.spectral_norm(none_weight)),
            attempt(lambda: T.nn.utils.spectral_norm(T.nn.Linear(2, 2), n_power_iterations=0)),
        )

    ok(program)


def test_spectral_norm_loads_version_0_checkpoints():
    def program(T):
        src = T.nn.utils.spectral_norm(set_weights(T, T.nn.Linear(4, 3)))
        _fix_vectors(T, src)
        src(_input(T, 1, 4))
        old = dict(src.state_dict())
        old["weight"] = src.weight.detach()
        del old["weight_v"]
        dst = T.nn.utils.spectral_norm(set_weights(T, T.nn.Linear(4, 3), seed=1))
        result = dst.load_state_dict(old)
        fresh = T.nn.utils.spectral_norm(T.nn.Linear(4, 3))
        same_layout = fresh.load_state_dict(src.state_dict())
        return repr(result), dst.weight_v, dst.weight_orig, repr(same_layout)

    ok(program)


# --- fusion -------------------------------------------------------------------------------------


def _bn(T, n, affine=True, dims=2, seed=3):
    bn = {1: T.nn.BatchNorm1d, 2: T.nn.BatchNorm2d, 3: T.nn.BatchNorm3d}[dims](n, affine=affine)
    bn = set_weights(T, bn, seed=seed)
    rs = np.random.RandomState(seed + 1)
    with T.no_grad():
        bn.running_mean.copy_(T.tensor(rs.randn(n)))
        bn.running_var.copy_(T.tensor(rs.rand(n) + 0.5))
    return bn.eval()


@pytest.mark.parametrize(
    "kind", ["conv1d", "conv2d", "conv2d_nobias", "conv3d", "conv_transpose2d", "no_affine"]
)
def test_fuse_conv_bn_eval(kind):
    def program(T):
        dims = {"conv1d": 1, "conv3d": 3}.get(kind, 2)
        transpose = kind == "conv_transpose2d"
        if transpose:
            conv = T.nn.ConvTranspose2d(2, 3, 2)
        else:
            cls = {1: T.nn.Conv1d, 2: T.nn.Conv2d, 3: T.nn.Conv3d}[dims]
            conv = cls(2, 3, 2, bias=kind != "conv2d_nobias")
        conv = set_weights(T, conv).eval()
        bn = _bn(T, 3, affine=kind != "no_affine", dims=dims)
        fused = T.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        x = _input(T, 1, 2, *([3] * dims))
        return (
            fused(x),
            bn(conv(x)),
            fused.weight,
            fused.bias,
            fused is conv,
            type(fused.weight).__name__,
            conv.weight._version,
        )

    ok(program)


@pytest.mark.parametrize("bn_features", [3, 1])
def test_fuse_linear_bn_eval(bn_features):
    def program(T):
        lin = set_weights(T, T.nn.Linear(2, 3)).eval()
        bn = _bn(T, bn_features, dims=1)
        fused = T.nn.utils.fuse_linear_bn_eval(lin, bn)
        x = _input(T, 4, 2)
        return fused(x), attempt(lambda: bn(lin(x))), fused.weight, fused.bias

    ok(program)


@pytest.mark.parametrize("case", ["conv_training", "linear_training", "features", "no_stats"])
def test_fusion_errors(case):
    def program(T):
        conv, lin = T.nn.Conv2d(2, 3, 1), T.nn.Linear(2, 3).eval()
        if case == "conv_training":
            return T.nn.utils.fuse_conv_bn_eval(conv, T.nn.BatchNorm2d(3).eval())
        if case == "linear_training":
            return T.nn.utils.fuse_linear_bn_eval(lin, T.nn.BatchNorm1d(3))
        if case == "features":
            return T.nn.utils.fuse_linear_bn_eval(lin, T.nn.BatchNorm1d(2).eval())
        return T.nn.utils.fuse_conv_bn_eval(
            conv.eval(), T.nn.BatchNorm2d(3, track_running_stats=False).eval()
        )

    raises(program)


def test_fuse_weights_keep_dtypes_and_requires_grad():
    def program(T):
        w = _input(T, 3, 2, 1).float().requires_grad_()
        rm, rv = _input(T, 3, seed=1), _input(T, 3, seed=2).abs()
        conv = T.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-3, None, None)
        lin = T.nn.utils.fuse_linear_bn_weights(
            _input(T, 3, 2), _input(T, 3).requires_grad_(), rm, rv, 1e-3, rm * 2, rv
        )
        return conv, lin

    ok(program)


@pytest.mark.parametrize("case", ["mean", "var", "weight", "bias", "no_var", "no_mean"])
def test_batch_norm_checks_per_channel_sizes(case):
    """What fuse_linear_bn_eval relies on: a one-feature batch norm refuses three channels."""

    def program(T):
        x, three, two = T.ones(2, 3), T.ones(3), T.ones(2)
        args = {
            "mean": (two, three),
            "var": (three, two),
            "no_var": (three, None),
            "no_mean": (None, three),
        }.get(case, (three, three))
        kwargs = {"weight": two} if case == "weight" else {"bias": two} if case == "bias" else {}
        return T.nn.functional.batch_norm(x, *args, **kwargs)

    raises(program)


# --- stateless, skip_init, memory formats, clip_grad_norm ----------------------------------


def test_stateless_functional_call():
    def program(T):
        lin = set_weights(T, T.nn.Linear(2, 2))
        params = {"weight": T.eye(2, dtype=T.float64, requires_grad=True)}
        y = T.nn.utils.stateless.functional_call(lin, params, (_input(T, 3, 2),))
        y.sum().backward()
        strict = attempt(
            lambda: T.nn.utils.stateless.functional_call(lin, params, _input(T, 1, 2), strict=True)
        )
        kw = T.nn.utils.stateless.functional_call(lin, {}, kwargs={"input": _input(T, 1, 2)})
        parallel = attempt(
            lambda: T.nn.utils.stateless.functional_call(
                T.nn.DataParallel(lin), params, _input(T, 1, 2)
            )
        )
        return y, params["weight"].grad, lin.weight, strict, kw, parallel

    ok(program)

    def warns(T):
        T.nn.utils.stateless.functional_call(T.nn.Linear(1, 1), {}, T.ones(1))

    assert captured_warnings(warns, torch) == captured_warnings(warns, jaxgrad)


def test_skip_init():
    def program(T):
        T.manual_seed(0)
        expected = T.rand(3)
        T.manual_seed(0)
        m = T.nn.utils.skip_init(T.nn.Linear, 2, 3, bias=False, dtype=T.float64)
        untouched = T.equal(T.rand(3), expected)
        conv = T.nn.utils.skip_init(T.nn.Conv1d, 2, 3, 1, device="cpu")
        return (
            untouched,
            type(m).__name__,
            [
                (n, p.shape, p.dtype, p.requires_grad, type(p).__name__)
                for n, p in m.named_parameters()
            ],
            str(conv.weight.device),
            repr(conv),
            attempt(lambda: T.nn.utils.skip_init(int)),
            attempt(lambda: T.nn.utils.skip_init(T.nn.ReLU)),
        )

    ok(program)


def test_convert_weight_memory_format():
    """Values, identity and versions; strides are row-major in jaxgrad (see memory_format)."""

    def program(T):
        net = T.nn.Sequential(
            T.nn.Conv2d(2, 3, 2),
            T.nn.ConvTranspose2d(3, 2, 2),
            T.nn.Sequential(T.nn.Conv3d(1, 2, 2)),
            T.nn.Linear(2, 2),
        )
        weights = [net[0].weight, net[1].weight, net[2][0].weight, net[3].weight]
        values = [w.detach().clone() for w in weights]
        out2 = T.nn.utils.convert_conv2d_weight_memory_format(net, T.channels_last)
        out3 = T.nn.utils.convert_conv3d_weight_memory_format(net, T.channels_last_3d)
        after = [net[0].weight, net[1].weight, net[2][0].weight, net[3].weight]
        return (
            out2 is net,
            out3 is net,
            [a is w for a, w in zip(after, weights)],
            [T.equal(a, v) for a, v in zip(after, values)],
            [w._version for w in after],
            [w.requires_grad for w in after],
            net[0].weight.is_contiguous(memory_format=T.channels_last),
            net[2][0].weight.is_contiguous(memory_format=T.channels_last_3d),
        )

    ok(program)


def test_clip_grad_norm_deprecated_alias():
    def program(T):
        params = [T.nn.Parameter(_input(T, 3, seed=i)) for i in range(2)]
        for i, p in enumerate(params):
            p.grad = _input(T, 3, seed=10 + i) * 3
        total = T.nn.utils.clip_grad_norm(params, 1.0, norm_type=3.0)
        return total, [p.grad for p in params]

    ok(program)
    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
    assert captured_warnings(program, jaxgrad)


# --- prune ----------------------------------------------------------------------------------------


def _prune(T):
    """``nn.utils.prune`` (which ``nn.utils`` does not import, in torch as in jaxgrad)."""
    return importlib.import_module(T.__name__ + ".nn.utils.prune")


def _no_address(raised):
    return raised.cls, re.sub(r" at 0x[0-9a-f]+", "", raised.message)


def _pruned_net(T):
    return set_weights(T, T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Conv1d(3, 4, 2)))


@pytest.mark.parametrize(
    "how",
    [
        "identity",
        "l1_fraction",
        "l1_count",
        "l1_scores",
        "ln_rows",
        "ln_columns_l1",
        "ln_inf",
        "ln_conv",
        "ln_scores",
        "custom",
        "l1_zero",
    ],
)
def test_prune_deterministic(how):
    def program(T):
        P = _prune(T)
        net = _pruned_net(T)
        lin, conv = net[0], net[1]
        scores = _input(T, 3, 4, seed=9)
        {
            "identity": lambda: P.identity(lin, "weight"),
            "l1_fraction": lambda: P.l1_unstructured(lin, "weight", amount=0.4),
            "l1_count": lambda: P.l1_unstructured(lin, "bias", amount=1),
            "l1_scores": lambda: P.l1_unstructured(lin, "weight", 5, importance_scores=scores),
            "ln_rows": lambda: P.ln_structured(lin, "weight", amount=1, n=2, dim=0),
            "ln_columns_l1": lambda: P.ln_structured(lin, "weight", amount=0.5, n=1, dim=-1),
            "ln_inf": lambda: P.ln_structured(lin, "weight", 2, n=float("inf"), dim=1),
            "ln_conv": lambda: P.ln_structured(conv, "weight", amount=2, n=2, dim=0),
            "ln_scores": lambda: P.ln_structured(lin, "weight", 1, 2, 0, importance_scores=scores),
            "custom": lambda: P.custom_from_mask(lin, "bias", T.tensor([1, 0, 1])),
            "l1_zero": lambda: P.l1_unstructured(lin, "weight", amount=0.0),
        }[how]()
        x = _input(T, 2, 4)
        y = T.cat([lin(x).flatten(), conv(_input(T, 1, 3, 4, seed=5)).flatten()])
        _weighted_sum(T, y).backward()
        name = "bias" if how in ("l1_count", "custom") else "weight"
        module = conv if how == "ln_conv" else lin
        return (
            list(net.state_dict()),
            [n for n, _ in net.named_parameters()],
            getattr(module, name + "_mask"),
            getattr(module, name),
            next_functions(getattr(module, name).grad_fn),
            y,
            _grads(net),
            P.is_pruned(net),
            type(next(iter(module._forward_pre_hooks.values()))).__name__,
        )

    ok(program)


def test_prune_containers_and_remove():
    def program(T):
        P = _prune(T)
        lin = set_weights(T, T.nn.Linear(5, 4))
        P.l1_unstructured(lin, "weight", amount=3)
        P.ln_structured(lin, "weight", amount=1, n=2, dim=0)
        P.l1_unstructured(lin, "weight", amount=0.25)
        P.custom_from_mask(lin, "weight", T.ones(4, 5).tril())
        hook = next(iter(lin._forward_pre_hooks.values()))
        masks = (lin.weight_mask.clone(), lin.weight)
        orig = lin.weight_orig
        P.remove(lin, "weight")
        return (
            type(hook).__name__,
            len(hook),
            [type(m).__name__ for m in hook],
            type(hook[0]).__name__,
            masks,
            list(lin.state_dict()),
            lin.weight,
            lin.weight is orig,
            lin.weight._version,
            P.is_pruned(lin),
            len(lin._forward_pre_hooks),
        )

    ok(program)


def test_prune_global_unstructured():
    def program(T):
        P = _prune(T)
        net = _pruned_net(T)
        P.l1_unstructured(net[0], "bias", amount=1)
        params = [(net[0], "weight"), (net[0], "bias"), (net[1], "weight")]
        scores = {(net[1], "weight"): _input(T, 4, 3, 2, seed=4)}
        P.global_unstructured(params, P.L1Unstructured, importance_scores=scores, amount=0.5)
        return (
            [getattr(m, n + "_mask") for m, n in params],
            [type(next(iter(m._forward_pre_hooks.values()))).__name__ for m, _ in params],
            list(net.state_dict()),
        )

    ok(program)


def test_prune_method_prune_and_container_errors():
    def program(T):
        P = _prune(T)
        t = _input(T, 3, 4)
        method = P.LnStructured(amount=1, n=1, dim=0)
        pruned = method.prune(t)
        scored = P.L1Unstructured(0.5).prune(t, importance_scores=-t)
        l1 = P.L1Unstructured(1)
        l1._tensor_name = "weight"
        other = P.L1Unstructured(1)
        other._tensor_name = "bias"
        container = P.PruningContainer(l1)
        return (
            pruned,
            scored,
            _no_address(attempt(lambda: container.add_pruning_method(other))),
            attempt(lambda: container.add_pruning_method(3)),
            attempt(lambda: method.prune(t, importance_scores=T.ones(2))),
        )

    ok(program)


def test_prune_random_counts():
    """Random pruning draws from each library's generator: compare what must hold."""

    def program(T):
        P = _prune(T)
        lin = set_weights(T, T.nn.Linear(6, 5))
        P.random_unstructured(lin, "weight", amount=0.4)
        unstructured = int((lin.weight_mask == 0).sum())
        P.random_structured(lin, "weight", amount=2, dim=0)
        rows = (lin.weight_mask.sum(dim=1) == 0).sum().item()
        conv = P.random_structured(T.nn.Conv1d(2, 4, 3), "weight", amount=0.5, dim=-1)
        columns = int((conv.weight_mask.sum(dim=(0, 1)) == 0).sum())
        zero = P.random_structured(T.nn.Linear(3, 2), "weight", amount=0, dim=0)
        return (
            unstructured,
            rows >= 2,
            columns,
            bool((zero.weight_mask == 1).all()),
            T.equal(lin.weight, lin.weight_orig * lin.weight_mask),
            list(lin.state_dict()),
            type(next(iter(lin._forward_pre_hooks.values()))).__name__,
        )

    ok(program)


@pytest.mark.parametrize(
    "case",
    [
        "amount_type",
        "amount_negative",
        "amount_fraction",
        "amount_too_large",
        "structured_vector",
        "bad_dim",
        "remove_unpruned",
        "global_structured",
        "global_iterable",
        "global_scores",
        "scores_shape",
        "custom_shape",
    ],
)
def test_prune_errors(case):
    def program(T):
        P = _prune(T)
        lin = set_weights(T, T.nn.Linear(3, 2))
        if case == "amount_type":
            return P.l1_unstructured(lin, "weight", amount="half")
        if case == "amount_negative":
            return P.l1_unstructured(lin, "weight", amount=-1)
        if case == "amount_fraction":
            return P.random_unstructured(lin, "weight", amount=1.5)
        if case == "amount_too_large":
            return P.l1_unstructured(lin, "weight", amount=7)
        if case == "structured_vector":
            return P.ln_structured(lin, "bias", amount=1, n=2, dim=0)
        if case == "bad_dim":
            return P.ln_structured(lin, "weight", amount=1, n=2, dim=2)
        if case == "remove_unpruned":
            return P.remove(lin, "weight")
        if case == "global_structured":
            return P.global_unstructured([(lin, "weight")], P.LnStructured, amount=1, n=1, dim=0)
        if case == "global_iterable":
            return P.global_unstructured(3, P.L1Unstructured, amount=1)
        if case == "global_scores":
            return P.global_unstructured(
                [(lin, "weight")], P.L1Unstructured, importance_scores=[1], amount=1
            )
        if case == "scores_shape":
            return P.l1_unstructured(lin, "weight", 1, importance_scores=T.ones(3))
        return P.custom_from_mask(lin, "weight", T.ones(3))

    def after(T):
        lin = set_weights(T, T.nn.Linear(3, 2))
        attempt(lambda: _prune(T).l1_unstructured(lin, "weight", amount=7))
        return list(lin.state_dict()), lin.weight

    raises(program)
    ok(after)
