"""interpolate's every mode against torch: nearest and nearest-exact (1-3 D), linear, bilinear,
trilinear, bicubic, area, the antialiased bilinear/bicubic/lanczos; values, grad_fn graphs,
first and second derivatives (create_graph node names), half precision, modules and errors.
(tests/nn/test_nn_pooling.py has the nearest/linear/bilinear basics.)"""

from __future__ import annotations

import numpy as np
import pytest

from differential import (
    attempt,
    cases,
    float_leaves,
    grad_of,
    next_functions,
    ok,
    raises,
    same,
    weighted,
)

RS = np.random.RandomState(31)
L = RS.randn(2, 3, 7)
I = RS.randn(1, 2, 6, 5)  # noqa: E741
V = RS.randn(1, 2, 3, 4, 5)

MODES = {
    "nearest3d_scale": (dict(scale_factor=(1.5, 0.7, 2)), V),
    "nearest3d_size": (dict(size=(2, 7, 3)), V),
    "exact1d_scale": (dict(scale_factor=1.7, mode="nearest-exact"), L),
    "exact2d_down": (dict(size=(4, 3), mode="nearest-exact"), I),
    "exact2d_double": (dict(scale_factor=2, mode="nearest-exact"), I),
    "exact3d": (dict(scale_factor=(2, 0.6, 1.3), mode="nearest-exact"), V),
    "trilinear": (dict(scale_factor=(1.5, 0.7, 2), mode="trilinear"), V),
    "trilinear_align": (dict(size=(4, 2, 9), mode="trilinear", align_corners=True), V),
    "trilinear_scales": (dict(scale_factor=1.3, mode="trilinear",
                              recompute_scale_factor=True), V),
    "bicubic_up": (dict(scale_factor=(1.7, 2.2), mode="bicubic"), I),
    "bicubic_down": (dict(size=(4, 3), mode="bicubic"), I),
    "bicubic_align": (dict(size=(9, 4), mode="bicubic", align_corners=True), I),
    "area1d": (dict(size=4, mode="area"), L),
    "area2d_scale": (dict(scale_factor=0.5, mode="area"), I),
    "area3d": (dict(size=(2, 3, 2), mode="area"), V),
    "aa_bilinear_down": (dict(size=(3, 2), mode="bilinear", antialias=True), I),
    "aa_bilinear_up": (dict(scale_factor=1.6, mode="bilinear", antialias=True), I),
    "aa_bilinear_align": (dict(size=(4, 2), mode="bilinear", antialias=True,
                               align_corners=True), I),
    "aa_bicubic_down": (dict(scale_factor=(0.4, 0.7), mode="bicubic", antialias=True), I),
    "aa_bicubic_up": (dict(size=(9, 8), mode="bicubic", antialias=True), I),
    "lanczos_down": (dict(size=(3, 2), mode="lanczos", antialias=True), I),
    "lanczos_up": (dict(scale_factor=1.5, mode="lanczos", antialias=True), I),
}


@pytest.mark.parametrize("key", list(MODES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_modes_values_graphs_and_gradients(key, dtype):
    kwargs, array = MODES[key]

    def program(T):
        (x,) = float_leaves(T, dtype, array)
        out = T.nn.functional.interpolate(x, **kwargs)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, graph, grad_of(x)

    ok(program, rtol=None if dtype == "float64" else 1e-5)


SECOND_ORDER = [k for k in MODES if "scale" not in k or "area" in k][::2]
AREA_VERSION = ("the second-order gradient through adaptive_avg_pool2d (two paths summed into the "
                "input's gradient) is at _version 1, torch's at 2 (its InputBuffer accumulates in "
                "place once more)")


@pytest.mark.parametrize("key", cases(SECOND_ORDER, {"area2d_scale": AREA_VERSION}))
def test_second_derivatives_and_their_nodes(key):
    kwargs, array = MODES[key]

    def program(T):
        (x,) = float_leaves(T, "float64", array)
        out = T.nn.functional.interpolate(x, **kwargs)
        (g,) = T.autograd.grad(weighted(T, out ** 2), x, create_graph=True)
        (gg,) = T.autograd.grad(weighted(T, g), x)
        # (that freed the graph of g, out's node with it: torch's upsample nodes save nothing, so
        # they run again; area's adaptive pooling saves its input, so it raises)
        again = attempt(lambda: T.autograd.grad(weighted(T, out), x))
        return g, gg, again

    ok(program)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("key", ["trilinear", "bicubic_up", "aa_bilinear_down", "exact2d_down",
                                 "lanczos_down"])
def test_half_precision_computes_in_float32(key, dtype):  # (or raises, antialiased, as torch)
    kwargs, array = MODES[key]

    def program(T):
        x = T.tensor(array, dtype=getattr(T, dtype))
        return T.nn.functional.interpolate(x, **kwargs)

    same(program, rtol=1e-2)


def test_modules_take_every_mode():
    def program(T):
        x = T.tensor(I, dtype=T.float64)
        layers = [T.nn.Upsample(scale_factor=1.5, mode="bicubic"),
                  T.nn.Upsample(size=(4, 3), mode="nearest-exact"),
                  T.nn.Upsample(scale_factor=0.5, mode="area")]
        return [(repr(m), m(x)) for m in layers] + [
            T.nn.Upsample(scale_factor=(2, 1, 0.5), mode="trilinear", align_corners=True)(
                T.tensor(V))]

    ok(program)


@pytest.mark.parametrize("call", [
    lambda F, x3, x4, x5: F.interpolate(x3, scale_factor=2, mode="area", align_corners=True),
    lambda F, x3, x4, x5: F.interpolate(x3, size=3, mode="nearest-exact", align_corners=False),
    lambda F, x3, x4, x5: F.interpolate(x3, scale_factor=2, mode="trilinear"),
    lambda F, x3, x4, x5: F.interpolate(x4, scale_factor=2, mode="trilinear"),
    lambda F, x3, x4, x5: F.interpolate(x5, scale_factor=2, mode="bilinear"),
    lambda F, x3, x4, x5: F.interpolate(x3, scale_factor=2, mode="bicubic"),
    lambda F, x3, x4, x5: F.interpolate(x5, scale_factor=2, mode="bicubic"),
    lambda F, x3, x4, x5: F.interpolate(x3, scale_factor=2, mode="bilinear", antialias=True),
    lambda F, x3, x4, x5: F.interpolate(x4, scale_factor=2, mode="nearest", antialias=True),
    lambda F, x3, x4, x5: F.interpolate(x4, size=2, mode="lanczos"),
    lambda F, x3, x4, x5: F.interpolate(x4, size=2, mode="lanczos", antialias=True,
                                        align_corners=True),
    lambda F, x3, x4, x5: F.interpolate(x4, size=2, mode="bogus"),
    lambda F, x3, x4, x5: F.interpolate(x3[0], size=2),
    lambda F, x3, x4, x5: F.interpolate(x3, size=0),
    lambda F, x3, x4, x5: F.interpolate(x4, scale_factor=0.1, mode="bicubic"),
    lambda F, x3, x4, x5: F.interpolate(x5, size=(1, 0, 2), mode="nearest-exact"),
    lambda F, x3, x4, x5: F.interpolate(x4, size=(2, 2.0)),
    lambda F, x3, x4, x5: F.interpolate(x4, size=(2,)),
    lambda F, x3, x4, x5: F.interpolate(x4, scale_factor=(2,)),
    lambda F, x3, x4, x5: F.interpolate(x4, size=2, recompute_scale_factor=True),
    lambda F, x3, x4, x5: F.interpolate(x4, size=2, scale_factor=2),
    lambda F, x3, x4, x5: F.interpolate(x4),
])
def test_errors(call):
    raises(lambda T: call(T.nn.functional, T.tensor(L), T.tensor(I), T.tensor(V)))
