"""Fixes found while writing notebooks/02_autograd_tour.ipynb: grad mode inside inference mode.

Inference mode keeps autograd off whatever the grad mode says: inside ``inference_mode`` an
``enable_grad`` (or ``set_grad_enabled(True)``) block reports ``is_grad_enabled() == True`` but
records nothing (torch's InferenceMode excludes the autograd dispatch key), and leaving the
blocks restores both modes.
"""

from __future__ import annotations

from differential import attempt, ok


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
