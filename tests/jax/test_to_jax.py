"""Modules as pure JAX functions (``jaxgrad.func.to_jax``, ``extract_jax``, ``load_jax_state``),
used as JAX users use them: ``jax.jit``/``jax.grad``/``vmap`` with optax, inside Flax nnx and
Equinox modules; every number compared with the same model trained in torch, or with the same
model written in pure Flax or Equinox."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

import jaxgrad
from differential import set_weights, torch
from jaxgrad.func import extract_jax, load_jax_state, to_jax


def mlp(T):
    return T.nn.Sequential(T.nn.Linear(3, 5), T.nn.Tanh(), T.nn.Linear(5, 2))


def pair(build, dtype="float32"):
    """The same model in torch and in jaxgrad, with the same weights."""
    return set_weights(torch, build(torch), dtype=dtype), set_weights(jaxgrad, build(jaxgrad),
                                                                        dtype=dtype)


def inputs(shape=(4, 3), seed=1):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def close(a, b, rtol=2e-5):
    np.testing.assert_allclose(np.asarray(a), b.detach().numpy() if hasattr(b, "detach") else b,
                               rtol=rtol, atol=1e-6)


def test_params_are_the_modules_arrays_each_tied_parameter_once():
    model = jaxgrad.nn.Sequential(jaxgrad.nn.Embedding(5, 3), jaxgrad.nn.Linear(3, 5))
    model[1].weight = model[0].weight
    params, fn = to_jax(model)
    assert list(params) == [n for n, _ in model.named_parameters()] == ["0.weight", "1.bias"]
    assert params["0.weight"] is model[0].weight.jax()
    out = fn(params, jnp.array([[1, 2]]))
    assert isinstance(out, jax.Array) and out.shape == (1, 2, 5)
    doubled = {k: v * 2 for k, v in params.items()}  # the one tied value feeds both uses
    expect = jaxgrad.func.functional_call(model, {k: jaxgrad.from_jax(v) for k, v in
                                                  doubled.items()}, jaxgrad.tensor([[1, 2]]))
    close(fn(doubled, jnp.array([[1, 2]])), expect)


def test_jit_grad_equals_torch_backward():
    tm, jm = pair(mlp)
    x = inputs()
    tm(torch.tensor(x)).pow(2).sum().backward()
    params, fn = to_jax(jm)
    grads = jax.jit(jax.grad(lambda p, x: (fn(p, x) ** 2).sum()))(params, jnp.asarray(x))
    for name, p in tm.named_parameters():
        close(grads[name], p.grad)
    assert all(p.grad is None for p in jm.parameters())  # the module was only read


def test_optax_training_equals_torch_sgd_and_loads_back():
    tm, jm = pair(mlp)
    x, y = inputs(), inputs((4, 2), seed=2)
    opt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        torch.nn.functional.mse_loss(tm(torch.tensor(x)), torch.tensor(y)).backward()
        opt.step()
    params, fn = to_jax(jm)
    tx = optax.sgd(0.1, momentum=0.9)
    state = tx.init(params)

    @jax.jit
    def step(params, state, x, y):
        grads = jax.grad(lambda p: ((fn(p, x) - y) ** 2).mean())(params)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    for _ in range(3):
        params, state = step(params, state, jnp.asarray(x), jnp.asarray(y))
    weight = jm[0].weight
    version = weight._version
    assert load_jax_state(jm, params) is jm
    assert jm[0].weight is weight and weight._version == version + 1
    for (name, p), (_, q) in zip(tm.named_parameters(), jm.named_parameters()):
        close(params[name], p)
        close(q.jax(), p)


def test_vmap_of_grad_gives_torch_funcs_per_sample_grads():
    tm, jm = pair(mlp)
    x = inputs((6, 3))

    def torch_loss(p, xi):
        return torch.func.functional_call(tm, p, (xi[None],)).pow(2).sum()

    expect = torch.func.vmap(torch.func.grad(torch_loss), in_dims=(None, 0))(
        dict(tm.named_parameters()), torch.tensor(x))
    params, fn = to_jax(jm)
    got = jax.jit(jax.vmap(jax.grad(lambda p, xi: (fn(p, xi[None]) ** 2).sum()),
                           in_axes=(None, 0)))(params, jnp.asarray(x))
    for name in expect:
        close(got[name], expect[name])


def test_module_kwargs_and_pytree_outputs():
    class Net(jaxgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = jaxgrad.nn.Linear(2, 2)

        def forward(self, x, *, scale):
            y = self.lin(x)
            return {"y": y * scale, "parts": (y.sum(), [x])}

    net = Net()
    params, fn = to_jax(net)
    out = jax.jit(fn)(params, jnp.ones((1, 2)), scale=jnp.float32(3.0))
    assert jax.tree.structure(out) == jax.tree.structure({"y": 0, "parts": (0, [0])})
    assert all(isinstance(leaf, jax.Array) for leaf in jax.tree.leaves(out))
    expect = net(jaxgrad.ones(1, 2), scale=3.0)
    close(out["y"], expect["y"])
    close(out["parts"][0], expect["parts"][0])


def test_batch_norm_buffers_are_explicit_state():
    tm, jm = pair(lambda T: T.nn.BatchNorm1d(3))
    x = inputs((5, 3))
    expect = tm(torch.tensor(x))
    params, fn = to_jax(jm)
    before = fn.buffers
    out, buffers = jax.jit(lambda p, b, x: fn.apply(p, b, (x,)))(params, before, jnp.asarray(x))
    close(out, expect)
    for name, b in tm.named_buffers():
        close(buffers[name], b)
        close(jm.get_buffer(name).jax(), before[name])  # the module's buffers are untouched
    plain = fn(params, jnp.asarray(x))  # the plain form: the update is dropped
    close(plain, expect)
    assert all(np.array_equal(jm.get_buffer(n).jax(), before[n]) for n in before)
    tm.eval()
    out, same_buffers = fn.apply(params, buffers, (jnp.asarray(x),), train=False)
    close(out, tm(torch.tensor(x)))
    assert jm.training and all(np.array_equal(same_buffers[n], buffers[n]) for n in buffers)
    load_jax_state(jm, params, buffers)
    for name, b in tm.named_buffers():
        close(jm.get_buffer(name).jax(), b)


def test_dropout_draws_from_the_key_the_caller_threads():
    jm = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(3, 64), jaxgrad.nn.Dropout(0.5))
    params, fn = to_jax(jm)
    rng_state = jaxgrad.get_rng_state()
    run = jax.jit(lambda p, k, x: fn.apply(p, None, (x,), key=k)[0])
    x = jnp.ones((2, 3))
    a, b = run(params, jax.random.key(0), x), run(params, jax.random.key(0), x)
    c = run(params, jax.random.key(1), x)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert set(np.unique(np.asarray(a) == 0)) == {False, True}
    evaluated = fn.apply(params, None, (x,), key=jax.random.key(0), train=False)[0]
    np.testing.assert_allclose(evaluated, jm[0](jaxgrad.from_jax(x)).detach().jax())
    assert jm.training
    assert bool((jaxgrad.get_rng_state() == rng_state).all())  # no generator drew


def test_extract_jax_has_torchaxs_calling_convention():
    tm, jm = pair(lambda T: T.nn.Sequential(T.nn.Linear(3, 3), T.nn.BatchNorm1d(3)))
    tm.eval()
    jm.eval()
    states, jax_fn = extract_jax(jm)
    assert set(states) == {n for n, _ in tm.named_parameters()} | {n for n, _ in
                                                                   tm.named_buffers()}
    x = inputs()
    close(jax.jit(jax_fn)(states, (jnp.asarray(x),)), tm(torch.tensor(x)))


def test_load_jax_state_checks_names():
    jm = mlp(jaxgrad)
    params, _ = to_jax(jm)
    with pytest.raises(RuntimeError, match=r"missing parameters \['2.bias'\]"):
        load_jax_state(jm, {k: v for k, v in params.items() if k != "2.bias"})
    with pytest.raises(RuntimeError, match=r"unknown names \['nope'\]"):
        load_jax_state(jm, {**params, "nope": jnp.zeros(1)})
    load_jax_state(jm, {"0.bias": jnp.zeros(5)}, strict=False)
    assert not jm[0].bias.any()


# ---- inside Flax nnx and Equinox: the jaxgrad module's parameters are their trainable state ----

class NnxWithJaxgradHead(nnx.Module):
    def __init__(self, head, rngs):
        self.body = nnx.Linear(3, 5, rngs=rngs)
        params, self.head_fn = to_jax(head)
        self.head = nnx.data({k: nnx.Param(v) for k, v in params.items()})

    def __call__(self, x):
        return self.head_fn({k: v[...] for k, v in self.head.items()}, jnp.tanh(self.body(x)))


class PureNnx(nnx.Module):
    def __init__(self, rngs):
        self.body = nnx.Linear(3, 5, rngs=rngs)
        self.head = nnx.Linear(5, 2, rngs=rngs)

    def __call__(self, x):
        return self.head(jnp.tanh(self.body(x)))


def nnx_train(model, steps=3):
    optimizer = nnx.Optimizer(model, optax.adam(0.05), wrt=nnx.Param)
    x, y = jnp.asarray(inputs()), jnp.asarray(inputs((4, 2), seed=2))

    @nnx.jit
    def step(model, optimizer):
        loss, grads = nnx.value_and_grad(lambda m: ((m(x) - y) ** 2).mean())(model)
        optimizer.update(model, grads)
        return loss

    return [float(step(model, optimizer)) for _ in range(steps)]


def test_flax_nnx_trains_a_jaxgrad_submodule_as_pure_flax_does():
    head = set_weights(jaxgrad, jaxgrad.nn.Linear(5, 2), dtype="float32")
    mixed, pure = NnxWithJaxgradHead(head, nnx.Rngs(0)), PureNnx(nnx.Rngs(0))
    pure.head.kernel[...] = head.weight.jax().T
    pure.head.bias[...] = head.bias.jax()
    np.testing.assert_allclose(nnx_train(mixed), nnx_train(pure), rtol=1e-5)
    np.testing.assert_allclose(mixed.head["weight"][...].T, pure.head.kernel[...], rtol=1e-5)
    load_jax_state(head, {k: v[...] for k, v in mixed.head.items()})
    np.testing.assert_allclose(head.bias.jax(), pure.head.bias[...], rtol=1e-5)


class EqxWithJaxgradHead(eqx.Module):
    body: eqx.nn.Linear
    head_params: dict
    head_fn: Callable = eqx.field(static=True)

    def __init__(self, head, key):
        self.body = eqx.nn.Linear(3, 5, key=key)
        self.head_params, self.head_fn = to_jax(head)

    def __call__(self, x):
        return self.head_fn(self.head_params, jnp.tanh(jax.vmap(self.body)(x)))


class PureEqx(eqx.Module):
    body: eqx.nn.Linear
    head: eqx.nn.Linear

    def __init__(self, key, weight, bias):
        self.body = eqx.nn.Linear(3, 5, key=key)
        head = eqx.nn.Linear(5, 2, key=key)
        self.head = eqx.tree_at(lambda h: (h.weight, h.bias), head, (weight, bias))

    def __call__(self, x):
        return jax.vmap(self.head)(jnp.tanh(jax.vmap(self.body)(x)))


def eqx_train(model, steps=3):
    tx = optax.adam(0.05)
    state = tx.init(eqx.filter(model, eqx.is_array))
    x, y = jnp.asarray(inputs()), jnp.asarray(inputs((4, 2), seed=2))

    @eqx.filter_jit
    def step(model, state):
        loss, grads = eqx.filter_value_and_grad(lambda m: ((m(x) - y) ** 2).mean())(model)
        updates, state = tx.update(grads, state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), state, loss

    losses = []
    for _ in range(steps):
        model, state, loss = step(model, state)
        losses.append(float(loss))
    return model, losses


def test_equinox_trains_a_jaxgrad_submodule_as_pure_equinox_does():
    head = set_weights(jaxgrad, jaxgrad.nn.Linear(5, 2), dtype="float32")
    key = jax.random.key(0)
    mixed, mixed_losses = eqx_train(EqxWithJaxgradHead(head, key))
    pure, pure_losses = eqx_train(PureEqx(key, head.weight.jax(), head.bias.jax()))
    np.testing.assert_allclose(mixed_losses, pure_losses, rtol=1e-5)
    np.testing.assert_allclose(mixed.head_params["weight"], pure.head.weight, rtol=1e-5)
