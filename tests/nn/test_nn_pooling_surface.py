"""3-D pooling, the ``*_with_indices`` forms, max unpooling, power-average pooling, 3-D
transposed convolution, ``torch.convolution`` / ``conv_tbc`` and their modules against torch:
values, indices, grad_fn names, first and second derivatives in float64, argument errors."""

from __future__ import annotations

import numpy as np
import pytest

from differential import attempt, float_leaves, ok, raises, same, set_weights, val, weighted

RS = np.random.RandomState(33)
V5 = RS.randn(2, 2, 4, 5, 6)
V4 = RS.randn(2, 3, 5, 6)
V3 = RS.randn(2, 3, 7)
W3 = RS.randn(2, 4, 2, 3, 2)  # (C_in, C_out / groups, kd, kh, kw)
TBC_W = RS.randn(3, 3, 4)  # (kernel, C_in, C_out)
SAMPLES2, SAMPLES3 = np.random.RandomState(7).rand(2, 3, 2), np.random.RandomState(8).rand(2, 2, 3)


def _unpool3d(F, x):
    out, idx = F.max_pool3d(x, 2, return_indices=True)
    return F.max_unpool3d(out, idx, 2, output_size=x.shape[-3:])


def _unpool2d(F, x):
    out, idx = F.max_pool2d(x, (2, 3), (2, 2), 1, return_indices=True)
    return F.max_unpool2d(out, idx, (2, 3), (2, 2), 1, output_size=list(x.shape))


def _unpool1d(F, x):
    out, idx = F.max_pool1d(x, 2, return_indices=True)
    return F.max_unpool1d(out, idx, 2, output_size=[7])


# name: (program of (T, F, x, w), input, needs w, second derivative)
CASES = {
    "max_pool3d_args": (lambda T, F, x, w: F.max_pool3d(
        x, (2, 3, 2), (1, 2, 1), (1, 1, 0), (1, 1, 2), ceil_mode=True, return_indices=True), V5),
    "max_pool3d_unbatched": (lambda T, F, x, w: F.max_pool3d(x[0], [3], 2, 1), V5),
    "avg_pool3d_args": (lambda T, F, x, w: F.avg_pool3d(x, 3, 2, 1, True, False), V5),
    "avg_pool3d_divisor": (lambda T, F, x, w: F.avg_pool3d(x[1], (2, 3, 2), 1, (1, 1, 0),
                                                           divisor_override=3), V5),
    "adaptive_avg_pool3d": (lambda T, F, x, w: F.adaptive_avg_pool3d(x, (3, None, 4)), V5),
    "adaptive_avg_pool3d_one": (lambda T, F, x, w: F.adaptive_avg_pool3d(x, 1), V5),
    "adaptive_max_pool3d": (lambda T, F, x, w: F.adaptive_max_pool3d(x, (3, 2, 4), True), V5),
    "adaptive_max_pool3d_unbatched": (lambda T, F, x, w: F.adaptive_max_pool3d(x[0], 2), V5),
    "max_pool3d_with_indices": (lambda T, F, x, w: F.max_pool3d_with_indices(x, 2, 1), V5),
    "max_pool2d_with_indices": (lambda T, F, x, w: F.max_pool2d_with_indices(x, [2, 3], [1, 2]), V4),
    "max_pool1d_with_indices": (lambda T, F, x, w: F.max_pool1d_with_indices(x, 3, 2, 1), V3),
    "adaptive_max_pool1d_with_indices": (
        lambda T, F, x, w: F.adaptive_max_pool1d_with_indices(x, 3), V3),
    "adaptive_max_pool2d_with_indices": (
        lambda T, F, x, w: F.adaptive_max_pool2d_with_indices(x, (2, 4)), V4),
    "adaptive_max_pool3d_with_indices": (
        lambda T, F, x, w: F.adaptive_max_pool3d_with_indices(x, (2, 3, 4)), V5),
    "torch_max_pool1d": (lambda T, F, x, w: T.max_pool1d(x, 3, [], 1, 2, True), V3),
    "torch_max_pool3d": (lambda T, F, x, w: T.max_pool3d(x, [3], 2, 1), V5),
    "torch_adaptive_max_pool1d": (lambda T, F, x, w: T.adaptive_max_pool1d(x, [3]), V3),
    "max_unpool1d": (lambda T, F, x, w: _unpool1d(F, x), V3),
    "max_unpool2d": (lambda T, F, x, w: _unpool2d(F, x), V4),
    "max_unpool3d": (lambda T, F, x, w: _unpool3d(F, x), V5),
    "lp_pool1d": (lambda T, F, x, w: F.lp_pool1d(x, 2, 3, 2, ceil_mode=True), V3),
    "lp_pool2d": (lambda T, F, x, w: F.lp_pool2d(x.abs() + 0.5, 3.0, (2, 3)), V4),
    "lp_pool3d": (lambda T, F, x, w: F.lp_pool3d(x, 2, 2, (1, 2, 2)), V5),
    "lp_pool2d_inf": (lambda T, F, x, w: F.lp_pool2d(x, float("inf"), 2), V4),
    "conv_transpose3d": (lambda T, F, x, w: F.conv_transpose3d(
        x, w, w[0, :, 0, 0, 0], stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0),
        dilation=(1, 2, 1)), V5),
    "convolution": (lambda T, F, x, w: T.convolution(
        x, w.transpose(0, 1)[:, :, :, :2], w[0, :, 0, 0, 0], [1, 1, 2], [1, 0, 0], [1, 2, 1],
        False, [0, 0, 0], 1), V5),
}


# the new rows' second derivatives (the compositions' are their parts')
SECOND = {"max_pool3d_args", "avg_pool3d_args", "avg_pool3d_divisor", "adaptive_avg_pool3d",
          "adaptive_max_pool3d", "max_unpool2d", "max_unpool3d", "conv_transpose3d"}


@pytest.mark.parametrize("key", list(CASES))
def test_pooling_surface_values_and_derivatives(key):
    fn, array = CASES[key]

    def program(T):
        x, w = float_leaves(T, "float64", array, W3)
        out = fn(T, T.nn.functional, x, w)
        outs = list(out) if isinstance(out, tuple) else [out]
        leaves = [x, w] if key.startswith("conv") else [x]
        if key not in SECOND:
            return outs, [val(g) for g in T.autograd.grad(weighted(T, outs[0]), leaves)]
        first = T.autograd.grad(weighted(T, outs[0] * outs[0]), leaves, create_graph=True)
        total = sum(weighted(T, g * g) for g in first)
        second = T.autograd.grad(total, leaves, allow_unused=True)
        return outs, [val(g) for g in first], [val(g) for g in second]

    ok(program)


def test_pooling_surface_float32_and_conv_tbc():
    def program(T):
        F = T.nn.functional
        x = T.tensor(V5, dtype=T.float32, requires_grad=True)
        outs = [F.max_pool3d(x, 2, return_indices=True)[0], F.avg_pool3d(x, 3, 1, 1),
                F.adaptive_avg_pool3d(x, (3, 2, 4)), F.adaptive_max_pool3d(x, 2)]
        grads = T.autograd.grad(sum(weighted(T, o) for o in outs), [x])
        inp, wt, b = float_leaves(T, "float64", np.ascontiguousarray(V3.transpose(2, 0, 1)), TBC_W, np.arange(4.0))
        y = T.conv_tbc(inp, wt, b, 1)
        tbc = T.autograd.grad(weighted(T, y), [inp, wt, b])
        return outs, [val(g) for g in grads], y, [val(g) for g in tbc], F.conv_tbc(inp, wt, b)

    ok(program, rtol=1e-5)


ERRORS = [
    lambda T, F, x: F.max_pool3d(x[0, 0], 2),
    lambda T, F, x: F.max_pool3d(x, 2, padding=2),
    lambda T, F, x: F.max_pool3d(x, 5),
    lambda T, F, x: F.max_pool3d(x, (2, 2)),
    lambda T, F, x: F.max_pool3d(x, 2, (1, 1)),
    lambda T, F, x: F.max_pool3d(x, 2, 1, (1, 1)),
    lambda T, F, x: F.max_pool3d(x, 2, 1, 0, (1, 1)),
    lambda T, F, x: F.max_pool3d(x, 2, 0),
    lambda T, F, x: F.max_pool3d(x, 2, 1, 0, 0),
    lambda T, F, x: F.max_pool3d(T.zeros(1, 2, 0, 3, 3), 2),
    lambda T, F, x: F.avg_pool3d(x[0, 0], 2),
    lambda T, F, x: F.avg_pool3d(x, 2, padding=2),
    lambda T, F, x: F.avg_pool3d(x, (5, 2, 2), 1, (2, 0, 0)),
    lambda T, F, x: F.avg_pool3d(x, (2, 2)),
    lambda T, F, x: F.avg_pool3d(x, 2, (1, 1)),
    lambda T, F, x: F.avg_pool3d(x, 2, 1, (1, 1)),
    lambda T, F, x: F.avg_pool3d(x, 2, divisor_override=0),
    lambda T, F, x: F.avg_pool3d(T.zeros(2, 0, 3, 3), 2),
    lambda T, F, x: F.adaptive_avg_pool3d(x[0, 0], 2),
    lambda T, F, x: F.adaptive_avg_pool3d(x, (2, 2)),
    lambda T, F, x: F.adaptive_avg_pool3d(x, -1),
    lambda T, F, x: F.adaptive_avg_pool3d(T.zeros(2, 0, 3, 3), 2),
    lambda T, F, x: F.adaptive_avg_pool3d(x[0, 0, 0], (2, 2, 2)),
    lambda T, F, x: F.adaptive_max_pool3d(x[0, 0], 2),
    lambda T, F, x: F.adaptive_max_pool3d(x, (2, 2)),
    lambda T, F, x: F.adaptive_max_pool3d(x, -1),
    lambda T, F, x: F.adaptive_max_pool3d(T.zeros(2, 0, 3, 3), 2),
    lambda T, F, x: F.max_unpool2d(x, T.zeros(x.shape, dtype=T.int64), 2),
    lambda T, F, x: F.max_unpool2d(x[0, 0], T.zeros(4, 5, 6, dtype=T.int32), 2),
    lambda T, F, x: F.max_unpool2d(x[0, 0], T.zeros(4, 5, 5, dtype=T.int64), 2),
    lambda T, F, x: F.max_unpool2d(x[0, 0], T.full((4, 5, 6), 200), 2),
    lambda T, F, x: F.max_unpool2d(x[0, 0], T.zeros(4, 5, 6, dtype=T.int64), 2,
                                   output_size=[3]),
    lambda T, F, x: F.max_unpool2d(x[0, 0], T.zeros(4, 5, 6, dtype=T.int64), 2,
                                   output_size=[30, 3]),
    lambda T, F, x: F.max_unpool3d(x, T.full(x.shape, 3000), 2),
    lambda T, F, x: F.max_unpool1d(x[0, 0], T.full((4, 5, 6), 13), 2),
    lambda T, F, x: F.conv_transpose3d(x, T.ones(2, 3, 2, 2, 2), stride=2, output_padding=2),
    lambda T, F, x: F.conv_transpose3d(x[0, 0], T.ones(2, 3, 2, 2, 2)),
    lambda T, F, x: T.convolution(x[0], T.ones(3, 2, 2, 2, 2), None, [1], [0], [1], False, [0],
                                  1),
    lambda T, F, x: T.conv_tbc(x[0, 0], T.ones(3, 6, 4), T.zeros(4, 1), 0),
    lambda T, F, x: T.conv_tbc(x[0, 0, 0], T.ones(3, 6), T.zeros(4), 0),
    lambda T, F, x: T.conv_tbc(x[0, 0, 0], T.ones(3, 5, 4), T.zeros(4), 0),
    lambda T, F, x: T.conv_tbc(x[0, 0, 0], T.ones(3, 6, 4), T.zeros(3), 0),
]


def test_pooling_surface_errors():
    for program in ERRORS:
        raises(lambda T, p=program: p(T, T.nn.functional, T.tensor(V5, dtype=T.float32)))


def test_pooling_surface_modules():
    def program(T):
        nn = T.nn
        x = T.tensor(V5, dtype=T.float64, requires_grad=True)
        pool = nn.MaxPool3d(2, return_indices=True)
        out, idx = pool(x)
        layers = [nn.AvgPool3d(3, 2, 1, ceil_mode=True), nn.AdaptiveAvgPool3d((2, None, 3)),
                  nn.AdaptiveMaxPool3d(2), nn.LPPool3d(2, 2), nn.LPPool2d(1.5, (2, 3), 1)]
        outs = [layer(x[0].abs() + 0.1 if isinstance(layer, nn.LPPool2d) else x)
                for layer in layers]
        outs.append(nn.LPPool1d(2, 3)(x[0, 0, 0]))
        unpools = [nn.MaxUnpool3d(2)(out, idx, x.shape), nn.MaxUnpool2d(2)(*nn.MaxPool2d(
            2, return_indices=True)(x[0])), nn.MaxUnpool1d(3, 2)(*nn.MaxPool1d(
                3, 2, return_indices=True)(x[0, 0]))]
        up = set_weights(T, nn.ConvTranspose3d(2, 4, (2, 3, 2), stride=2, padding=1,
                                               output_padding=(1, 0, 0), groups=2))
        y = up(x, output_size=[7, 9, 10])
        loss = sum(weighted(T, o) for o in [out, *outs, *unpools, y])
        loss.backward()
        reprs = [repr(m) for m in [pool, *layers, nn.LPPool1d(2, 3), nn.MaxUnpool1d(2),
                                   nn.MaxUnpool2d(2, 1, 1), nn.MaxUnpool3d((1, 2, 3)), up]]
        return [out, idx, *outs, *unpools, y], x.grad, up.weight.grad, up.bias.grad, reprs

    ok(program)
    same(lambda T: T.nn.ConvTranspose3d(2, 4, 2, padding_mode="reflect"))


LAZY = [
    (lambda nn: nn.LazyLinear(3), (2, 4)),
    (lambda nn: nn.LazyConv1d(4, 2, groups=2), (2, 4, 5)),
    (lambda nn: nn.LazyConv2d(3, 2, bias=False), (2, 4, 4)),
    (lambda nn: nn.LazyConv3d(3, 2), (1, 2, 3, 3, 3)),
    (lambda nn: nn.LazyConvTranspose1d(3, 2, stride=2), (2, 4, 5)),
    (lambda nn: nn.LazyConvTranspose2d(4, 2, groups=2), (2, 4, 3, 3)),
    (lambda nn: nn.LazyConvTranspose3d(3, 2), (2, 2, 2, 2)),
    (lambda nn: nn.LazyBatchNorm1d(), (3, 4)),
    (lambda nn: nn.LazyBatchNorm2d(affine=False), (2, 3, 2, 2)),
    (lambda nn: nn.LazyBatchNorm3d(track_running_stats=False), (2, 3, 2, 2, 2)),
    (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 4)),
    (lambda nn: nn.LazyInstanceNorm2d(affine=True, track_running_stats=True), (2, 3, 4, 4)),
    (lambda nn: nn.LazyInstanceNorm3d(affine=True), (2, 3, 2, 2, 2)),
]


def _state(module, shapes=True):
    return {k: tuple(v.shape) if shapes else (repr(v), type(v).__name__)
            for k, v in module.state_dict().items()}


def test_lazy_modules_initialize_on_first_forward():
    """Before: the Lazy class, uninitialized parameters/buffers in the state dict; after the
    first forward: the regular class with inferred sizes, hooks removed. (Values are drawn from
    each library's own generator, so only shapes are compared.)"""

    def program(T):
        results = []
        for build, shape in LAZY:
            m = build(T.nn)
            before = (repr(m), type(m).__name__, _state(m, False), m.has_uninitialized_params(),
                      [type(p).__name__ for p in m.parameters()],
                      [type(b).__name__ for b in m.buffers()])
            y = m(T.ones(shape))
            after = (repr(m), type(m).__name__, _state(m), tuple(y.shape), y.requires_grad,
                     [type(p).__name__ for p in m.parameters()],
                     [type(b).__name__ for b in m.buffers()], hasattr(m, "_initialize_hook"))
            results.append((before, after))
        return results

    ok(program)


def test_lazy_parameters_state_dict_and_errors():
    def program(T):
        nn = T.nn
        p = nn.UninitializedParameter()
        b = nn.UninitializedBuffer(persistent=False)
        flags = (repr(p), repr(b), type(p).__name__, p.requires_grad, b.requires_grad,
                 b.persistent, isinstance(p, nn.Parameter), nn.parameter.is_lazy(p))
        shape_error = attempt(lambda: p.shape)
        share_error = attempt(lambda: p.share_memory_())
        p.materialize((2, 3), dtype=T.float64)
        materialized = (type(p).__name__, tuple(p.shape), p.dtype, p.requires_grad)
        # an initialized state dict loads into a lazy module (its entries are materialized)
        full = nn.LazyLinear(2)
        full(T.ones(1, 3))
        lazy = nn.LazyLinear(2)
        missing = lazy.load_state_dict(full.state_dict())
        loaded = (type(lazy).__name__, _state(lazy), lazy.has_uninitialized_params(),
                  [T.equal(a, c) for a, c in zip(lazy.parameters(), full.parameters())])
        lazy(T.ones(4, 3))
        converted = (type(lazy).__name__, repr(lazy))
        # an uninitialized state dict into an initialized module: torch's shape error
        into_full = attempt(lambda: nn.Linear(3, 2).load_state_dict(nn.LazyLinear(2).state_dict()))
        keep = nn.LazyConv2d(2, 1).state_dict(keep_vars=True)
        errors = [attempt(lambda: nn.LazyConv2d(2, 3)(T.ones(2, 3))),
                  attempt(lambda: nn.LazyConv1d(2, 3, groups=2)(T.ones(1, 3, 5))),
                  attempt(lambda: nn.LazyLinear(2).weight.shape),
                  attempt(lambda: nn.LazyBatchNorm1d()(T.ones(2, 3, 4, 5)))]
        mismatched = nn.LazyLinear(2)
        mismatched.load_state_dict(full.state_dict())
        errors.append(attempt(lambda: mismatched(T.ones(1, 4))))
        return (flags, shape_error, share_error, materialized, str(missing), loaded, converted,
                into_full, {k: repr(v) for k, v in keep.items()}, errors)

    ok(program)


def test_fractional_max_pool_with_given_samples():
    """Windows placed by explicit ``_random_samples`` (torch's intervals in the samples' dtype):
    values, indices, first and second derivatives, modules and argument errors."""

    def program(T):
        F, nn = T.nn.functional, T.nn
        x4, x5 = float_leaves(T, "float64", V4, V5)
        s4 = T.tensor(SAMPLES2)
        s5 = T.tensor(SAMPLES3)
        outs = [F.fractional_max_pool2d(x4, (2, 3), output_size=(3, 2), _random_samples=s4,
                                        return_indices=True),
                F.fractional_max_pool2d_with_indices(x4[0], 2, output_ratio=(0.5, 0.5),
                                                     _random_samples=s4[:1]),
                F.fractional_max_pool3d(x5, (2, 3, 2), output_size=(2, 2, 4),
                                        _random_samples=s5, return_indices=True),
                F.fractional_max_pool3d_with_indices(x5[1], 2, output_ratio=0.5,
                                                     _random_samples=s5[1:])]
        loss = sum(weighted(T, o[0] * o[0]) for o in outs)
        first = T.autograd.grad(loss, [x4, x5], create_graph=True)
        second = T.autograd.grad(sum(weighted(T, g * g) for g in first), [x4, x5])
        module = nn.FractionalMaxPool3d(2, output_size=(2, 2, 3), return_indices=True,
                                        _random_samples=s5.float())
        module_out = module(x5.float())
        shape_only = nn.FractionalMaxPool2d(2, output_ratio=0.5)(x4).shape
        errors = [attempt(f) for f in (
            lambda: F.fractional_max_pool2d(x4, 2, _random_samples=s4),
            lambda: F.fractional_max_pool2d(x4, 2, output_size=5, _random_samples=s4),
            lambda: F.fractional_max_pool2d(x4, 2, output_size=3, _random_samples=s4[:, :2]),
            lambda: F.fractional_max_pool2d(x4, 2, output_size=3, _random_samples=s4.float()),
            lambda: F.fractional_max_pool2d(x4[0, 0], 2, output_size=3, _random_samples=s4),
            lambda: F.fractional_max_pool2d(x4, 3, output_size=(2, 5), _random_samples=s4),
            lambda: F.fractional_max_pool3d(x5[0, 0], 2, output_size=2, _random_samples=s5),
            lambda: nn.FractionalMaxPool2d(2),
            lambda: nn.FractionalMaxPool2d(2, 2, 0.5),
            lambda: nn.FractionalMaxPool3d(2, output_ratio=1.5),
            lambda: nn.FractionalMaxPool3d(0, output_size=2))]
        return (outs, [val(g) for g in first], [val(g) for g in second], module_out,
                shape_only, repr(module), list(module.state_dict()), errors)

    ok(program)
