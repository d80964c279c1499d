"""Selective activation checkpointing and ``TorchDispatchMode``, differential against torch:
which ops a policy sees, which ops run again in backward, values and gradients, the errors for
a mutated cache entry, a second backward and a bad policy; the ops a logging mode sees."""

from __future__ import annotations

import functools
import importlib

import pytest

from differential import op_log_mode, same

torch = pytest.importorskip("torch")


def _modes(T):
    return importlib.import_module(f"{T.__name__}.utils._python_dispatch")




def _block(T, x, w):
    h = (x * w).relu()
    return h, h.exp().sin() * h


FORWARD_ONLY = ("relu.default", "exp.default", "sin.default")  # (no backward formula runs them)


def _run(T, policy, twice=False, mutate=False):
    """Forward under checkpoint with ``policy``; the ops the policy saw, the ops the backward
    ran (the recomputation's), the output and the gradients."""
    ck = T.utils.checkpoint
    x = T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=T.float64, requires_grad=True)
    w = T.tensor([0.3, -0.2, 0.1], dtype=T.float64, requires_grad=True)
    seen = []

    def policy_fn(ctx, op, *args, **kwargs):
        seen.append((op.__name__, ctx.is_recompute))
        return policy(T, op)

    context_fn = functools.partial(ck.create_selective_checkpoint_contexts, policy_fn)
    h, out = ck.checkpoint(lambda a, b: _block(T, a, b), x, w, use_reentrant=False,
                           context_fn=context_fn)
    if mutate:
        with T.no_grad():
            h.mul_(1)
    counter = op_log_mode(T)
    with counter:
        out.sum().backward(retain_graph=twice)
    if twice:
        out.sum().backward()
    recomputed = [n for n in counter.ops if n in FORWARD_ONLY]
    return seen, recomputed, out, x.grad, w.grad


POLICIES = {
    "save_exp": lambda T, op: (T.utils.checkpoint.CheckpointPolicy.MUST_SAVE
                               if op == T.ops.aten.exp.default
                               else T.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE),
    "recompute_all": lambda T, op: T.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE,
    "save_all_bool": lambda T, op: True,
    "save_relu_sin": lambda T, op: op in (T.ops.aten.relu.default, T.ops.aten.sin.default),
    "offload_relu": lambda T, op: (T.utils.checkpoint.CheckpointPolicy.PREFER_CPU_OFFLOAD
                                   if op == T.ops.aten.relu.default
                                   else T.utils.checkpoint.CheckpointPolicy.MUST_RECOMPUTE),
}


@pytest.mark.parametrize("name", list(POLICIES))
def test_policy_decides_what_backward_recomputes(name):
    same(lambda T: _run(T, POLICIES[name]))


def test_list_of_ops_saves_them():
    def program(T):
        ck = T.utils.checkpoint
        x = T.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=T.float64, requires_grad=True)
        context_fn = functools.partial(ck.create_selective_checkpoint_contexts,
                                       [T.ops.aten.mm.default])
        out = ck.checkpoint(lambda a: (a @ a).exp().sin() @ a, x, use_reentrant=False,
                            context_fn=context_fn)
        counter = op_log_mode(T)
        with counter:
            out.sum().backward()
        # (x.grad's version: torch's engine accumulates out of place under a Python mode)
        return out, x.grad.clone(), [n for n in counter.ops if n in FORWARD_ONLY]

    same(program)


def test_backward_twice_and_mutated_cache_raise_as_torch():
    same(lambda T: _run(T, POLICIES["save_exp"], twice=True))
    same(lambda T: _run(T, POLICIES["save_all_bool"], mutate=True))


def test_bad_policies_raise_as_torch():
    def program(T):
        ck = T.utils.checkpoint
        errors = []
        for bad in ([T.ops.aten.mm], [lambda: None], 3):
            try:
                ck.create_selective_checkpoint_contexts(bad)
            except (ValueError, TypeError) as e:
                errors.append((type(e).__name__, str(e).split(" of type")[0].split(": ")[0]))
        return errors

    same(program)


def test_dispatch_mode_sees_ops_below_autograd():
    def program(T):
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        counter = op_log_mode(T)
        with counter:
            y = (x @ x.t()).sin().exp() * 2.0
            z = y.view(4).sum()
        inner = _modes(T)._get_current_dispatch_mode()
        z.backward()
        # (torch's autograd detaches what some nodes save, through the mode: not jaxgrad's)
        return (y, z, x.grad, [op for op in counter.ops if op != "detach.default"], inner,
                _modes(T).is_in_torch_dispatch_mode())

    same(program)


def test_modes_nest_innermost_first():
    def program(T):
        order = []

        def named(tag):
            class M(_modes(T).TorchDispatchMode):
                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    order.append((tag, func.__name__,
                                  len(_modes(T)._get_current_dispatch_mode_stack())))
                    return func(*args, **(kwargs or {}))
            return M()

        x = T.ones(2)
        with named("outer"), named("inner"):
            out = x.exp()
        return out, order

    same(program)


def test_modes_are_per_thread():
    def program(T):
        import threading

        x = T.ones(2)
        counter = op_log_mode(T)
        with counter:
            other = threading.Thread(target=lambda: x.sin())
            other.start()
            other.join(timeout=60)
            x.cos()
        return counter.ops

    same(program)
