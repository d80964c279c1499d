"""jaxgrad.optim against torch.optim: updates, state, versions, state dicts, errors, schedulers.

On CPU torch runs its single-tensor ("for-loop") optimizer implementations unless ``foreach``
or ``fused`` is passed, and jaxgrad's version counts follow those; the foreach/fused kernels
bump versions differently, so those runs compare values only.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import captured_warnings, ok, raises, same, torch

STEPS = 20
_rng = np.random.default_rng(0)
W1 = _rng.normal(size=(3, 4)).tolist()
B1 = _rng.normal(size=(4,)).tolist()
W2 = _rng.normal(size=(4, 2)).tolist()
X = _rng.normal(size=(5, 3)).tolist()
Y = _rng.normal(size=(5, 2)).tolist()


def make_params(T, dtype=None):
    """Three trainable tensors and one that never gets a gradient."""
    dtype = dtype or T.float32
    return [T.tensor(v, dtype=dtype, requires_grad=True) for v in (W1, B1, W2, [1.0, 2.0])]


def loss_of(T, params):
    w1, b1, w2, _unused = params
    x, y = T.tensor(X, dtype=w1.dtype), T.tensor(Y, dtype=w1.dtype)
    return ((T.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()


def train(T, make_optimizer, steps=STEPS, dtype=None, groups=False):
    """``steps`` optimizer steps on a small MLP loss; everything observable at the end."""
    params = make_params(T, dtype)
    spec = ([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}] if groups
            else params)
    opt = make_optimizer(T, spec)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(T, params)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return {"params": params, "grads": [p.grad for p in params], "losses": losses,
            "state": opt.state_dict(), "repr": repr(opt)}


OPTIMIZERS = {
    "sgd": lambda T, p: T.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda T, p: T.optim.SGD(p, lr=0.05, momentum=0.9),
    "sgd_dampening": lambda T, p: T.optim.SGD(p, lr=0.05, momentum=0.5, dampening=0.3),
    "sgd_nesterov_decay": lambda T, p: T.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True,
                                                   weight_decay=0.01),
    "sgd_maximize": lambda T, p: T.optim.SGD(p, lr=0.01, momentum=0.8, maximize=True),
    "adam": lambda T, p: T.optim.Adam(p, lr=0.01),
    "adam_betas_eps": lambda T, p: T.optim.Adam(p, lr=0.02, betas=(0.8, 0.99), eps=1e-6),
    "adam_amsgrad": lambda T, p: T.optim.Adam(p, lr=0.01, amsgrad=True),
    "adam_decay": lambda T, p: T.optim.Adam(p, lr=0.01, weight_decay=0.1),
    "adam_decoupled": lambda T, p: T.optim.Adam(p, lr=0.01, weight_decay=0.1,
                                                decoupled_weight_decay=True),
    "adam_maximize_amsgrad": lambda T, p: T.optim.Adam(p, lr=0.01, maximize=True,
                                                       amsgrad=True, weight_decay=0.05),
    "adamw": lambda T, p: T.optim.AdamW(p, lr=0.01),
    "adamw_amsgrad": lambda T, p: T.optim.AdamW(p, lr=0.03, weight_decay=0.2, amsgrad=True),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_updates_match_torch_over_20_steps(name):
    # params, their versions (one per in-place op torch's single-tensor kernel runs), the
    # state dict (state tensors with their versions, the step counters), losses, repr
    ok(lambda T: train(T, OPTIMIZERS[name]), rtol=1e-5)


START = _rng.normal(size=(2, 6)).tolist()
GRADIENTS = [[_rng.normal(size=(6,)) * 10.0 ** _rng.integers(-3, 2) for _ in range(2)]
             for _ in range(STEPS)]


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_updates_with_given_gradients(name):
    # the optimizer alone: the same gradients each step in both libraries (from 1e-3 to 10);
    # the remaining differences are single roundings (ATen and XLA fuse multiply-adds in
    # different places)
    def program(T):
        params = [T.tensor(values, requires_grad=True) for values in START]
        opt = OPTIMIZERS[name](T, params)
        for grads in GRADIENTS:
            for p, g in zip(params, grads):
                p.grad = T.tensor(g.tolist(), dtype=T.float32)
            opt.step()
        return params, opt.state_dict()

    ok(program, rtol=1e-5)


def test_adam_on_complex_params_works_on_real_views():
    def program(T):
        p = T.tensor([1 + 2j, -0.5 + 0.25j], requires_grad=True)
        opt = T.optim.Adam([p], lr=0.1, amsgrad=True, weight_decay=0.1)
        for k in range(5):
            p.grad = T.tensor([0.3 - 1j * k, 2.0 + 0.5j])
            opt.step()
        return p, dict(opt.state[p])

    ok(program, rtol=1e-5)


@pytest.mark.parametrize("name", ["sgd_momentum", "sgd_nesterov_decay", "adam", "adamw_amsgrad"])
def test_param_groups_with_different_lrs(name):
    ok(lambda T: train(T, OPTIMIZERS[name], groups=True), rtol=1e-5)


@pytest.mark.parametrize("name", ["sgd_nesterov_decay", "adam_amsgrad", "adamw"])
def test_float64_params(name):
    ok(lambda T: train(T, OPTIMIZERS[name], dtype=T.float64))


@pytest.mark.parametrize("flag", ["foreach", "fused"])
@pytest.mark.parametrize("family", ["SGD", "Adam", "AdamW"])
def test_foreach_and_fused_flags_compare_values(flag, family):
    # torch's foreach/fused kernels bump versions in their own way: compare values (clones)
    def program(T):
        out = train(T, lambda T, p: getattr(T.optim, family)(p, lr=0.01, **{flag: True}), 5)
        return [p.detach().clone() for p in out["params"]], out["repr"]

    ok(program, rtol=1e-5)


def test_state_step_is_a_float_tensor():
    def program(T):
        p = T.tensor([1.0, 2.0], requires_grad=True)
        opt = T.optim.Adam([p])
        p.grad = T.tensor([0.5, -0.5])
        opt.step()
        opt.step()
        return dict(opt.state[p]), p

    ok(program)


def test_step_counter_follows_the_default_dtype():
    def program(T):
        T.set_default_dtype(T.float64)
        try:
            p = T.tensor([1.0, 2.0], requires_grad=True)
            opt = T.optim.AdamW([p])
            p.grad = T.ones(2, dtype=T.float64)
            opt.step()
            return opt.state[p]["step"], p
        finally:
            T.set_default_dtype(T.float32)

    ok(program)


def test_params_without_grad_are_skipped():
    def program(T):
        a, b = T.tensor([1.0], requires_grad=True), T.tensor([2.0], requires_grad=True)
        opt = T.optim.Adam([a, b], lr=0.1)
        a.grad = T.tensor([1.0])
        opt.step()
        return a, b, len(opt.state), b in opt.state

    ok(program)


def test_closure_runs_with_grad_and_step_returns_its_loss():
    def program(T):
        w = T.tensor([1.0, -1.0], requires_grad=True)
        opt = T.optim.SGD([w], lr=0.5)
        seen = []

        def closure():
            opt.zero_grad()
            seen.append(T.is_grad_enabled())
            loss = (w * w).sum()
            loss.backward()
            return loss

        with T.no_grad():
            loss = opt.step(closure)
        return loss, w, seen

    ok(program)


def test_zero_grad_set_to_none_false_zeroes_in_place():
    def program(T):
        w = T.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        grad = w.grad
        opt = T.optim.SGD([w])
        opt.zero_grad(set_to_none=False)
        return grad, w.grad is grad

    ok(program)


def test_zero_grad_detaches_a_grad_with_history():
    def program(T):
        w = T.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward(create_graph=True)
        grad = w.grad
        T.optim.SGD([w]).zero_grad(set_to_none=False)
        return grad, w.grad is grad

    ok(program)


def test_views_of_a_parameter_see_the_update():
    def program(T):
        w = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        view = w.detach()[1:]
        w.grad = T.tensor([1.0, 1.0, 1.0])
        T.optim.SGD([w], lr=0.5).step()
        return view, w

    ok(program)


def test_tensor_learning_rate():
    def program(T):
        w = T.tensor([1.0, 2.0], requires_grad=True)
        opt = T.optim.SGD([w], lr=T.tensor(0.25), momentum=0.5)
        for _ in range(3):
            w.grad = w.detach() * 2
            opt.step()
        return w, opt.state_dict()

    ok(program)


def test_state_dict_round_trip_continues_training_identically():
    def program(T):
        make = OPTIMIZERS["adam_amsgrad"]
        params = make_params(T)
        opt = make(T, params)
        for _ in range(5):
            opt.zero_grad()
            loss_of(T, params).backward()
            opt.step()
        saved = opt.state_dict()
        copies = [p.detach().clone().requires_grad_() for p in params]
        resumed = make(T, copies)
        resumed.load_state_dict(saved)
        for ps, o in ((params, opt), (copies, resumed)):
            for _ in range(5):
                o.zero_grad()
                loss_of(T, ps).backward()
                o.step()
        return params, copies, resumed.state_dict(), resumed.state[copies[0]]["exp_avg"] is (
            saved["state"][0]["exp_avg"])

    ok(program, rtol=1e-5)


def test_state_dict_packs_params_as_ints_and_shares_state():
    def program(T):
        a, b, c = (T.tensor([float(i)], requires_grad=True) for i in range(3))
        opt = T.optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], momentum=0.9)
        for p in (a, c):
            p.grad = T.ones(1)
        opt.step()
        sd = opt.state_dict()
        return sd, sd["state"][0] is opt.state[a], sorted(sd["state"])

    ok(program)


def test_load_state_dict_restores_hyperparameters_and_converts_a_number_step():
    def program(T):
        p = T.tensor([1.0, 2.0], requires_grad=True)
        opt = T.optim.Adam([p], lr=0.1)
        p.grad = T.ones(2)
        opt.step()
        sd = opt.state_dict()
        sd["param_groups"][0]["lr"] = 0.5
        sd["state"][0]["step"] = 3  # old checkpoints stored plain numbers
        opt.load_state_dict(sd)
        opt.step()
        return opt.param_groups[0]["lr"], opt.state[p], p

    ok(program)


@pytest.mark.parametrize("case", ["groups", "sizes"])
def test_load_state_dict_errors(case):
    def program(T):
        a, b = T.ones(1, requires_grad=True), T.ones(1, requires_grad=True)
        opt = T.optim.SGD([a, b])
        other = (T.optim.SGD([{"params": [a]}, {"params": [b]}]) if case == "groups"
                 else T.optim.SGD([a]))
        opt.load_state_dict(other.state_dict())

    raises(program)


def test_repr_with_groups():
    def program(T):
        a, b = T.ones(1, requires_grad=True), T.ones(1, requires_grad=True)
        return [repr(T.optim.AdamW([{"params": [a]}, {"params": [b], "lr": 0.5}])),
                repr(T.optim.Adam([a], amsgrad=True))]

    ok(program)


def test_add_param_group_fills_defaults():
    def program(T):
        a, b = T.ones(1, requires_grad=True), T.ones(2, requires_grad=True)
        opt = T.optim.SGD([a], lr=0.1, momentum=0.5)
        opt.add_param_group({"params": b, "lr": 0.2})
        return opt.state_dict()["param_groups"]

    ok(program)


CONSTRUCTION_ERRORS = {
    "negative_lr": lambda T, p: T.optim.SGD(p, lr=-1),
    "negative_momentum": lambda T, p: T.optim.SGD(p, momentum=-0.5),
    "negative_decay": lambda T, p: T.optim.SGD(p, weight_decay=-1e-3),
    "nesterov_without_momentum": lambda T, p: T.optim.SGD(p, nesterov=True),
    "nesterov_with_dampening": lambda T, p: T.optim.SGD(p, momentum=0.9, dampening=0.1,
                                                        nesterov=True),
    "fused_and_foreach": lambda T, p: T.optim.SGD(p, fused=True, foreach=True),
    "tensor_lr_two_elements": lambda T, p: T.optim.SGD(p, lr=T.tensor([0.1, 0.2])),
    "adam_negative_lr": lambda T, p: T.optim.Adam(p, lr=-0.1),
    "adam_eps": lambda T, p: T.optim.Adam(p, eps=-1.0),
    "adam_beta0": lambda T, p: T.optim.Adam(p, betas=(1.0, 0.999)),
    "adam_beta1": lambda T, p: T.optim.Adam(p, betas=(0.9, -0.1)),
    "adam_int_beta": lambda T, p: T.optim.Adam(p, betas=(0, 0.999)),
    "adam_decay": lambda T, p: T.optim.AdamW(p, weight_decay=-0.1),
    "adamw_fused_foreach": lambda T, p: T.optim.AdamW(p, fused=True, foreach=True),
    "single_tensor": lambda T, p: T.optim.SGD(p[0]),
    "empty": lambda T, p: T.optim.Adam([]),
    "non_leaf": lambda T, p: T.optim.SGD([p[0] * 2]),
    "not_a_tensor": lambda T, p: T.optim.SGD([p[0], 1.5]),
    "set_of_params": lambda T, p: T.optim.SGD([{"params": {p[0]}}]),
    "param_in_two_groups": lambda T, p: T.optim.SGD([{"params": p}, {"params": p[:1]}]),
    "group_not_a_dict": lambda T, p: T.optim.SGD(p).add_param_group(p),
}


@pytest.mark.parametrize("case", CONSTRUCTION_ERRORS)
def test_construction_errors(case):
    raises(lambda T: CONSTRUCTION_ERRORS[case](T, make_params(T)))


def test_duplicate_params_warn():
    def program(T):
        p = T.ones(1, requires_grad=True)
        T.optim.SGD([p, p])

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch) != []


# --- learning-rate schedulers --------------------------------------------------------------


def scheduled(T, make_scheduler, epochs=30, groups=False):
    params = make_params(T)
    spec = [{"params": params[:2]}, {"params": params[2:], "lr": 0.3}] if groups else params
    opt = T.optim.SGD(spec, lr=0.1, momentum=0.9)
    sched = make_scheduler(T, opt)
    lrs = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.zero_grad()
        loss_of(T, params).backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, [g["lr"] for g in opt.param_groups], sched.state_dict(), params


SCHEDULERS = {
    "step": lambda T, o: T.optim.lr_scheduler.StepLR(o, step_size=7),
    "step_gamma": lambda T, o: T.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
    "cosine": lambda T, o: T.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10),
    "cosine_eta_min": lambda T, o: T.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7,
                                                                          eta_min=0.01),
}


@pytest.mark.parametrize("groups", [False, True])
@pytest.mark.parametrize("name", SCHEDULERS)
def test_schedulers_match_torch_floats_exactly(name, groups):
    ta, jb = ok(lambda T: scheduled(T, SCHEDULERS[name], groups=groups), rtol=1e-5)
    assert ta[0] == jb[0] and ta[1] == jb[1]  # the learning rates, bit for bit


def test_scheduler_sets_initial_lr_and_state_dict_round_trip():
    def program(T):
        params = make_params(T)
        opt = T.optim.SGD(params, lr=0.1)
        sched = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
        for _ in range(3):
            opt.step()
            sched.step()
        saved = sched.state_dict()
        opt2 = T.optim.SGD(make_params(T), lr=0.1)
        opt2.load_state_dict(opt.state_dict())
        sched2 = T.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=5)
        sched2.load_state_dict(saved)
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        return (opt.param_groups[0]["initial_lr"], sched.get_last_lr(), sched2.get_last_lr(),
                sched2.state_dict())

    ta, jb = ok(program)
    assert ta[1:3] == jb[1:3]


def test_scheduler_resumed_with_last_epoch():
    def program(T):
        opt = T.optim.SGD(make_params(T), lr=0.1)
        opt.param_groups[0]["initial_lr"] = 0.2
        sched = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, last_epoch=2)
        lrs = [sched.get_last_lr()]
        for _ in range(4):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs

    ta, jb = ok(program)
    assert ta == jb


def test_scheduler_last_epoch_without_initial_lr_raises():
    raises(lambda T: T.optim.lr_scheduler.StepLR(T.optim.SGD(make_params(T)), 2,
                                                 last_epoch=3))


def test_scheduler_needs_an_optimizer():
    raises(lambda T: T.optim.lr_scheduler.StepLR(object(), 2))


def test_scheduler_with_tensor_lr_fills_it():
    def program(T):
        lr = T.tensor(0.5)
        opt = T.optim.SGD(make_params(T), lr=lr)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        opt.step()
        sched.step()
        return lr, sched.get_last_lr(), opt.param_groups[0]["initial_lr"]

    ok(program)


def scheduler_warnings(T, optimizer_first):
    opt = T.optim.SGD(make_params(T), lr=0.1)
    sched = T.optim.lr_scheduler.StepLR(opt, step_size=2)
    if optimizer_first:
        opt.step()
    sched.step()
    sched.get_lr()  # outside step(): "please use get_last_lr()"
    sched.step(5)  # the deprecated epoch argument


@pytest.mark.parametrize("optimizer_first", [False, True])
def test_scheduler_warnings(optimizer_first):
    program = lambda T: scheduler_warnings(T, optimizer_first)
    expected = captured_warnings(program, torch)
    order_warned = any("before `optimizer.step()`" in message for _, message in expected)
    assert order_warned != optimizer_first
    assert captured_warnings(program, jaxgrad) == expected


def test_scheduler_step_after_overriding_optimizer_step_warns():
    def program(T):
        opt = T.optim.SGD(make_params(T), lr=0.1)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=2)
        opt.step = lambda closure=None: None
        sched.step()

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch) != []


def test_same_reports_scheduler_mismatch():
    # the comparison itself can fail: different T_max give different learning rates
    with pytest.raises(AssertionError):
        same(lambda T: scheduled(T, lambda T, o: T.optim.lr_scheduler.CosineAnnealingLR(
            o, T_max=10 if T.__name__ == "torch" else 11), epochs=3))
