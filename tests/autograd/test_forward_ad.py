"""Differential tests of forward-mode AD (``autograd.forward_ad``): levels, make_dual/unpack_dual
and their errors, tangents through ops, views and in-place ops, forward-over-reverse, and custom
Functions' ``jvp``. Tangents are compared by value and ``requires_grad`` (the ops torch's
formulas record on a tangent are not jaxgrad's single JVP op)."""

from __future__ import annotations

import copy
import gc
import weakref

import pytest
import torch

import jaxgrad
from differential import attempt, ok, same


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    for lib in (torch, jaxgrad):
        fw = lib.autograd.forward_ad
        while fw._current_level >= 0:
            fw.exit_dual_level()


def tan(t):
    """A tangent as compared: values and requires_grad (None stays None)."""
    return None if t is None else (t.detach().clone(), t.requires_grad)


def jvp_of(T, fn, *pairs):
    """``fn``'s outputs' (primal values, tangents) at dual inputs made from (primal, tangent)."""
    fw = T.autograd.forward_ad
    with fw.dual_level():
        out = fn(*[fw.make_dual(p, t) for p, t in pairs])
        outs = out if isinstance(out, tuple) else (out,)
        return [(fw.unpack_dual(o).primal.detach().clone(), tan(fw.unpack_dual(o).tangent))
                for o in outs]


def data(T, *shape, dtype=None, seed=0):
    n = 1
    for s in shape:
        n *= s
    values = [((i * 7 + seed * 3) % 11) / 5 - 1 for i in range(n)]
    return T.tensor(values, dtype=dtype or T.float64).reshape(shape)


# --- levels and errors ---------------------------------------------------------------------------

def test_levels_and_their_errors():
    def prog(T):
        fw = T.autograd.forward_ad
        out = [fw._current_level, attempt(fw.exit_dual_level)]
        with fw.dual_level() as level:
            out += [level, fw._current_level, attempt(fw.enter_dual_level),
                    attempt(lambda: fw.exit_dual_level(level=3))]
        out += [fw._current_level, fw.enter_dual_level()]
        fw.exit_dual_level(level=0)
        return out + [fw._current_level]
    ok(prog)


def test_dual_level_as_a_decorator():
    def prog(T):
        fw = T.autograd.forward_ad

        @fw.dual_level()
        def jvp_of_exp(x, v):
            return fw._current_level, tan(fw.unpack_dual(fw.make_dual(x, v).exp()).tangent)

        return jvp_of_exp(data(T, 2), data(T, 2, seed=1)), fw._current_level, jvp_of_exp.__name__
    ok(prog)


@pytest.mark.parametrize("case", ["no_level", "int_primal", "int_tangent", "both_int", "size",
                                  "size_broadcastable", "dual_of_dual", "tangent_is_dual",
                                  "level_not_entered"])
def test_make_dual_errors(case):
    def prog(T):
        fw = T.autograd.forward_ad
        x, t = T.ones(2, 2), T.ones(2, 2)
        i = T.ones(2, 2, dtype=T.long)
        if case == "no_level":
            return attempt(lambda: fw.make_dual(x, t))
        if case == "level_not_entered":
            return attempt(lambda: fw.make_dual(x, t, level=0))
        with fw.dual_level():
            dual = fw.make_dual(x, t)
            return attempt({
                "int_primal": lambda: fw.make_dual(i, t),
                "int_tangent": lambda: fw.make_dual(x, i),
                "both_int": lambda: fw.make_dual(i, i),
                "size": lambda: fw.make_dual(x, T.ones(3)),
                "size_broadcastable": lambda: fw.make_dual(x, T.ones(2)),
                "dual_of_dual": lambda: fw.make_dual(dual, t),
                "tangent_is_dual": lambda: fw.make_dual(T.ones(2, 2), dual),
            }[case])
    same(prog)


def test_unpack_dual_outside_a_level_and_of_a_non_tensor():
    def prog(T):
        fw = T.autograd.forward_ad
        x = T.ones(2, requires_grad=True)
        p, t = fw.unpack_dual(x)
        with fw.dual_level():
            number = attempt(lambda: fw.unpack_dual(3.0))
        return p is x, t, fw.unpack_dual(x, level=0).tangent, number, type(
            fw.unpack_dual(x)).__name__
    ok(prog)


# --- packing and unpacking -----------------------------------------------------------------------

def test_basic_packing_unpacking():
    def prog(T):
        fw = T.autograd.forward_ad
        foo, bar = data(T, 2), data(T, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            primal, tangent = fw.unpack_dual(dual)
            again = fw.unpack_dual(dual)
            inside = (primal.clone(), tangent is bar, again.primal is not primal,
                      again.tangent is bar, fw.unpack_dual(foo).tangent, dual._is_view(),
                      dual._base is foo, primal._base is foo)
        return inside, fw.unpack_dual(dual).tangent
    ok(prog)


def test_unpacked_primal_node_is_torchs_identity():
    """torch 2.13 gives an unpacked primal of a tensor with history a C++ ``Identity`` node
    (``CppFunction``), also for a custom Function's outputs; gradients flow through it."""

    def prog(T):
        fw = T.autograd.forward_ad

        class Double(T.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def jvp(ctx, t):
                return t * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        p = data(T, 2).requires_grad_()
        with fw.dual_level():
            x = fw.make_dual(p, T.ones(2))
            seen = []
            for out in (x * 2, x.view(2), x, Double.apply(x)):
                fn = fw.unpack_dual(out).primal.grad_fn
                seen.append((type(fn).__name__, fn.name(), [n.name() for n, _ in
                                                             fn.next_functions]))
            fw.unpack_dual(Double.apply(x)).primal.sum().backward()
        return seen, p.grad

    ok(prog)


def test_dual_shares_storage_and_version_counter():
    def prog(T):
        fw = T.autograd.forward_ad
        foo, bar = data(T, 2), T.ones(2)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            foo.add_(1)
            primal, tangent = fw.unpack_dual(dual)
            foo.add_(1)
            bar.add_(1)
            return (foo._version, dual._version, primal._version, tangent._version,
                    dual.clone(), primal.clone())
    ok(prog)


def test_make_dual_is_backward_differentiable():
    def prog(T):
        fw = T.autograd.forward_ad
        foo = data(T, 2).requires_grad_()
        bar = T.ones(2, dtype=T.float64, requires_grad=True)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            p, t = fw.unpack_dual(dual)
            g1 = T.autograd.grad(p.sum(), (foo, bar), retain_graph=True, allow_unused=True)
            g2 = T.autograd.grad(t.sum(), (foo, bar), retain_graph=True, allow_unused=True)
            return type(dual.grad_fn).__name__, dual.requires_grad, g1, g2
    ok(prog)


def test_make_dual_in_inference_mode():
    def prog(T):
        fw = T.autograd.forward_ad
        with T.inference_mode():
            foo, bar = data(T, 2), data(T, 2, seed=1)
            with fw.dual_level():
                dual = fw.make_dual(foo, bar)
                dual += 1
                inside = dual._is_view(), foo.clone(), tan(fw.unpack_dual(dual).tangent)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            x = fw.make_dual(data(T, 2), bar)
            with T.inference_mode():
                y = x * 2
            return inside, fw.unpack_dual(dual * 2).tangent, fw.unpack_dual(y).tangent
    ok(prog)


def test_level_exit_drops_tangents():
    def prog(T):
        fw = T.autograd.forward_ad
        foo, bar, baz = data(T, 2), data(T, 2, seed=1), data(T, 2, seed=2)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            y = dual * 2
        after = fw.unpack_dual(dual).tangent, fw.unpack_dual(y).tangent
        with fw.dual_level():
            new_dual = fw.make_dual(foo, baz)
            return after, fw.unpack_dual(dual).tangent, tan(fw.unpack_dual(new_dual).tangent)
    ok(prog)


# --- tangents through ops ------------------------------------------------------------------------

UNARY = {
    "exp": lambda x: x.exp(), "sin": lambda x: x.sin(), "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(), "log_abs": lambda x: x.abs().log(),
    "pow": lambda x: x ** 3, "rpow": lambda x: 2 ** x, "neg_div": lambda x: -x / 4,
    "sum": lambda x: x.sum(), "sum_dim": lambda x: x.sum(1, keepdim=True),
    "mean": lambda x: x.mean(0), "max_dim": lambda x: x.max(1),
    "softmax": lambda x: x.softmax(-1), "cumsum": lambda x: x.cumsum(0),
    "transpose": lambda x: x.t(), "reshape": lambda x: x.reshape(6),
    "narrow": lambda x: x.narrow(1, 1, 2), "index": lambda x: x[1:, [0, 2]],
    "expand": lambda x: x[:1].expand(4, 3), "clamp": lambda x: x.clamp(-0.5, 0.5),
    "relu": lambda x: x.relu(), "where": lambda x: x.where(x > 0, x * 3),
    "matmul": lambda x: x @ x.t(),
    "norm": lambda x: x.norm(), "sort": lambda x: x.sort(1),
    "to_float32": lambda x: x.float() * 2, "unbind": lambda x: x.unbind(1),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_tangent_of_op(name):
    ok(lambda T: jvp_of(T, UNARY[name], (data(T, 2, 3), data(T, 2, 3, seed=1))))


BINARY = {
    "mul": lambda x, y: x * y, "add_alpha": lambda x, y: x.add(y, alpha=3),
    "div": lambda x, y: x / (y + 3), "atan2": lambda x, y: x.atan2(y),
    "broadcast": lambda x, y: x[:1] * y, "maximum": lambda x, y: x.maximum(y),
    "linear": lambda x, y: jaxgrad_or_torch(x).nn.functional.linear(x, y),
    "cat": lambda x, y: jaxgrad_or_torch(x).cat([x, y], 1),
    "stack": lambda x, y: jaxgrad_or_torch(x).stack([x, y]),
}


def jaxgrad_or_torch(t):
    return jaxgrad if isinstance(t, jaxgrad.Tensor) else torch


@pytest.mark.parametrize("name", sorted(BINARY))
def test_tangent_of_binary_op(name):
    ok(lambda T: jvp_of(T, BINARY[name], (data(T, 2, 3), data(T, 2, 3, seed=1)),
                        (data(T, 2, 3, seed=2), data(T, 2, 3, seed=3))))


def test_inputs_without_tangent_count_as_zero_and_promotion():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(data(T, 3, dtype=T.float32), data(T, 3, seed=1, dtype=T.float32))
            y = x * data(T, 3, seed=2) + data(T, 3, seed=3)  # float32 dual, float64 plain
            return tan(fw.unpack_dual(y).tangent), tan(fw.unpack_dual(x * 0 + 1).tangent)
    ok(prog)


@pytest.mark.parametrize("name", ["abs", "mul", "exp", "sum"])
def test_complex_tangents(name):
    fn = {"abs": lambda x: x.abs(), "mul": lambda x: x * x, "exp": lambda x: x.exp(),
          "sum": lambda x: (x * x).sum()}[name]
    ok(lambda T: jvp_of(T, fn, (T.tensor([1 + 2j, -0.5 + 0.3j], dtype=T.complex64),
                                T.tensor([0.3 - 1j, 2 + 0.1j], dtype=T.complex64))))


def test_tangent_of_another_dtype_than_its_primal():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(data(T, 2, dtype=T.float32), data(T, 2, seed=1))
            e = fw.make_dual(data(T, 2), data(T, 2, seed=2, dtype=T.float32))
            return [tan(fw.unpack_dual(y).tangent) for y in (d, d * 2, d.exp(), e, e * 2)]
    ok(prog, rtol=1e-6)  # jaxgrad's JVP runs in the primal's precision, then widens


def test_non_differentiable_outputs_have_no_tangent():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(data(T, 2, 3), data(T, 2, 3, seed=1))
            return [tan(fw.unpack_dual(o).tangent) for o in (
                x == 0.2, x.argmax(), x.long(), x.max(1).indices, x.sort(1)[1], x > 0)]
    ok(prog)


def test_detach_and_no_grad():
    def prog(T):
        fw = T.autograd.forward_ad
        foo, bar = data(T, 2).requires_grad_(), data(T, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            detached = fw.unpack_dual(dual.detach() * 2)
            with T.no_grad():
                out = fw.unpack_dual(dual * 3)
            return (detached.primal.requires_grad, detached.tangent, out.primal.requires_grad,
                    tan(out.tangent), tan(fw.unpack_dual(dual.data).tangent))
    ok(prog)


def test_inplace_detach_drops_the_tangent():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(data(T, 2), data(T, 2, seed=1)).clone()
            dual.detach_()
            return fw.unpack_dual(dual * 2).tangent
    ok(prog)


def test_a_dual_keeps_its_tangent_alive_and_only_it():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            tangent = T.ones(2)
            ref = weakref.ref(tangent)
            dual = fw.make_dual(T.zeros(2), tangent)
            same_object = fw.unpack_dual(dual)[1] is tangent
            del tangent
            kept = ref() is not None
            del dual
            gc.collect()
            return same_object, kept, ref() is None
    ok(prog)


def test_deepcopy_carries_no_tangent():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(data(T, 2), data(T, 2, seed=1))
            c = copy.deepcopy(d)
            before = fw.unpack_dual(c).tangent
            c.mul_(fw.make_dual(data(T, 2, seed=2), data(T, 2, seed=3)))
            return before, tan(fw.unpack_dual(c).tangent), tan(fw.unpack_dual(d).tangent)
    ok(prog)


def test_fwd_grad_enabled_switch():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(data(T, 2), data(T, 2, seed=1))
            with fw._set_fwd_grad_enabled(False):
                off = fw._is_fwd_grad_enabled(), fw.unpack_dual(x * 2).tangent
            return off, fw._is_fwd_grad_enabled(), tan(fw.unpack_dual(x * 2).tangent)
    ok(prog)


# --- forward-over-reverse --------------------------------------------------------------------------

def test_tangents_carry_reverse_mode_history():
    def prog(T):
        fw = T.autograd.forward_ad
        a = data(T, 3).requires_grad_()
        v = data(T, 3, seed=1).requires_grad_()
        with fw.dual_level():
            out = (fw.make_dual(a, v).sin() * a).sum()
            p, t = fw.unpack_dual(out)
            grads = T.autograd.grad(t, (a, v), create_graph=True)
            return tan(t), [tan(g) for g in grads], T.autograd.grad(p, a)
    ok(prog)


def test_reverse_mode_through_inplace_ops_on_a_dual():
    def prog(T):
        fw = T.autograd.forward_ad
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x.clone(), T.ones(2))
            d.mul_(d.detach() + 1)
            d.sin_()
            t = fw.unpack_dual(d).tangent
            return tan(t), [tan(g) for g in T.autograd.grad(t.sum(), x)], d._version
    ok(prog)


def test_reverse_mode_through_custom_function_with_dual_input():
    def prog(T):
        class Func(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                ctx.save_for_backward(x, y)
                ctx.save_for_forward(x, y)
                ctx.z = z
                return z * x * y

            @staticmethod
            def jvp(ctx, x_t, y_t, _):
                x_p, y_p = ctx.saved_tensors
                return ctx.z * (y_p * x_t + x_p * y_t)

            @staticmethod
            def vjp(ctx, grad_out):
                x, y = ctx.saved_tensors
                return ctx.z * grad_out * y, ctx.z * grad_out * x, None

        fw = T.autograd.forward_ad
        a = T.tensor(1.0, requires_grad=True, dtype=T.float64)
        b = T.tensor(2.0, requires_grad=True, dtype=T.float64)
        with fw.dual_level():
            out = Func.apply(fw.make_dual(a, T.tensor(1.0, dtype=T.float64)), b, 4)
            tangent = tan(fw.unpack_dual(out).tangent)
            out.backward()
        return tangent, a.grad, b.grad
    ok(prog)


# --- views and in-place ----------------------------------------------------------------------------

def test_inplace_on_dual_updates_its_tangent_not_the_primal_base():
    def prog(T):
        fw = T.autograd.forward_ad
        foo, bar = data(T, 2), T.ones(2, dtype=T.float64)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            dual *= 2
            first = (fw.unpack_dual(foo).tangent, bar.clone(), bar._version, foo.clone())
            primal, tangent = fw.unpack_dual(dual)
            unpacked = fw.unpack_dual(primal).tangent, fw.unpack_dual(tangent).tangent
            primal *= 2
            after_primal = tan(fw.unpack_dual(dual).tangent), fw.unpack_dual(dual).primal.clone()
            tangent *= 2
            return first, unpacked, after_primal, tan(fw.unpack_dual(dual).tangent)
    ok(prog)


@pytest.mark.parametrize("cloned", [False, True])
def test_inplace_on_view_of_dual_updates_the_dual_tangent(cloned):
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            foo = data(T, 2).clone() if cloned else data(T, 2)
            bar = T.ones(2, dtype=T.float64)
            dual = fw.make_dual(foo, bar.clone() if cloned else bar)
            view = dual.narrow(0, 0, 1)
            view *= 2
            return (fw.unpack_dual(foo).tangent, tan(fw.unpack_dual(dual).tangent),
                    tan(fw.unpack_dual(view).tangent), fw.unpack_dual(view).tangent._is_view())
    ok(prog)


@pytest.mark.parametrize("how", ["iadd", "setitem", "detached", "copy_plain"])
def test_inplace_into_a_tensor_without_tangent(how):
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(data(T, 2), data(T, 2, seed=1))
            baz = data(T, 2, seed=2)
            if how == "iadd":
                baz += dual
            elif how == "setitem":
                baz[0] = dual[0]
            elif how == "detached":
                view = baz.detach()
                view += dual
            else:
                dual.copy_(baz)
                return tan(fw.unpack_dual(dual).tangent), dual.clone()
            return tan(fw.unpack_dual(baz).tangent), baz.clone()
    ok(prog)


@pytest.mark.parametrize("op", ["add_", "mul_", "copy_"])
def test_inplace_on_a_view_creates_tangent_views(op):
    def prog(T):
        fw = T.autograd.forward_ad
        base = data(T, 2, 2)
        view = base.transpose(0, 1)
        with fw.dual_level():
            dual = fw.make_dual(data(T, 2, 2, seed=1), data(T, 2, 2, seed=2))
            getattr(view, op)(dual)
            p, t = fw.unpack_dual(base)
            before = p.clone(), t.clone()
            view *= 2
            p, t = fw.unpack_dual(base)
            return before, p.clone(), tan(t), tan(fw.unpack_dual(view).tangent)
    ok(prog)


def test_view_made_before_its_base_got_a_tangent():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            base = data(T, 2, 3)
            row = base[1]
            base.mul_(fw.make_dual(data(T, 2, 3, seed=1), data(T, 2, 3, seed=2)))
            return tan(fw.unpack_dual(row).tangent), tan(fw.unpack_dual(row * 2).tangent)
    ok(prog)


def test_inplace_view_op_reshapes_the_tangent():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            tangent = data(T, 2, 3, seed=1)
            z = fw.make_dual(data(T, 2, 3), tangent)
            z.t_()
            return tuple(tangent.shape), tan(fw.unpack_dual(z).tangent), tan(
                fw.unpack_dual(z.unsqueeze_(0)).tangent)
    ok(prog)


def test_inplace_on_dual_whose_tangent_is_a_leaf_requiring_grad():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            y = fw.make_dual(data(T, 2), T.ones(2, dtype=T.float64, requires_grad=True))
            return attempt(lambda: y.mul_(2))
    same(prog)


# --- custom Functions --------------------------------------------------------------------------------

def test_custom_function_without_jvp():
    def prog(T):
        class Double(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        fw = T.autograd.forward_ad
        with fw.dual_level():
            plain = Double.apply(data(T, 2))
            return plain, attempt(lambda: Double.apply(fw.make_dual(data(T, 2), T.ones(2))))
    ok(prog)


def test_custom_function_jvp_receives_zeros_and_none():
    def prog(T):
        seen = []

        class MyFn(T.autograd.Function):
            @staticmethod
            def forward(ctx, nt, x, nt2, y, k):
                return x * 2 + y * 3

            @staticmethod
            def jvp(ctx, nt, x_t, nt2, y_t, k_t):
                seen.append((nt, tan(x_t), nt2, tan(y_t), k_t, len(ctx.saved_tensors)))
                return x_t * 2 + y_t * 3

        fw = T.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(T.tensor(1.0, dtype=T.float64), T.tensor(1.0, dtype=T.float64))
            out = MyFn.apply(1, x, 1, T.tensor(1.0, dtype=T.float64), T.tensor(2))
            return seen, tan(fw.unpack_dual(out).tangent)
    ok(prog)


@pytest.mark.parametrize("case", ["marked", "int_output", "wrong", "non_tensor", "count"])
def test_custom_function_non_differentiable_outputs(case):
    def prog(T):
        class Func(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                if case == "non_tensor":
                    return x.clone(), object(), x.clone()
                out = y.clone()
                if case in ("marked", "wrong"):
                    ctx.mark_non_differentiable(out)
                return x.clone(), out

            @staticmethod
            def jvp(ctx, x_t, y_t):
                if case == "non_tensor":
                    return x_t, None, x_t
                if case == "count":
                    return (x_t,)
                return x_t, (x_t.clone() if case == "wrong" else None)

        fw = T.autograd.forward_ad
        y = T.tensor(3) if case == "int_output" else T.tensor(3.0)
        with fw.dual_level():
            x = fw.make_dual(T.tensor(2.0), T.tensor(1.0))
            outs = attempt(lambda: Func.apply(x, y))
            if not isinstance(outs, tuple):
                return outs
            return [tan(fw.unpack_dual(o).tangent) if isinstance(o, T.Tensor) else None
                    for o in outs]
    same(prog)


@pytest.mark.parametrize("kind", ["view_as", "self", "mul_by_2"])
def test_custom_function_returning_an_input(kind):
    def prog(T):
        fn = {"view_as": lambda t: t.view_as(t), "self": lambda t: t,
              "mul_by_2": lambda t: t * 2}[kind]

        class MyFn(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y, x

            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t + y_t, fn(x_t)

        fw = T.autograd.forward_ad
        t = T.tensor(1.0, dtype=T.float64)
        with fw.dual_level():
            a = fw.make_dual(T.tensor(1.0, dtype=T.float64, requires_grad=True), t)
            outs = attempt(lambda: MyFn.apply(a, T.tensor(1.0, dtype=T.float64)))
            if not isinstance(outs, tuple):
                return outs
            return fw.unpack_dual(outs[1]).tangent._base is t, tan(fw.unpack_dual(outs[0]).tangent)
    same(prog)


@pytest.mark.parametrize("flag", ["ok", "not_a_view", "not_a_view_of_inp",
                                  "not_a_view_of_inp_base"])
def test_custom_function_view_output_needs_a_view_tangent(flag):
    def prog(T):
        class ViewFn(T.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo.narrow(0, 0, 2)

            @staticmethod
            def jvp(ctx, g):
                res = g.narrow(0, 0, 2)
                if flag != "ok":
                    res = res.clone()
                if flag in ("not_a_view_of_inp", "not_a_view_of_inp_base"):
                    res = res.view_as(res)
                return res

        fw = T.autograd.forward_ad
        with fw.dual_level():
            inp = fw.make_dual(data(T, 4, 2), data(T, 4, 2, seed=1))
            if flag == "not_a_view_of_inp_base":
                inp = inp.view_as(inp)
            out = attempt(lambda: ViewFn.apply(inp))
            if not isinstance(out, T.Tensor):
                return out
            return tan(fw.unpack_dual(out).tangent), fw.unpack_dual(out).tangent._is_view()
    same(prog)


@pytest.mark.parametrize("modifies", [True, False])
def test_custom_function_inplace_jvp(modifies):
    def prog(T):
        class InplaceMul(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def jvp(ctx, x_t):
                return x_t.mul_(2) if modifies else x_t

        fw = T.autograd.forward_ad
        x = T.tensor(1.0, requires_grad=True).clone()
        with fw.dual_level():
            tangent = T.ones_like(x)
            dual = fw.make_dual(x, tangent)
            out = attempt(lambda: InplaceMul.apply(dual))
            if not isinstance(out, T.Tensor):
                return out
            return out is dual, fw.unpack_dual(out).tangent is tangent, tan(tangent), x.clone()
    same(prog)


def test_custom_function_setup_context_and_save_for_forward():
    def prog(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(x, w):
                return x * w

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(*inputs)
                ctx.save_for_backward(inputs[1])

            @staticmethod
            def jvp(ctx, x_t, w_t):
                x, w = ctx.saved_tensors
                return x_t * w + x * w_t

            @staticmethod
            def backward(ctx, g):
                w, = ctx.saved_tensors
                return g * w, None

        fw = T.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(data(T, 3), data(T, 3, seed=1))
            w = fw.make_dual(data(T, 3, seed=2), data(T, 3, seed=3))
            return tan(fw.unpack_dual(Scale.apply(x, w)).tangent)
    ok(prog)


# --- out=, printing, non-differentiable and in-place comparison ops -----------------------------

@pytest.mark.parametrize("case", ["dual_out", "dual_input", "plain", "unary_dual_out"])
def test_out_variant_refuses_tangents_once_written(case):
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(T.zeros(2), T.tensor([0.5, 0.25]))
            plain, out = T.ones(2), T.zeros(2)
            call = {"dual_out": lambda: T.add(plain, plain, out=dual),
                    "dual_input": lambda: T.add(dual, plain, out=out),
                    "plain": lambda: T.add(plain, plain, out=out),
                    "unary_dual_out": lambda: T.exp(plain, out=dual)}[case]
            result = attempt(call)
            return (result if not isinstance(result, T.Tensor) else result.clone(),
                    dual.detach().clone(), out.clone(), dual._version, out._version,
                    tan(fw.unpack_dual(out).tangent))
    same(prog)


def test_dual_tensors_print_their_tangent():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            a = data(T, 2, 3)
            b = fw.make_dual(a, data(T, 2, 3, seed=1))
            primal, tangent = fw.unpack_dual(b)
            x = fw.make_dual(T.tensor([1.5, 2.0]), T.tensor([0.5, 1.0]))
            inside = [str(a), str(b), str(primal), str(tangent), str(b[0]), str(x[1]),
                      repr(b * 2).split("tangent=")[0]]
        return inside, str(b)
    (inside, _), _ = ok(prog)
    assert "tangent=" in inside[1]


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_not_",
                                  "logical_and_"])
def test_in_place_comparisons_and_logical_ops_on_a_dual(name):
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            foo = fw.make_dual(data(T, 3), data(T, 3, seed=1))
            other = data(T, 3, seed=2)
            eq = foo == other
            result = getattr(foo, name)() if name == "logical_not_" else getattr(foo, name)(
                other)
            return eq, result is foo, foo.detach().clone(), tan(fw.unpack_dual(foo).tangent)
    ok(prog)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("other", ["float_tensor", "int_tensor", "int", "float", "0-dim"])
def test_in_place_comparisons_write_truth_values_in_self_dtype(dtype, other):
    def prog(T):
        values = {"float_tensor": T.tensor([1.5, 1.0]), "int_tensor": T.tensor([1, 0]),
                  "int": 1, "float": 1.0, "0-dim": T.tensor(1.0, dtype=T.float64)}[other]
        out = []
        for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_"):
            x = T.tensor([1, 2], dtype=getattr(T, dtype))
            out.append((attempt(lambda x=x, name=name: getattr(x, name)(values)), x._version))
        return out
    ok(prog)


@pytest.mark.parametrize("other", ["tensor", "number", "0-dim"])
def test_in_place_comparison_backward_is_zero(other):
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor([1.0, 3.0], requires_grad=True)
        operand = {"tensor": w, "number": 1.5, "0-dim": T.tensor(1.5)}[other]
        y = x * 1
        y.lt_(operand)
        y.sum().backward()
        leaf_error = attempt(lambda: x.eq_(operand))
        # (values: the version of gradient tensors is not compared here)
        return (x.grad.clone(), None if w.grad is None else w.grad.clone(),
                type(y.grad_fn).__name__, len(y.grad_fn.next_functions), leaf_error)
    ok(prog)


def test_make_dual_copies_a_tangent_laid_out_unlike_its_primal():
    def prog(T):
        fw = T.autograd.forward_ad
        primal = T.arange(5.0)[:4].detach()
        tangent = T.arange(4.0) + 10
        with fw.dual_level():
            dual = fw.make_dual(primal, tangent)
            unpacked = fw.unpack_dual(dual).tangent
            unpacked *= 2
            return (unpacked is tangent, unpacked._base is None, unpacked.stride(),
                    tangent.clone(), tan(fw.unpack_dual(dual * 3).tangent))
    ok(prog)


@pytest.mark.parametrize("fn", ["exp", "tanh", "sigmoid", "sqrt"])
def test_forward_over_reverse_through_a_saved_result(fn):
    # the backward of these uses the saved output: unpacked, it carries the output's tangent
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(T.tensor([0.5, 2.0], dtype=T.float64, requires_grad=True),
                             T.tensor([1.0, -1.0], dtype=T.float64))
            y = getattr(x, fn)()
            g, = T.autograd.grad(y, x, T.ones(2, dtype=T.float64), create_graph=True)
            detached = tan(fw.unpack_dual(y.grad_fn._saved_result.detach()).tangent)
            return g.detach().clone(), tan(fw.unpack_dual(g).tangent), detached
    ok(prog)
