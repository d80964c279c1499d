"""Differential tests of inference mode and inference tensors.

torch is the oracle for which tensors are inference tensors, their flags (requires_grad,
is_leaf, ``_is_view``), the errors of in-place updates, saving for backward and version
counters of inference tensors outside inference mode, and how views of inference and normal
tensors behave in and out of the mode.
"""

from __future__ import annotations

import pytest

from differential import attempt, ok


def flags(t):
    """What a user sees of a tensor's inference/autograd state (no ``_version``: inference
    tensors refuse it)."""
    return (t.is_inference(), t.requires_grad, t.is_leaf, t._is_view(),
            type(t.grad_fn).__name__ if t.grad_fn is not None else None)


def view_flags(t):
    """The flags of a view that must not have its grad_fn read (torch raises then)."""
    return t.is_inference(), t.requires_grad, t._is_view()


def version(t):
    return attempt(lambda: t._version)


def test_mode_flags_nested_and_decorator():
    def program(T):
        seen = [T.is_inference_mode_enabled()]
        with T.inference_mode():
            seen.append((T.is_inference_mode_enabled(), T.is_grad_enabled()))
            with T.inference_mode(False):
                seen.append((T.is_inference_mode_enabled(), T.is_grad_enabled()))
            seen.append(T.is_inference_mode_enabled())

        @T.inference_mode()
        def decorated(x):
            return T.is_inference_mode_enabled(), x * x

        @T.inference_mode
        def bare(x):
            return T.is_inference_mode_enabled(), x + 1

        inside, y = decorated(T.ones(2, requires_grad=True))
        inside_bare, z = bare(T.ones(2))
        return seen, inside, flags(y), T.is_inference(y), inside_bare, flags(z), \
            T.is_inference_mode_enabled()

    ok(program)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_tensors_made_inside(requires_grad):
    def program(T):
        with T.inference_mode():
            c = T.ones(1, 2, 3, requires_grad=requires_grad)
            made = [flags(c), flags(c * c), flags(c.view(-1)), flags(c[0]),
                    flags(c.unbind(1)[0]), flags(c.split(1, 2)[0])]
            c.add_(2)
            c.transpose_(0, 1)
            made.append(flags(c))
            made.append(flags(T.ones(2).requires_grad_(False)))
        return made, version(c)

    ok(program)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_inference_tensor_outside(requires_grad):
    """Out of the mode: functional ops give normal tensors, views stay inference tensors (not
    autograd views, leaves that do not require grad), in-place updates are refused."""
    def program(T):
        with T.inference_mode():
            c = T.ones(1, 2, 3, requires_grad=requires_grad)
        return (flags(c * 2), flags(c.view(-1)), flags(c.view(-1).view(2, 3)),
                flags(c.unbind(0)[0]), flags(c.detach()), flags(c.data),
                attempt(lambda: c.add_(1)), attempt(lambda: c.transpose_(0, 1)),
                attempt(lambda: c.resize_(1, 2)), attempt(lambda: c.requires_grad_()),
                version(c), version(c.view(-1)))

    ok(program)


def test_views_of_inference_tensors_share_storage():
    def program(T):
        with T.inference_mode():
            c = T.zeros(2, 3)
            c[0].add_(1)
            v = c.t()
        w = c[1]
        with T.inference_mode():
            w.mul_(0).add_(5)
            v[2].fill_(7.0)
        return c, flags(v)

    ok(program)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_normal_tensor_in_inference_mode(requires_grad):
    """A normal tensor stays normal: in-place ops keep tracking its version, its views made
    inside are views (created in inference mode), and using them outside is checked."""
    def program(T):
        s = T.ones(1, 2, 3, requires_grad=requires_grad)
        a = s.clone()
        out = a * a
        with T.inference_mode():
            a.add_(2)
            view = a.view(-1)
            view_of_view = view.view(2, 3)
            view_of_view.add_(1)
            inside = [flags(a), view_flags(view), view_flags(view_of_view), a._version,
                      view_of_view._version]
        after = [view_flags(view), attempt(lambda: view.add_(1)),
                 attempt(lambda: view.grad_fn), attempt(lambda: view_flags(view.view(2, 3)))]
        backward = attempt(lambda: out.backward(T.ones_like(out))) if requires_grad else None
        return inside, after, backward, version(a)

    ok(program)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_mixing_inference_and_normal_tensors(requires_grad):
    def program(T):
        s = T.ones(1, 2, 3, requires_grad=requires_grad)
        with T.inference_mode():
            c = T.ones(1, 2, 3, requires_grad=requires_grad)
            plain = T.ones(1, 2, 3)
        out = c.add(s)
        result = [flags(out), flags(plain.view_as(s)), flags(s.view_as(plain))]
        if requires_grad:
            out.backward(T.ones_like(out))
            result.append(c.grad)
        result += [attempt(lambda: c * s), attempt(lambda: T.stack([s, c])),
                   attempt(lambda: s.clone().mul_(plain)),
                   attempt(lambda: T.mul(s, s, out=plain))]
        return result

    ok(program)


def test_version_counter_of_inference_tensors():
    def program(T):
        with T.inference_mode():
            t = T.ones(2)
            inside = version(t)
        normal = T.ones(2)
        with T.inference_mode():
            normal.add_(1)
        return inside, version(t), version(t[0]), normal._version

    ok(program)
