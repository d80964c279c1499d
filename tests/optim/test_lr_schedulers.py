"""jaxgrad.optim.lr_scheduler against torch.optim.lr_scheduler: every scheduler's learning rates
(and cycled momentums) over many steps, bit for bit; closed forms under ``step(epoch)``; state
dicts and their round trips; tensor learning rates; warnings; errors."""

from __future__ import annotations

import pytest

import jaxgrad
from differential import captured_warnings, compiled_on_jaxgrad, ok, raises, torch

STEPS = 30


def make_optimizer(T, kind="sgd", lr=0.1):
    """Two param groups (the second with its own lr), momentum or betas to cycle."""
    a, b = T.zeros(2, requires_grad=True), T.zeros(3, requires_grad=True)
    groups = [
        {"params": [a]},
        {"params": [b], "lr": lr / 2 if not isinstance(lr, T.Tensor) else T.tensor(lr.item() / 2)},
    ]
    if kind == "adam":
        return T.optim.Adam(groups, lr=lr, betas=(0.9, 0.99), foreach=False)
    if kind == "adagrad":
        return T.optim.Adagrad(groups, lr=lr, foreach=False)
    return T.optim.SGD(groups, lr=lr, momentum=0.9, foreach=False)


def momentums(opt):
    return [(g.get("momentum"), g.get("betas")) for g in opt.param_groups]


def schedule(T, make, kind="sgd", steps=STEPS):
    """The rates (and momentums) after construction and after each of ``steps`` steps."""
    opt = make_optimizer(T, kind)
    sched = make(T, opt)
    seen = [(sched.get_last_lr(), momentums(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups], momentums(opt)))
    return seen, getattr(sched, "last_epoch", None), sched.state_dict(), opt.param_groups[1]


class Power:
    """A callable object: LambdaLR saves its ``__dict__``."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base**epoch


def L(T):
    return T.optim.lr_scheduler


SCHEDULERS = {
    "lambda": lambda T, o: L(T).LambdaLR(o, lambda e: 0.95**e),
    "lambda_list": lambda T, o: L(T).LambdaLR(o, [lambda e: 1 / (e + 1), Power(0.9)]),
    "multiplicative": lambda T, o: L(T).MultiplicativeLR(o, lambda e: 0.95),
    "multiplicative_list": lambda T, o: L(T).MultiplicativeLR(
        o, [lambda e: 0.9, lambda e: 1.0 if e % 3 else 0.5]
    ),
    "step": lambda T, o: L(T).StepLR(o, 4, gamma=0.5),
    "multistep": lambda T, o: L(T).MultiStepLR(o, [3, 7, 7, 15], gamma=0.5),
    "constant": lambda T, o: L(T).ConstantLR(o, factor=0.25, total_iters=6),
    "constant_default": lambda T, o: L(T).ConstantLR(o),
    "linear": lambda T, o: L(T).LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=10),
    "linear_default": lambda T, o: L(T).LinearLR(o),
    "exponential": lambda T, o: L(T).ExponentialLR(o, gamma=0.9),
    "polynomial": lambda T, o: L(T).PolynomialLR(o, total_iters=12, power=2.0),
    "polynomial_default": lambda T, o: L(T).PolynomialLR(o),
    "cosine": lambda T, o: L(T).CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "sequential": lambda T, o: L(T).SequentialLR(
        o,
        [L(T).LinearLR(o, start_factor=0.1, total_iters=5), L(T).ExponentialLR(o, 0.9)],
        milestones=[5],
    ),
    "sequential_three": lambda T, o: L(T).SequentialLR(
        o,
        [L(T).ConstantLR(o, 0.5, 3), L(T).StepLR(o, 2, 0.7), L(T).CosineAnnealingLR(o, T_max=6)],
        milestones=[4, 12],
    ),
    "chained": lambda T, o: L(T).ChainedScheduler(
        [L(T).ConstantLR(o, 0.5, 4), L(T).ExponentialLR(o, 0.95)]
    ),
    "chained_optimizer": lambda T, o: L(T).ChainedScheduler(
        [L(T).LinearLR(o, 0.3, total_iters=6), L(T).MultiStepLR(o, [8, 20])], optimizer=o
    ),
    "cyclic": lambda T, o: L(T).CyclicLR(o, 0.01, 0.1, step_size_up=4),
    "cyclic_triangular2": lambda T, o: L(T).CyclicLR(
        o, 0.01, 0.1, step_size_up=3, step_size_down=5, mode="triangular2"
    ),
    "cyclic_exp_range": lambda T, o: L(T).CyclicLR(
        o, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.9
    ),
    "cyclic_scale_fn": lambda T, o: L(T).CyclicLR(
        o, 0.01, 0.1, step_size_up=5, scale_fn=lambda x: 0.8**x, scale_mode="iterations"
    ),
    "cyclic_lists": lambda T, o: L(T).CyclicLR(
        o,
        [0.01, 0.02],
        [0.1, 0.3],
        step_size_up=3,
        base_momentum=[0.7, 0.8],
        max_momentum=[0.9, 0.95],
    ),
    "cyclic_no_momentum": lambda T, o: L(T).CyclicLR(
        o, 0.01, 0.1, step_size_up=2, cycle_momentum=False
    ),
    "one_cycle": lambda T, o: L(T).OneCycleLR(o, max_lr=0.5, total_steps=STEPS),
    "one_cycle_three_phase": lambda T, o: L(T).OneCycleLR(
        o,
        max_lr=[0.5, 1.0],
        epochs=6,
        steps_per_epoch=5,
        three_phase=True,
        anneal_strategy="linear",
        pct_start=0.25,
    ),
    "one_cycle_no_momentum": lambda T, o: L(T).OneCycleLR(
        o, max_lr=0.3, total_steps=40, cycle_momentum=False, div_factor=10.0, final_div_factor=100.0
    ),
    "warm_restarts": lambda T, o: L(T).CosineAnnealingWarmRestarts(o, T_0=5),
    "warm_restarts_mult": lambda T, o: L(T).CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01
    ),
}
CYCLING = ["cyclic", "cyclic_lists", "one_cycle", "one_cycle_three_phase"]


@pytest.mark.parametrize("name", SCHEDULERS)
def test_rates_match_torch_bit_for_bit(name):
    ta, jb = ok(lambda T: schedule(T, SCHEDULERS[name]))
    assert ta[:2] == jb[:2]


@pytest.mark.parametrize("name", CYCLING)
def test_cycled_betas_of_adam(name):
    ta, jb = ok(lambda T: schedule(T, SCHEDULERS[name], kind="adam", steps=12))
    assert ta[:2] == jb[:2]


CLOSED_FORM = [
    "step",
    "multistep",
    "constant",
    "linear",
    "exponential",
    "polynomial",
    "cosine",
    "lambda",
    "multiplicative",
    "cyclic",
    "warm_restarts",
    "warm_restarts_mult",
]


@pytest.mark.parametrize("name", CLOSED_FORM)
def test_step_with_epoch_uses_the_closed_form(name):
    def program(T):
        opt = make_optimizer(T)
        sched = SCHEDULERS[name](T, opt)
        seen = []
        for epoch in [1, 2, 5, 3, 9, 9, 14, 4, 0, 20]:
            opt.step()
            sched.step(epoch)
            seen.append(sched.get_last_lr())
        opt.step()
        sched.step()  # chainable again from there
        return seen, sched.get_last_lr(), sched.last_epoch

    ta, jb = ok(program)
    assert ta == jb


def test_warm_restarts_fractional_epochs():
    def program(T):
        opt = make_optimizer(T)
        sched = L(T).CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        seen = []
        for epoch in [0.5, 2.9, 3.0, 7.25, 20.5, 1.5]:
            sched.step(epoch)
            seen.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return seen

    ta, jb = ok(program)
    assert ta == jb


def plateau(T, metrics, **kw):
    opt = make_optimizer(T)
    sched = L(T).ReduceLROnPlateau(opt, **kw)
    seen = [sched.get_last_lr()]
    for m in metrics:
        sched.step(m)
        seen.append(
            (
                sched.get_last_lr(),
                sched.num_bad_epochs,
                sched.cooldown_counter,
                sched.best,
                sched.last_epoch,
            )
        )
    return seen, sched.state_dict()


FALLING_THEN_FLAT = [
    5.0,
    4.0,
    3.99,
    3.995,
    3.9999,
    4.1,
    3.0,
    3.0,
    3.0,
    3.0,
    3.0,
    3.0,
    2.0,
    2.0,
    2.0,
    2.0,
    2.0,
    2.0,
    2.0,
    2.0,
]
PLATEAUS = {
    "default": {},
    "patience": {"patience": 2, "factor": 0.5},
    "abs": {"patience": 1, "threshold": 0.01, "threshold_mode": "abs"},
    "cooldown": {"patience": 0, "cooldown": 2, "factor": 0.5},
    "min_lr": {"patience": 0, "factor": 0.3, "min_lr": 0.01},
    "min_lrs": {"patience": 0, "factor": 0.3, "min_lr": [0.02, 0.001]},
    "eps": {"patience": 0, "factor": 0.9, "eps": 0.004},
    "max": {"mode": "max", "patience": 1, "factor": 0.5},
    "max_abs": {"mode": "max", "patience": 1, "threshold_mode": "abs", "threshold": 0.5},
}


@pytest.mark.parametrize("name", PLATEAUS)
def test_reduce_on_plateau(name):
    metrics = FALLING_THEN_FLAT if "max" not in name else [-m for m in FALLING_THEN_FLAT]
    ta, jb = ok(lambda T: plateau(T, metrics, **PLATEAUS[name]))
    assert ta[0] == jb[0]


def test_reduce_on_plateau_tensor_metric_and_epoch():
    def program(T):
        opt = make_optimizer(T)
        sched = L(T).ReduceLROnPlateau(opt, patience=0)
        sched.step(T.tensor(2.0))
        sched.step(T.tensor(3.0), epoch=7)
        return sched.get_last_lr(), sched.last_epoch, sched.best

    ok(program)


def test_reduce_on_plateau_new_param_group():
    def program(T, min_lr):
        opt = make_optimizer(T)
        sched = L(T).ReduceLROnPlateau(opt, patience=0, min_lr=min_lr)
        opt.add_param_group({"params": [T.zeros(1, requires_grad=True)], "lr": 1.0})
        sched.step(1.0)
        sched.step(1.0)
        return sched.get_last_lr(), sched.min_lrs

    ok(lambda T: program(T, 0.001))
    raises(lambda T: program(T, [0.001, 0.002]))


def test_reduce_on_plateau_state_dict_round_trip():
    def program(T):
        opt = make_optimizer(T)
        sched = L(T).ReduceLROnPlateau(opt, mode="max", patience=1)
        for m in [1.0, 2.0, 2.0]:
            sched.step(m)
        other = L(T).ReduceLROnPlateau(make_optimizer(T))
        other.load_state_dict(sched.state_dict())
        return other.state_dict(), other._is_better(3.0, 2.0)

    ok(program)


def round_trip(T, make, kind="sgd", before=7, after=10):
    """Save after ``before`` steps; a fresh optimizer and scheduler load both and go on."""
    opt = make_optimizer(T, kind)
    sched = make(T, opt)
    for _ in range(before):
        opt.step()
        sched.step()
    saved_opt, saved = opt.state_dict(), sched.state_dict()
    opt2 = make_optimizer(T, kind)
    sched2 = make(T, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    seen = []
    for _ in range(after):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        seen.append((sched.get_last_lr(), sched2.get_last_lr(), momentums(opt2)))
    return seen, saved, sched2.state_dict()


@pytest.mark.parametrize(
    "name",
    [
        "lambda_list",
        "multistep",
        "linear",
        "sequential_three",
        "chained",
        "cyclic_triangular2",
        "cyclic_scale_fn",
        "one_cycle",
        "warm_restarts_mult",
        "cosine",
    ],
)
def test_state_dict_round_trip(name):
    ta, jb = ok(lambda T: round_trip(T, SCHEDULERS[name]))
    assert ta[0] == jb[0]


def test_lambda_state_dict_keeps_callable_objects_state():
    def program(T):
        opt = make_optimizer(T)
        power = Power(0.9)
        sched = L(T).LambdaLR(opt, [power, power])
        saved = sched.state_dict()
        power.base = 0.5
        opt.step()
        sched.step()
        before = sched.get_last_lr()
        sched.load_state_dict(saved)  # the objects' __dict__ is restored
        opt.step()
        sched.step()
        return saved, before, sched.get_last_lr(), power.base, "lr_lambdas" in saved

    ta, jb = ok(program)
    assert ta[1:] == jb[1:]


def test_cyclic_state_dict_keeps_custom_scale_object():
    def program(T):
        opt = make_optimizer(T)
        sched = L(T).CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=Power(0.5))
        saved = sched.state_dict()
        sched._scale_fn_custom.base = 0.1
        sched.load_state_dict(saved)
        opt.step()
        sched.step()
        return saved, sched.get_last_lr(), sched._scale_fn_custom.base

    ok(program)


def test_resume_with_last_epoch():
    def program(T, name):
        opt = make_optimizer(T)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
        sched = (
            SCHEDULERS[name](T, opt)
            if name != "exp"
            else L(T).ExponentialLR(opt, 0.9, last_epoch=4)
        )
        seen = [sched.get_last_lr()]
        for _ in range(5):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        return seen

    ta, jb = ok(lambda T: program(T, "exp"))
    assert ta == jb

    def resumed(T, make):
        opt = make_optimizer(T)
        for g in opt.param_groups:
            g.update(
                initial_lr=g["lr"], max_momentum=0.9, base_momentum=0.8, max_lr=1.0, min_lr=0.001
            )
        sched = make(T, opt)
        seen = [sched.get_last_lr()]
        for _ in range(4):
            opt.step()
            sched.step()
            seen.append((sched.get_last_lr(), momentums(opt)))
        return seen

    for make in [
        lambda T, o: L(T).LinearLR(o, 0.5, total_iters=8, last_epoch=3),
        lambda T, o: L(T).PolynomialLR(o, total_iters=8, last_epoch=3),
        lambda T, o: L(T).MultiplicativeLR(o, lambda e: 0.5, last_epoch=3),
        lambda T, o: L(T).CyclicLR(o, 0.01, 0.1, step_size_up=3, last_epoch=3),
        lambda T, o: L(T).OneCycleLR(o, 1.0, total_steps=20, last_epoch=3),
        lambda T, o: L(T).CosineAnnealingWarmRestarts(o, T_0=3, last_epoch=3),
    ]:
        ta, jb = ok(lambda T, make=make: resumed(T, make))
        assert ta == jb


@pytest.mark.parametrize(
    "name",
    [
        "exponential",
        "linear",
        "multistep",
        "constant",
        "warm_restarts",
        "sequential",
        "chained",
        "polynomial",
        "lambda",
        "multiplicative",
        "cosine",
        "cyclic",
        "one_cycle",
    ],
)
def test_tensor_learning_rates_are_filled(name):
    def program(T):
        opt = make_optimizer(T, lr=T.tensor(0.1))
        lr = opt.param_groups[0]["lr"]
        sched = SCHEDULERS[name](T, opt)
        seen = []
        for _ in range(12):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        return seen, lr, opt.param_groups[0]["initial_lr"], getattr(sched, "base_lrs", None)

    ok(program)


def test_tensor_lr_reduce_on_plateau():
    def program(T):
        opt = make_optimizer(T, lr=T.tensor(0.1))
        lr = opt.param_groups[0]["lr"]
        sched = L(T).ReduceLROnPlateau(opt, patience=0)
        for m in [1.0, 1.0, 1.0]:
            sched.step(m)
        return lr, sched.get_last_lr()

    ok(program)


def warned(T, make, optimizer_first=True, epoch=None):
    opt = make_optimizer(T)
    sched = make(T, opt)
    if optimizer_first:
        opt.step()
    sched.step() if epoch is None else sched.step(epoch)
    sched.get_lr()  # outside step(): "please use get_last_lr()"


@pytest.mark.parametrize(
    "name",
    [
        "lambda",
        "multiplicative",
        "multistep",
        "constant",
        "linear",
        "exponential",
        "polynomial",
        "cyclic",
        "one_cycle",
        "warm_restarts",
    ],
)
@pytest.mark.parametrize("optimizer_first", [False, True])
def test_warnings(name, optimizer_first):
    program = lambda T: warned(T, SCHEDULERS[name], optimizer_first)
    expected = captured_warnings(program, torch)
    assert expected
    assert captured_warnings(program, jaxgrad) == expected


@pytest.mark.parametrize("name", ["exponential", "warm_restarts", "cyclic"])
def test_epoch_argument_warnings(name):
    program = lambda T: warned(T, SCHEDULERS[name], epoch=3)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_plateau_epoch_argument_warns():
    def program(T):
        L(T).ReduceLROnPlateau(make_optimizer(T)).step(1.0, epoch=3)

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch) != []


def test_composites_do_not_warn_about_order():
    def program(T):
        opt = make_optimizer(T)
        sched = SCHEDULERS["sequential"](T, opt)
        chain = L(T).ChainedScheduler([L(T).ExponentialLR(opt, 0.9)])
        sched.step()
        chain.step()

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


ERRORS = {
    "constant_factor": lambda T, o: L(T).ConstantLR(o, factor=1.5),
    "linear_start": lambda T, o: L(T).LinearLR(o, start_factor=0),
    "linear_end": lambda T, o: L(T).LinearLR(o, end_factor=2.0),
    "lambda_count": lambda T, o: L(T).LambdaLR(o, [lambda e: 1.0]),
    "multiplicative_count": lambda T, o: L(T).MultiplicativeLR(o, (lambda e: 1.0,) * 3),
    "multiplicative_not_callable": lambda T, o: L(T).MultiplicativeLR(o, 0.5),
    "sequential_empty": lambda T, o: L(T).SequentialLR(o, [], milestones=[]),
    "sequential_milestones": lambda T, o: L(T).SequentialLR(
        o, [L(T).ExponentialLR(o, 0.9), L(T).StepLR(o, 2)], milestones=[1, 2]
    ),
    "sequential_plateau": lambda T, o: L(T).SequentialLR(
        o, [L(T).ExponentialLR(o, 0.9), L(T).ReduceLROnPlateau(o)], milestones=[3]
    ),
    "sequential_not_scheduler": lambda T, o: L(T).SequentialLR(o, [object()], milestones=[]),
    "chained_empty": lambda T, o: L(T).ChainedScheduler([]),
    "chained_plateau": lambda T, o: L(T).ChainedScheduler([L(T).ReduceLROnPlateau(o)]),
    "plateau_factor": lambda T, o: L(T).ReduceLROnPlateau(o, factor=1.0),
    "plateau_mode": lambda T, o: L(T).ReduceLROnPlateau(o, mode="median"),
    "plateau_threshold_mode": lambda T, o: L(T).ReduceLROnPlateau(o, threshold_mode="pct"),
    "plateau_min_lrs": lambda T, o: L(T).ReduceLROnPlateau(o, min_lr=[0.1]),
    "plateau_optimizer": lambda T, o: L(T).ReduceLROnPlateau(object()),
    "cyclic_mode": lambda T, o: L(T).CyclicLR(o, 0.01, 0.1, mode="square"),
    "cyclic_lengths": lambda T, o: L(T).CyclicLR(o, [0.01], 0.1),
    "cyclic_optimizer": lambda T, o: L(T).CyclicLR(object(), 0.01, 0.1),
    "cyclic_momentum_lengths": lambda T, o: L(T).CyclicLR(o, 0.01, 0.1, max_momentum=[0.9]),
    "one_cycle_steps": lambda T, o: L(T).OneCycleLR(o, 0.1, total_steps=0),
    "one_cycle_nothing": lambda T, o: L(T).OneCycleLR(o, 0.1),
    "one_cycle_epochs": lambda T, o: L(T).OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=3),
    "one_cycle_steps_per_epoch": lambda T, o: L(T).OneCycleLR(
        o, 0.1, epochs=2, steps_per_epoch=1.5
    ),
    "one_cycle_pct": lambda T, o: L(T).OneCycleLR(o, 0.1, total_steps=5, pct_start=1),
    "one_cycle_anneal": lambda T, o: L(T).OneCycleLR(o, 0.1, total_steps=5, anneal_strategy="exp"),
    "one_cycle_max_lr": lambda T, o: L(T).OneCycleLR(o, [0.1, 0.2, 0.3], total_steps=5),
    "restarts_T_0": lambda T, o: L(T).CosineAnnealingWarmRestarts(o, T_0=0),
    "restarts_T_mult": lambda T, o: L(T).CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "restarts_eta_min": lambda T, o: L(T).CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    "restarts_negative_epoch": lambda T, o: L(T).CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "resume_without_initial_lr": lambda T, o: L(T).ExponentialLR(o, 0.9, last_epoch=2),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors(name):
    raises(lambda T: ERRORS[name](T, make_optimizer(T)))


@pytest.mark.parametrize("scheduler", ["cyclic", "one_cycle"])
def test_cycling_momentum_needs_momentum_or_betas(scheduler):
    raises(lambda T: SCHEDULERS[scheduler](T, make_optimizer(T, "adagrad")))


def test_composite_with_another_optimizers_scheduler():
    # the message prints the other optimizer (its repr), as torch's does
    def program(T):
        opt, other = make_optimizer(T), make_optimizer(T)
        return L(T).ChainedScheduler([L(T).ExponentialLR(opt, 0.9), L(T).ExponentialLR(other, 0.9)])

    raises(program)


def test_one_cycle_past_total_steps_raises():
    def program(T):
        opt = make_optimizer(T)
        sched = L(T).OneCycleLR(opt, 0.1, total_steps=3)
        for _ in range(4):
            opt.step()
            sched.step()

    raises(program)


@pytest.mark.parametrize(
    "name",
    [
        "exponential",
        "lambda",
        "multistep",
        "linear",
        "constant",
        "polynomial",
        "cyclic",
        "one_cycle",
        "warm_restarts",
    ],
)
def test_scheduler_stepped_inside_a_compiled_step(name):
    def program(T):
        w = T.ones(3, requires_grad=True)
        opt = T.optim.SGD([w], lr=0.1, momentum=0.9)
        sched = SCHEDULERS[name](T, opt)

        def step():
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
            sched.step()
            return w.sum()

        step = compiled_on_jaxgrad(T, step)
        return [(step().item(), sched.get_last_lr()) for _ in range(8)]

    ok(program, rtol=1e-5)


def test_public_names_match_torch():
    ours = {n for n in dir(jaxgrad.optim.lr_scheduler) if not n.startswith("__")}
    theirs = set(torch.optim.lr_scheduler.__all__) | {"_LRScheduler", "EPOCH_DEPRECATION_WARNING"}
    assert theirs <= ours
    assert jaxgrad.optim.lr_scheduler.__all__ == torch.optim.lr_scheduler.__all__
    assert (
        jaxgrad.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING
        == torch.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING
    )
