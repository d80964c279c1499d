"""log10, log2, log1p, expm1, tril/triu (each one row) and masked_fill against torch: values,
grad_fn and its saved values, gradients to second order, the in-place and ``out=`` forms,
torch's errors."""

from __future__ import annotations

import pytest

from differential import leaf, next_functions, ok, raises

POSITIVE = [0.5, 1.5, 2.0]
MATRIX = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 0.25, 1.5]]

UNARY = ["log10", "log2", "log1p", "expm1"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_graph_and_gradients(name):
    def program(T):
        x = leaf(T, POSITIVE)
        y = getattr(T, name)(x)
        saved = [getattr(y.grad_fn, "_saved_" + k).detach() for k in ("self", "result")
                 if hasattr(y.grad_fn, "_saved_" + k)]
        (g,) = T.autograd.grad(y.square().sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return y, type(y.grad_fn).__name__, saved, g.detach(), gg

    ok(program)


@pytest.mark.parametrize("name", UNARY)
def test_unary_forms_like_torch(name):
    def program(T):
        x = leaf(T, POSITIVE)
        y = x * 1
        inplace = getattr(y, name + "_")()
        function_inplace = getattr(T, name + "_")(x.detach().clone())
        out = T.zeros(3)
        returned = getattr(T, name)(T.tensor(POSITIVE), out=out)
        ints = getattr(T, name)(T.tensor([1, 2, 3]))
        inplace.sum().backward()
        return (inplace is y, y, y._version, type(y.grad_fn).__name__, x.grad,
                function_inplace, returned is out, out, ints)

    ok(program)


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 5])
def test_triangles_like_torch(name, diagonal):
    def program(T):
        x = leaf(T, MATRIX)
        y = getattr(T, name)(x, diagonal)
        batched = getattr(T.ones(2, 2, 3), name)(diagonal=diagonal)
        z = x * 1
        getattr(z, name + "_")(diagonal)
        (g,) = T.autograd.grad((y * y).sum() + z.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return (y, type(y.grad_fn).__name__, y.grad_fn._saved_diagonal, batched, z, z._version,
                type(z.grad_fn).__name__, g.detach(), gg, getattr(T, name)(T.tensor([[1, 2]])))

    ok(program)


MASKS = {
    "number": lambda T, x: x.masked_fill(T.tensor([True, False, True]), -2.5),
    "function": lambda T, x: T.masked_fill(x, T.tensor([[True], [False]]), 7),
    "broadcast_self": lambda T, x: T.masked_fill(x[0], T.tensor([[True], [False]]), 1.0),
    "tensor_value": lambda T, x: x.masked_fill(T.tensor([False, True, True]), x[1, 1] * 3),
    "int_self": lambda T, x: T.tensor([1, 2, 3]).masked_fill(T.tensor([True, False, True]), 2.7),
}


@pytest.mark.parametrize("name", MASKS)
def test_masked_fill_like_torch(name):
    def program(T):
        x = leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        y = MASKS[name](T, x)
        if not y.requires_grad:
            return y
        z = x * 1
        z.masked_fill_(T.tensor([True, False, False]), 0.5)
        (g,) = T.autograd.grad((y * y).sum() + z.sum(), x, create_graph=True)
        return (y, type(y.grad_fn).__name__, y.grad_fn._saved_mask, z, z._version,
                type(z.grad_fn).__name__, g.detach(), T.autograd.grad(g.sum(), x))

    ok(program)


@pytest.mark.parametrize("program", [
    lambda T: T.ones(3).masked_fill(T.ones(3), 1),
    lambda T: T.ones(3).masked_fill_(T.tensor([[True], [False]]), 1),
    lambda T: T.ones(3).masked_fill(T.tensor([True, False, True]), T.ones(2)),
    lambda T: T.ones(2, requires_grad=True).masked_fill_(T.tensor([True, False]), 1),
    lambda T: T.ones(3).masked_fill(T.tensor([True, False]), 1),
], ids=["float_mask", "inplace_broadcast", "value_not_0d", "leaf", "shapes"])
def test_masked_fill_errors_like_torch(program):
    raises(program)


@pytest.mark.parametrize("program", [
    lambda T: T.tril(T.ones(3)),
    lambda T: T.triu(T.tensor(1.0)),
    lambda T: T.ones(3).tril_(),
    lambda T: T.ones(2, 2, requires_grad=True).triu_(),
    lambda T: T.log1p(3),
    lambda T: T.expm1(T.ones(2, requires_grad=True), out=T.zeros(2)),
], ids=["tril_1d", "triu_0d", "tril_inplace_1d", "triu_inplace_leaf", "log1p_int", "expm1_out_grad"])
def test_errors_like_torch(program):
    raises(program)


CUMSUM = {
    "last_dim": lambda T, x: x.cumsum(-1),
    "first_dim": lambda T, x: T.cumsum(x, 0),
    "dtype": lambda T, x: T.cumsum(x, 1, dtype=T.float64),
    "zero_d": lambda T, x: x[0, 0].cumsum(0),
}


@pytest.mark.parametrize("name", CUMSUM)
def test_cumsum_like_torch(name):
    def program(T):
        x = leaf(T, MATRIX)
        y = CUMSUM[name](T, x)
        (g,) = T.autograd.grad((y * y).sum(), x, create_graph=True)
        ints = T.cumsum(T.tensor([[1, 2], [3, 4]]), 1)
        return y, type(y.grad_fn).__name__, y.grad_fn._saved_dim, g.detach(), \
            T.autograd.grad(g.sum(), x), ints, T.cumsum(T.ones(3), 0, out=T.zeros(3))

    ok(program)


def test_outer_like_torch():
    def program(T):
        a, b = leaf(T, [1.0, -2.0]), leaf(T, [0.5, 3.0, -1.0])
        y = T.outer(a, b)
        y.sum().backward()
        return y, next_functions(y.grad_fn), a.grad, b.grad, a.outer(b)

    ok(program)


@pytest.mark.parametrize("program", [
    lambda T: T.ones(2, 3).cumsum(2),
    lambda T: T.outer(T.ones(2, 2), T.ones(3)),
    lambda T: T.outer(T.ones(2), T.ones(3, 1)),
    lambda T: T.outer(T.ones(2), 3),
], ids=["cumsum_dim", "outer_self_2d", "outer_vec2_2d", "outer_number"])
def test_cumsum_outer_errors_like_torch(program):
    raises(program)


SPLITS = {
    "split_int": lambda T, x: x.split(2),
    "split_int_dim": lambda T, x: T.split(x, 1, dim=-1),
    "split_larger": lambda T, x: x.split(7),
    "split_sizes": lambda T, x: x.split([1, 3, 1]),
    "split_sizes_with_zero": lambda T, x: T.split(x, [0, 5]),
    "chunk": lambda T, x: x.chunk(3),
    "chunk_more_than_size": lambda T, x: T.chunk(x, 4, dim=1),
    "chunk_uneven": lambda T, x: x.chunk(2, 0),
}


def _saved(fn):
    return {k: getattr(fn, k) for k in ("_saved_dim", "_saved_split_size", "_saved_split_sizes",
                                        "_saved_self_sym_sizes") if hasattr(fn, k)}


@pytest.mark.parametrize("name", SPLITS)
def test_split_and_chunk_like_torch(name):
    """Views sharing one node (output_nr per piece), torch's saved values, gradients of some
    pieces only, and the multi-output views' in-place error."""

    def program(T):
        x = leaf(T, [[float(i + 3 * j) for i in range(3)] for j in range(5)])
        pieces = SPLITS[name](T, x)
        first = pieces[0]
        info = [(p.shape, p.output_nr, p._base is x, p.grad_fn is first.grad_fn) for p in pieces]
        loss = sum(((i + 1) * p.sum() for i, p in enumerate(pieces) if i % 2 == 0),
                   T.tensor(0.0, dtype=T.float64))
        loss.backward()
        return pieces, type(first.grad_fn).__name__, _saved(first.grad_fn), info, x.grad

    ok(program)


@pytest.mark.parametrize("program", [
    lambda T: T.ones(5).split([-1, 6]),
    lambda T: T.ones(5).split([1, 2]),
    lambda T: T.ones(5).split(-1),
    lambda T: T.ones(5).split(0),
    lambda T: T.tensor(1.0).split(1),
    lambda T: T.ones(5).chunk(0),
    lambda T: T.tensor(1.0).chunk(1),
    lambda T: T.ones(5, requires_grad=True).mul(1).split(2)[0].mul_(2),
    lambda T: T.ones(5, 2).split(2, dim=2),
    lambda T: T.ones(2, 5).split([1, 2], -1),
], ids=["negative_size", "sizes_sum", "negative", "zero", "split_0d", "chunk_0", "chunk_0d",
        "inplace_on_piece", "dim", "sizes_sum_negative_dim"])
def test_split_errors_like_torch(program):
    raises(program)


def test_empty_splits_like_torch():
    ok(lambda T: (T.ones(0).split(0), T.ones(0).chunk(3), T.ones(0, 2).chunk(2, 1)))
