"""Differential tests: custom Function corners (saved_variables, backward and vjp both, the vmap
default, _materialize_non_diff_grads), grad-mode class decoration, the create_graph backward
warning, node pre-hook gradients stolen by AccumulateGrad, calling a grad_fn, the
multithreading switch, deep reentrant backward and autograd._functions.
"""

from __future__ import annotations

import sys
import warnings

import pytest
import torch

import jaxgrad
from differential import attempt, captured_warnings, ok, val


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


def test_grad_mode_decorating_a_class_warns_and_constructs_in_the_mode():
    def program(T):
        modes = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @T.no_grad()
            class Built:
                def __init__(self):
                    modes.append(T.is_grad_enabled())

                def method(self):
                    modes.append(T.is_grad_enabled())

            Built().method()

            @T.enable_grad()
            def function():
                modes.append(T.is_grad_enabled())

            with T.no_grad():
                function()
        return modes, [(w.category.__name__, str(w.message)) for w in caught]

    ok(program)


def test_backward_with_create_graph_warns_after_running_and_grad_does_not():
    def program(T):
        T.set_warn_always(True)
        try:
            log = []
            b = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
            y = b * b
            y.register_hook(lambda g: log.append("hook"))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                y.sum().backward(create_graph=True)
                log.extend(str(w.message) for w in caught)
            b.grad = None
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                T.autograd.grad((b * b).sum(), b, create_graph=True)
                (b * 2).sum().backward()
                log.append(attempt(lambda: T.ones(2).sum().backward(create_graph=True)))
                log.extend(str(w.message) for w in caught)
            b.grad = None
            return log
        finally:
            T.set_warn_always(False)

    ok(program)


def test_gradient_from_a_node_pre_hook_is_stolen_by_accumulate_grad():
    def program(T):
        calls = []
        tensor = T.ones(3, requires_grad=True)
        acc = tensor.view_as(tensor).grad_fn.next_functions[0][0]

        def acc_post_hook(grad_in, grad_out):
            calls.append(("acc post", val(grad_out[0])))
            tensor.grad = grad_out[0].mul(10)

        def post_accumulate_hook(t):
            calls.append("post acc")
            t.grad.add_(0.5)

        tensor.register_hook(lambda g: calls.append("tensor pre") or g.sub(2.0))
        acc.register_prehook(lambda g: calls.append("acc pre") or (g[0].div(5.0),))
        tensor.register_post_accumulate_grad_hook(post_accumulate_hook)
        acc.register_hook(acc_post_hook)
        tensor.sum().backward()
        return calls, val(tensor.grad)

    ok(program)


def test_calling_a_grad_fn_checks_its_arguments():
    def program(T):
        x = T.tensor([1.5], requires_grad=True)
        y = x ** 2
        acc = (x * 1).grad_fn.next_functions[0][0]
        with T.no_grad():
            right = y.grad_fn(T.ones(1))
        return (attempt(lambda: y.grad_fn(x.detach(), x.detach())),
                attempt(lambda: y.grad_fn()), attempt(lambda: y.grad_fn(3)),
                attempt(lambda: acc()), val(right), y.grad_fn(None))

    ok(program)


def test_set_multithreading_enabled_as_function_and_context_manager():
    def program(T):
        seen = [T.autograd.is_multithreading_enabled()]
        with T.autograd.set_multithreading_enabled(False):
            seen.append(T.autograd.is_multithreading_enabled())
            T.autograd.set_multithreading_enabled(True)
            seen.append(T.autograd.is_multithreading_enabled())
        seen.append(T.autograd.is_multithreading_enabled())
        T.autograd.set_multithreading_enabled(False)
        seen.append(T.autograd.is_multithreading_enabled())
        x = T.tensor([2.0], requires_grad=True)
        (x * x).sum().backward()
        T.autograd.set_multithreading_enabled(True)
        return seen, val(x.grad), type(T.autograd.set_multithreading_enabled).__name__

    ok(program)


def deep_reentrant(T, depth):
    class DeepReentrant(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with T.enable_grad():
                ctx.x = T.autograd.Variable(x.detach(), requires_grad=True) - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, grad):
            if ctx.x < 0:
                return grad
            with T.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return grad

    v = T.tensor(float(depth), requires_grad=True)
    DeepReentrant.apply(v).sum().backward()
    return val(v.grad)


def test_deep_reentrant_backward_does_not_exhaust_the_python_stack():
    limit = sys.getrecursionlimit()
    ok(lambda T: deep_reentrant(T, 500))  # about 10 Python frames a level: past the limit
    assert sys.getrecursionlimit() == limit  # the room made for it is given back


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


def test_repr_of_a_no_grad_view_modified_in_place_and_volatile():
    def program(T):
        a = T.ones(1, requires_grad=True)
        with T.no_grad():
            b = a[:]
            b *= 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            volatile = a.volatile
        return repr(b), repr(a), volatile, [str(w.message) for w in caught]

    ok(program)


def test_saved_original_detached_in_place_raises_on_every_backward_path():
    def program(T):
        a = T.tensor(1.0, requires_grad=True).clone()
        b = a.sin()  # saves its input, the original tensor
        a.detach_()
        raised = attempt(lambda: b.backward())
        c = T.tensor(1.0, requires_grad=True).clone()
        d = c.exp()  # saves its output: detaching the input is fine
        c.detach_()
        d.backward()
        return raised, d.grad_fn is not None

    ok(program)


def test_a_gradient_handed_to_two_leaves_is_stolen_by_the_last_one_only():
    """torch's AccumulateGrad steals a gradient only once nothing else holds it: of two leaves
    a custom Function hands one tensor to, the first copies it, the second steals it; a
    non-contiguous gradient (an expand) is copied by both."""

    def program(T):
        pointers = []

        class Both(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a + b

            @staticmethod
            def backward(ctx, grad):
                pointers.append(grad.data_ptr())
                return grad, grad

        class Expanded(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.size = x.size()
                return T.tensor([1.0])

            @staticmethod
            def backward(ctx, grad):
                return T.ones(1).expand(ctx.size)

        a = T.ones(5, 6, requires_grad=True)
        b = T.ones(5, 6, requires_grad=True)
        out = []
        def hooked():
            w = b * 1
            w.register_hook(lambda g: g * 1)
            Both.apply(a, w)[1][0].backward()

        def into_a_node_and_a_leaf():
            Both.apply(a, b.exp())[1][0].backward()

        def twice_to_one_leaf():
            Both.apply(a, a)[1][0].backward()

        for run in (lambda: Expanded.apply(Both.apply(a, b)).backward(),
                    lambda: Both.apply(a, b)[1][0].backward(),
                    lambda: (Both.apply(a, b) * 2)[1][0].backward(),
                    hooked, into_a_node_and_a_leaf, twice_to_one_leaf):
            a.grad = b.grad = None
            run()
            out.append([None if g is None else (g.data_ptr() == pointers[-1], g._version, val(g))
                        for g in (a.grad, b.grad)])
        return out

    ok(program)


def test_accumulate_grad_is_named_as_torchs_cpp_class():
    """``name()`` of a leaf's AccumulateGrad is torch's C++ class name (hooks key on it)."""
    def program(T):
        x = T.ones(2, requires_grad=True)
        acc = (x * 2).grad_fn.next_functions[0][0]
        names = []
        acc.register_prehook(lambda g: names.append(f"pre_{acc.name()}"))
        acc.register_hook(lambda gi, go: names.append(f"post_{acc.name()}"))
        (x * 2).sum().backward()
        return acc.name(), type(acc).__name__, names

    ok(program)


@pytest.mark.parametrize("build", [
    lambda x: (x + x.mT) / 2, lambda x: x + x.mT, lambda x: (x + x.t()).exp(),
    lambda x: x.exp() + x.mT.exp(), lambda x: (x + x.permute(1, 0)) * 3,
    lambda x: (x + x.view(9).view(3, 3)) * 3, lambda x: x * x, lambda x: x + x])
def test_a_gradient_summed_with_a_view_of_itself_is_summed_out_of_place(build):
    """One gradient handed to a leaf and to a view node: the view node's output is a view of it
    (torch's storage use_count is two), so the leaf's buffer is a new sum, stolen: version 0."""
    def program(T):
        x = T.ones(3, 3, dtype=T.float64, requires_grad=True)
        build(x).sum().backward()
        return x.grad, x.grad._version
    ok(program)


def test_create_graph_hands_an_unchanged_gradient_on_as_the_same_tensor():
    """Under create_graph, add's (and clone's, sub's self) gradient is the incoming gradient
    itself, as torch's formula returns ``grad``: no new node."""
    def program(T):
        x = T.ones(3, requires_grad=True)
        a, b = x * 2, x * 3
        v = T.ones(3, requires_grad=True) * 1
        ga, gb = T.autograd.grad(a + b, (a, b), grad_outputs=v, create_graph=True)
        sa, _ = T.autograd.grad(a - b, (a, b), grad_outputs=v, create_graph=True)
        (gc,) = T.autograd.grad(a.clone(), a, grad_outputs=v, create_graph=True)
        return ga is gb, ga is v, sa is v, gc is v, ga.grad_fn.name()
    ok(program)
