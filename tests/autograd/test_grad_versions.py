"""``.grad`` identity and ``_version`` after accumulation: torch steals an exclusively owned,
dense gradient (keeping its version) and otherwise copies it (version 1); its input buffers add
in place when they can. These are the common cases, each checked against torch through both the
compiled and the eager engine."""

from __future__ import annotations

import pytest

from differential import ok, same, val
from jaxgrad._engine import engine as _engine

CASES = {
    "mul then sum": lambda T, x: (x * 2).sum().backward(),
    "scalar root through add": lambda T, x: (x.sum() + 1).backward(),
    "sum root": lambda T, x: x.sum().backward(),
    "mul with user gradient": lambda T, x: (x * 1).backward(T.ones(2, 3)),
    "add with user gradient": lambda T, x: (x + 1).backward(T.ones(2, 3)),
    "leaf as root": lambda T, x: x.backward(T.ones(2, 3)),
    "x + x": lambda T, x: (x + x).sum().backward(),
    "x * x": lambda T, x: (x * x).sum().backward(),
    "two uses": lambda T, x: (x.exp() + x.sin()).sum().backward(),
    "three uses": lambda T, x: (x.exp() + x.sin() + x.cos()).sum().backward(),
    "hook returns a new tensor": lambda T, x: (x.register_hook(lambda g: g * 2),
                                               (x * 2).sum().backward()),
    "expand": lambda T, x: x.expand(3, 2, 3).sum().backward(),
    "view": lambda T, x: x.view(6).sum().backward(),
    "clone": lambda T, x: x.clone().sum().backward(),
    "mean": lambda T, x: x.mean().backward(),
    "unsqueeze then exp": lambda T, x: x.unsqueeze(0).exp().sum().backward(),
    "two backward calls": lambda T, x: ((x * 2).sum().backward(), (x * 3).sum().backward()),
    "transpose into mm": lambda T, x: (x.t() @ T.ones(2, 2)).sum().backward(),
    "linear layer pattern": lambda T, x: (T.ones(4, 3) @ x.t()).relu().sum().backward(),
    # a gradient un-broadcast over leading dims is a view: the buffer sums out of place
    "two broadcasts": lambda T, x: ((T.ones(4, 2, 3) + x) ** 2 + (T.ones(4, 2, 3) * 2 + x) ** 2
                                    ).sum().backward(),
    "broadcast through sub": lambda T, x: ((x * 3).sum() + ((T.ones(4, 2, 3) + (x - 1.0)) ** 2)
                                           .sum()).backward(),
    "broadcast through sub, reversed": lambda T, x: (((T.ones(4, 2, 3) + (x - 1.0)) ** 2).sum()
                                                     + (x * 3).sum()).backward(),
    # torch's formulas that fill zeros in place hand on a gradient of version 1 or 2
    "index with a list": lambda T, x: x[[0, 1, 1]].sum().backward(),
    "index with a mask": lambda T, x: x[x > 0].sum().backward(),
    "gather": lambda T, x: x.gather(1, T.tensor([[0], [2]])).sum().backward(),
    "index_select": lambda T, x: x.index_select(1, T.tensor([2, 0])).sum().backward(),
    "take_along_dim": lambda T, x: T.take_along_dim(x, T.tensor([[0], [1]]), 1).sum()
    .backward(),
    "sort": lambda T, x: x.sort(1)[0].sum().backward(),
    "topk": lambda T, x: x.topk(2, 1)[0].sum().backward(),
    "max along a dim": lambda T, x: x.max(1)[0].sum().backward(),
    "max": lambda T, x: x.max().backward(),
    # cat's and stack's gradients are views (slices) of the incoming one
    "cat with another use": lambda T, x: T.cat([x, x * 2]).sum().backward(),
    "stack with another use": lambda T, x: T.stack([x, x * 2]).sum().backward(),
    # a transposed gradient is a view too (two linear layers sharing a weight)
    "shared weight": lambda T, x: (T.nn.functional.linear(T.ones(2, 3), x).sum()
                                   - T.nn.functional.linear(T.ones(5, 3), x).mean()).backward(),
    # a real input's gradient from a complex one is ``at::real`` of it: a view (handle_r_to_c)
    "real times complex": lambda T, x: ((x * 2).sum() + (x * T.full((2, 3), 1 + 2j)).real
                                        .sum()).backward(),
    "real times complex, three uses": lambda T, x: ((x * 2).sum() + (x * T.full((2, 3), 1 + 2j)).abs()
                                             .sum() + (x * T.full((2, 3), 3j)).real.sum())
    .backward(),
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "eager"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_grad_version_and_value(case, compiled):
    def prog(T):
        x = T.ones(2, 3, requires_grad=True)
        CASES[case](T, x)
        return x.grad

    with _engine.compiled_backward(compiled):
        same(prog)


def test_leaf_grad_object_is_kept_across_backward_calls():
    def prog(T):
        x = T.ones(3, requires_grad=True)
        (x * 2).sum().backward()
        first = x.grad
        (x * 3).sum().backward()
        return first is x.grad, x.grad
    same(prog)


def test_zero_dim_leaf_broadcast_into_several_ops():
    """``sum_to(grad, ())`` is a plain sum (not a view): the buffer sums into it in place."""

    def prog(T):
        s = T.tensor(0.5, requires_grad=True)
        x = T.ones(2, 3)
        ((x * s).sum() + (x + s).sum() + (x - s).pow(2).sum()).backward()
        return s.grad

    same(prog)


@pytest.mark.parametrize("op", ["mul_", "zero_", "add_", "copy_", "exp_"])
def test_copy_slices_gradient_has_torchs_version(op):
    """CopySlices makes its gradient with ``new_empty_strided(...).copy_(grad)`` and then
    ``copy_`` into the slice: a leaf that steals it reads ``_version`` 2."""
    def program(T):
        write = {"mul_": lambda v: v.mul_(2), "zero_": lambda v: v.zero_(),
                 "add_": lambda v: v.add_(1), "copy_": lambda v: v.copy_(T.ones(2)),
                 "exp_": lambda v: v.exp_()}[op]
        grads = []
        for eager in (True, False):  # a hook keeps the eager engine; without, the compiled one
            x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = x.clone()
            write(b[1:])
            if eager:
                b.register_hook(lambda g: g)
            b.sum().backward()
            grads.append((x.grad, x.grad._version))
        return grads
    ok(program)


# --- one gradient handed to two leaves, or summed with a view of itself ---------------------------


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
