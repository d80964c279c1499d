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


# --- grad mode inside inference mode --------------------------------------------------------------
# Inference mode keeps autograd off whatever the grad mode says: inside ``inference_mode`` an
# ``enable_grad`` (or ``set_grad_enabled(True)``) block reports ``is_grad_enabled() == True`` but
# records nothing (torch's InferenceMode excludes the autograd dispatch key), and leaving the
# blocks restores both modes.

def test_enable_grad_inside_inference_mode_records_nothing():
    def program(T):
        with T.inference_mode():
            before = T.is_grad_enabled()
            with T.enable_grad():
                inside = T.is_grad_enabled(), T.is_inference_mode_enabled()
                x = T.ones(2, requires_grad=True)
                y = x * 2
                z = T.ones(2) * x
            after = T.is_grad_enabled()
        return (before, inside, after, T.is_grad_enabled(), T.is_inference_mode_enabled(),
                x.requires_grad, x.is_inference(), y.requires_grad, y.grad_fn, y.is_inference(),
                z.requires_grad, z.grad_fn)

    ok(program)


def test_set_grad_enabled_inside_inference_mode_records_nothing():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.inference_mode():
            with T.set_grad_enabled(True):
                y = x * 2
                mode = T.is_grad_enabled()

            @T.enable_grad()
            def f(t):
                return t * 3, T.is_grad_enabled()

            z, mode_f = f(x)
        return mode, y.requires_grad, y.grad_fn, y.is_inference(), z.requires_grad, mode_f

    ok(program)


def test_inference_mode_false_inside_enable_grad_inside_inference_mode_records():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.inference_mode(), T.enable_grad():
            with T.inference_mode(False):
                y = x * 2
                modes = T.is_grad_enabled(), T.is_inference_mode_enabled()
            w = x * 2
        y.sum().backward()
        return modes, y.requires_grad, y.grad_fn, x.grad, w.requires_grad, T.is_grad_enabled()

    ok(program)


def test_numpy_follows_grad_mode_inside_inference_mode():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.inference_mode():
            refused_off = attempt(lambda: x.numpy().tolist())
            with T.enable_grad():
                refused_on = attempt(lambda: x.numpy().tolist())
        return refused_off, refused_on

    ok(program)


def test_backward_inside_inference_mode_with_enable_grad():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        with T.inference_mode(), T.enable_grad():
            y.backward(create_graph=True)
        return x.grad, x.grad.requires_grad, x.grad.grad_fn

    ok(program)


def test_inplace_on_leaf_inside_inference_mode_with_enable_grad():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.inference_mode(), T.enable_grad():
            r = attempt(lambda: x.add_(1))
        return r if not isinstance(r, T.Tensor) else None, x, x._version, x.grad_fn, x.is_leaf

    ok(program)


# --- in-place ops on an inference tensor outside inference mode -----------------------------------
# torch refuses them when the version counter is bumped, which is after the kernel wrote: the
# tensor keeps the new values (or the new shape, for in-place view ops, ``resize_``, ``set_``)
# and the error follows, with no history recorded.

UPDATES = {
    "add_": lambda T, k, x: k.add_(1),
    "add_ requiring-grad other": lambda T, k, x: k.add_(x),
    "mul_ requiring-grad other": lambda T, k, x: k.mul_(x),
    "setitem": lambda T, k, x: k.__setitem__(0, 5.0),
    "fill_": lambda T, k, x: k.fill_(7),
    "zero_": lambda T, k, x: k.zero_(),
    "copy_": lambda T, k, x: k.copy_(T.zeros(2, 3)),
    "clamp_": lambda T, k, x: k.clamp_(max=0.5),
    "through a view": lambda T, k, x: k[1:].add_(1),
    "index_put_": lambda T, k, x: k.index_put_((T.tensor([0]),), T.tensor([9.0])),
    "out=": lambda T, k, x: T.exp(T.zeros(2, 3), out=k),
    "t_": lambda T, k, x: k.t_(),
    "unsqueeze_": lambda T, k, x: k.unsqueeze_(0),
    "transpose_": lambda T, k, x: k.transpose_(0, 1),
    "as_strided_": lambda T, k, x: k.as_strided_((3,), (1,)),
    "resize_": lambda T, k, x: k.resize_(3),
    "set_": lambda T, k, x: k.set_(T.zeros(4)),
}


@pytest.mark.parametrize("name", UPDATES)
def test_inplace_on_inference_tensor_writes_then_raises(name):
    def program(T):
        with T.inference_mode():
            k = T.ones(2, 3)
        x = T.full((2, 3), 2.0, requires_grad=True)
        error = attempt(lambda: UPDATES[name](T, k, x))
        # (values as a list: torch's clone of an inference tensor starts at _version 1)
        return error, k.tolist(), tuple(k.shape), k.stride(), k.requires_grad, k.grad_fn is None

    ok(program)


@pytest.mark.parametrize("name", ["add_", "transpose_", "unsqueeze_", "resize_", "set_"])
def test_inference_tensor_requiring_grad(name):
    """A leaf inference tensor that requires grad: the leaf check refuses ``add_``/``set_``
    first (nothing changes); in-place view ops and ``resize_`` change it, then raise."""
    def program(T):
        with T.inference_mode():
            k = T.ones(1, 2, 3, requires_grad=True)
        error = attempt(lambda: UPDATES[name](T, k, None))
        return error, k.tolist(), tuple(k.shape), k.stride(), k.requires_grad

    ok(program)


def test_inplace_inside_inference_mode_and_on_a_clone_still_work():
    def program(T):
        with T.inference_mode():
            k = T.ones(3)
            k.add_(1).unsqueeze_(0)
        c = k * 1
        c.mul_(3)
        return k.tolist(), c, c._version

    ok(program)
