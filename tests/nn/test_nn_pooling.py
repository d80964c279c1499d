"""1-D and adaptive pooling and resampling against torch.nn: max/avg pooling, adaptive pooling,
interpolate (nearest, linear, bilinear), pixel shuffle; functional forms and modules: values,
grad_fn graphs, gradients, reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest

from differential import float_leaves, grad_of, next_functions, ok, raises, weighted

RS = np.random.RandomState(20)

L1 = RS.randn(2, 3, 9)
I4 = RS.randn(2, 3, 5, 7)

POOLING = {
    "max_pool1d": (lambda F, x: F.max_pool1d(x, 2), L1),
    "max_pool1d_args": (lambda F, x: F.max_pool1d(x, 3, 2, 1, 2, ceil_mode=True), L1),
    "max_pool1d_indices": (lambda F, x: F.max_pool1d(x[0], [3], return_indices=True), L1),
    "avg_pool1d": (lambda F, x: F.avg_pool1d(x, 2), L1),
    "avg_pool1d_args": (lambda F, x: F.avg_pool1d(x, 3, 2, 1, True, False), L1),
    "adaptive_avg_pool1d": (lambda F, x: F.adaptive_avg_pool1d(x, 4), L1),
    "adaptive_max_pool1d": (lambda F, x: F.adaptive_max_pool1d(x, 4, return_indices=True), L1),
    "adaptive_max_pool2d": (lambda F, x: F.adaptive_max_pool2d(x, (3, 4), True), I4),
    "adaptive_max_pool2d_none": (lambda F, x: F.adaptive_max_pool2d(x[0], (None, 2)), I4),
    "nearest1d_size": (lambda F, x: F.interpolate(x, size=13), L1),
    "nearest1d_scale": (lambda F, x: F.interpolate(x, scale_factor=1.7), L1),
    "nearest1d_double": (lambda F, x: F.interpolate(x, scale_factor=2), L1),
    "nearest2d_size": (lambda F, x: F.interpolate(x, size=(4, 9)), I4),
    "nearest2d_scale": (lambda F, x: F.interpolate(x, scale_factor=(2.5, 0.5)), I4),
    "nearest2d_recompute": (lambda F, x: F.interpolate(x, scale_factor=1.3,
                                                       recompute_scale_factor=True), I4),
    "linear": (lambda F, x: F.interpolate(x, scale_factor=1.6, mode="linear"), L1),
    "linear_align": (lambda F, x: F.interpolate(x, size=4, mode="linear", align_corners=True),
                     L1),
    "bilinear": (lambda F, x: F.interpolate(x, size=(8, 3), mode="bilinear"), I4),
    "bilinear_scale": (lambda F, x: F.interpolate(x, scale_factor=(2.3, 0.6), mode="bilinear"),
                       I4),
    "bilinear_align": (lambda F, x: F.interpolate(x, size=(4, 9), mode="bilinear",
                                                  align_corners=True), I4),
    "pixel_shuffle": (lambda F, x: F.pixel_shuffle(x, 2), RS.randn(2, 8, 3, 5)),
    "pixel_unshuffle": (lambda F, x: F.pixel_unshuffle(x, 2), RS.randn(2, 3, 4, 6)),
}


@pytest.mark.parametrize("key", list(POOLING))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pooling_and_resampling(key, dtype):
    fn, array = POOLING[key]

    def program(T):
        (x,) = float_leaves(T, dtype, array)
        out = fn(T.nn.functional, x)
        outs = list(out) if isinstance(out, tuple) else [out]
        graph = next_functions(outs[0].grad_fn)
        weighted(T, outs[0]).backward()
        return outs, graph, grad_of(x)

    ok(program, rtol=None if dtype == "float64" else 1e-5)


POOL_MODULES = {
    "max_pool1d": (lambda T: T.nn.MaxPool1d(3, 1, 1, return_indices=True), L1),
    "avg_pool1d": (lambda T: T.nn.AvgPool1d(3, 2, 1, True, False), L1),
    "adaptive_avg_pool1d": (lambda T: T.nn.AdaptiveAvgPool1d(3), L1),
    "adaptive_max_pool1d": (lambda T: T.nn.AdaptiveMaxPool1d(3, True), L1),
    "adaptive_max_pool2d": (lambda T: T.nn.AdaptiveMaxPool2d((2, None)), I4),
    "upsample": (lambda T: T.nn.Upsample(scale_factor=2), I4),
    "upsample_bilinear": (lambda T: T.nn.Upsample(size=(3, 4), mode="bilinear",
                                                  align_corners=True), I4),
    "upsample_linear": (lambda T: T.nn.Upsample(scale_factor=1.5, mode="linear"), L1),
    "pixel_shuffle": (lambda T: T.nn.PixelShuffle(2), RS.randn(1, 8, 2, 3)),
    "pixel_unshuffle": (lambda T: T.nn.PixelUnshuffle(3), RS.randn(1, 1, 3, 6)),
}


@pytest.mark.parametrize("key", list(POOL_MODULES))
def test_pooling_modules(key):
    build, array = POOL_MODULES[key]

    def program(T):
        m = build(T)
        (x,) = float_leaves(T, "float64", array)
        out = m(x)
        outs = list(out) if isinstance(out, tuple) else [out]
        weighted(T, outs[0]).backward()
        return repr(m), outs, grad_of(x)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.max_pool1d(T.ones(2, 3, 4, 5), 2),
    lambda T: T.nn.functional.avg_pool1d(T.ones(2, 3, 4, 5), 2),
    lambda T: T.nn.functional.adaptive_max_pool1d(T.ones(2, 3, 4, 5), 2),
    lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(5, 5), 2),
    lambda T: T.nn.functional.pixel_shuffle(T.ones(1, 3, 2, 2), 2),
    lambda T: T.nn.functional.pixel_shuffle(T.ones(4, 2), 2),
    lambda T: T.nn.functional.pixel_unshuffle(T.ones(1, 1, 3, 4), 2),
    lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4), size=3, align_corners=True),
    lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4)),
    lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4), size=3, scale_factor=2),
])
def test_pooling_errors(call):
    raises(call)
