"""Sampling grids against torch.nn.functional: ``affine_grid`` and ``grid_sample`` (2-D and 3-D,
every mode and padding mode, both corner conventions): values, grad_fn graphs, gradients of
input, grid and theta, second derivatives, torch's warnings and errors."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from differential import (
    captured_warnings,
    float_leaves,
    grad_of,
    next_functions,
    ok,
    raises,
    val,
    weighted,
)

RS = np.random.RandomState(47)

IMAGE = RS.randn(2, 3, 4, 5)
GRID = RS.uniform(-1.3, 1.3, (2, 3, 6, 2))
VOLUME = RS.randn(2, 2, 3, 4, 5)
GRID3 = RS.uniform(-1.3, 1.3, (2, 2, 3, 4, 3))
THETA = RS.randn(2, 2, 3) * 0.8
THETA3 = RS.randn(2, 3, 4) * 0.8

MODES = list(itertools.product(["bilinear", "nearest", "bicubic"],
                               ["zeros", "border", "reflection"], [False, True]))
MODES3 = [m for m in MODES if m[0] != "bicubic"]


def _sample(image, grid, modes, dtype):
    mode, padding_mode, align_corners = modes

    def program(T):
        x, g = float_leaves(T, dtype, image, grid)
        out = T.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, graph, grad_of(x), grad_of(g)

    ok(program, rtol=None if dtype == "float64" else 2e-5)


@pytest.mark.parametrize("modes", MODES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sample_2d(modes, dtype):
    _sample(IMAGE, GRID, modes, dtype)


@pytest.mark.parametrize("modes", MODES3, ids=str)
def test_grid_sample_3d(modes):
    _sample(VOLUME, GRID3, modes, "float64")


@pytest.mark.parametrize("modes", [("bilinear", "zeros", False), ("bicubic", "reflection", True),
                                   ("bilinear", "border", True)], ids=str)
def test_grid_sample_second_derivatives(modes):
    mode, padding_mode, align_corners = modes

    def program(T):
        x, g = float_leaves(T, "float64", IMAGE, GRID)
        out = T.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners)
        gx, gg = T.autograd.grad(weighted(T, out ** 2), (x, g), create_graph=True)
        second = T.autograd.grad(weighted(T, gx) + weighted(T, gg ** 2), (x, g))
        return val(gx), val(gg), [val(s) for s in second]

    ok(program)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dims", [2, 3])
def test_affine_grid(align_corners, dims):
    theta, size = (THETA, (2, 3, 4, 5)) if dims == 2 else (THETA3, (2, 3, 2, 3, 4))

    def program(T):
        (t,) = float_leaves(T, "float64", theta)
        grid = T.nn.functional.affine_grid(t, size, align_corners=align_corners)
        graph = next_functions(grid.grad_fn)
        weighted(T, grid).backward()
        (g2,) = T.autograd.grad(weighted(T, T.nn.functional.affine_grid(
            t, size, align_corners=align_corners) ** 2), t, create_graph=True)
        (g3,) = T.autograd.grad(weighted(T, g2 ** 2), t)
        return grid, graph, grad_of(t), val(g2), val(g3)

    ok(program)


def test_spatial_transformer():
    """affine_grid feeding grid_sample, the spatial-transformer pattern, in float32."""

    def program(T):
        x, t = float_leaves(T, "float32", IMAGE, THETA)
        grid = T.nn.functional.affine_grid(t, (2, 3, 3, 6), align_corners=False)
        out = T.nn.functional.grid_sample(x, grid, align_corners=False)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, graph, grad_of(x), grad_of(t)

    ok(program, rtol=2e-5)


def test_affine_grid_unit_size():
    def program(T):
        (t,) = float_leaves(T, "float64", THETA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (T.nn.functional.affine_grid(t, (2, 1, 1, 4), align_corners=True),
                    T.nn.functional.affine_grid(t, [2, 3, 3, 1], align_corners=False))

    ok(program)


def _warnings(program):
    import torch

    import jaxgrad

    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
    assert captured_warnings(program, torch)


def test_align_corners_warnings():
    _warnings(lambda T: T.nn.functional.grid_sample(T.tensor(IMAGE), T.tensor(GRID)))
    _warnings(lambda T: T.nn.functional.affine_grid(T.tensor(THETA), (2, 3, 4, 5)))
    _warnings(lambda T: T.nn.functional.affine_grid(T.tensor(THETA), (2, 3, 1, 5), True))


def test_grid_sample_empty_channels_and_batch():
    def program(T):
        return (T.nn.functional.grid_sample(T.zeros(2, 0, 4, 5), T.tensor(GRID).float(),
                                            align_corners=False),
                T.nn.functional.grid_sample(T.zeros(0, 3, 4, 5), T.zeros(0, 6, 7, 2),
                                            align_corners=False))

    ok(program)


GRID_ERRORS = {
    "batch": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5), T.rand(1, 6, 7, 2), align_corners=False),
    "last_dim": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5), T.rand(2, 6, 7, 1),
                                           align_corners=False),
    "unbatched": lambda F, T: F.grid_sample(T.randn(3, 4, 5), T.rand(6, 7, 2),
                                            align_corners=False),
    "ndim": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5), T.rand(2, 1, 6, 7, 2),
                                       align_corners=False),
    "empty": lambda F, T: F.grid_sample(T.randn(2, 3, 0, 5), T.rand(2, 6, 7, 2),
                                        align_corners=False),
    "6d": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5, 6, 7), T.rand(2, 3, 4, 5, 6, 4),
                                     align_corners=False),
    "bicubic_3d": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5, 6), T.rand(2, 3, 4, 5, 3),
                                             mode="bicubic", align_corners=False),
    "mode": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5), T.rand(2, 6, 7, 2), mode="foo"),
    "padding": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5), T.rand(2, 6, 7, 2),
                                          padding_mode="foo"),
    "dtypes": lambda F, T: F.grid_sample(T.randn(2, 3, 4, 5), T.rand(2, 6, 7, 2).double(),
                                         align_corners=False),
    "integer": lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5, dtype=T.int64), T.rand(2, 6, 7, 2),
                                          align_corners=False),
    "theta_integer": lambda F, T: F.affine_grid(T.zeros(2, 2, 3, dtype=T.int64), (2, 3, 4, 5),
                                                align_corners=False),
    "theta_shape": lambda F, T: F.affine_grid(T.zeros(2, 3, 3), (2, 3, 4, 5),
                                              align_corners=False),
    "theta_shape_3d": lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 4, 5, 6),
                                                 align_corners=False),
    "size_length": lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 4), align_corners=False),
    "size_zero": lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 0, 4), align_corners=False),
    "theta_batch": lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (3, 3, 2, 4),
                                              align_corners=False),
}


@pytest.mark.parametrize("key", list(GRID_ERRORS))
def test_grid_errors(key):
    raises(lambda T: GRID_ERRORS[key](T.nn.functional, T))
