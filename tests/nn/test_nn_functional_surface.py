"""Sliding blocks against torch.nn: ``F.unfold``/``F.fold`` (im2col/col2im) and the ``Unfold``/
``Fold`` modules: values, grad_fn graphs, first and second derivatives, reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest

from differential import float_leaves, grad_of, next_functions, ok, raises, weighted

RS = np.random.RandomState(31)

I4 = RS.randn(2, 3, 5, 6)
I3 = RS.randn(3, 5, 7)

UNFOLD = {
    "plain": (lambda F, x: F.unfold(x, 2), I4),
    "rect": (lambda F, x: F.unfold(x, (2, 3)), I4),
    "all_args": (lambda F, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
                 I4),
    "unbatched": (lambda F, x: F.unfold(x, 3, 1, (1, 0), 2), I3),
    "list_args": (lambda F, x: F.unfold(x, [3, 2], [2, 1], [0, 1], [1, 3]), I4),
    "fold_round_trip": (lambda F, x: F.fold(F.unfold(x, 2, padding=1), (5, 6), 2, padding=1),
                        I4),
}

FOLD = {
    "plain": (lambda F, x: F.fold(x, (4, 5), 2), RS.randn(2, 8, 12)),
    "all_args": (lambda F, x: F.fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1,
                                     stride=(2, 1)), RS.randn(2, 18, 12)),
    "unbatched": (lambda F, x: F.fold(x, 4, 3, stride=1, padding=1), RS.randn(18, 16)),
    "int_size": (lambda F, x: F.fold(x, 5, 2, stride=3, dilation=2), RS.randn(1, 12, 1)),
}


def _first_order(fn, array, dtype):
    def program(T):
        (x,) = float_leaves(T, dtype, array)
        out = fn(T.nn.functional, x)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, graph, grad_of(x)

    ok(program, rtol=None if dtype == "float64" else 1e-5)


def _second_order(fn, array):
    def program(T):
        (x,) = float_leaves(T, "float64", array)
        out = fn(T.nn.functional, x)
        (g,) = T.autograd.grad(weighted(T, out ** 2), x, create_graph=True)
        (gg,) = T.autograd.grad(weighted(T, g ** 2), x)
        return g, gg

    ok(program)


@pytest.mark.parametrize("key", list(UNFOLD))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unfold(key, dtype):
    _first_order(*UNFOLD[key], dtype)


@pytest.mark.parametrize("key", list(FOLD))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fold(key, dtype):
    _first_order(*FOLD[key], dtype)


@pytest.mark.parametrize("key", ["all_args", "unbatched"])
def test_unfold_and_fold_second_derivatives(key):
    _second_order(*UNFOLD[key])
    _second_order(*FOLD[key])


def test_unfold_and_fold_gradcheck():
    import jaxgrad

    x = jaxgrad.tensor(RS.randn(1, 2, 4, 4), requires_grad=True)
    c = jaxgrad.tensor(RS.randn(1, 8, 6), requires_grad=True)
    F = jaxgrad.nn.functional
    assert jaxgrad.autograd.gradcheck(lambda t: F.unfold(t, 2, 1, 1, 2), (x,))
    assert jaxgrad.autograd.gradgradcheck(lambda t: F.unfold(t, 2, 1, 1, 2) ** 2, (x,))
    assert jaxgrad.autograd.gradcheck(lambda t: F.fold(t, (3, 4), 2), (c,))
    assert jaxgrad.autograd.gradgradcheck(lambda t: F.fold(t, (3, 4), 2) ** 2, (c,))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "bool"])
def test_unfold_and_fold_dtypes(dtype):
    signs = RS.randn(1, 2, 4, 5) > 0

    def program(T):
        x = T.tensor(signs).to(getattr(T, dtype))
        cols = T.nn.functional.unfold(x, 2, padding=(1, 0))
        return cols, T.nn.functional.fold(cols, (4, 5), 2, padding=(1, 0))

    ok(program)


def test_unfold_and_fold_empty_batch():
    def program(T):
        x = T.zeros(0, 3, 5, 6, requires_grad=True)
        cols = T.nn.functional.unfold(x, 2)
        return cols, T.nn.functional.fold(cols, (5, 6), 2)

    ok(program)


UNFOLD_ERRORS = {
    "2d": lambda F, T: F.unfold(T.randn(5, 6), 2),
    "1d": lambda F, T: F.unfold(T.randn(6), 2),
    "5d": lambda F, T: F.unfold(T.randn(1, 2, 3, 5, 6), 2),
    "empty_channels": lambda F, T: F.unfold(T.randn(2, 0, 5, 6), 2),
    "empty_height": lambda F, T: F.unfold(T.randn(2, 3, 0, 6), 2),
    "kernel_zero": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), (2, 0)),
    "kernel_zero_before_dims": lambda F, T: F.unfold(T.randn(5, 6), 0),
    "stride_zero": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), 2, stride=0),
    "dilation_before_stride": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), 2, stride=0,
                                                    dilation=0),
    "padding_before_stride": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), 2, stride=0,
                                                   padding=-1),
    "negative_padding": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), 2, padding=(0, -1)),
    "too_few_blocks": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), 7),
    "kernel_size_three": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), (2, 2, 2)),
    "kernel_size_one": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), [2]),
    "float_kernel": lambda F, T: F.unfold(T.randn(2, 3, 5, 6), 2.0),
    "integer_input": lambda F, T: F.unfold(T.zeros(1, 1, 3, 3, dtype=T.int8), 2),
    "not_a_tensor": lambda F, T: F.unfold([1.0], 2),
}

FOLD_ERRORS = {
    "4d": lambda F, T: F.fold(T.randn(2, 3, 4, 10), (4, 5), 2),
    "1d": lambda F, T: F.fold(T.randn(10), (4, 5), 2),
    "empty_blocks": lambda F, T: F.fold(T.randn(2, 8, 0), (4, 5), 2),
    "empty_unbatched": lambda F, T: F.fold(T.randn(0, 12), (4, 5), 2),
    "indivisible": lambda F, T: F.fold(T.randn(2, 5, 10), (4, 5), 2),
    "indivisible_first": lambda F, T: F.fold(T.randn(2, 8, 12), (1, 1), 3),
    "block_count": lambda F, T: F.fold(T.randn(2, 8, 12), (4, 6), 2),
    "negative_blocks": lambda F, T: F.fold(T.randn(2, 8, 12), (0, 5), 2),
    "kernel_zero": lambda F, T: F.fold(T.randn(2, 8, 12), (4, 5), 0, stride=0),
    "stride_before_dilation": lambda F, T: F.fold(T.randn(2, 8, 12), (4, 5), 2, stride=0,
                                                  dilation=0),
    "dilation_before_padding": lambda F, T: F.fold(T.randn(2, 8, 12), (4, 5), 2, dilation=0,
                                                   padding=-1),
    "negative_padding": lambda F, T: F.fold(T.randn(2, 8, 12), (4, 5), 2, padding=-1),
    "output_size_three": lambda F, T: F.fold(T.randn(2, 8, 12), (4, 5, 3), 2),
    "kernel_size_three": lambda F, T: F.fold(T.randn(2, 8, 12), (4, 5), (1, 2, 3)),
    "integer_input": lambda F, T: F.fold(T.zeros(1, 4, 4, dtype=T.int32), (3, 3), 2),
}


@pytest.mark.parametrize("key", list(UNFOLD_ERRORS))
def test_unfold_errors(key):
    raises(lambda T: UNFOLD_ERRORS[key](T.nn.functional, T))


@pytest.mark.parametrize("key", list(FOLD_ERRORS))
def test_fold_errors(key):
    raises(lambda T: FOLD_ERRORS[key](T.nn.functional, T))


def test_fold_and_unfold_modules():
    def program(T):
        (x,) = float_leaves(T, "float64", I4)
        unfold = T.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
        fold = T.nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
        out = fold(unfold(x))
        weighted(T, out).backward()
        return repr(unfold), repr(fold), out, next_functions(out.grad_fn), grad_of(x)

    ok(program)
