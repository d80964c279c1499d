"""``differentiable=True`` against torch: the update is recorded by autograd, so a loss on the
updated parameters has gradients w.r.t. the initial parameters and tensor hyper-parameters
(meta-learning). Compared: values, versions and grad_fn of parameters and state after each step,
the grad_fn graph of the result, the meta-gradients, and torch's errors."""

from __future__ import annotations

import pytest

import jaxgrad
from differential import captured_warnings, cases, next_functions, ok, raises, torch

W0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
X = [[1.0, -2.0], [0.5, 0.5], [-1.0, 3.0]]
Y = [0.3, -0.7, 1.1]


def inner_loss(T, w):
    x, y = T.tensor(X, dtype=w.dtype), T.tensor(Y, dtype=w.dtype)
    return ((T.tanh(x @ w).sum(1) - y) ** 2).mean()


def meta_train(T, make, steps=1, dtype=None, hyper=("lr",), first_order=False):
    """``steps`` differentiable inner steps from non-leaf params ``w0 * 1``, then the meta-loss's
    gradients w.r.t. ``w0`` and the tensor hyper-parameters the optimizer uses.

    ``first_order``: the inner gradients are detached (first-order MAML), so the whole graph
    below the result is torch's forward graph and is compared node by node; otherwise the
    gradients carry their own history (second-order) and the graph is compared down to the
    update's nodes only (jaxgrad names double-backward nodes its own way)."""
    dtype = dtype or T.float32
    w0 = T.tensor(W0, dtype=dtype, requires_grad=True)
    lr = T.tensor(0.1, dtype=dtype, requires_grad="lr" in hyper)
    decay = T.tensor(0.05, dtype=dtype, requires_grad="weight_decay" in hyper)
    w = w0 * 1
    opt = make(T, w, lr, decay)
    trace = []
    for _ in range(steps):
        g, = T.autograd.grad(inner_loss(T, w), w, create_graph=not first_order)
        w.grad = g
        opt.step()
        trace.append((w.detach().clone(), w._version, type(w.grad_fn).__name__))
    meta = inner_loss(T, w)
    group = opt.param_groups[0]
    used = [group["lr"], group["weight_decay"], *group.get("betas", ())]
    wrt = [w0] + [t for t in used if isinstance(t, T.Tensor) and t.requires_grad]
    graph = next_functions(w.grad_fn) if first_order else type(w.grad_fn).__name__
    return (trace, graph, meta, T.autograd.grad(meta, wrt),
            {k: v for k, v in opt.state[w].items()})


SGD = {
    "plain": lambda T, w, lr, d: T.optim.SGD([w], lr=lr, differentiable=True),
    "float_lr": lambda T, w, lr, d: T.optim.SGD([w], lr=0.1, differentiable=True),
    "lr_tensor_without_grad": lambda T, w, lr, d: T.optim.SGD(
        [w], lr=lr.detach(), differentiable=True),
    "maximize_decay": lambda T, w, lr, d: T.optim.SGD([w], lr=lr, weight_decay=0.1,
                                                      maximize=True, differentiable=True),
    "momentum": lambda T, w, lr, d: T.optim.SGD([w], lr=lr, momentum=0.9, differentiable=True),
    "nesterov": lambda T, w, lr, d: T.optim.SGD([w], lr=lr, momentum=0.9, nesterov=True,
                                                weight_decay=0.01, differentiable=True),
    "dampening": lambda T, w, lr, d: T.optim.SGD([w], lr=0.2, momentum=0.5, dampening=0.25,
                                                 differentiable=True),
    "tensor_decay": lambda T, w, lr, d: T.optim.SGD([w], lr=lr, weight_decay=d,
                                                    differentiable=True),
    "foreach": lambda T, w, lr, d: T.optim.SGD([w], lr=0.1, foreach=True, differentiable=True),
}


@pytest.mark.parametrize("first_order", [False, True])
@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("name", SGD)
def test_sgd_meta_gradients(name, steps, first_order):
    hyper = ("lr", "weight_decay") if name == "tensor_decay" else ("lr",)
    if name == "foreach":
        # torch's foreach ops bump versions their own way: compare values, graph and gradients
        def program(T):
            trace, graph, meta, grads, _ = meta_train(T, SGD[name], steps,
                                                      first_order=first_order)
            return [t[0] for t in trace], graph, meta, grads
    else:
        def program(T):
            return meta_train(T, SGD[name], steps, hyper=hyper, first_order=first_order)
    if steps > 1 and name == "momentum":
        # the 2nd step's buf.mul_ modifies the buffer that p.addcmul_(buf, lr) saved for lr's
        # gradient: torch's backward raises, and so does jaxgrad's
        raises(program)
    else:
        ok(program, rtol=1e-5)


ADAM = {
    "adam": lambda T, w, lr, d: T.optim.Adam([w], lr=lr, differentiable=True),
    "float_lr": lambda T, w, lr, d: T.optim.Adam([w], lr=0.05, differentiable=True),
    "amsgrad": lambda T, w, lr, d: T.optim.Adam([w], lr=lr, amsgrad=True, differentiable=True),
    "l2_maximize": lambda T, w, lr, d: T.optim.Adam([w], lr=lr, weight_decay=0.1, maximize=True,
                                                    differentiable=True),
    "tensor_decay": lambda T, w, lr, d: T.optim.Adam([w], lr=lr, weight_decay=d,
                                                     differentiable=True),
    "decoupled": lambda T, w, lr, d: T.optim.Adam([w], lr=lr, weight_decay=0.1,
                                                  decoupled_weight_decay=True,
                                                  differentiable=True),
    "adamw": lambda T, w, lr, d: T.optim.AdamW([w], lr=lr, differentiable=True),
    "adamw_amsgrad_float": lambda T, w, lr, d: T.optim.AdamW(
        [w], lr=0.02, weight_decay=0.3, amsgrad=True, betas=(0.8, 0.9), differentiable=True),
    "tensor_betas": lambda T, w, lr, d: T.optim.Adam(
        [w], lr=lr, differentiable=True,
        betas=(T.tensor(0.8, requires_grad=True), T.tensor(0.95, requires_grad=True))),
    "tensor_betas_no_grad": lambda T, w, lr, d: T.optim.Adam(
        [w], lr=lr, differentiable=True, betas=(T.tensor(0.8), T.tensor(0.95))),
}


@pytest.mark.parametrize("first_order", [False, True])
@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("name", ADAM)
def test_adam_meta_gradients(name, steps, first_order):
    hyper = ("lr", "weight_decay") if name == "tensor_decay" else ("lr",)
    program = lambda T: meta_train(T, ADAM[name], steps, hyper=hyper, first_order=first_order)
    if steps > 1 and "amsgrad" in name and not first_order:
        # maximum(max_exp_avg_sq, exp_avg_sq) saved exp_avg_sq, which the next step's mul_
        # modifies: torch's backward raises, and so does jaxgrad's
        raises(program)
    else:
        ok(program, rtol=1e-5)


@pytest.mark.parametrize("family", ["SGD", "Adam"])
def test_float64_meta_gradients(family):
    make = (SGD["nesterov"] if family == "SGD" else ADAM["l2_maximize"])
    ok(lambda T: meta_train(T, make, 2, dtype=T.float64))


@pytest.mark.parametrize("family", ["SGD", "Adam", "AdamW"])
def test_differentiable_step_on_plain_leaves_matches_the_normal_step(family):
    # gradients without history, params that do not require grad: nothing to record
    def program(T):
        ws = [T.tensor(v) for v in W0]
        opt = getattr(T.optim, family)(ws, lr=0.1, differentiable=True)
        for k in range(3):
            for w in ws:
                w.grad = T.ones_like(w) * (k - 1)
            opt.step()
        return ws, opt.state_dict(), T.is_grad_enabled()

    ok(program, rtol=1e-5)


def test_step_runs_with_grad_even_under_no_grad():
    def program(T):
        seen = []
        w0 = T.tensor([1.0, 2.0], requires_grad=True)
        w = w0 * 1
        w.grad = T.tensor([0.5, 0.5])
        opt = T.optim.SGD([w], lr=T.tensor(0.1, requires_grad=True), differentiable=True)
        opt.register_step_pre_hook(lambda *a: seen.append(T.is_grad_enabled()))
        with T.no_grad():
            opt.step(lambda: seen.append(T.is_grad_enabled()))
            seen.append(T.is_grad_enabled())
        return w, seen

    ok(program)


ERRORS = {
    # in-place update of a leaf that requires grad
    "sgd_leaf": lambda T: T.optim.SGD([T.ones(2, requires_grad=True)], differentiable=True),
    "adam_leaf": lambda T: T.optim.Adam([T.ones(2, requires_grad=True)], differentiable=True),
    "sgd_fused": lambda T: T.optim.SGD([T.ones(2) * 1], differentiable=True, fused=True),
    "adam_fused": lambda T: T.optim.Adam([T.ones(2) * 1], differentiable=True, fused=True),
    "adamw_fused": lambda T: T.optim.AdamW([T.ones(2) * 1], differentiable=True, fused=True),
    "adam_foreach": lambda T: T.optim.Adam([T.ones(2) * 1], differentiable=True, foreach=True),
    "adamw_foreach": lambda T: T.optim.AdamW([T.ones(2) * 1], differentiable=True,
                                             foreach=True),
    "non_leaf_without_differentiable": lambda T: T.optim.SGD(
        [T.ones(2, requires_grad=True) * 1]),
}


@pytest.mark.parametrize("case", ERRORS)
def test_differentiable_errors(case):
    def program(T):
        opt = ERRORS[case](T)
        for p in opt.param_groups[0]["params"]:
            p.grad = T.ones_like(p)
        opt.step()

    raises(program)


def test_adam_step_requiring_grad_raises():
    def program(T):
        w = T.ones(2, requires_grad=True) * 1
        w.grad = T.ones(2)
        opt = T.optim.Adam([w], differentiable=True)
        opt.step()
        opt.state[w]["step"].requires_grad_()
        opt.step()

    raises(program)


def test_state_dict_of_a_differentiable_optimizer_keeps_history():
    def program(T):
        w0 = T.tensor([1.0, -1.0], requires_grad=True)
        w = w0 * 2
        opt = T.optim.Adam([w], lr=0.1, differentiable=True)
        g, = T.autograd.grad(((w - 1) ** 3).sum(), w, create_graph=True)
        w.grad = g
        opt.step()
        sd = opt.state_dict()
        return sd, T.autograd.grad(sd["state"][0]["exp_avg_sq"].sum(), w0)

    ok(program)


def test_differentiable_steps_warn_as_torch():
    # the optimizer reads .grad of non-leaf parameters: torch warns only where no grad is set
    def program(T):
        w = T.tensor([1.0, 2.0], requires_grad=True) * 1
        w.grad  # unset: torch's non-leaf .grad warning
        w.grad = T.ones(2)
        opt = T.optim.Adam([w], lr=T.tensor(0.1, requires_grad=True), differentiable=True)
        opt.step()
        opt.step()
        w.grad  # set: no warning

    expected = captured_warnings(program, torch)
    assert len(expected) == 1 and "not a leaf Tensor" in expected[0][1]
    assert captured_warnings(program, jaxgrad) == expected


@pytest.mark.parametrize("options", [{}, {"amsgrad": True, "maximize": True},
                                     {"weight_decay": 0.1}, {"betas": "tensors"},
                                     {"weight_decay": 0.1, "decoupled_weight_decay": True}])
def test_differentiable_adam_on_complex_params(options):
    # torch steps a complex parameter and its state through view_as_real views
    def program(T):
        kw = dict(options)
        if kw.get("betas") == "tensors":
            kw["betas"] = (T.tensor(0.8, requires_grad=True), T.tensor(0.9, requires_grad=True))
        lr = T.tensor(0.1, requires_grad=True)
        w0 = T.tensor([1 + 2j, -0.5 + 0.25j], requires_grad=True)
        w = w0 * 1
        opt = T.optim.Adam([w], lr=lr, differentiable=True, **kw)
        for g in ([0.3 - 1j, 2.0 + 0.5j], [-0.7 + 0.2j, 0.1 - 0.4j]):
            w.grad = T.tensor(g)
            opt.step()
        state = opt.state[w]
        loss = w.abs().sum() + sum(t.abs().sum() for k, t in state.items() if k != "step")
        wrt = [w0, lr] + [b for b in kw.get("betas", ()) if isinstance(b, T.Tensor)]
        return (w, w._version, w.grad_fn.name(), {k: (t, t._version) for k, t in state.items()},
                T.autograd.grad(loss, wrt))

    ok(program)



# optimizer, options, inner steps; torch refuses a tensor lr for Adagrad, Adadelta, RMSprop
# and Adamax (a Python number is expected), so those step with a float lr
COMPLEX = {
    "sgd": ("SGD", {}, 2),
    "sgd_nesterov_decay": ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}, 2),
    "adagrad": ("Adagrad", {"lr_decay": 0.1, "weight_decay": 0.1,
                            "initial_accumulator_value": 0.5}, 2),
    "adadelta": ("Adadelta", {"weight_decay": 0.1, "maximize": True}, 2),
    "rmsprop_centered_momentum": ("RMSprop", {"centered": True, "momentum": 0.9}, 2),
    "rmsprop_decay": ("RMSprop", {"weight_decay": 0.1}, 2),
    "adamax": ("Adamax", {"weight_decay": 0.1}, 1),
    "adamax_two_steps": ("Adamax", {}, 2),
    "nadam": ("NAdam", {}, 1),
    "nadam_decoupled": ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}, 1),
    "radam_rectified": ("RAdam", {"betas": (0.9, 0.99), "weight_decay": 0.1}, 7),
    "asgd_averaging": ("ASGD", {"t0": 0, "lambd": 0.1, "weight_decay": 0.1}, 3),
    "rprop": ("Rprop", {"maximize": True}, 3),
}
FLOAT_LR = {"Adagrad", "Adadelta", "RMSprop", "Adamax"}
ADAMAX_TWO_STEPS = ("torch's backward through two differentiable Adamax steps raises (exp_inf, "
                    "saved by the first step's addcdiv_, is modified in place by the second); "
                    "jaxgrad's addcdiv_ does not check the version of a saved tensor it needs "
                    "no gradient for (real parameters too)")


def complex_meta_program(name, options, steps, second_order=False):
    """``steps`` differentiable steps on a complex parameter, then the gradients of a loss on
    the parameter w.r.t. the initial parameter and the lr tensor; ``second_order``: the
    gradients carry history, and the result adds the second derivative w.r.t. the initial
    parameter."""

    def program(T):
        lr = 0.1 if name in FLOAT_LR else T.tensor(0.1, requires_grad=True)
        w0 = T.tensor([1 + 2j, -0.5 + 0.25j, 0.3 - 0.7j], requires_grad=True)
        target = T.tensor([0.5 - 1j, 1 + 1j, -0.2 + 0.1j])
        w = w0 * 1
        opt = getattr(T.optim, name)([w], lr=lr, differentiable=True, **options)
        trace = []
        for _ in range(steps):
            (w.grad,) = T.autograd.grad(((w - target).abs() ** 2).sum(), w)
            opt.step()
            trace.append((w.detach().clone(), w._version, w.grad_fn.name()))
        state = {k: (t, t._version) for k, t in opt.state[w].items()}
        wrt = [w0] if name in FLOAT_LR else [w0, lr]
        grads = T.autograd.grad((w * w).abs().sum(), wrt, create_graph=second_order,
                                allow_unused=True)
        if not second_order:
            return trace, state, grads
        return T.autograd.grad(grads[0].real.sum() + grads[0].imag.sum(), w0)

    return program


@pytest.mark.parametrize("case", cases(COMPLEX, xfail={"adamax_two_steps": ADAMAX_TWO_STEPS}))
def test_differentiable_optimizers_on_complex_params(case):
    # torch steps a complex parameter and its state through view_as_real views
    ok(complex_meta_program(*COMPLEX[case]))


COPY_SLICES_DOUBLE_BACKWARD = (
    "double backward through an in-place op on a view_as_real view of a complex tensor: "
    "jaxgrad's CopySlices gradient does not require grad under create_graph")
ADADELTA_SECOND_ORDER = (
    "second derivative through an in-place op on a view_as_real view of a complex tensor that "
    "does not require grad (Adadelta's square_avg.mul_().addcmul_(grad, grad)) misses a term: "
    "view_as_real(zeros(2, dtype=complex64)).add_(g * g), then sq.sqrt() * g, is off by 1/3")


@pytest.mark.parametrize("case", cases(["sgd_nesterov_decay", "adadelta", "adagrad", "rprop"],
                                       xfail={"adagrad": COPY_SLICES_DOUBLE_BACKWARD,
                                              "rprop": COPY_SLICES_DOUBLE_BACKWARD,
                                              "adadelta": ADADELTA_SECOND_ORDER}))
def test_second_order_through_complex_steps(case):
    ok(complex_meta_program(*COMPLEX[case], second_order=True))


@pytest.mark.parametrize("name", sorted(FLOAT_LR))
def test_differentiable_complex_step_with_a_tensor_lr_raises_as_torch(name):
    def program(T):
        w = T.tensor([1 + 2j], requires_grad=True) * 1
        w.grad = T.tensor([0.5 - 1j])
        getattr(T.optim, name)([w], lr=T.tensor(0.1, requires_grad=True),
                               differentiable=True).step()

    raises(program)
