"""jaxgrad.compile: a whole training step as one XLA program, equal to the eager step.

Each equivalence test runs N steps eagerly and N steps compiled from the same start and compares
everything a user can observe afterwards: parameters, ``.grad``, buffers, optimizer state, learning
rates, scheduler counters, version counters, the returned losses. The MLP case also runs on
torch. Then: retracing and its limit, graph breaks (value-dependent Python), hooks' trace-time
side effects and ``jaxgrad.compiler.callback``, and that a trace leaves no tracer behind.
"""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
import torch

import jaxgrad
from differential import ok
from jaxgrad import nn

F = jaxgrad.nn.functional


def _arrays(t):
    return np.asarray(t._value) if isinstance(t, jaxgrad.Tensor) else t


def _assert_state_equal(a: dict, b: dict, rtol=2e-5, atol=1e-6) -> None:
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=key)
        elif isinstance(x, (float, list)):  # learning rates: XLA's cos, not libm's
            assert x == pytest.approx(y, rel=1e-12), key
        else:
            np.testing.assert_array_equal(x, y, err_msg=key)


def _observe(model, opt, sched=None) -> dict:
    """Everything observable about the training state, as numpy arrays and Python values."""
    seen = {}
    for name, p in model.named_parameters():
        seen[name] = _arrays(p)
        seen[name + ".grad"] = None if p.grad is None else _arrays(p.grad)
        seen[name + "._version"] = p._version
        seen[name + ".grad._version"] = None if p.grad is None else p.grad._version
        for key, value in opt.state[p].items():
            seen[f"{name}.state.{key}"] = _arrays(value)
            if isinstance(value, jaxgrad.Tensor):
                seen[f"{name}.state.{key}._version"] = value._version
    for name, b in model.named_buffers():
        seen["buffer." + name] = _arrays(b)
        seen["buffer." + name + "._version"] = b._version
    for i, group in enumerate(opt.param_groups):
        seen[f"group{i}.lr"] = group["lr"]
        assert type(group["lr"]) is float
    if sched is not None:
        seen["last_epoch"] = sched.last_epoch
        seen["_step_count"] = sched._step_count
        seen["last_lr"] = list(sched.get_last_lr())
        assert type(sched.last_epoch) is int
    return seen


# -- MLP, SGD with momentum: eager == compiled == torch ------------------------------------------

def _mlp_pair(seed: int = 0):
    rng = np.random.RandomState(seed)
    shapes = [(16, 20), (16,), (10, 16), (10,)]
    init = [(rng.randn(*s) * 0.2).astype(np.float32) for s in shapes]
    model = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 10))
    tmodel = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.ReLU(), torch.nn.Linear(16, 10))
    with jaxgrad.no_grad(), torch.no_grad():
        for p, q, a in zip(model.parameters(), tmodel.parameters(), init):
            p.copy_(jaxgrad.tensor(a))
            q.copy_(torch.tensor(a))
    return model, tmodel


def _sgd_step(model, opt, lib):
    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def test_mlp_sgd_momentum_equals_eager_and_torch():
    rng = np.random.RandomState(1)
    data = [(rng.randn(8, 20).astype(np.float32), rng.randint(0, 10, 8)) for _ in range(5)]
    runs = {}
    for mode in ("eager", "compiled"):
        model, tmodel = _mlp_pair()
        opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
        step = _sgd_step(model, opt, jaxgrad)
        if mode == "compiled":
            step = jaxgrad.compile(step)
        losses = [step(jaxgrad.tensor(x), jaxgrad.tensor(y)).item() for x, y in data]
        runs[mode] = (losses, _observe(model, opt))
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
    tstep = _sgd_step(tmodel, topt, torch)
    tlosses = [tstep(torch.tensor(x), torch.tensor(y)).item() for x, y in data]
    np.testing.assert_allclose(runs["compiled"][0], runs["eager"][0], rtol=1e-5)
    np.testing.assert_allclose(runs["compiled"][0], tlosses, rtol=1e-5)
    _assert_state_equal(runs["compiled"][1], runs["eager"][1])
    for (name, p), q in zip(model.named_parameters(), tmodel.parameters()):
        np.testing.assert_allclose(_arrays(p), q.detach().numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(_arrays(p.grad), q.grad.numpy(), rtol=1e-4, atol=1e-6)
        assert p._version == q._version and p.grad._version == q.grad._version, name
        buf, tbuf = opt.state[p]["momentum_buffer"], topt.state[q]["momentum_buffer"]
        assert buf._version == tbuf._version


def test_one_trace_per_signature_and_the_returned_loss():
    model, _ = _mlp_pair()
    opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = jaxgrad.compile(_sgd_step(model, opt, jaxgrad))
    x, y = jaxgrad.randn(8, 20), jaxgrad.randint(0, 10, (8,))
    for _ in range(4):
        loss = step(x, y)
    # the first call creates .grad and the momentum buffers: it runs eagerly, and the steady
    # state is the one program traced
    assert len(step._cache) == 1
    assert isinstance(loss, jaxgrad.Tensor) and loss.shape == ()
    # as torch.compile's loss: out of the compiled forward, its history spent by the backward
    assert type(loss.grad_fn).__name__ == "CompiledFunctionBackward" and loss.requires_grad
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    step(jaxgrad.randn(4, 20), jaxgrad.randint(0, 10, (4,)))  # a new batch size: a new trace
    assert len(step._cache) == 2


# -- CNN with BatchNorm, Dropout, AdamW and a cosine schedule inside the step ------------------

def _cnn():
    # no conv bias: BatchNorm cancels it, so its gradient is rounding noise that Adam amplifies
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Dropout(0.3), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))


def _cnn_step(model, opt, sched):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        return loss
    return step


@pytest.mark.parametrize("amsgrad", [False, True])
def test_cnn_batchnorm_dropout_adamw_cosine_equals_eager(amsgrad):
    rng = np.random.RandomState(2)
    data = [(rng.randn(6, 1, 6, 6).astype(np.float32), rng.randint(0, 5, 6)) for _ in range(5)]
    runs = {}
    for mode in ("eager", "compiled"):
        jaxgrad.manual_seed(0)
        model = _cnn()
        opt = jaxgrad.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, amsgrad=amsgrad)
        sched = jaxgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)

        step = _cnn_step(model, opt, sched)
        if mode == "compiled":
            step = jaxgrad.compile(step)
        losses = [step(jaxgrad.tensor(x), jaxgrad.tensor(y)).item() for x, y in data]
        model.eval()
        with jaxgrad.no_grad():
            evaluated = _arrays(model(jaxgrad.tensor(data[0][0])))
        runs[mode] = (losses, _observe(model, opt, sched), evaluated,
                      jaxgrad.rand(3).tolist())  # the generator moved on by as many draws
    np.testing.assert_allclose(runs["compiled"][0], runs["eager"][0], rtol=1e-5)
    _assert_state_equal(runs["compiled"][1], runs["eager"][1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(runs["compiled"][2], runs["eager"][2], rtol=1e-4, atol=1e-6)
    assert runs["compiled"][3] == runs["eager"][3]


def test_train_and_eval_are_separate_signatures():
    jaxgrad.manual_seed(0)
    model = _cnn()
    forward = jaxgrad.compile(lambda x: model(x))
    x = jaxgrad.randn(2, 1, 6, 6)
    with jaxgrad.no_grad():
        trained = forward(x)
        model.eval()
        evaluated = forward(x)
        np.testing.assert_allclose(_arrays(evaluated), _arrays(model(x)), rtol=1e-5, atol=1e-6)
    assert len(forward._cache) == 2
    assert model[1].num_batches_tracked.item() == 1 and trained.shape == (2, 5)


# -- hooks ------------------------------------------------------------------------------------

def _hooked_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        hidden = model[1](model[0](x))
        hidden.register_hook(lambda g: g.clamp(-0.01, 0.01))
        hidden.retain_grad()
        loss = F.cross_entropy(model[2](hidden), y)
        loss.backward()
        opt.step()
        return loss, hidden.grad
    return step


def test_tensor_and_module_hooks_equal_eager():
    rng = np.random.RandomState(3)
    data = [(rng.randn(4, 20).astype(np.float32), rng.randint(0, 10, 4)) for _ in range(3)]
    runs = {}
    for mode in ("eager", "compiled"):
        model, _ = _mlp_pair()
        opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1)
        model[0].weight.register_hook(lambda g: g * 0.5)  # rescales the gradient
        model[1].register_forward_hook(lambda m, args, out: out * 2)
        model[2].register_forward_pre_hook(lambda m, args: (args[0] + 1,))

        step = _hooked_step(model, opt)
        if mode == "compiled":
            step = jaxgrad.compile(step)
        results = [step(jaxgrad.tensor(x), jaxgrad.tensor(y)) for x, y in data]
        runs[mode] = ([(loss.item(), _arrays(grad)) for loss, grad in results],
                      _observe(model, opt))
    for (loss_c, grad_c), (loss_e, grad_e) in zip(runs["compiled"][0], runs["eager"][0]):
        assert loss_c == pytest.approx(loss_e, rel=1e-5)
        np.testing.assert_allclose(grad_c, grad_e, rtol=1e-5, atol=1e-7)
    _assert_state_equal(runs["compiled"][1], runs["eager"][1])


def test_a_recording_hook_warns_once_and_callback_records_every_call():
    w = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    traced, called = [], []
    w.register_hook(lambda g: traced.append(g))

    @jaxgrad.compile
    def step(x):
        loss = (w * x).sum()
        loss.backward()
        jaxgrad.compiler.callback(lambda g: called.append(g.tolist()), w.grad)
        return loss

    with pytest.warns(UserWarning, match="side effects"):
        step(jaxgrad.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step(jaxgrad.ones(2))
    assert called == [[1.0, 1.0], [2.0, 2.0]]  # .grad accumulates across the two calls
    assert len(traced) == 2  # one per trace (no .grad, then .grad present), not per call


# -- what cannot be traced --------------------------------------------------------------------

def _value_dependent():
    w = jaxgrad.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        loss = (w * x).sum()
        if loss.item() > 1:  # needs the value
            loss = loss * 2
        loss.backward()
        return loss
    return w, step


def test_value_dependent_python_falls_back_to_eager_with_the_line():
    w, step = _value_dependent()
    compiled = jaxgrad.compile(step)
    with pytest.warns(UserWarning, match=r"loss\.item\(\) > 1.*line"):
        loss = compiled(jaxgrad.ones(2))
    assert loss.item() == 6.0 and w.grad.tolist() == [2.0, 2.0]
    assert not isinstance(w._value, jax.core.Tracer)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the signature now runs eagerly without retrying
        compiled(jaxgrad.ones(2))
    assert w.grad.tolist() == [4.0, 4.0]


def test_fullgraph_raises_naming_the_line():
    w, step = _value_dependent()
    compiled = jaxgrad.compile(step, fullgraph=True)
    with pytest.raises(jaxgrad.compiler.GraphBreak, match=r"if loss\.item\(\) > 1"):
        compiled(jaxgrad.ones(2))
    assert w.grad is None and w._version == 0


def test_an_error_in_the_step_propagates_and_leaves_no_tracer():
    model, _ = _mlp_pair()
    opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    @jaxgrad.compile
    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        raise ValueError("boom")

    before = [_arrays(p) for p in model.parameters()]
    with pytest.raises(ValueError, match="boom"):
        step(jaxgrad.randn(2, 20))
    for p, b in zip(model.parameters(), before):
        assert p.grad is None and not isinstance(p._value, jax.core.Tracer)
        np.testing.assert_array_equal(_arrays(p), b)
    assert len(opt.state) == 0


def test_recompile_limit_warns_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr(jaxgrad.compiler.config, "recompile_limit", 2)
    double = jaxgrad.compile(lambda x: x * 2)
    double(jaxgrad.ones(1))
    double(jaxgrad.ones(2))
    with pytest.warns(UserWarning, match=r"recompile_limit \(2\)"):
        out = double(jaxgrad.ones(3))
    assert out.tolist() == [2.0, 2.0, 2.0] and len(double._cache) == 2


# -- arguments, modules, the API --------------------------------------------------------------

@pytest.mark.parametrize("case", ["detach", "data", "detach_then_inplace", "func_grad"])
def test_detached_values_in_a_compiled_forward_with_history_are_constants(case):
    """The VJP of a compiled function's results (traced apart from its forward) treats
    ``detach()``/``.data`` as torch does: no gradient through them (before: 2x the gradient)."""
    def body(T, x):
        if case == "detach":
            return (x.detach() * x).sum()
        if case == "data":
            return (x.data * x ** 2).sum()
        if case == "detach_then_inplace":
            y = x * 2
            y.detach().mul_(3)  # invisible to autograd, visible in the value
            return (y * x).sum()
        return (T.func.grad(lambda v: (v.detach() * v).sum())(x) * x).sum()

    def prog(T):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        f = jaxgrad.compile(lambda x: body(T, x)) if T is jaxgrad else lambda x: body(T, x)
        out = []
        for _ in range(2):
            y = f(x)
            (g,) = T.autograd.grad(y, x)
            out.append((y.detach(), g.clone()))  # (the version of a sum of paths differs)
        return out
    ok(prog)


def test_a_compiled_forward_keeps_its_history_as_torch_compile():
    """``model = compile(model)`` then a backward outside it (nanoGPT's pattern): the results
    carry a CompiledFunctionBackward node; gradients, buffers and losses are torch's."""
    rng = np.random.RandomState(6)
    model = nn.Sequential(nn.Linear(20, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 10))
    tmodel = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.BatchNorm1d(16),
                                 torch.nn.ReLU(), torch.nn.Linear(16, 10))
    with jaxgrad.no_grad(), torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters()):
            a = (rng.randn(*p.shape) * 0.3).astype(np.float32)
            p.copy_(jaxgrad.tensor(a))
            q.copy_(torch.tensor(a))

    def forward(m, x, y, lib):
        logits = m(x)
        return logits, lib.nn.functional.cross_entropy(logits, y)

    compiled = jaxgrad.compile(lambda x, y: forward(model, x, y, jaxgrad))
    opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    for _ in range(4):
        x, y = rng.randn(8, 20).astype(np.float32), rng.randint(0, 10, 8)
        logits, loss = compiled(jaxgrad.tensor(x), jaxgrad.tensor(y))
        assert type(loss.grad_fn).__name__ == "CompiledFunctionBackward"
        assert loss.requires_grad and not loss.is_leaf and logits.grad_fn is loss.grad_fn
        opt.zero_grad()
        loss.backward()
        opt.step()
        tlogits, tloss = forward(tmodel, torch.tensor(x), torch.tensor(y), torch)
        topt.zero_grad()
        tloss.backward()
        topt.step()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)
        np.testing.assert_allclose(_arrays(logits), tlogits.detach().numpy(), rtol=1e-4,
                                   atol=1e-6)
        for p, q in zip(model.parameters(), tmodel.parameters()):
            np.testing.assert_allclose(_arrays(p.grad), q.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(_arrays(model[1].running_var), tmodel[1].running_var.numpy(),
                               rtol=1e-5)
    assert model[1].num_batches_tracked.item() == 4 and len(compiled._cache) == 2
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    _, loss = compiled(jaxgrad.tensor(x), jaxgrad.tensor(y))
    with pytest.raises(RuntimeError, match="double backward"):
        jaxgrad.autograd.grad(loss, model[0].weight, create_graph=True)
    with jaxgrad.no_grad():
        assert compiled(jaxgrad.tensor(x), jaxgrad.tensor(y))[1].grad_fn is None


def test_a_compiled_forward_leaves_unused_parameters_without_grad():
    used, unused = nn.Linear(3, 2), nn.Linear(3, 2)
    forward = jaxgrad.compile(lambda x: used(x) * 2)
    unused.weight.sum()  # reachable from nothing the function reads: not even walked
    heads = {"used": used, "unused": unused}
    both = jaxgrad.compile(lambda x: heads["used"](x).sum())
    for fn in (forward, both):
        fn(jaxgrad.ones(1, 3)).sum().backward()
    assert used.weight.grad is not None and unused.weight.grad is None
    assert used.weight.grad.tolist() == [[3.0] * 3] * 2  # 2 + 1 per call


@pytest.mark.parametrize("case", ["vector_input", "view_argument", "view_of_batched_argument"])
def test_compiled_module_results_that_are_views_or_take_views(case):
    """``compile(Linear)`` on a 1-D input returns a view that keeps its history, and a view
    argument requiring grad hands its gradient to the view's node, as eager torch does."""

    def program(T):
        model = T.nn.Linear(3, 2)
        with T.no_grad():
            model.weight.copy_(T.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]]))
            model.bias.copy_(T.tensor([0.1, -0.1]))
        compiled = T.compile(model) if T.__name__ == "jaxgrad" else model
        x = T.tensor([0.2, 1.7, -1.0], requires_grad=True)
        if case == "vector_input":
            y = compiled(x)
        elif case == "view_argument":
            y = compiled(x[None])[0]
        else:
            x = T.tensor([[0.2, 1.7, -1.0], [1.0, 2.0, 3.0]], requires_grad=True)
            y = compiled(x[1])
        (y * T.tensor([1.0, 3.0])).sum().backward()
        return y.detach(), y.requires_grad, x.grad, model.weight.grad, model.bias.grad

    ok(program)


def test_compile_a_module_and_module_arguments():
    model, tmodel = _mlp_pair()
    compiled = jaxgrad.compile(model)
    x = np.random.RandomState(4).randn(3, 20).astype(np.float32)
    with jaxgrad.no_grad():
        np.testing.assert_allclose(_arrays(compiled(jaxgrad.tensor(x))),
                                   tmodel(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)

    @jaxgrad.compile(fullgraph=True)
    def grads_of(module, x):
        module.zero_grad()
        module(x).pow(2).sum().backward()
        return [p.grad for p in module.parameters()]

    assert compiled._orig_mod is model and list(compiled.parameters()) == list(
        model.parameters()) and compiled.eval() is model and not model.training
    model.train()
    grads = grads_of(model, jaxgrad.tensor(x))
    tmodel(torch.tensor(x)).pow(2).sum().backward()
    for g, p in zip(grads, tmodel.parameters()):
        np.testing.assert_allclose(_arrays(g), p.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert all(g is p.grad for g, p in zip(grads, model.parameters()))


def test_in_place_update_of_an_argument_and_its_version():
    @jaxgrad.compile
    def bump(t):
        t.add_(1)
        t.mul_(2)

    t = jaxgrad.zeros(3)
    view = t[1:]
    bump(t)
    bump(t)
    assert t.tolist() == [6.0, 6.0, 6.0] and t._version == 4 and view.tolist() == [6.0, 6.0]


def test_compile_arguments_as_torch():
    assert jaxgrad.compile(len, disable=True) is len
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        jaxgrad.compile(len, mode="fast")
    compiled = jaxgrad.compile(mode="max-autotune", dynamic=True)(lambda x: x + 1)
    assert compiled(jaxgrad.ones(1)).tolist() == [2.0]
    assert not jaxgrad.compiler.is_compiling()
    jaxgrad.compiler.reset()
    assert len(compiled._cache) == 0


def test_inside_jax_jit_the_step_is_part_of_the_outer_trace():
    w = jaxgrad.tensor([1.0, 2.0])
    scaled = jaxgrad.compile(lambda x: x * w)
    for _ in range(2):  # compiled outside first: the call inside must not use the executable
        scaled(jaxgrad.ones(2))
    out = jax.jit(lambda a: scaled(jaxgrad.from_jax(a)).jax())(jax.numpy.ones(2))
    assert out.tolist() == [1.0, 2.0] and not isinstance(w._value, jax.core.Tracer)


# -- between calls: what the user changes is seen ------------------------------------------------

SCALE = 1.0


def _scaled_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * SCALE, y)
        loss.backward()
        opt.step()
        return loss
    return step


def test_changes_between_calls_are_seen(monkeypatch):
    """Each change to the state between two calls (through jaxgrad's API or to plain Python
    objects the step reads) gives the numbers eager execution gives."""
    global SCALE
    monkeypatch.setattr(jaxgrad.compiler.config, "recompile_limit", 64)
    rng = np.random.RandomState(5)
    data = [(jaxgrad.tensor(rng.randn(4, 20).astype(np.float32)),
             jaxgrad.tensor(rng.randint(0, 10, 4))) for _ in range(3)]
    changes = [
        lambda m, o, s: None,
        lambda m, o, s: o.param_groups[0].update(momentum=0.5),  # a plain dict the step reads
        lambda m, o, s: s.step(),  # a learning rate set outside the step
        lambda m, o, s: m[0].weight.register_hook(lambda g: g * 3),
        lambda m, o, s: setattr(m[0].weight, "grad", None),
        lambda m, o, s: m.eval(),
        lambda m, o, s: globals().update(SCALE=2.0),  # a global the step reads
        lambda m, o, s: o.step(),  # an eager optimizer step in between
        lambda m, o, s: m[2].weight.requires_grad_(False),
        lambda m, o, s: o.add_param_group({"params": [jaxgrad.zeros(3, requires_grad=True)]}),
    ]
    runs = {}
    for mode in ("eager", "compiled"):
        SCALE = 1.0
        model, _ = _mlp_pair()
        opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        step = _scaled_step(model, opt)
        if mode == "compiled":
            step = jaxgrad.compile(step)
        seen = []
        for change in changes:
            change(model, opt, sched)
            for x, y in data:
                seen.append(step(x, y).item())
            seen.append(_observe(model, opt))
        runs[mode] = seen
    SCALE = 1.0
    for compiled, eager in zip(runs["compiled"], runs["eager"]):
        if isinstance(eager, dict):
            _assert_state_equal(compiled, eager)
        else:
            assert compiled == pytest.approx(eager, rel=1e-5)


def test_a_scheduler_outside_the_step_does_not_retrace():
    model, _ = _mlp_pair()
    opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1)
    sched = jaxgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    step = jaxgrad.compile(_sgd_step(model, opt, jaxgrad))
    x, y = jaxgrad.randn(4, 20), jaxgrad.randint(0, 10, (4,))
    for _ in range(6):
        step(x, y)
        sched.step()
    # one program: the first call (creating .grad) runs eagerly, the steady state is traced
    assert len(step._cache) == 1 and opt.param_groups[0]["lr"] == sched.get_last_lr()[0]


def test_an_eager_backward_between_calls_is_seen():
    model, _ = _mlp_pair()
    opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1)

    @jaxgrad.compile
    def step(x):
        model(x).sum().backward()  # accumulates into whatever .grad holds
        opt.step()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.zero_grad()  # ends without .grad
        return grads

    x = jaxgrad.randn(2, 20)
    for _ in range(3):
        step(x)
    model(x).sum().backward()  # an eager (compiled-backward) step makes new .grad tensors
    expected = [2 * p.grad for p in model.parameters()]
    for g, e in zip(step(x), expected):
        np.testing.assert_allclose(_arrays(g), _arrays(e), rtol=1e-5)


# -- numbers passed as arguments: torch's automatic dynamic --------------------------------------

def _counter_step(w):
    def step(x, i, *, scale=1.0):
        out = (w * x).sum() * (i + 1) * scale  # arithmetic on the numbers only
        return out, i * 2
    return step


def test_changing_number_arguments_are_traced_after_the_first_change():
    w = jaxgrad.tensor([1.0, 2.0])
    eager, compiled = _counter_step(w), jaxgrad.compile(_counter_step(w))
    x = jaxgrad.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile-limit warning over 12 values
        for i in range(12):
            (out, twice), (expected, expected_twice) = compiled(x, i, scale=0.5), eager(
                x, i, scale=0.5)
            assert out.item() == expected.item() and twice == expected_twice
            assert type(twice) is int
    assert len(compiled._cache) == 2  # i=0 specialized, then i traced


def test_a_step_branching_on_a_number_argument_specializes_again():
    def step(x, i):
        return x * 2 if i % 2 else x * 3  # needs the value

    compiled = jaxgrad.compile(step)
    for i in range(4):
        assert compiled(jaxgrad.ones(1), i).tolist() == step(jaxgrad.ones(1), i).tolist()
    assert not any(e.eager for e in compiled._cache.values()) and len(compiled._cache) == 4
    static = jaxgrad.compile(_counter_step(jaxgrad.ones(2)), dynamic=False)
    for i in range(3):
        static(jaxgrad.ones(2), i)
    assert len(static._cache) == 3
    dynamic = jaxgrad.compile(_counter_step(jaxgrad.ones(2)), dynamic=True)
    for i in range(3):
        dynamic(jaxgrad.ones(2), i)
    assert len(dynamic._cache) == 1
