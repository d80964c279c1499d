"""NAdam, RAdam, Rprop and ASGD against torch.optim: updates, state (dtypes, versions, 0-d
tensors such as ``mu_product``, ``eta`` and ``mu``), state dicts, param groups, errors, flags
and ``differentiable=True``.

On CPU torch runs the single-tensor ("for-loop") implementations unless ``foreach`` is passed;
jaxgrad's version counts follow them, so foreach runs compare values only.
"""

from __future__ import annotations

import pytest

from differential import Raised, attempt, next_functions, ok, raises, same
from optim_problems import Problem, optimizer_class

PROBLEM = Problem(seed=2)
make_params, loss_of, train = PROBLEM.make_params, PROBLEM.loss_of, PROBLEM.train
given_gradients = PROBLEM.given_gradients


def NAdam(T, *args, **kwargs):
    return optimizer_class(T, "nadam", "NAdam")(*args, **kwargs)


def RAdam(T, *args, **kwargs):
    return optimizer_class(T, "radam", "RAdam")(*args, **kwargs)


def Rprop(T, *args, **kwargs):
    return optimizer_class(T, "rprop", "Rprop")(*args, **kwargs)


def ASGD(T, *args, **kwargs):
    return optimizer_class(T, "asgd", "ASGD")(*args, **kwargs)


FAMILIES = {"nadam": NAdam, "radam": RAdam, "rprop": Rprop, "asgd": ASGD}

OPTIMIZERS = {
    "nadam": lambda T, p: NAdam(T, p),
    "nadam_lr_betas_eps": lambda T, p: NAdam(T, p, lr=0.01, betas=(0.8, 0.99), eps=1e-4),
    "nadam_momentum_decay": lambda T, p: NAdam(T, p, lr=0.01, momentum_decay=0.1),
    "nadam_decay_maximize": lambda T, p: NAdam(T, p, lr=0.01, weight_decay=0.1,
                                               maximize=True),
    "nadam_decoupled": lambda T, p: NAdam(T, p, lr=0.01, weight_decay=0.1,
                                          decoupled_weight_decay=True),
    "nadam_tensor_lr": lambda T, p: NAdam(T, p, lr=T.tensor(0.01), weight_decay=0.1,
                                          decoupled_weight_decay=True),
    "nadam_flags_off": lambda T, p: NAdam(T, p, foreach=False, capturable=False,
                                          differentiable=False),
    "radam": lambda T, p: RAdam(T, p),
    "radam_lr_betas_eps": lambda T, p: RAdam(T, p, lr=0.01, betas=(0.8, 0.9), eps=1e-4),
    "radam_decay_maximize": lambda T, p: RAdam(T, p, lr=0.01, weight_decay=0.1,
                                               maximize=True),
    "radam_decoupled": lambda T, p: RAdam(T, p, lr=0.01, weight_decay=0.1,
                                          decoupled_weight_decay=True),
    "radam_tensor_lr": lambda T, p: RAdam(T, p, lr=T.tensor([0.01])),
    "radam_flags_off": lambda T, p: RAdam(T, p, foreach=False, capturable=False,
                                          differentiable=False),
    "rprop": lambda T, p: Rprop(T, p),
    "rprop_etas_sizes": lambda T, p: Rprop(T, p, lr=0.05, etas=(0.3, 1.5),
                                           step_sizes=(1e-3, 0.1)),
    "rprop_maximize": lambda T, p: Rprop(T, p, lr=0.001, maximize=True),
    "rprop_tensor_lr": lambda T, p: Rprop(T, p, lr=T.tensor(0.02)),
    "rprop_flags_off": lambda T, p: Rprop(T, p, foreach=False, capturable=False,
                                          differentiable=False),
    "asgd": lambda T, p: ASGD(T, p),
    "asgd_t0": lambda T, p: ASGD(T, p, lr=0.05, lambd=1e-2, alpha=0.5, t0=5),
    "asgd_decay_maximize": lambda T, p: ASGD(T, p, lr=0.01, weight_decay=0.1, t0=3,
                                             maximize=True),
    "asgd_tensor_lr": lambda T, p: ASGD(T, p, lr=T.tensor(0.05), t0=2),
    "asgd_flags_off": lambda T, p: ASGD(T, p, foreach=False, capturable=False,
                                        differentiable=False),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_updates_match_torch_over_20_steps(name):
    # params, their versions (one per in-place op torch's single-tensor kernel runs), the
    # state dict (state tensors with their dtypes and versions, step counters), losses, repr
    ok(lambda T: train(T, OPTIMIZERS[name]), rtol=1e-5)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_updates_with_given_gradients(name):
    # the optimizer alone: the same gradients each step in both libraries (from 1e-3 to 10)
    ok(lambda T: given_gradients(T, OPTIMIZERS[name]), rtol=1e-5)


@pytest.mark.parametrize("name", ["nadam_decay_maximize", "nadam_decoupled", "radam_decoupled",
                                  "rprop_etas_sizes", "asgd_t0"])
def test_bfloat16_params(name):
    # half precision rounds where torch's ops round; a few steps (rounding differences of the
    # fused multiply-adds compound)
    ok(lambda T: given_gradients(T, OPTIMIZERS[name], dtype=T.bfloat16, steps=3), rtol=1e-2)


@pytest.mark.parametrize("name", ["nadam_decay_maximize", "radam_lr_betas_eps", "rprop",
                                  "asgd_t0"])
def test_param_groups_with_different_lrs(name):
    ok(lambda T: train(T, OPTIMIZERS[name], groups=True), rtol=1e-5)


@pytest.mark.parametrize("name", ["nadam_momentum_decay", "nadam_decoupled", "radam",
                                  "radam_decay_maximize", "rprop_etas_sizes",
                                  "asgd_decay_maximize", "asgd_t0"])
def test_float64_params(name):
    ok(lambda T: train(T, OPTIMIZERS[name], dtype=T.float64))


@pytest.mark.parametrize("family", FAMILIES)
def test_state_follows_the_default_dtype(family):
    # step (and mu_product, eta, mu) are float64 under a float64 default
    def program(T):
        T.set_default_dtype(T.float64)
        try:
            p = T.tensor([1.0, 2.0], requires_grad=True)
            q = T.tensor([1.0, 2.0], dtype=T.float32, requires_grad=True)
            opt = FAMILIES[family](T, [p, q], lr=0.1)
            for _ in range(3):
                p.grad = T.ones(2, dtype=T.float64)
                q.grad = T.ones(2, dtype=T.float32) * -0.5
                opt.step()
            return opt.state_dict(), p, q
        finally:
            T.set_default_dtype(T.float32)

    ok(program)


@pytest.mark.parametrize("family", FAMILIES)
def test_complex_params_step_on_real_views(family):
    kwargs = {"nadam": {"weight_decay": 0.1}, "radam": {"weight_decay": 0.1},
              "rprop": {}, "asgd": {"weight_decay": 0.1, "t0": 2}}[family]

    def program(T):
        p = T.tensor([1 + 2j, -0.5 + 0.25j], requires_grad=True)
        opt = FAMILIES[family](T, [p], lr=0.1, **kwargs)
        for k in range(8):
            p.grad = T.tensor([0.3 - 1j * k, 2.0 + 0.5j * (-1) ** k])
            opt.step()
        return p, dict(opt.state[p])

    ok(program, rtol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_foreach_flag(family):
    # torch's foreach kernels bump versions in their own way (and compute some values in other
    # orders): compare values (clones)
    def program(T):
        kwargs = {} if family == "rprop" else {"weight_decay": 0.01}
        make = lambda T, p: FAMILIES[family](T, p, lr=0.01, foreach=True, **kwargs)
        out = train(T, make, 8)
        state = {i: {k: v.detach().clone() for k, v in s.items()}
                 for i, s in out["state"]["state"].items()}
        return [p.detach().clone() for p in out["params"]], state, out["repr"]

    ok(program, rtol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_params_without_grad_are_skipped(family):
    def program(T):
        a, b = T.tensor([1.0], requires_grad=True), T.tensor([2.0], requires_grad=True)
        opt = FAMILIES[family](T, [a, b], lr=0.1)
        a.grad = T.tensor([1.0])
        opt.step()
        return a, b, len(opt.state), b in opt.state, opt.state_dict()

    ok(program)


@pytest.mark.parametrize("family", FAMILIES)
def test_closure_returns_its_loss(family):
    def program(T):
        w = T.tensor([1.0, -1.0], requires_grad=True)
        opt = FAMILIES[family](T, [w], lr=0.5)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        with T.no_grad():
            loss = opt.step(closure)
        return loss, w

    ok(program)


def test_rprop_step_size_is_made_from_the_groups_lr_at_the_first_step():
    # (not at construction): a later lr change before the first step counts, later ones don't
    def program(T):
        a = T.tensor([1.0, -1.0], requires_grad=True)
        opt = Rprop(T, [a], lr=0.1)
        opt.param_groups[0]["lr"] = 0.3
        a.grad = T.tensor([1.0, 2.0])
        opt.step()
        opt.param_groups[0]["lr"] = 5.0
        a.grad = T.tensor([-1.0, 2.0])
        opt.step()
        return a, opt.state_dict()

    ok(program)


def test_asgd_eta_starts_at_the_groups_lr_and_averages_after_t0():
    def program(T):
        a = T.tensor([1.0, -1.0], requires_grad=True)
        opt = ASGD(T, [a], lr=T.tensor([0.2]), lambd=0.1, alpha=1.0, t0=2)
        trace = []
        for k in range(5):
            a.grad = T.tensor([1.0, 0.5 * k])
            opt.step()
            trace.append({key: v.clone() for key, v in opt.state[a].items()})
        return a, trace, opt.state_dict()

    ok(program, rtol=1e-6)


@pytest.mark.parametrize("name", ["nadam_decoupled", "radam_decay_maximize", "rprop_etas_sizes",
                                  "asgd_t0"])
def test_state_dict_round_trip_continues_training_identically(name):
    ok(lambda T: PROBLEM.resumed(T, OPTIMIZERS[name]), rtol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_load_state_dict_converts_numbers_and_fills_defaults(family):
    def program(T):
        p = T.tensor([1.0, 2.0], requires_grad=True)
        opt = FAMILIES[family](T, [p], lr=0.1)
        p.grad = T.ones(2)
        opt.step()
        sd = opt.state_dict()
        sd["param_groups"][0]["lr"] = 0.5
        for key in ("maximize", "foreach", "differentiable", "capturable",
                    "decoupled_weight_decay"):
            sd["param_groups"][0].pop(key, None)  # old checkpoints lack newer options
        state = sd["state"][0]
        state["step"] = 3  # and stored plain numbers
        for key, number in (("mu_product", 0.5), ("eta", 0.25), ("mu", 1.0)):
            if key in state:
                state[key] = number
        opt.load_state_dict(sd)
        loaded = opt.state_dict()
        p.grad = T.ones(2) * -1
        opt.step()
        return loaded, opt.state_dict(), p

    ok(program)


def test_load_state_dict_casts_state_to_the_params_dtype():
    # torch casts every state tensor but ``step`` to the parameter's floating dtype
    def program(T):
        out = []
        for family in FAMILIES.values():
            p = T.tensor([1.0, 2.0], requires_grad=True)
            opt = family(T, [p], lr=0.1)
            p.grad = T.ones(2)
            opt.step()
            q = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
            other = family(T, [q], lr=0.1)
            other.load_state_dict(opt.state_dict())
            q.grad = T.ones(2, dtype=T.float64)
            other.step()
            out.append((other.state_dict(), q))
        return out

    ok(program)


def test_repr_with_groups():
    def program(T):
        a, b = T.ones(1, requires_grad=True), T.ones(1, requires_grad=True)
        return [repr(make(T, [{"params": [a]}, {"params": [b], "lr": 0.5}]))
                for make in FAMILIES.values()]

    ok(program)


CONSTRUCTION_ERRORS = {
    "nadam_lr": lambda T, p: NAdam(T, p, lr=-1),
    "nadam_eps": lambda T, p: NAdam(T, p, eps=-1e-3),
    "nadam_beta0": lambda T, p: NAdam(T, p, betas=(1.0, 0.999)),
    "nadam_beta1": lambda T, p: NAdam(T, p, betas=(0.9, -0.1)),
    "nadam_decay": lambda T, p: NAdam(T, p, weight_decay=-0.1),
    "nadam_momentum_decay": lambda T, p: NAdam(T, p, momentum_decay=-0.1),
    "nadam_tensor_lr": lambda T, p: NAdam(T, p, lr=T.tensor([0.1, 0.2])),
    "nadam_positional_foreach": lambda T, p: NAdam(T, p, 0.1, (0.9, 0.99), 1e-8, 0, 4e-3,
                                                   False, None),
    "nadam_fused": lambda T, p: NAdam(T, p, fused=True),
    "radam_lr": lambda T, p: RAdam(T, p, lr=-0.1),
    "radam_eps": lambda T, p: RAdam(T, p, eps=-1.0),
    "radam_beta0": lambda T, p: RAdam(T, p, betas=(-0.1, 0.999)),
    "radam_beta1": lambda T, p: RAdam(T, p, betas=(0.9, 1.0)),
    "radam_decay": lambda T, p: RAdam(T, p, weight_decay=-1.0),
    "radam_tensor_lr": lambda T, p: RAdam(T, p, lr=T.ones(2)),
    "radam_positional_foreach": lambda T, p: RAdam(T, p, 0.1, (0.9, 0.99), 1e-8, 0, False,
                                                   None),
    "rprop_lr": lambda T, p: Rprop(T, p, lr=-0.1),
    "rprop_eta_minus_low": lambda T, p: Rprop(T, p, etas=(0.0, 1.2)),
    "rprop_eta_minus_high": lambda T, p: Rprop(T, p, etas=(1.0, 1.2)),
    "rprop_eta_plus": lambda T, p: Rprop(T, p, etas=(0.5, 1.0)),
    "rprop_tensor_lr": lambda T, p: Rprop(T, p, lr=T.ones(3)),
    "rprop_positional_capturable": lambda T, p: Rprop(T, p, 0.1, (0.5, 1.2), (1e-6, 50),
                                                      False),
    "asgd_lr": lambda T, p: ASGD(T, p, lr=-0.1),
    "asgd_decay": lambda T, p: ASGD(T, p, weight_decay=-0.1),
    "asgd_tensor_lr": lambda T, p: ASGD(T, p, lr=T.ones(2)),
    "asgd_too_many_positional": lambda T, p: ASGD(T, p, 0.1, 1e-4, 0.75, 1e6, 0, None, False,
                                                  False, False, 1),
    "empty": lambda T, p: NAdam(T, []),
    "non_leaf": lambda T, p: RAdam(T, [p[0] * 2]),
    "param_in_two_groups": lambda T, p: Rprop(T, [{"params": p}, {"params": p[:1]}]),
}


@pytest.mark.parametrize("case", CONSTRUCTION_ERRORS)
def test_construction_errors(case):
    raises(lambda T: CONSTRUCTION_ERRORS[case](T, make_params(T)))


def test_asgd_takes_its_flags_positionally():
    def program(T):
        p = T.ones(2, requires_grad=True)
        opt = ASGD(T, [p], 0.1, 1e-3, 0.5, 2, 0.01, False, True, False, False)
        p.grad = T.ones(2)
        opt.step()
        return opt.param_groups[0]["maximize"], opt.state_dict(), p

    ok(program)


STEP_ERRORS = {
    "nadam_capturable": lambda T, p: NAdam(T, p, capturable=True),
    "nadam_capturable_foreach": lambda T, p: NAdam(T, p, capturable=True, foreach=True),
    "radam_capturable": lambda T, p: RAdam(T, p, capturable=True),
    "radam_capturable_foreach": lambda T, p: RAdam(T, p, capturable=True, foreach=True),
    "rprop_capturable": lambda T, p: Rprop(T, p, capturable=True),
    "rprop_capturable_foreach": lambda T, p: Rprop(T, p, capturable=True, foreach=True),
    "asgd_capturable": lambda T, p: ASGD(T, p, capturable=True),
    "asgd_capturable_foreach": lambda T, p: ASGD(T, p, capturable=True, foreach=True),
}


@pytest.mark.parametrize("case", STEP_ERRORS)
def test_step_errors(case):
    # the error, and the state torch had made before raising
    def program(T):
        params = make_params(T)
        opt = STEP_ERRORS[case](T, params)
        for group in opt.param_groups:
            for p in group["params"]:
                p.grad = T.ones_like(p)
        return attempt(opt.step), opt.state_dict(), params

    ta, _ = ok(program)
    assert isinstance(ta[0], Raised)


# --- differentiable=True -------------------------------------------------------------------

W0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
XM = [[1.0, -2.0], [0.5, 0.5], [-1.0, 3.0]]
YM = [0.3, -0.7, 1.1]


def inner_loss(T, w):
    x, y = T.tensor(XM, dtype=w.dtype), T.tensor(YM, dtype=w.dtype)
    return ((T.tanh(x @ w).sum(1) - y) ** 2).mean()


def meta_train(T, make, steps, first_order, dtype=None):
    """``steps`` differentiable inner steps from non-leaf params ``w0 * 1``, then the meta-loss's
    gradient w.r.t. ``w0``."""
    dtype = dtype or T.float32
    w0 = T.tensor(W0, dtype=dtype, requires_grad=True)
    w = w0 * 1
    opt = make(T, w)
    trace = []
    for _ in range(steps):
        g, = T.autograd.grad(inner_loss(T, w), w, create_graph=not first_order)
        w.grad = g
        opt.step()
        trace.append((w.detach().clone(), w._version, type(w.grad_fn).__name__))
    meta = inner_loss(T, w)
    graph = next_functions(w.grad_fn) if first_order else type(w.grad_fn).__name__
    return trace, graph, meta, T.autograd.grad(meta, w0), dict(opt.state[w])


DIFFERENTIABLE = {
    "nadam": lambda T, w: NAdam(T, [w], lr=0.05, differentiable=True),
    "nadam_all": lambda T, w: NAdam(T, [w], lr=0.05, betas=(0.8, 0.9), weight_decay=0.1,
                                    momentum_decay=0.1, maximize=True, differentiable=True),
    "nadam_decoupled": lambda T, w: NAdam(T, [w], lr=0.05, weight_decay=0.1,
                                          decoupled_weight_decay=True, differentiable=True),
    # (rho_t > 5, the rectified update, from the 6th step on with beta2 = 0.999)
    "radam": lambda T, w: RAdam(T, [w], lr=0.05, betas=(0.5, 0.999), differentiable=True),
    "radam_all": lambda T, w: RAdam(T, [w], lr=0.05, betas=(0.8, 0.999), weight_decay=0.1,
                                    decoupled_weight_decay=True, maximize=True,
                                    differentiable=True),
    "radam_coupled_decay": lambda T, w: RAdam(T, [w], lr=0.05, weight_decay=0.1,
                                              differentiable=True),
    "rprop": lambda T, w: Rprop(T, [w], lr=0.05, differentiable=True),
    "rprop_maximize": lambda T, w: Rprop(T, [w], lr=0.05, etas=(0.3, 1.5), maximize=True,
                                         differentiable=True),
    "asgd": lambda T, w: ASGD(T, [w], lr=0.05, t0=1, differentiable=True),
    "asgd_all": lambda T, w: ASGD(T, [w], lr=0.05, lambd=0.1, t0=0, weight_decay=0.1,
                                  maximize=True, differentiable=True),
}


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("first_order", [False, True])
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_differentiable_meta_gradients(name, steps, first_order):
    # where torch's backward raises (a later step modified in place a tensor an earlier step
    # saved), jaxgrad's must raise the same error
    program = lambda T: meta_train(T, DIFFERENTIABLE[name], steps, first_order)
    ta, _ = same(program, rtol=1e-5)
    if isinstance(ta, Raised):
        assert steps > 1, ta


@pytest.mark.parametrize("first_order", [False, True])
@pytest.mark.parametrize("name", ["radam", "radam_all", "radam_coupled_decay"])
def test_radam_rectified_meta_gradients(name, first_order):
    ta, _ = same(lambda T: meta_train(T, DIFFERENTIABLE[name], 7, first_order), rtol=1e-5)
    assert not isinstance(ta, Raised), ta


@pytest.mark.parametrize("name", ["nadam_all", "radam_all", "rprop", "asgd_all"])
def test_float64_meta_gradients(name):
    program = lambda T: meta_train(T, DIFFERENTIABLE[name], 2, False, dtype=T.float64)
    same(program)


@pytest.mark.parametrize("family", FAMILIES)
def test_differentiable_step_on_plain_leaves_matches_the_normal_step(family):
    def program(T):
        ws = [T.tensor(v) for v in W0]
        opt = FAMILIES[family](T, ws, lr=0.1, differentiable=True)
        for k in range(8):
            for w in ws:
                w.grad = T.ones_like(w) * (k - 1)
            opt.step()
        return ws, opt.state_dict(), T.is_grad_enabled()

    ok(program, rtol=1e-5)


DIFFERENTIABLE_ERRORS = {
    # in-place update of a leaf that requires grad
    "nadam_leaf": lambda T, w: NAdam(T, [T.ones(2, requires_grad=True)], differentiable=True),
    "radam_leaf": lambda T, w: RAdam(T, [T.ones(2, requires_grad=True)], differentiable=True),
    "rprop_leaf": lambda T, w: Rprop(T, [T.ones(2, requires_grad=True)], differentiable=True),
    "asgd_leaf": lambda T, w: ASGD(T, [T.ones(2, requires_grad=True)], differentiable=True),
    "nadam_foreach": lambda T, w: NAdam(T, [w], foreach=True, differentiable=True),
    "radam_foreach": lambda T, w: RAdam(T, [w], foreach=True, differentiable=True),
    "rprop_foreach": lambda T, w: Rprop(T, [w], foreach=True, differentiable=True),
    "asgd_foreach": lambda T, w: ASGD(T, [w], foreach=True, differentiable=True),
    "nadam_capturable": lambda T, w: NAdam(T, [w], capturable=True, differentiable=True),
    "radam_capturable": lambda T, w: RAdam(T, [w], capturable=True, differentiable=True),
    "rprop_capturable": lambda T, w: Rprop(T, [w], capturable=True, differentiable=True),
    "asgd_capturable": lambda T, w: ASGD(T, [w], capturable=True, differentiable=True),
    "non_leaf_without_differentiable": lambda T, w: NAdam(T, [w]),
}


@pytest.mark.parametrize("case", DIFFERENTIABLE_ERRORS)
def test_differentiable_errors(case):
    def program(T):
        w = T.ones(2, requires_grad=True) * 1
        opt = DIFFERENTIABLE_ERRORS[case](T, w)
        for p in opt.param_groups[0]["params"]:
            p.grad = T.ones_like(p)
        opt.step()

    raises(program)


@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("family", ["nadam", "nadam_decoupled", "radam", "asgd"])
def test_differentiable_lr_that_requires_grad(family, steps):
    # NAdam and RAdam combine a tensor lr through tensor ops, which autograd records (NAdam's
    # second step modifies the exp_avg its first step's product saved: torch's backward raises,
    # and so does jaxgrad's); ASGD's eta takes it through ``.item()`` (not used in the graph)
    def program(T):
        lr = T.tensor(0.05, requires_grad=True)
        w = T.tensor(W0, requires_grad=True) * 1
        kwargs = ({"weight_decay": 0.1, "decoupled_weight_decay": True}
                  if family == "nadam_decoupled" else {})
        opt = FAMILIES[family.split("_")[0]](T, [w], lr=lr, differentiable=True, **kwargs)
        for _ in range(steps):
            g, = T.autograd.grad(inner_loss(T, w), w)
            w.grad = g
            opt.step()
        return w, T.autograd.grad(inner_loss(T, w), lr), dict(opt.state[w])

    same(program, rtol=1e-5)
