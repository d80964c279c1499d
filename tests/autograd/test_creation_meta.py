"""Differential matrix of torch's view rules (CreationMeta): views made in grad mode, under
no_grad or inference_mode, outputs of multi-output views (split/chunk/unbind), views of views,
views returned by custom Functions, of bases that are leaves requiring grad, non-leaves or
plain tensors; then, under grad mode, no_grad or inference_mode, one use of the view: an
in-place op on it, on its base or on a view of it, ``grad_fn``, ``register_hook``,
``retain_grad``, ``requires_grad_``, ``detach_``, backward through it. Every step's result or
error (torch's texts: "A view was created in no_grad mode and is being modified inplace...",
"Output 0 of SplitBackward0 is a view and ...") is compared with torch, as are the flags,
versions and gradients afterwards.
"""

from __future__ import annotations

import contextlib
import itertools

import pytest

from differential import attempt, same

MODES = ["grad", "no_grad", "inference"]
BASES = ["leaf_rg", "nonleaf", "leaf_plain"]
VIEWS = ["slice", "view", "t", "expand_select", "unbind", "split", "chunk", "split_last",
         "custom_view", "custom_input", "view_of_view", "detach"]
OPS = ["inplace_view", "inplace_base", "grad_fn", "register_hook", "retain_grad",
       "requires_grad_", "detach_", "backward", "inplace_base_then_backward",
       "view_of_view_inplace"]
USES = ["grad", "no_grad", "inference"]


def _mode(T, mode):
    return {"grad": contextlib.nullcontext(), "no_grad": T.no_grad(),
            "inference": T.inference_mode()}[mode]


def _done(f):
    """Run ``f`` for its effect: "ok" or the error (in-place ops return the view itself)."""
    return attempt(lambda: (f(), "ok")[1])


def _functions(T):
    class ViewFn(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2)

    class IdFn(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    return ViewFn, IdFn


def _make_view(T, b, view):
    ViewFn, IdFn = _functions(T)
    return {
        "slice": lambda: b[1:],
        "view": lambda: b.view(-1),
        "t": lambda: b.t(),
        "expand_select": lambda: b.expand(2, 2, 2)[0],
        "unbind": lambda: b.unbind(0)[0],
        "split": lambda: b.split(1)[0],
        "chunk": lambda: b.chunk(2)[0],
        "split_last": lambda: b.split(1)[1],
        "custom_view": lambda: ViewFn.apply(b),
        "custom_input": lambda: IdFn.apply(b),
        "view_of_view": lambda: b[0:2][1:],
        "detach": lambda: b.detach(),
    }[view]()


def _use(T, op, v, b, log):
    if op == "inplace_view":
        log.append(_done(lambda: v.mul_(2)))
    elif op == "inplace_base":
        log.append(_done(lambda: b.mul_(2)))
    elif op == "grad_fn":
        log.append(attempt(lambda: v.grad_fn))
    elif op == "register_hook":
        log.append(_done(lambda: v.register_hook(lambda g: None)))
    elif op == "retain_grad":
        log.append(_done(v.retain_grad))
    elif op == "requires_grad_":
        log.append(_done(v.requires_grad_))
    elif op == "detach_":
        log.append(_done(v.detach_))
    elif op == "backward":
        log.append(_done(lambda: (v * 2).sum().backward()))
    elif op == "inplace_base_then_backward":
        log.append(_done(lambda: b.add_(1)))
        log.append(attempt(lambda: v.grad_fn))
        log.append(_done(lambda: (v * 2).sum().backward()))
    elif op == "view_of_view_inplace":
        log.append(_done(lambda: v[0:1].mul_(2)))


def program_for(mode, base, view, op, use):
    def program(T):
        log = []
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=base != "leaf_plain")
        b = x * 1 if base == "nonleaf" else x
        if view == "view_of_view":  # the outer view in the mode, the inner one in grad mode
            with _mode(T, mode):
                outer = b[0:2]
            v = outer[1:]
        else:
            with _mode(T, mode):
                v = _make_view(T, b, view)
        log.append(("made", v.requires_grad, v.is_leaf, v._is_view(),
                    None if v.is_inference() else v._version))
        with _mode(T, use):
            _use(T, op, v, b, log)
        log.append(attempt(lambda: v.grad_fn))
        log.append(attempt(lambda: (v.requires_grad, v.is_leaf)))
        log.append(_done(lambda: (v.sum() * 1).backward()))
        log.append(None if x.grad is None else x.grad.detach().clone())
        log.append((v.detach().clone(), v.requires_grad,
                    attempt(lambda: v._version), attempt(lambda: v.grad)))
        return log

    return program


@pytest.mark.parametrize(("mode", "base", "view"), list(itertools.product(MODES, BASES, VIEWS)))
def test_creation_meta_matrix(mode, base, view):
    for op, use in itertools.product(OPS, USES):
        same(program_for(mode, base, view, op, use))
