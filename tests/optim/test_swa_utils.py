"""jaxgrad.optim.swa_utils against torch.optim.swa_utils: AveragedModel's parameters, buffers,
``n_averaged`` and versions after updates (SWA, EMA, custom averaging functions, averaged
buffers), update_bn's batch-norm statistics, SWALR's learning rates, state dicts, warnings and
errors."""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import captured_warnings, cases, ok, raises, set_weights, torch

_rng = np.random.default_rng(3)
X = [_rng.normal(size=(6, 3)).tolist() for _ in range(4)]


def make_model(T, dtype="float64"):
    model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.ReLU(), T.nn.Linear(4, 2))
    set_weights(T, model, seed=1, dtype=dtype)
    return model


def train_step(T, model, opt, x):
    opt.zero_grad()
    model(T.tensor(x, dtype=T.float64)).pow(2).mean().backward()
    opt.step()


def state(T, averaged):
    """Everything observable of an averaged model: parameters, buffers, versions."""
    return (
        [(name, p.detach().clone(), p._version) for name, p in averaged.named_parameters()],
        [(name, b.clone(), b._version) for name, b in averaged.named_buffers()],
    )


def averaged_run(T, make_averaged, updates=4):
    model = make_model(T)
    averaged = make_averaged(T, model)
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    seen = [state(T, averaged)]
    for x in X[:updates]:
        train_step(T, model, opt, x)
        averaged.update_parameters(model)
        seen.append(state(T, averaged))
    out = averaged(T.tensor(X[0], dtype=T.float64))
    return seen, out, averaged.n_averaged


def S(T):
    return T.optim.swa_utils


AVERAGED = {
    "swa": lambda T, m: S(T).AveragedModel(m),
    "swa_buffers": lambda T, m: S(T).AveragedModel(m, use_buffers=True),
    "ema_avg_fn": lambda T, m: S(T).AveragedModel(m, avg_fn=S(T).get_ema_avg_fn(0.9)),
    "swa_avg_fn": lambda T, m: S(T).AveragedModel(m, avg_fn=S(T).get_swa_avg_fn()),
    "ema_multi": lambda T, m: S(T).AveragedModel(m, multi_avg_fn=S(T).get_ema_multi_avg_fn(0.8)),
    "ema_multi_buffers": lambda T, m: S(T).AveragedModel(
        m, multi_avg_fn=S(T).get_ema_multi_avg_fn(0.8), use_buffers=True
    ),
    "swa_multi": lambda T, m: S(T).AveragedModel(m, multi_avg_fn=S(T).get_swa_multi_avg_fn()),
    "swa_multi_buffers": lambda T, m: S(T).AveragedModel(
        m, multi_avg_fn=S(T).get_swa_multi_avg_fn(), use_buffers=True
    ),
    "custom_avg_fn": lambda T, m: S(T).AveragedModel(
        m, avg_fn=lambda a, p, n: (a * n + 2 * p) / (n + 2)
    ),
    "ema_avg_fn_buffers": lambda T, m: S(T).AveragedModel(
        m, avg_fn=S(T).get_ema_avg_fn(0.5), use_buffers=True
    ),
}


@pytest.mark.parametrize("name", cases(AVERAGED))
def test_averaged_model(name):
    # (swa's multi_avg_fn runs addcdiv_ on the integer num_batches_tracked: torch refuses it)
    check = raises if name == "swa_multi_buffers" else ok
    check(lambda T: averaged_run(T, AVERAGED[name]))


def test_averaged_model_is_a_module_with_a_copy():
    def program(T):
        model = make_model(T)
        averaged = S(T).AveragedModel(model)
        return (
            averaged.module is model,
            [n for n, _ in averaged.named_buffers()],
            averaged.n_averaged,
            averaged.state_dict(),
        )

    ok(program)


def test_multi_avg_fn_sees_groups_by_dtype():
    def program(T):
        model = make_model(T)
        model[0].weight.data = model[0].weight.data.float()  # one float32 parameter
        calls = []

        def multi(averaged, current, n):
            calls.append((len(averaged), averaged[0].dtype, n.clone()))
            for a, c in zip(averaged, current):
                a.add_(c)

        averaged = S(T).AveragedModel(model, multi_avg_fn=multi, use_buffers=True)
        averaged.update_parameters(model)
        averaged.update_parameters(model)
        return calls, state(T, averaged)

    ok(program)


def test_decay_out_of_range_raises():
    raises(lambda T: S(T).get_ema_avg_fn(1.5))
    raises(lambda T: S(T).get_ema_multi_avg_fn(-0.1))


def test_avg_fn_and_multi_avg_fn_together_raise():
    raises(
        lambda T: S(T).AveragedModel(
            make_model(T), avg_fn=S(T).get_swa_avg_fn(), multi_avg_fn=S(T).get_swa_multi_avg_fn()
        )
    )


def test_averaging_functions_directly():
    def program(T):
        a = [T.tensor([1.0, 2.0], dtype=T.float64), T.tensor([3, 4])]
        b = [T.tensor([5.0, -2.0], dtype=T.float64), T.tensor([8, 1])]
        S(T).get_swa_multi_avg_fn()(a[:1], b[:1], 3)
        S(T).get_swa_multi_avg_fn()(a[:1], b[:1], T.tensor(4))
        S(T).get_ema_multi_avg_fn(0.25)(a[:1], b[:1], None)
        S(T).get_ema_multi_avg_fn(0.25)(a[1:], b[1:], None)
        return (
            a,
            S(T).get_ema_avg_fn()(a[0], b[0], 0),
            S(T).get_swa_avg_fn()(a[0], b[0], T.tensor(2)),
            S(T).get_swa_avg_fn()(a[1], b[1], 3),
        )

    ok(program)


@pytest.mark.parametrize(
    "case",
    cases(["swa_int", "swa_tensor", "ema_mixed"]),
)
def test_multi_avg_fns_of_integer_tensors(case):
    def program(T):
        a, b = [T.tensor([3, 4])], [T.tensor([8, 1])]
        if case == "ema_mixed":  # the first tensor decides: lerp for all
            a, b = [T.tensor([1.0]), *a], [T.tensor([2.0]), *b]
            S(T).get_ema_multi_avg_fn(0.5)(a, b, None)
        else:
            S(T).get_swa_multi_avg_fn()(a, b, 1 if case == "swa_int" else T.tensor(1))
        return a

    raises(program)


def bn_model(T, momentum=0.1):
    model = T.nn.Sequential(
        T.nn.Linear(3, 4),
        T.nn.BatchNorm1d(4, momentum=momentum),
        T.nn.Linear(4, 3),
        T.nn.BatchNorm1d(3),
    )
    set_weights(T, model, seed=2)
    return model


@pytest.mark.parametrize("pairs", [False, True])
@pytest.mark.parametrize("training", [False, True])
def test_update_bn(pairs, training):
    def program(T):
        model = bn_model(T, momentum=0.3)
        model.train(training)
        model(T.tensor(X[3], dtype=T.float64))  # stale statistics, reset by update_bn
        batches = [T.tensor(x, dtype=T.float64) for x in X]
        loader = [(x, T.zeros(6)) for x in batches] if pairs else batches
        S(T).update_bn(loader, model)
        return (
            [(n, b.clone()) for n, b in model.named_buffers()],
            model.training,
            model[1].momentum,
            model[3].momentum,
        )

    ok(program)


def test_update_bn_of_averaged_model_and_without_batch_norm():
    def program(T):
        model = bn_model(T)
        averaged = S(T).AveragedModel(model)
        averaged.update_parameters(model)
        S(T).update_bn([T.tensor(x, dtype=T.float64) for x in X], averaged)
        plain = T.nn.Linear(3, 2).double()
        S(T).update_bn([T.tensor(X[0], dtype=T.float64)], plain, device="cpu")
        return [(n, b.clone()) for n, b in averaged.named_buffers()]

    ok(program)


def swalr(T, steps=15, **kw):
    opt = T.optim.SGD(
        [
            {"params": [T.zeros(2, requires_grad=True)]},
            {"params": [T.zeros(1, requires_grad=True)], "lr": 0.3},
        ],
        lr=1.0,
    )
    sched = S(T).SWALR(opt, **kw)
    seen = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr())
    return seen, sched.state_dict(), [g["swa_lr"] for g in opt.param_groups]


SWALRS = {
    "cos": {"swa_lr": 0.05},
    "linear": {"swa_lr": 0.05, "anneal_epochs": 4, "anneal_strategy": "linear"},
    "no_anneal": {"swa_lr": 0.05, "anneal_epochs": 0},
    "one_epoch": {"swa_lr": 0.05, "anneal_epochs": 1, "anneal_strategy": "linear"},
    "per_group": {"swa_lr": [0.05, 0.5], "anneal_epochs": 5},
}


@pytest.mark.parametrize("name", SWALRS)
def test_swalr(name):
    ta, jb = ok(lambda T: swalr(T, **SWALRS[name]))
    assert ta[0] == jb[0]


def test_swalr_after_another_scheduler_and_round_trip():
    def program(T):
        opt = T.optim.SGD([T.zeros(2, requires_grad=True)], lr=1.0)
        cosine = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        swa = S(T).SWALR(opt, swa_lr=0.1, anneal_epochs=3, anneal_strategy="linear")
        seen = []
        for epoch in range(12):
            opt.step()
            (cosine if epoch < 5 else swa).step()
            seen.append(opt.param_groups[0]["lr"])
        saved = swa.state_dict()
        other = S(T).SWALR(opt, swa_lr=0.9)
        other.load_state_dict(saved)
        opt.step()
        other.step()
        return seen, saved, other.get_last_lr(), other.anneal_func(0.5)

    ta, jb = ok(program)
    assert ta[0] == jb[0]


SWALR_ERRORS = {
    "strategy": {"swa_lr": 0.1, "anneal_strategy": "exp"},
    "negative_epochs": {"swa_lr": 0.1, "anneal_epochs": -1},
    "float_epochs": {"swa_lr": 0.1, "anneal_epochs": 2.0},
    "swa_lr_count": {"swa_lr": [0.1, 0.2, 0.3]},
}


@pytest.mark.parametrize("name", SWALR_ERRORS)
def test_swalr_errors(name):
    raises(lambda T: swalr(T, **SWALR_ERRORS[name]))


@pytest.mark.parametrize("optimizer_first", [False, True])
def test_swalr_warnings(optimizer_first):
    def program(T):
        opt = T.optim.SGD([T.zeros(2, requires_grad=True)], lr=1.0)
        sched = S(T).SWALR(opt, swa_lr=0.1)
        if optimizer_first:
            opt.step()
        sched.step()
        sched.get_lr()

    expected = captured_warnings(program, torch)
    assert expected
    assert captured_warnings(program, jaxgrad) == expected


def test_public_names_match_torch():
    assert jaxgrad.optim.swa_utils.__all__ == torch.optim.swa_utils.__all__
    assert all(hasattr(jaxgrad.optim.swa_utils, n) for n in torch.optim.swa_utils.__all__)
