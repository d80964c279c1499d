"""``jaxgrad.jax_op``: a JAX function as a differentiable op, checked against torch.

The torch twin of a ``jax_op`` is a ``torch.autograd.Function`` of the same CamelCase name whose
forward runs the same computation in torch ops and whose backward differentiates that
computation with torch (recorded under ``create_graph``): its node is ``<Name>Backward``, as
jaxgrad's is. Programs without a node to compare use plain torch ops and compare values and
leaf gradients.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxgrad
from differential import next_functions, ok, raises, torch
from jaxgrad._core.tensor import Tensor
from jaxgrad._engine import compiled_backward as _compiled_backward
from jaxgrad._engine import engine as _engine


def twin(T, name, jax_fn, torch_fn):
    """``jax_op(jax_fn, name=name)`` for jaxgrad; for torch a Function class called ``name``
    (its reentrant ``autograd.grad`` would run hooks on inputs again and count an input passed
    twice twice: such tests use an explicit Function, ``Sin``, ``Prod``)."""
    if T is jaxgrad:
        return jaxgrad.jax_op(jax_fn, name=name)

    def forward(ctx, *xs):
        ctx.save_for_backward(*xs)
        with torch.enable_grad():
            out = torch_fn(*[x.detach() for x in xs])
        return out.detach() if isinstance(out, torch.Tensor) else tuple(o.detach() for o in out)

    def backward(ctx, *grads):
        xs = ctx.saved_tensors
        wanted = [x for x, n in zip(xs, ctx.needs_input_grad) if n]
        with torch.enable_grad():
            out = torch_fn(*xs)
            out = (out,) if isinstance(out, torch.Tensor) else out
            pairs = [(o, g) for o, g in zip(out, grads) if o.dtype.is_floating_point]
            got = iter(torch.autograd.grad([o for o, _ in pairs], wanted,
                                           [g for _, g in pairs],
                                           create_graph=torch.is_grad_enabled(),
                                           allow_unused=True))
        return tuple(next(got) if n else None for n in ctx.needs_input_grad)

    cls = type(name, (torch.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward)})
    return cls.apply


class Sin(torch.autograd.Function):
    """The twin of ``jax_op(jnp.sin)`` with an explicit formula: ``twin``'s reentrant
    ``autograd.grad`` would run tensor hooks on the inputs a second time."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()


def sin_op(T):
    return Sin.apply if T is torch else jaxgrad.jax_op(jnp.sin)


def fresh(*ts):
    """Values without history or version: where torch's graph differs in structure (a Python
    loop, a twin's recorded backward), its engine sums gradients in place at other places."""
    return [t.detach().clone() for t in ts]


def mlp_layer(T):
    return twin(T, "MlpLayer", lambda x, w, b: jnp.tanh(x @ w.T + b),
                lambda x, w, b: torch.tanh(x @ w.T + b))


def x_exp_sin(T):
    return twin(T, "XExpSin", lambda x: x * jnp.exp(jnp.sin(x)),
                lambda x: x * torch.exp(torch.sin(x)))


def layer_inputs(T, dtype=None):
    dtype = dtype or T.float32
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s) for s in ((4, 3), (2, 3), (2,)))
    return (T.tensor(x, dtype=dtype), T.tensor(w, dtype=dtype, requires_grad=True),
            T.tensor(b, dtype=dtype, requires_grad=True))


# --- values, grads, nodes -----------------------------------------------------------------------

def test_sin_values_grads_and_node():
    def prog(T):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = sin_op(T)(x)
        y.sum().backward()
        return y, x.grad, next_functions(y.grad_fn)

    ok(prog)


def test_mlp_layer_some_inputs_without_grad():
    def prog(T):
        x, w, b = layer_inputs(T)
        y = mlp_layer(T)(x, w, b)
        (y * y).sum().backward()
        return y, x.grad, w.grad, b.grad, next_functions(y.grad_fn)

    ok(prog)


def test_node_named_after_function():
    def rnn_cell(h, x):
        return jnp.tanh(h + x)

    y = jaxgrad.jax_op(rnn_cell)(jaxgrad.ones(2, requires_grad=True), jaxgrad.ones(2))
    assert type(y.grad_fn).__name__ == "RnnCellBackward"
    assert type(jaxgrad.jax_op(name="my op")(jnp.sin)(y).grad_fn).__name__ == "MyOpBackward"


def test_multiple_outputs_share_one_node_and_unused_grads_are_zeros():
    def sincos(x):
        return jnp.sin(x), jnp.cos(x) * 2

    def prog(T):
        x = T.tensor([0.3, 1.2], requires_grad=True)
        s, c = twin(T, "Sincos", sincos, lambda x: (torch.sin(x), torch.cos(x) * 2))(x)
        c.sum().backward(retain_graph=True)
        first = x.grad.clone()
        s.sum().backward()
        return (s, c, first, x.grad, s.grad_fn is c.grad_fn, s.output_nr, c.output_nr,
                next_functions(s.grad_fn))

    ok(prog)


def test_integer_outputs_do_not_require_grad():
    def prog(T):
        x = T.tensor([0.3, 2.0, 1.0], requires_grad=True)
        v, i = twin(T, "MaxArg", lambda x: (jnp.max(x), jnp.argmax(x).astype(jnp.int64)),
                    lambda x: (x.max(), x.argmax()))(x)
        v.backward()
        return v, i, x.grad.clone()  # (torch's max formula writes into its zeros: _version 1)

    ok(prog)


# --- hooks, retain_grad, in-place checks, anomaly -------------------------------------------------

def test_hooks_and_retain_grad_around_the_op():
    def prog(T):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = x * 2
        seen = []
        h.register_hook(lambda g: seen.append(("h", g.clone())))
        h.retain_grad()
        y = sin_op(T)(h)
        y.retain_grad()
        y.register_hook(lambda g: seen.append(("y", g.clone())) or g * 3)
        (y * y).sum().backward()
        return h.grad, y.grad, x.grad, seen

    ok(prog)


def test_modifying_a_saved_input_in_place_raises():
    def prog(T):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = x * 2
        y = sin_op(T)(h)
        h.add_(1)
        y.sum().backward()

    raises(prog)


def test_second_backward_through_freed_graph_raises():
    def prog(T):
        x = T.tensor([0.5, -1.0], requires_grad=True)
        y = sin_op(T)(x).sum()
        y.backward()
        y.backward()

    raises(prog)


# --- higher order -------------------------------------------------------------------------------

def test_create_graph_to_third_order():
    def prog(T):
        x = T.tensor([0.5, -1.0, 2.0], dtype=T.float64, requires_grad=True)
        y = x_exp_sin(T)(x)
        (g1,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = T.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = T.autograd.grad(g2.sum(), x)
        return fresh(g1, g2, g3), g1.requires_grad, g2.requires_grad

    ok(prog)


def test_mixed_second_order_through_several_inputs():
    def prog(T):
        x, w, b = layer_inputs(T, T.float64)
        y = mlp_layer(T)(x, w, b)
        (gw,) = T.autograd.grad((y ** 2).sum(), w, create_graph=True)
        (gw * gw).sum().backward()
        return fresh(gw, w.grad, b.grad)

    ok(prog)


def test_backward_with_create_graph_gives_grad_a_history():
    def prog(T):
        x = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
        sin_op(T)(x).sum().backward(create_graph=True)
        g = x.grad
        x.grad = None
        g.sum().backward()
        return fresh(g, x.grad), g.requires_grad

    ok(prog)


def test_gradcheck_and_gradgradcheck():
    def prog(T):
        x, w, b = layer_inputs(T, T.float64)
        op = mlp_layer(T)
        return (T.autograd.gradcheck(op, (x, w, b)), T.autograd.gradgradcheck(op, (x, w, b)),
                T.autograd.gradcheck(x_exp_sin(T), (w,)))

    ok(prog)


# --- JAX features: custom_vjp, pytrees, static arguments ----------------------------------------

@jax.custom_vjp
def square_with_fake_grad(x):
    return x * x


def _fake_fwd(x):
    return x * x, x


def _fake_bwd(x, g):
    return (g * 7 * x,)  # not the true derivative 2x: the rule must be the one used


square_with_fake_grad.defvjp(_fake_fwd, _fake_bwd)


class SquareWithFakeGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 7 * x


def test_custom_vjp_rule_is_respected_to_second_order():
    def prog(T):
        x = T.tensor([0.5, -1.0, 2.0], dtype=T.float64, requires_grad=True)
        op = (SquareWithFakeGrad.apply if T is torch
              else jaxgrad.jax_op(square_with_fake_grad))
        y = op(x)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return y, fresh(g, gg)

    ok(prog)


def _jax_net(params, x, *, act, scale):
    h = getattr(jnp, act)(x @ params["w"] + params["b"]) * scale
    return {"out": h, "stats": (h.mean(), jnp.argmax(h[0]).astype(jnp.int64))}


def _torch_net(params, x, *, act, scale):
    h = getattr(torch, act)(x @ params["w"] + params["b"]) * scale
    return {"out": h, "stats": (h.mean(), torch.argmax(h[0]))}


def test_pytrees_in_and_out_with_keywords_and_static_arguments():
    def prog(T):
        rng = np.random.default_rng(1)
        f32 = T.float32  # (JAX 0.10's argmax of float64 fails without global x64)
        params = {"w": T.tensor(rng.standard_normal((3, 2)), dtype=f32, requires_grad=True),
                  "b": T.tensor(rng.standard_normal(2), dtype=f32, requires_grad=True)}
        x = T.tensor(rng.standard_normal((4, 3)), dtype=f32)
        results = []
        for act, scale in (("tanh", 2.0), ("sin", 0.5)):
            net = _torch_net if T is torch else jaxgrad.jax_op(_jax_net)
            r = net(params, x, act=act, scale=scale)
            (r["out"].sum() + r["stats"][0]).backward()
            results += [fresh(r["out"], r["stats"][0], params["w"].grad, params["b"].grad),
                        r["out"].requires_grad, r["stats"][1]]
        return results

    ok(prog)


def test_static_argnums_argnames_and_traced_numbers():
    calls = []

    @jaxgrad.jax_op(static_argnums=1, static_argnames="n")
    def power_sum(x, k, *, n, shift):
        calls.append(type(shift))
        out = x
        for _ in range(n):  # n is static: a Python int inside
            out = out * x
        return out.sum() * k + shift

    x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    with jaxgrad.no_grad():
        for shift in (1.0, 5.0, -2.0):  # a new traced number reuses the trace
            power_sum(x, 3, n=2, shift=shift)
    assert len(calls) == 1 and calls[0] is not float
    power_sum(x, 3, n=2, shift=0.5).backward()
    np.testing.assert_allclose(np.asarray(x.grad._value), 3 * 3 * np.array([1.0, 4.0]))
    with pytest.raises(ValueError, match="static arguments must be hashable"):
        jaxgrad.jax_op(lambda x, s: x, static_argnums=1)(x, [1, 2])


def test_jax_array_arguments_are_traced_constants():
    op = jaxgrad.jax_op(lambda x, w: x * w)
    x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    y = op(x, jnp.asarray([3.0, 4.0], jnp.float32))
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad._value), [3.0, 4.0])
    assert y.grad_fn.next_functions[1] == (None, 0)


# --- examples: a lax.scan RNN, an optax loss -----------------------------------------------------

def _jax_rnn(h0, xs, w, u, b):
    def cell(h, x):
        h = jnp.tanh(h @ w + x @ u + b)
        return h, h

    return jax.lax.scan(cell, h0, xs)


def _torch_rnn(h0, xs, w, u, b):
    h, hs = h0, []
    for x in xs:
        h = torch.tanh(h @ w + x @ u + b)
        hs.append(h)
    return h, torch.stack(hs)


def test_lax_scan_rnn_matches_a_python_loop_in_torch():
    def prog(T):
        rng = np.random.default_rng(2)
        h0 = T.tensor(rng.standard_normal((2, 4)), requires_grad=True)
        xs = T.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
        w, u, b = (T.tensor(rng.standard_normal(s) * 0.5, requires_grad=True)
                   for s in ((4, 4), (3, 4), (4,)))
        rnn = _torch_rnn if T is torch else jaxgrad.jax_op(_jax_rnn)
        h, hs = rnn(h0, xs, w, u, b)
        (h.sum() + (hs ** 2).sum()).backward()
        return fresh(h, hs, h0.grad, xs.grad, w.grad, u.grad, b.grad)

    ok(prog, rtol=1e-5)


def test_optax_loss_matches_cross_entropy():
    def prog(T):
        rng = np.random.default_rng(3)
        logits = T.tensor(rng.standard_normal((6, 5)), requires_grad=True)
        labels = T.tensor(rng.integers(0, 5, 6), dtype=T.int64)
        if T is torch:
            loss = torch.nn.functional.cross_entropy(logits, labels)
        else:
            loss = jaxgrad.jax_op(optax.softmax_cross_entropy_with_integer_labels)(
                logits, labels).mean()
        loss.backward()
        return fresh(loss, logits.grad)

    ok(prog)


def test_complex_inputs_follow_torchs_conjugate_convention_to_second_order():
    def prog(T):
        z = T.tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
        y = twin(T, "AbsPoly", lambda z: jnp.abs(z * z * z + z),
                 lambda z: torch.abs(z * z * z + z))(z)
        (g,) = T.autograd.grad(y.sum(), z, create_graph=True)
        (gg,) = T.autograd.grad(g.abs().sum(), z)
        return y, fresh(g, gg)

    ok(prog)


# --- inside JAX: jax.jit, jax.grad, the compiled backward -----------------------------------------

def _grads_with_jaxgrad(h0, xs, w, u, b):
    leaves = [Tensor._make(a, requires_grad=True) for a in (h0, xs, w, u, b)]
    h, hs = jaxgrad.jax_op(_jax_rnn)(*leaves)
    (h.sum() + (hs ** 2).sum()).backward()
    return tuple(t.grad._value for t in leaves)


def test_under_jax_jit_gives_the_eager_numbers():
    rng = np.random.default_rng(4)
    arrays = [jnp.asarray(rng.standard_normal(s), jnp.float32)
              for s in ((2, 4), (5, 2, 3), (4, 4), (3, 4), (4,))]
    eager = _grads_with_jaxgrad(*arrays)
    jitted = jax.jit(_grads_with_jaxgrad)(*arrays)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)


def test_jax_grad_differentiates_through_the_op():
    op = jaxgrad.jax_op(lambda x: x * jnp.exp(jnp.sin(x)))

    def loss(a):
        return op(Tensor._make(a)).sum()._value

    a = jnp.asarray([0.5, -1.0, 2.0], jnp.float32)
    x = Tensor._make(a, requires_grad=True)
    op(x).sum().backward()
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(a)), np.asarray(x.grad._value),
                               rtol=1e-6)


def test_compiled_backward_reuses_one_program_and_agrees_with_eager():
    op = jaxgrad.jax_op(lambda x, w: jnp.tanh(x @ w))

    def step(compiled):
        with _engine.compiled_backward(compiled):
            x = jaxgrad.ones(2, 3)
            w = jaxgrad.full((3, 2), 0.25, requires_grad=True)
            (op(x, w) * 2).sum().backward()
            return np.asarray(w.grad._value)

    step(True)
    before = len(_compiled_backward._cache)
    first = step(True)
    assert len(_compiled_backward._cache) == before
    np.testing.assert_allclose(first, step(False), rtol=1e-6)


def test_static_values_equal_but_of_other_types_are_other_signatures():
    op = jaxgrad.jax_op(lambda x, s: x * 2 if isinstance(s, bool) else x * 3, static_argnums=1)
    x = jaxgrad.ones(2)
    assert [float(op(x, s)[0]) for s in (True, 1, 1.0)] == [2.0, 3.0, 3.0]


def test_profiler_shows_the_function_and_its_node():
    def names(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with T.autograd.profiler.profile() as prof:
            sin_op(T)(x).sum().backward()
        return [e.name for e in prof.function_events]

    for T in (torch, jaxgrad):
        assert {"Sin", "SinBackward"} <= set(names(T))
    assert not [n for n in names(jaxgrad) if n.startswith("aten::") and "sin" in n]


def test_modifying_an_output_in_place_is_allowed():
    def prog(T):
        x = T.tensor([0.5, -1.0], requires_grad=True)
        y = sin_op(T)(x)
        y.mul_(2)
        y.sum().backward()
        return y, x.grad

    ok(prog)


def test_saved_tensor_hooks_see_the_saved_inputs():
    def prog(T):
        x = T.tensor([0.5, -1.0], requires_grad=True)
        packed = []

        def pack(t):
            packed.append(t.clone())
            return t

        with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 2):
            y = sin_op(T)(x)
        y.sum().backward()
        return packed, x.grad

    ok(prog)


class Prod(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b.sin()

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b.sin(), g * a * b.cos()


def test_the_same_tensor_in_two_places_sums_its_gradients():
    def prog(T):
        x = T.tensor([0.5, -1.0], requires_grad=True)
        op = Prod.apply if T is torch else jaxgrad.jax_op(lambda a, b: a * jnp.sin(b), name="prod")
        y = op(x, x)
        y.sum().backward()
        return y, x.grad.clone(), next_functions(y.grad_fn)

    ok(prog)
