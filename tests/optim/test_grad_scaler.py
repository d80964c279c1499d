"""jaxgrad.amp.GradScaler("cpu"), differential against torch: a mixed-precision training loop
whose scaled loss overflows (skipped steps, backoff, growth), unscale_ with clipping, the state
dict, and torch's errors and warnings."""

from __future__ import annotations

import pickle

import pytest

import jaxgrad
from differential import attempt, captured_warnings, ok, raises


def _model(T):
    T.manual_seed(0)
    model = T.nn.Linear(3, 2)
    with T.no_grad():
        model.weight.copy_(T.tensor([[0.5, -0.25, 0.75], [1.0, 0.25, -0.5]]))
        model.bias.copy_(T.tensor([0.125, -0.375]))
    return model


def _batch(T, step):
    x = T.tensor([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0]]) * (step + 1)
    return x, T.tensor([[1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_training_loop_with_an_overflowing_step(dtype, optimizer):
    def program(T):
        model = _model(T)
        opt = getattr(T.optim, optimizer)(model.parameters(), lr=0.01)
        # scales at which the gradients overflow their dtype now and then: skipped steps,
        # backoffs and growths alternate
        init = {"bfloat16": 2.0**125, "float16": 2.0**18}[dtype]
        scaler = T.amp.GradScaler("cpu", init_scale=init, growth_factor=4.0,
                                  backoff_factor=0.25, growth_interval=2)
        history = []
        for step in range(8):
            opt.zero_grad()
            x, target = _batch(T, step)
            with T.autocast("cpu", dtype=getattr(T, dtype)):
                out = model(x)
            loss = T.nn.functional.mse_loss(out.float(), target)
            scaler.scale(loss).backward()
            result = scaler.step(opt)
            scaler.update()
            history.append((result, scaler.get_scale(), scaler.state_dict(),
                            model.weight.detach().clone(), model.bias.detach().clone()))
        return history
    # XLA's bfloat16 linear layer and torch's differ by a bfloat16 ulp now and then: compared
    # to bfloat16's precision
    ok(program, rtol=1e-2)


def test_unscale_then_clip_then_step():
    def program(T):
        model = _model(T)
        opt = T.optim.SGD(model.parameters(), lr=0.5)
        scaler = T.amp.GradScaler("cpu", init_scale=1024.0)
        x, target = _batch(T, 0)
        scaler.scale(T.nn.functional.mse_loss(model(x), target)).backward()
        scaled = model.weight.grad.clone()
        scaler.unscale_(opt)
        unscaled = model.weight.grad.clone()
        norm = T.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        scaler.step(opt)
        scaler.update()
        return scaled, unscaled, norm, model.weight.detach(), scaler.get_scale()
    ok(program)


def test_scale_of_nested_outputs():
    def program(T):
        scaler = T.amp.GradScaler("cpu", init_scale=8.0)
        a, b = T.tensor([1.0, 2.0]), T.tensor(3.0)
        out = scaler.scale([a, (b, a)])
        return out, type(out).__name__, type(out[1]).__name__
    ok(program)


def test_state_dict_round_trip():
    def program(T):
        source = T.amp.GradScaler("cpu", init_scale=32.0, growth_interval=7)
        source.scale(T.tensor(1.0))
        target = T.amp.GradScaler("cpu")
        target.load_state_dict(source.state_dict())
        target.scale(T.tensor(1.0))
        target.update(4.0)
        return source.state_dict(), target.state_dict(), target.get_growth_interval()
    ok(program)


def test_getters_and_setters():
    def program(T):
        scaler = T.amp.GradScaler("cpu")
        before = (scaler.get_growth_factor(), scaler.get_backoff_factor(),
                  scaler.get_growth_interval(), scaler.get_scale(), scaler.is_enabled())
        scaler.set_growth_factor(3.0)
        scaler.set_backoff_factor(0.125)
        scaler.set_growth_interval(5)
        return before, scaler.get_growth_factor(), scaler.get_backoff_factor(), \
            scaler.get_growth_interval()
    ok(program)


def test_update_with_a_tensor_scale():
    def program(T):
        scaler = T.amp.GradScaler("cpu", init_scale=8.0)
        scaler.scale(T.tensor(1.0))
        scaler.update(T.tensor(2.0))
        first = scaler.get_scale()
        scaler.scale(T.tensor(1.0))
        return first, attempt(lambda: scaler.update(T.tensor([1.0, 2.0])))
    ok(program)


def test_disabled_scaler_passes_through():
    def program(T):
        model = _model(T)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        scaler = T.amp.GradScaler("cpu", enabled=False)
        x, target = _batch(T, 0)
        loss = T.nn.functional.mse_loss(model(x), target)
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        return scaled is loss, scaler.get_scale(), scaler.state_dict(), model.weight.detach()
    ok(program)


def _stepped(T, stage):
    model = _model(T)
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    scaler = T.amp.GradScaler("cpu")
    x, target = _batch(T, 0)
    scaler.scale(T.nn.functional.mse_loss(model(x), target)).backward()
    if stage in ("unscaled", "stepped"):
        scaler.unscale_(opt)
    if stage == "stepped":
        scaler.step(opt)
    return scaler, opt


ERRORS = {
    "unscale twice": lambda T: (lambda s, o: s.unscale_(o))(*_stepped(T, "unscaled")),
    "unscale after step": lambda T: (lambda s, o: s.unscale_(o))(*_stepped(T, "stepped")),
    "step twice": lambda T: (lambda s, o: s.step(o))(*_stepped(T, "stepped")),
    "closure": lambda T: (lambda s, o: s.step(o, closure=lambda: 0))(*_stepped(T, "ready")),
    "step before scale": lambda T: T.amp.GradScaler("cpu").step(
        T.optim.SGD([T.nn.Parameter(T.ones(1))], lr=0.1)),
    "update before scale": lambda T: T.amp.GradScaler("cpu").update(),
    "update without steps": lambda T: (lambda s: (s.scale(T.tensor(1.0)), s.update()))(
        T.amp.GradScaler("cpu")),
    "growth factor": lambda T: T.amp.GradScaler("cpu", growth_factor=1.0),
    "backoff factor": lambda T: T.amp.GradScaler("cpu", backoff_factor=1.0),
    "empty state dict": lambda T: T.amp.GradScaler("cpu").load_state_dict({}),
    "scale a number": lambda T: T.amp.GradScaler("cpu").scale([1.0]),
    "float16 gradients": lambda T: _float16_grads(T),
}


def _float16_grads(T):
    w = T.nn.Parameter(T.ones(2, dtype=T.float16))
    opt = T.optim.SGD([w], lr=0.1)
    scaler = T.amp.GradScaler("cpu")
    scaler.scale((w * 2).sum()).backward()
    scaler.step(opt)


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    raises(ERRORS[name])


def test_pickle_only_between_iterations():
    def program(T):
        scaler = T.amp.GradScaler("cpu", init_scale=16.0)
        scaler.scale(T.tensor(1.0))
        restored = pickle.loads(pickle.dumps(scaler))
        model = _model(T)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        x, target = _batch(T, 0)
        scaler.scale(T.nn.functional.mse_loss(model(x), target)).backward()
        scaler.unscale_(opt)
        return restored.get_scale(), restored.state_dict(), attempt(lambda: pickle.dumps(scaler))
    ok(program)


WARNING_CASES = {
    "cpu.amp.GradScaler": lambda T: T.cpu.amp.GradScaler(init_scale=4.0).get_scale(),
    "cuda scaler without a GPU": lambda T: T.amp.GradScaler().is_enabled(),
}


@pytest.mark.parametrize("name", list(WARNING_CASES))
def test_warnings(name):
    import torch
    if name.startswith("cuda") and jaxgrad.cuda.is_available():
        pytest.skip("the warning is for a runtime without GPU")
    program = WARNING_CASES[name]
    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
