"""Differential tests of autograd.Function: ctx, saved tensors, outputs, backward checks.

Every Function class is defined inside the program from ``T.autograd.Function``, so torch and
jaxgrad run the very same code.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import jaxgrad
from differential import attempt, captured_warnings, leaf, next_functions, ok, val


def seed_function(T):
    """Seed 001's example: 3*x + 2*y + exp(x) + exp(y) with a hand-written backward."""

    class Func(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            expx, expy = T.exp(x), T.exp(y)
            ctx.save_for_backward(expx, expy)
            return 3 * x + 2 * y + expx + expy

        @staticmethod
        def backward(ctx, grad_output):
            expx, expy = ctx.saved_tensors
            return grad_output * (3 + expx), grad_output * (2 + expy)

    return Func


def test_seed_function_values_grads_and_graph():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0], requires_grad=True)
        z = seed_function(T).apply(x, y)
        z.backward(T.tensor([1.0, 1.0]))
        return z, x.grad, y.grad, next_functions(z.grad_fn), z.grad_fn.name(), repr(z)[-24:]

    ok(program)


def test_seed_function_double_backward_has_no_history():
    # exp(x) was computed inside forward (no graph) and the root grad needs none: the first
    # gradient has no history, so differentiating it again raises, as in torch
    def program(T):
        x, y = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
        z = seed_function(T).apply(x, y)
        gx, gy = T.autograd.grad(z.sum(), (x, y), create_graph=True)
        return gx, gy, attempt(lambda: T.autograd.grad(gx.sum(), x, allow_unused=True))

    ok(program)


def test_ctx_attributes_needs_input_grad_and_non_tensor_inputs():
    def program(T):
        seen = []

        class Scale(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, k, name):
                ctx.k, ctx.tag = k, name
                seen.append(ctx.needs_input_grad)
                seen.append(T.is_grad_enabled())
                return x * w * k

            @staticmethod
            def backward(ctx, g):
                seen.append(T.is_grad_enabled())
                return g * ctx.k, None, None, None

        x = leaf(T, [1.0, 2.0])
        w = T.tensor([3.0, 4.0], dtype=T.float64)
        z = Scale.apply(x, w, 2.5, "s")
        z.sum().backward()
        return seen, z, x.grad, z.grad_fn.k, z.grad_fn.tag, next_functions(z.grad_fn)

    ok(program)


def _returning(T, make_grads, x_shape=(2,)):
    class Func(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            return make_grads(T, g)

    x = T.ones(*x_shape, requires_grad=True)
    y = T.tensor([3.0, 4.0], requires_grad=True)
    err = attempt(lambda: Func.apply(x, y, 3).sum().backward())
    return err, x.grad, y.grad


BACKWARD_RETURNS = {
    "too_few": lambda T, g: (g,),
    "too_many": lambda T, g: (g, g, g, g),
    "extra_nones": lambda T, g: (g, g, None, None),
    "grad_for_non_tensor": lambda T, g: (g, g, g),
    "wrong_shape": lambda T, g: (T.ones(3), g, None),
    "not_expandable": lambda T, g: (T.ones(1), g, None),
    "broadcast_summed": lambda T, g: (T.ones(3, 2), g, None),
    "float_instead_of_tensor": lambda T, g: (1.0, g, None),
    "other_dtype_cast": lambda T, g: (g.double(), g, None),
    "int_cast": lambda T, g: (g.long(), g, None),
    "list_counts_as_one": lambda T, g: [g, g, None],
    "single_tensor": lambda T, g: g,
    "none": lambda T, g: None,
}


@pytest.mark.parametrize("case", sorted(BACKWARD_RETURNS))
def test_backward_return_checks(case):
    def program(T):
        return _returning(T, BACKWARD_RETURNS[case])

    ok(program)


def test_gradient_summed_to_a_broadcast_input_shape():
    def program(T):
        return _returning(T, lambda T, g: (g.expand(3, 2), g, None), x_shape=(1, 2))

    ok(program)


def test_non_differentiable_outputs_and_materialized_grads():
    def program(T):
        seen = []

        class Two(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x * 2, x * 3
                ctx.mark_non_differentiable(b)
                return a, b, 7

            @staticmethod
            def backward(ctx, ga, gb, gc):
                seen.append((ga, gb, gc))
                return ga * 2

        x = leaf(T, [1.0, 2.0])
        a, b, c = Two.apply(x)
        a.sum().backward()
        return seen, a, b, c, x.grad

    ok(program)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    def program(T):
        seen = []

        class Two(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append((ga, gb))
                return ga * 2 if gb is None else ga * 2 + gb * 3

        x = leaf(T, [1.0, 2.0])
        a, _ = Two.apply(x)
        a.sum().backward()
        return seen, x.grad

    ok(program)


def _identity(T):
    class Ident(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    return Ident


@pytest.mark.parametrize("source", ["leaf", "non_leaf", "plain", "no_grad"])
def test_input_returned_as_is_becomes_a_view(source):
    def program(T):
        x = leaf(T, [1.0, 2.0])
        inp = {"leaf": x, "non_leaf": x * 1, "plain": T.ones(2)}.get(source, x)
        if source == "no_grad":
            with T.no_grad():
                out = _identity(T).apply(inp)
        else:
            out = _identity(T).apply(inp)
        grad = None
        if out.requires_grad:
            out.sum().backward()
            grad = x.grad
        return out is inp, out._base is inp, out, grad

    ok(program)


def test_inplace_on_function_output_views_raises():
    def program(T):
        class First(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:1]

            @staticmethod
            def backward(ctx, g):
                return T.cat([g, T.zeros(1, dtype=g.dtype)])

        h = leaf(T, [1.0, 2.0]) * 1
        view_out = First.apply(h)
        same_out = _identity(T).apply(h)
        return (view_out._base is h, attempt(lambda: view_out.mul_(2)),
                attempt(lambda: same_out.mul_(2)))

    ok(program)


def _dirty(T):
    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


def test_mark_dirty_non_leaf():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 1
        out = _dirty(T).apply(y)
        out.sum().backward()
        return out is y, y, y._version, x.grad, next_functions(y.grad_fn)

    ok(program)


def test_mark_dirty_leaf_requiring_grad_raises_and_no_grad_allows():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        err = attempt(lambda: _dirty(T).apply(x))
        with T.no_grad():
            out = _dirty(T).apply(x)
        return err, out is x, x._version, x

    ok(program)


def test_mark_dirty_view_rebases_base_through_copy_slices():
    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0])
        base = x * 1
        view = base[1:]
        _dirty(T).apply(view)
        base.sum().backward()
        return base, view, base._version, x.grad, next_functions(base.grad_fn)

    ok(program)


def _saver(T):
    class Saver(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(x, out, None)
            return out

        @staticmethod
        def backward(ctx, g):
            _, out, _ = ctx.saved_tensors
            return g * out

    return Saver


def test_saved_tensors_identity_then_freed():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        out = _saver(T).apply(x)
        saved = out.grad_fn.saved_tensors
        identity = (saved[0] is x, saved[1] is out, saved[2], val(saved[1]))
        out.sum().backward()
        return identity, x.grad, attempt(lambda: out.grad_fn.saved_tensors)

    ok(program)


def test_saved_tensors_retain_graph_and_modified_output():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        out = _saver(T).apply(x)
        out.sum().backward(retain_graph=True)
        out.sum().backward()
        twice = x.grad.clone()
        out2 = _saver(T).apply(x)
        with T.no_grad():
            out2.add_(1)
        return twice, attempt(lambda: out2.sum().backward())

    ok(program)


def test_save_for_backward_rejects_non_tensors():
    def program(T):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        return [attempt(lambda: Bad.apply(leaf(T, [1.0])))]

    ok(program)


def test_once_differentiable():
    def program(T):
        class Square(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            @T.autograd.function.once_differentiable
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g

        x = leaf(T, [1.0, 2.0])
        gx, = T.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        v = leaf(T, [1.0, 1.0])
        gv, = T.autograd.grad(Square.apply(x), x, grad_outputs=v, create_graph=True)
        return gx, gv, attempt(lambda: gv.sum().backward()), x.grad, v.grad

    ok(program)


def test_setup_context_form_and_keyword_arguments():
    def program(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(x, k=2.0):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = leaf(T, [1.0, 2.0])
        z = Scale.apply(x, 3.0)
        z.sum().backward()
        first = x.grad.clone()
        z2 = Scale.apply(x, k=4.0)
        z2.sum().backward()
        return z, z2, first, x.grad, z.grad_fn.name()

    ok(program)


def test_keyword_arguments_bind_defaults_in_ctx_form():
    def program(T):
        seen = []

        class Scale(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=3.0, shift=0.0):
                seen.append(ctx.needs_input_grad)
                return x * k + shift

            @staticmethod
            def backward(ctx, g):
                return g

        x = leaf(T, [1.0])
        no_kwargs = attempt(lambda: Scale.apply(x).sum().backward())
        kwargs = attempt(lambda: Scale.apply(x, shift=1.0).sum().backward())
        return seen, no_kwargs, kwargs

    ok(program)


def test_vjp_alias_and_missing_methods():
    def program(T):
        class ByVjp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2

        class NoForward(T.autograd.Function):
            pass

        class NoBackward(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        x = leaf(T, [1.0, 2.0])
        ByVjp.apply(x).sum().backward()
        return (x.grad, attempt(lambda: NoForward.apply(x)),
                attempt(lambda: NoBackward.apply(x).sum().backward()))

    ok(program)


def test_no_grad_and_inputs_without_grad_record_nothing():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        with T.no_grad():
            a = _saver(T).apply(x)
        b = _saver(T).apply(T.ones(2))
        return a, b, _saver(T).apply(x.double()).dtype

    ok(program)


def test_hooks_on_function_outputs_and_none_gradients():
    # torch calls tensor hooks with None on the path of a gradient that is None
    def program(T):
        log = []

        class FirstOnly(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * 2 + b

            @staticmethod
            def backward(ctx, g):
                return None, g

        x, y = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
        x.register_hook(lambda g: log.append(("x", g)))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("x post", t.grad)))
        h = x * 1
        h.register_hook(lambda g: log.append(("h", g)))
        h.retain_grad()
        z = FirstOnly.apply(h, y)
        z.register_hook(lambda g: log.append(("z", g)))
        z.grad_fn.register_hook(lambda gi, go: log.append(("node post", gi, go)))
        z.sum().backward()
        return log, x.grad, h.grad, y.grad

    ok(program)


def test_function_inside_a_larger_graph_with_create_graph():
    def program(T):
        class Cube(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x ** 2 * g

        x = leaf(T, [0.5, -1.5])
        y = Cube.apply(x.sin()).sum()
        g, = T.autograd.grad(y, x, create_graph=True)
        gg, = T.autograd.grad(g.sum(), x, create_graph=True)
        ggg, = T.autograd.grad(gg.sum(), x)
        # values only: create_graph nodes are named after jaxgrad's rules (see README)
        return [(t.detach().clone(), t.requires_grad) for t in (g, gg, ggg)]

    ok(program)


def test_saved_variables_warns_and_returns_the_saved_tensors():
    def program(T):
        class Add(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a + b

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_variables
                return grad * b, grad * a

        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0], requires_grad=True)
        Add.apply(a, b).sum().backward()
        return val(a.grad), val(b.grad)

    ok(program)
    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)


def test_backward_and_vjp_both_defined_or_neither():
    def program(T):
        class Both(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad

            @staticmethod
            def vjp(ctx, grad):
                return grad

        class Neither(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

        class OnlyVjp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def vjp(ctx, grad):
                return grad * 3

        x = T.ones(2, requires_grad=True)
        only_vjp = T.ones(2, requires_grad=True)
        OnlyVjp.apply(only_vjp).sum().backward()
        return (attempt(lambda: Both.apply(x).sum().backward()),
                attempt(lambda: Neither.apply(x).sum().backward()), val(only_vjp.grad))

    ok(program)


def test_function_vmap_default_raises():
    def program(T):
        class Square(T.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(*inputs)

        return (Square.generate_vmap_rule, hasattr(Square, "vmap"),
                attempt(lambda: Square.vmap(None, (0,), T.ones(2))))

    ok(program)


def test_materialize_non_diff_grads_off_leaves_none():
    def program(T):
        seen = []

        class Split(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, materialize):
                first, second = x.clone(), x.clone()
                ctx.mark_non_differentiable(second)
                ctx._materialize_non_diff_grads = materialize
                return first, second

            @staticmethod
            def backward(ctx, g0, g1):
                seen.append((val(g0), val(g1)))
                return g0 * 2, None

        for materialize in (False, True):
            a = T.tensor([1.0, 2.0], requires_grad=True)
            Split.apply(a, materialize)[0].sum().backward()
            seen.append(val(a.grad))
        return seen

    ok(program)


def test_autograd_functions_resize_and_torch_attribute():
    def program(T):
        import importlib

        functions = importlib.import_module(f"{T.__name__}.autograd._functions")
        x = T.arange(4.0, requires_grad=True)
        y = functions.Resize.apply(x, (2, 2))
        y.sum().backward()
        return (val(y), val(x.grad), attempt(lambda: functions.Resize.apply(x, (3,))),
                T.autograd.torch is T)

    ok(program)


# --- JAX interop: a Function whose forward/backward are JAX code ------------------------------

def test_function_wrapping_jax_code_matches_torch_composition():
    class JaxSoftplus(jaxgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            array = x.jax()
            ctx.save_for_backward(x)
            return jaxgrad.as_tensor(jax.nn.softplus(array))

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * jaxgrad.as_tensor(jax.nn.sigmoid(x.jax()))

    values = [-2.0, 0.0, 3.0]
    x = jaxgrad.tensor(values, dtype=jaxgrad.float64, requires_grad=True)
    with jax.enable_x64(True):  # the Function's own JAX code on float64: the user's x64 on
        y = JaxSoftplus.apply(x)
        y.sum().backward()
    import torch

    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    ty = torch.nn.functional.softplus(tx)
    ty.sum().backward()
    np.testing.assert_allclose(np.asarray(y.detach()), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-12)
    assert type(y.grad_fn).__name__ == "JaxSoftplusBackward"


def test_function_wrapping_a_jax_custom_vjp():
    @jax.custom_vjp
    def clip_gradient(a):
        return a

    def clip_fwd(a):
        return a, None

    def clip_bwd(_, g):
        return (jnp.clip(g, -1.0, 1.0),)

    clip_gradient.defvjp(clip_fwd, clip_bwd)

    class ClipGradient(jaxgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            array, ctx.pullback = jax.vjp(clip_gradient, x.jax())
            return jaxgrad.as_tensor(array)

        @staticmethod
        def backward(ctx, g):
            grad, = ctx.pullback(g.jax())
            return jaxgrad.as_tensor(grad)

    x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    (ClipGradient.apply(x) * jaxgrad.tensor([5.0, -0.5])).sum().backward()
    import torch

    expected = torch.clamp(torch.tensor([5.0, -0.5]), -1.0, 1.0)
    np.testing.assert_allclose(np.asarray(x.grad), expected.numpy())


def test_clear_saved_tensors_on_access():
    def program(T):
        class Once(T.autograd.Function):
            clear_saved_tensors_on_access = True

            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                seen.append(attempt(lambda: ctx.saved_tensors))
                return g * a

        seen = []
        x = leaf(T, [1.0, 2.0])
        y = Once.apply(x)
        first, second = attempt(lambda: y.grad_fn.saved_tensors), attempt(
            lambda: y.grad_fn.saved_tensors)
        z = Once.apply(x)
        z.sum().backward(retain_graph=True)
        return first, second, x.grad, attempt(lambda: z.sum().backward()), seen

    ok(program)


def test_boxed_grads_call_passes_one_mutable_list():
    def program(T):
        seen = []

        class Two(T.autograd.Function):
            boxed_grads_call = True

            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, grads):
                seen.append((type(grads).__name__, len(grads)))
                g0 = grads.pop(0)
                return g0 * 2 + grads[0] * 3

        x = leaf(T, [1.0, 2.0])
        a, b = Two.apply(x)
        (a.sum() + b.sum()).backward()
        return seen, x.grad

    ok(program)


def test_legacy_instantiation_warns_and_calling_raises():
    def program(T):
        class Legacy(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

        f = Legacy()
        return attempt(lambda: f(T.ones(1))), Legacy.clear_saved_tensors_on_access, \
            Legacy.boxed_grads_call, Legacy.generate_vmap_rule

    ok(program)
    got = [captured_warnings(program, lib) for lib in (torch, jaxgrad)]
    assert got[0] == got[1]


def test_inplace_function_is_a_function_with_an_inplace_flag():
    def program(T):
        from_module = T.autograd.function

        class Twice(from_module.InplaceFunction):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = T.ones(2, requires_grad=True)
        y = Twice.apply(x)
        y.sum().backward()
        flags = [Twice(inplace=True).inplace, Twice().inplace]
        return y, x.grad, flags, issubclass(Twice, T.autograd.Function)

    ok(program)
    assert [c for c, _ in captured_warnings(
        lambda T: T.autograd.function.InplaceFunction(True), jaxgrad)] == ["DeprecationWarning"]


def test_nested_io_function_fails_when_called_as_in_torch():
    def program(T):
        class Nested(T.autograd.function.NestedIOFunction):
            def forward_extended(self, a, b):
                return a * b

            def backward_extended(self, g):
                return g, g

        f = Nested()
        x = T.ones(2, requires_grad=True)
        f.save_for_backward(x, [x, (x,)])
        f.mark_dirty(x, k=x)
        f.mark_non_differentiable([x])
        kept = [len(f.to_save), len(f.dirty_tensors), len(f.non_differentiable)]
        return kept, attempt(lambda: f(x, x))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ok(program)


# --- views returned by custom Functions, mark_dirty checks -----------------------------------------

def _view_functions(T, calls):
    Function = T.autograd.Function

    class IdOneOutput(Function):
        @staticmethod
        def forward(ctx, a, make_view, pure_view):
            ctx._is_pure_view = pure_view
            return a.narrow(0, 0, 2) if make_view else a.clone()

        @staticmethod
        def backward(ctx, ga):
            calls.append("one")
            return ga, None, None

    class IdTwoOutput(Function):
        @staticmethod
        def forward(ctx, a, b, make_view, pure_view):
            ctx._is_pure_view = pure_view
            a = a.narrow(0, 0, 2) if make_view else a.clone()
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            calls.append("two")
            return ga + gab, gab, None, None

    class ViewOfTemp(Function):
        @staticmethod
        def forward(ctx, a, make_view, pure_view):
            ctx._is_pure_view = pure_view
            ctx.save_for_backward(a)
            a = a.narrow(0, 0, 2) if make_view else a.clone()
            return a.clone().select(0, 0)

        @staticmethod
        def backward(ctx, grad):
            calls.append("temp")
            (a,) = ctx.saved_tensors
            res = T.zeros_like(a)
            res.select(0, 0).copy_(grad)
            return res, None, None

    return IdOneOutput, IdTwoOutput, ViewOfTemp


@pytest.mark.parametrize("fn_id", ["one_output", "two_output", "view_of_temp"])
@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("make_view", [True, False])
@pytest.mark.parametrize("pure_view", [True, False])
def test_views_returned_by_custom_functions(fn_id, inplace, make_view, pure_view):
    """Views a custom Function returns are CreationMeta IN_CUSTOM_FUNCTION (in-place refused),
    or, for a pure view (``ctx._is_pure_view``), ordinary views whose in-place change replays
    as_strided instead of calling the custom backward; several differentiable outputs make
    MULTI_OUTPUT views."""
    def program(T):
        calls = []
        id_one, id_two, view_of_temp = _view_functions(T, calls)
        a = T.ones(2, dtype=T.double, requires_grad=True)
        b = T.ones(2, dtype=T.double, requires_grad=True)

        def run():
            x, y = a.clone(), b.clone()
            if fn_id == "two_output":
                out1, out2 = id_two.apply(x, y, make_view, pure_view)
                if inplace:
                    out1 += 3
                    out2 += 3
                else:
                    out1, out2 = out1 + 3, out2 + 3
                out = out1 * out2
            else:
                out = (id_one.apply(x, make_view, pure_view) if fn_id == "one_output"
                       else view_of_temp.apply(x + y, make_view, pure_view))
                if inplace:
                    out += 3
                else:
                    out = out + 3
            flags = type(out.grad_fn).__name__, out._is_view()
            out.sum().abs().backward()
            return flags

        return attempt(run), calls, val(a.grad), val(b.grad)

    ok(program)


def test_multi_output_and_input_views_of_custom_functions():
    def program(T):
        class Pair(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:1], x[1:]

            @staticmethod
            def backward(ctx, g1, g2):
                return T.cat([g1, g2])

        class Same(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = T.ones(3, requires_grad=True).clone()
        first, _rest = Pair.apply(x)
        same_out = Same.apply(x)
        return (attempt(lambda: first.add_(1)), attempt(lambda: same_out.add_(1)),
                first._is_view(), same_out._is_view())

    ok(program)


def _dirty_functions(T):
    Function = T.autograd.Function

    class NotAnInput(Function):
        @staticmethod
        def forward(ctx, a, b):
            c = 3 * a
            c.add_(b)
            ctx.mark_dirty(c)
            return c

        @staticmethod
        def backward(ctx, grad):
            return 3 * grad, grad

    class TwoOutputs(Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, ga + gab

    class NotReturned(Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a.clone(), a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, ga + 2 * gab

    class ViewOfIntermediate(Function):
        @staticmethod
        def forward(ctx, inp):
            out = inp.clone().view_as(inp)
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            return grad

    class AddOne(Function):
        @staticmethod
        def forward(ctx, inp):
            inp.add_(1)
            ctx.mark_dirty(inp)
            return inp

        @staticmethod
        def backward(ctx, grad):
            return grad

    return NotAnInput, TwoOutputs, NotReturned, ViewOfIntermediate, AddOne


def test_mark_dirty_checks():
    def program(T):
        _, two_outputs, not_returned, view_of_intermediate, add_one = \
            _dirty_functions(T)
        a = T.ones(2, requires_grad=True)
        b = T.ones(2, requires_grad=True)
        left, _right = a.clone().split_with_sizes([1, 1])
        c, d = two_outputs.apply(a.clone(), b)
        c += 2
        (c * d).sum().backward()
        return [attempt(lambda: two_outputs.apply(a.clone().view_as(a), b)),
                attempt(lambda: not_returned.apply(a.clone().view_as(a), b)),
                attempt(lambda: view_of_intermediate.apply(a.clone())),
                attempt(lambda: add_one.apply(a.view_as(a))),
                attempt(lambda: add_one.apply(left)),
                attempt(lambda: add_one.apply(a)),
                a.grad, b.grad]

    ok(program)
    assert captured_warnings(lambda T: _dirty_functions(T)[0].apply(
        T.ones(2, requires_grad=True).clone(), T.ones(2, requires_grad=True)), torch) == \
        captured_warnings(lambda T: _dirty_functions(T)[0].apply(
            T.ones(2, requires_grad=True).clone(), T.ones(2, requires_grad=True)), jaxgrad)


def test_pure_view_needs_one_input_and_one_output():
    def program(T):
        class Pure(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx._is_pure_view = True
                return a[:1]

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        x = T.ones(2, requires_grad=True)
        return attempt(lambda: Pure.apply(x, x)), attempt(lambda: Pure.apply(x, 2.0))

    ok(program)


def test_ctx_stashed_past_its_backward_and_input_returned_as_is():
    """An input saved and returned as-is is saved as the input (not as the output)."""
    def program(T):
        stashed = []

        class Id(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                stashed.append(ctx)
                return ctx.saved_tensors

        p = T.zeros(1, requires_grad=True)
        loss = Id.apply(p)
        loss.backward(retain_graph=True)
        del loss
        return attempt(lambda: stashed[0].saved_tensors), val(p.grad)

    ok(program)


def test_dirty_view_saved_for_backward_is_freed():
    import gc
    import weakref

    def program(T):
        class Test(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        def scope():
            x = T.tensor(1.0, requires_grad=True).clone()
            x = x.view_as(x)
            Test.apply(x)
            return weakref.ref(x)

        gc.disable()
        try:
            return scope()() is None
        finally:
            gc.enable()

    ok(program)
