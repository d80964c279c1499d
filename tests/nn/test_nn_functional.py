"""jaxgrad.nn.functional against torch.nn.functional: values, gradients, grad_fn graphs
(``next_functions``), versions, errors and warnings, in float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest

from differential import (
    attempt,
    captured_warnings,
    next_functions,
    normalise,
    ok,
    raises,
    same,
    val,
)

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import jaxgrad as J  # noqa: E402
import jaxgrad.nn.functional as JF  # noqa: E402


def F(T):
    return TF if T is torch else JF


RS = np.random.RandomState(0)
randn, rand = RS.randn, RS.rand

# name -> (f(T, *tensors), arrays, indices of arrays that do not require grad)
CASES = {
    "linear_2d": (lambda T, x, w, b: F(T).linear(x, w, b), [randn(2, 3), randn(4, 3), randn(4)]),
    "linear_1d": (lambda T, x, w, b: F(T).linear(x, w, b), [randn(3), randn(4, 3), randn(4)]),
    "linear_4d": (lambda T, x, w, b: F(T).linear(x, w, b),
                  [randn(2, 5, 2, 3), randn(4, 3), randn(4)]),
    "linear_2d_no_bias": (lambda T, x, w: F(T).linear(x, w), [randn(2, 3), randn(4, 3)]),
    "linear_3d_no_bias": (lambda T, x, w: F(T).linear(x, w), [randn(5, 2, 3), randn(4, 3)]),
    "bilinear": (lambda T, x, y, w, b: F(T).bilinear(x, y, w, b),
                 [randn(2, 3), randn(2, 4), randn(5, 3, 4), randn(5)]),
    "relu": (lambda T, x: F(T).relu(x), [randn(2, 3)]),
    "relu_inplace": (lambda T, x: F(T).relu(x * 1, inplace=True), [randn(2, 3)]),
    "gelu": (lambda T, x: F(T).gelu(x), [randn(2, 3)]),
    "gelu_tanh": (lambda T, x: F(T).gelu(x, approximate="tanh"), [randn(2, 3)]),
    "silu": (lambda T, x: F(T).silu(x), [randn(2, 3)]),
    "sigmoid": (lambda T, x: F(T).sigmoid(x), [randn(2, 3)]),
    "tanh": (lambda T, x: F(T).tanh(x), [randn(2, 3)]),
    "softmax": (lambda T, x: F(T).softmax(x, dim=1), [randn(2, 3)]),
    "log_softmax": (lambda T, x: F(T).log_softmax(x, -1), [randn(2, 3)]),
    "softmax_dtype": (lambda T, x: F(T).softmax(x, 0, dtype=T.float64), [randn(2, 3)]),
    "mse": (lambda T, x, t: F(T).mse_loss(x, t), [randn(2, 3), randn(2, 3)]),
    "mse_sum": (lambda T, x, t: F(T).mse_loss(x, t, reduction="sum"), [randn(2, 3), randn(2, 3)]),
    "mse_none": (lambda T, x, t: F(T).mse_loss(x, t, reduction="none"),
                 [randn(2, 3), randn(2, 3)]),
    "mse_weight": (lambda T, x, t, w: F(T).mse_loss(x, t, weight=w),
                   [randn(2, 3), randn(2, 3), rand(2, 3)]),
    "l1": (lambda T, x, t: F(T).l1_loss(x, t), [randn(2, 3), randn(2, 3)]),
    "l1_sum": (lambda T, x, t: F(T).l1_loss(x, t, reduction="sum"), [randn(2, 3), randn(2, 3)]),
    "l1_none": (lambda T, x, t: F(T).l1_loss(x, t, reduction="none"), [randn(2, 3), randn(2, 3)]),
    "cross_entropy": (lambda T, x, t: F(T).cross_entropy(x, t), [randn(3, 4), np.array([0, 3, 1])]),
    "cross_entropy_sum": (lambda T, x, t: F(T).cross_entropy(x, t, reduction="sum"),
                          [randn(3, 4), np.array([0, 3, 1])]),
    "cross_entropy_none": (lambda T, x, t: F(T).cross_entropy(x, t, reduction="none"),
                           [randn(3, 4), np.array([0, 3, 1])]),
    "cross_entropy_weight_ignore": (
        lambda T, x, t, w: F(T).cross_entropy(x, t, weight=w, ignore_index=1),
        [randn(3, 4), np.array([0, 3, 1]), rand(4)], {2}),
    "cross_entropy_smoothing": (lambda T, x, t: F(T).cross_entropy(x, t, label_smoothing=0.1),
                                [randn(3, 4), np.array([0, 3, 1])]),
    "cross_entropy_smoothing_weight": (
        lambda T, x, t, w: F(T).cross_entropy(x, t, weight=w, label_smoothing=0.2,
                                              ignore_index=3),
        [randn(3, 4), np.array([0, 3, 1]), rand(4)], {2}),
    "cross_entropy_smoothing_none": (
        lambda T, x, t: F(T).cross_entropy(x, t, label_smoothing=0.3, reduction="none"),
        [randn(3, 4), np.array([0, 3, 1])]),
    "cross_entropy_probs": (lambda T, x, t: F(T).cross_entropy(x, t), [randn(3, 4), rand(3, 4)], {1}),
    "cross_entropy_probs_smoothing_weight": (
        lambda T, x, t, w: F(T).cross_entropy(x, t, weight=w, label_smoothing=0.2),
        [randn(3, 4), rand(3, 4), rand(4)], {1, 2}),
    "cross_entropy_probs_none": (lambda T, x, t: F(T).cross_entropy(x, t, reduction="none"),
                                 [randn(3, 4), rand(3, 4)], {1}),
    "cross_entropy_4d": (lambda T, x, t: F(T).cross_entropy(x, t),
                         [randn(2, 4, 3, 3), RS.randint(0, 4, (2, 3, 3))]),
    "cross_entropy_3d_none": (lambda T, x, t: F(T).cross_entropy(x, t, reduction="none"),
                              [randn(2, 4, 3), RS.randint(0, 4, (2, 3))]),
    "cross_entropy_1d": (lambda T, x, t: F(T).cross_entropy(x, t), [randn(4), np.array(2)]),
    "nll_loss": (lambda T, x, t: F(T).nll_loss(x, t), [randn(3, 4), np.array([0, 3, 1])]),
    "nll_loss_weight_none": (lambda T, x, t, w: F(T).nll_loss(x, t, w, reduction="none"),
                             [randn(3, 4), np.array([0, 3, 1]), rand(4)], {2}),
    "bce": (lambda T, x, t: F(T).binary_cross_entropy(x, t), [rand(3, 4), rand(3, 4)]),
    "bce_weight_sum": (lambda T, x, t, w: F(T).binary_cross_entropy(x, t, w, reduction="sum"),
                       [rand(3, 4), rand(3, 4), rand(4)], {2}),
    "bce_logits": (lambda T, x, t: F(T).binary_cross_entropy_with_logits(x, t),
                   [randn(3, 4), rand(3, 4)]),
    "bce_logits_weights": (
        lambda T, x, t, w, pw: F(T).binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
        [randn(3, 4), rand(3, 4), rand(4), rand(4)], {2, 3}),
    "conv2d": (lambda T, x, w, b: F(T).conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)),
               [randn(2, 4, 7, 8), randn(6, 4, 3, 3), randn(6)]),
    "conv2d_groups_same": (lambda T, x, w, b: F(T).conv2d(x, w, b, groups=2, padding="same"),
                           [randn(2, 4, 7, 8), randn(6, 2, 3, 3), randn(6)]),
    "conv2d_unbatched": (lambda T, x, w: F(T).conv2d(x, w), [randn(4, 5, 5), randn(3, 4, 2, 2)]),
    "conv1d": (lambda T, x, w, b: F(T).conv1d(x, w, b, stride=2, padding=2, dilation=2),
               [randn(2, 4, 9), randn(6, 4, 3), randn(6)]),
    "conv1d_unbatched_valid": (lambda T, x, w: F(T).conv1d(x, w, padding="valid"),
                               [randn(4, 9), randn(6, 4, 3)]),
    "max_pool2d": (lambda T, x: F(T).max_pool2d(x, 2), [randn(2, 3, 6, 6)]),
    "max_pool2d_indices_ceil": (
        lambda T, x: F(T).max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
        [randn(2, 3, 7, 8)]),
    "max_pool2d_dilation_unbatched": (
        lambda T, x: F(T).max_pool2d(x, (2, 3), 1, (1, 1), dilation=2, return_indices=True),
        [randn(3, 7, 8)]),
    "avg_pool2d": (lambda T, x: F(T).avg_pool2d(x, 3, 2, 1, ceil_mode=True), [randn(2, 3, 7, 8)]),
    "avg_pool2d_exclude_pad": (
        lambda T, x: F(T).avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        [randn(2, 3, 7, 8)]),
    "avg_pool2d_divisor": (lambda T, x: F(T).avg_pool2d(x, 2, divisor_override=3),
                           [randn(3, 7, 8)]),
    "adaptive_avg_pool2d": (lambda T, x: F(T).adaptive_avg_pool2d(x, (3, 5)),
                            [randn(2, 3, 7, 8)]),
    "adaptive_avg_pool2d_none": (lambda T, x: F(T).adaptive_avg_pool2d(x, (None, 3)),
                                 [randn(3, 7, 8)]),
    "adaptive_avg_pool2d_1": (lambda T, x: F(T).adaptive_avg_pool2d(x, 1), [randn(2, 3, 7, 8)]),
    "batch_norm_train": (
        lambda T, x, w, b: F(T).batch_norm(x, T.zeros(3, dtype=x.dtype), T.ones(3, dtype=x.dtype),
                                           w, b, training=True), [randn(4, 3, 5), randn(3), randn(3)]),
    "batch_norm_train_no_stats": (lambda T, x: F(T).batch_norm(x, None, None, training=True),
                                  [randn(4, 3, 2, 2)]),
    "batch_norm_eval": (
        lambda T, x, w, b, m, v: F(T).batch_norm(x, m, v, w, b),
        [randn(4, 3, 5), randn(3), randn(3), randn(3), rand(3) + 0.5], {3, 4}),
    "layer_norm": (lambda T, x, w, b: F(T).layer_norm(x, (4, 5), w, b),
                   [randn(2, 3, 4, 5), randn(4, 5), randn(4, 5)]),
    "layer_norm_no_affine": (lambda T, x: F(T).layer_norm(x, [5]), [randn(2, 3, 5)]),
    "embedding": (lambda T, w, i: F(T).embedding(i, w), [randn(5, 3), np.array([[0, 2], [4, 2]])]),
    "embedding_padding": (lambda T, w, i: F(T).embedding(i, w, padding_idx=-3),
                          [randn(5, 3), np.array([[0, 2], [4, 2]])]),
    "embedding_int32": (lambda T, w, i: F(T).embedding(i.int(), w),
                        [randn(5, 3), np.array([[0, 2], [4, 2]])]),
    "conv1d_same_even": (lambda T, x, w, b: F(T).conv1d(x, w, b, padding="same"),
                         [randn(2, 4, 9), randn(3, 4, 4), randn(3)]),
    "conv2d_same_even_dilated": (lambda T, x, w: F(T).conv2d(x, w, padding="same", dilation=(1, 3)),
                                 [randn(2, 2, 6, 7), randn(3, 2, 2, 2)]),
    "conv1d_same_even_unbatched": (lambda T, x, w: F(T).conv1d(x, w, padding="same"),
                                   [randn(4, 9), randn(3, 4, 2)]),
    "adaptive_avg_pool2d_1_5d": (lambda T, x: F(T).adaptive_avg_pool2d(x, (1, 1)),
                                 [randn(2, 2, 3, 4, 5)]),
    "adaptive_avg_pool2d_1_2d": (lambda T, x: F(T).adaptive_avg_pool2d(x, 1), [randn(4, 5)]),
    "cross_entropy_probs_smoothing": (
        lambda T, x, t: F(T).cross_entropy(x, t, label_smoothing=0.2), [randn(3, 4), rand(3, 4)]),
    "cross_entropy_negative_smoothing": (
        lambda T, x, t: F(T).cross_entropy(x, t, label_smoothing=-0.5),
        [randn(3, 4), np.array([0, 3, 1])]),
    # padding: one row per mode and number of padded dims, batched and unbatched
    "pad_constant": (lambda T, x: F(T).pad(x, (1, 2)), [randn(2, 3)]),
    "pad_constant_value_nd": (lambda T, x: F(T).pad(x, [0, 1, 2, 0, 1, 1], value=-1.5),
                              [randn(2, 3, 2, 2)]),
    "pad_constant_negative": (lambda T, x: F(T).pad(x, (-1, 2, 1, -2), "constant", 3.0),
                              [randn(2, 3, 4)]),
    "pad_constant_crop_only": (lambda T, x: F(T).pad(x, (-1, 0, 0, -1)), [randn(3, 4)]),
    "pad_constant_empty": (lambda T, x: F(T).pad(x, ()), [randn(3)]),
    "pad_reflect_1d": (lambda T, x: F(T).pad(x, (3, 1), mode="reflect"), [randn(2, 3, 5)]),
    "pad_reflect_1d_unbatched": (lambda T, x: F(T).pad(x, (1, 4), mode="reflect"),
                                 [randn(3, 5)]),
    "pad_reflect_1d_negative": (lambda T, x: F(T).pad(x, (-3, 4), mode="reflect"),
                                [randn(2, 3, 5)]),
    "pad_reflect_2d": (lambda T, x: F(T).pad(x, (2, 1, 0, 3), mode="reflect"),
                       [randn(2, 3, 4, 5)]),
    "pad_reflect_2d_unbatched": (lambda T, x: F(T).pad(x, [1, 1, 1, 1], mode="reflect"),
                                 [randn(3, 2, 2)]),
    "pad_reflect_3d": (lambda T, x: F(T).pad(x, (1, 0, 2, 1, 1, 1), mode="reflect"),
                       [randn(2, 1, 2, 3, 4)]),
    "pad_reflect_3d_unbatched": (lambda T, x: F(T).pad(x, (1, 2, 0, 0, -1, 1), mode="reflect"),
                                 [randn(2, 3, 3, 3)]),
    "pad_replicate_1d": (lambda T, x: F(T).pad(x, (4, 2), mode="replicate"), [randn(2, 3, 3)]),
    "pad_replicate_1d_unbatched": (lambda T, x: F(T).pad(x, (0, 7), mode="replicate"),
                                   [randn(3, 2)]),
    "pad_replicate_2d": (lambda T, x: F(T).pad(x, (2, 5, 3, -1), mode="replicate"),
                         [randn(2, 3, 4, 5)]),
    "pad_replicate_3d": (lambda T, x: F(T).pad(x, (1, 2, 3, 0, 1, 1), mode="replicate"),
                         [randn(1, 2, 2, 3, 2)]),
    "pad_replicate_value_zero": (lambda T, x: F(T).pad(x, (1, 1), "replicate", 0.0),
                                 [randn(2, 3)]),
    "pad_circular_1d": (lambda T, x: F(T).pad(x, (2, 3), mode="circular"), [randn(2, 3, 4)]),
    "pad_circular_1d_unbatched": (lambda T, x: F(T).pad(x, (-1, 3), mode="circular"),
                                  [randn(2, 4)]),
    "pad_circular_2d": (lambda T, x: F(T).pad(x, (1, 2, 2, 0), mode="circular"),
                        [randn(2, 2, 3, 4)]),
    "pad_circular_2d_unbatched": (lambda T, x: F(T).pad(x, (0, 0, 1, -2), mode="circular"),
                                  [randn(2, 3, 4)]),
    "pad_circular_3d": (lambda T, x: F(T).pad(x, (1, 1, 0, 2, 1, 0), mode="circular"),
                        [randn(1, 2, 2, 3, 2)]),
}


def _program(fn, arrays, dtype, frozen=()):
    def program(T):
        xs = [T.tensor(a.astype(dtype), requires_grad=i not in frozen) if a.dtype.kind == "f"
              else T.tensor(a) for i, a in enumerate(arrays)]
        out = fn(T, *xs)
        first = out[0] if isinstance(out, tuple) else out
        graph = next_functions(first.grad_fn)
        g = np.asarray(np.random.RandomState(1).randn(*tuple(first.shape))).astype(dtype)
        first.backward(T.tensor(g))
        return out, graph, [val(x.grad) for x in xs if x.requires_grad]

    return program


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, dtype):
    fn, arrays, *frozen = CASES[name]
    ok(_program(fn, arrays, dtype, frozen[0] if frozen else ()),
       rtol=None if dtype == np.float64 else 2e-5)


def test_linear_non_contiguous_input_adds_bias_in_place():
    arrays = randn(5, 2, 3), randn(4, 3), randn(4)

    def program(T):
        x, w, b = (T.tensor(a, requires_grad=True) for a in arrays)
        y = F(T).linear(x.transpose(0, 1), w, b)
        return y, y._version, next_functions(y.grad_fn).__getitem__(0)

    ok(program)


def test_batch_norm_updates_running_stats_without_bumping_versions():
    x, m, v = randn(6, 3, 4), randn(3), rand(3) + 1

    def program(T):
        mean, var = T.tensor(m), T.tensor(v)
        w = T.ones(3, dtype=T.float64, requires_grad=True)
        out = F(T).batch_norm(T.tensor(x), mean, var, w, None, training=True, momentum=0.3,
                              eps=1e-3)
        saved_mean = out.grad_fn._saved_result1.detach()
        out.sum().backward()
        return out, mean, var, mean._version, var._version, saved_mean, w.grad

    ok(program)


def test_batch_norm_second_order():
    x, w = randn(4, 3), randn(3)

    def program(T):
        xt, wt = T.tensor(x, requires_grad=True), T.tensor(w, requires_grad=True)
        out = F(T).batch_norm(xt, None, None, wt, training=True)
        (gx,) = T.autograd.grad((out ** 3).sum(), xt, create_graph=True)
        gx.sum().backward()
        # values only: jaxgrad names double-backward nodes <Node>Backward, torch by kernel
        return gx.detach(), xt.grad, wt.grad

    ok(program)


def test_cross_entropy_second_order():
    x = randn(3, 4)

    def program(T):
        xt = T.tensor(x, requires_grad=True)
        loss = F(T).cross_entropy(xt, T.tensor([1, 0, 3]), label_smoothing=0.1)
        (g,) = T.autograd.grad(loss, xt, create_graph=True)
        (g ** 2).sum().backward()
        return g.detach(), xt.grad

    ok(program)


def test_saved_tensors_are_torchs():
    x, w = randn(2, 3, 6, 6), randn(4, 3, 3, 3)

    def program(T):
        xt, wt = T.tensor(x, requires_grad=True), T.tensor(w, requires_grad=True)
        conv = F(T).conv2d(xt, wt)
        pooled, idx = F(T).max_pool2d(conv, 2, return_indices=True)
        ln = F(T).layer_norm(pooled, (2, 2))
        loss = F(T).cross_entropy(ln.flatten(1), T.tensor([0, 3]))
        fn = loss.grad_fn
        return (conv.grad_fn._saved_input, conv.grad_fn._saved_weight,
                pooled.grad_fn._saved_result1, ln.grad_fn._saved_result1,
                ln.grad_fn._saved_result2, fn._saved_target,
                fn._saved_total_weight, fn._saved_reduction,
                idx)

    ok(program)


def test_saved_non_differentiable_output_has_no_history():
    x = randn(1, 1, 4, 4)

    def program(T):
        pooled = F(T).max_pool2d(T.tensor(x, requires_grad=True), 2)
        return pooled.grad_fn._saved_result1

    ok(program)


def test_inplace_on_saved_input_is_detected():
    a = randn(2, 3)

    def program(T):
        x = T.tensor(a, requires_grad=True)
        y = x * 1
        out = F(T).gelu(y)
        y.add_(1)
        out.sum().backward()

    raises(program)


ERRORS = {
    "nll_target_out_of_bounds": lambda T: F(T).nll_loss(T.randn(3, 4), T.tensor([0, 5, 1])),
    "cross_entropy_negative_target": lambda T: F(T).cross_entropy(T.zeros(3, 4),
                                                                  T.tensor([0, -2, 1])),
    "nll_batch_mismatch": lambda T: F(T).nll_loss(T.randn(3, 4), T.tensor([0, 1])),
    "cross_entropy_batch_mismatch": lambda T: F(T).cross_entropy(T.randn(3, 4), T.tensor([0, 1])),
    "nll_weight_requires_grad": lambda T: F(T).nll_loss(
        T.randn(3, 4), T.tensor([0, 1, 2]), T.ones(4, requires_grad=True)),
    "bce_size": lambda T: F(T).binary_cross_entropy(T.rand(3, 4), T.rand(4)),
    "bce_logits_size": lambda T: F(T).binary_cross_entropy_with_logits(T.rand(3, 4), T.rand(4)),
    "bad_reduction": lambda T: F(T).mse_loss(T.rand(3), T.rand(3), reduction="avg"),
    "mse_weight_size": lambda T: F(T).mse_loss(T.rand(3), T.rand(3), weight=T.rand(1)),
    "linear_shapes": lambda T: F(T).linear(T.rand(2, 3), T.rand(4, 5), T.rand(4)),
    "conv_channels": lambda T: F(T).conv2d(T.rand(1, 6, 5, 5), T.rand(4, 3, 3, 3)),
    "conv_dims": lambda T: F(T).conv2d(T.rand(5, 5), T.rand(4, 3, 3, 3)),
    "conv_same_strided": lambda T: F(T).conv2d(T.rand(1, 3, 5, 5), T.rand(4, 3, 3, 3),
                                               stride=2, padding="same"),
    "max_pool_pad": lambda T: F(T).max_pool2d(T.rand(1, 1, 4, 4), 2, padding=2),
    "avg_pool_pad": lambda T: F(T).avg_pool2d(T.rand(1, 1, 4, 4), 2, padding=2),
    "pool_too_small": lambda T: F(T).max_pool2d(T.rand(1, 3, 1, 1), 2),
    "pool_dims": lambda T: F(T).max_pool2d(T.rand(4, 4), 2),
    "batch_norm_one_value": lambda T: F(T).batch_norm(T.rand(1, 3), None, None, training=True),
    "layer_norm_shape": lambda T: F(T).layer_norm(T.rand(2, 3, 6, 5), (6,)),
    "dropout_p": lambda T: F(T).dropout(T.rand(3), 1.5),
    "embedding_padding_idx": lambda T: F(T).embedding(T.tensor([0]), T.rand(3, 2), padding_idx=3),
    "embedding_index": lambda T: F(T).embedding(T.tensor([3]), T.rand(3, 2)),
    "gelu_approximate": lambda T: F(T).gelu(T.rand(3), approximate="fast"),
    "embedding_float_index": lambda T: F(T).embedding(T.tensor([1.0]), T.rand(3, 2)),
    "embedding_double_index": lambda T: F(T).embedding(T.tensor([1.0], dtype=T.float64),
                                                       T.rand(3, 2)),
    "embedding_short_index": lambda T: F(T).embedding(T.tensor([1], dtype=T.int16),
                                                      T.rand(3, 2)),
    "embedding_byte_index": lambda T: F(T).embedding(T.tensor([1], dtype=T.uint8), T.rand(3, 2)),
    "embedding_bool_index": lambda T: F(T).embedding(T.tensor([True]), T.rand(3, 2)),
    "cross_entropy_smoothing_big": lambda T: F(T).cross_entropy(T.rand(2, 3), T.tensor([0, 1]),
                                                                label_smoothing=1.0000001),
    "cross_entropy_smoothing_huge": lambda T: F(T).cross_entropy(
        T.rand(2, 3), T.rand(2, 3), label_smoothing=1e20),
    "cross_entropy_probs_ignore_index": lambda T: F(T).cross_entropy(T.rand(2, 3), T.rand(2, 3),
                                                                     ignore_index=1),
    "conv1d_kernel_too_big": lambda T: F(T).conv1d(T.ones(1, 1, 3), T.ones(1, 1, 5), padding=0),
    "conv2d_kernel_too_big_dilated": lambda T: F(T).conv2d(T.ones(1, 1, 3, 3),
                                                           T.ones(1, 1, 2, 3), dilation=2),
    "conv2d_kernel_too_big_unbatched": lambda T: F(T).conv2d(T.ones(1, 3, 3),
                                                             T.ones(1, 1, 2, 5)),
    "adaptive_5d": lambda T: F(T).adaptive_avg_pool2d(T.rand(2, 2, 2, 3, 3), 2),
    "adaptive_1d_mean": lambda T: F(T).adaptive_avg_pool2d(T.rand(3), 1),
    "adaptive_output_size_3": lambda T: F(T).adaptive_avg_pool2d(T.rand(2, 3, 3), (1, 1, 1)),
    "adaptive_output_size_negative": lambda T: F(T).adaptive_avg_pool2d(T.rand(2, 3, 3),
                                                                        (-1, 2)),
    "adaptive_none_too_long": lambda T: F(T).adaptive_avg_pool2d(T.rand(3, 3), (None, 2)),
    "adaptive_empty": lambda T: F(T).adaptive_avg_pool2d(T.rand(2, 0, 3), 2),
    "adaptive_int": lambda T: F(T).adaptive_avg_pool2d(T.ones(2, 3, 3, dtype=T.int64), 1),
    # F.pad: argument checks, then each kernel's own
    "pad_mode": lambda T: F(T).pad(T.rand(2, 3), (1, 1), mode="mirror"),
    "pad_odd": lambda T: F(T).pad(T.rand(2, 3), (1, 2, 3), mode="reflect"),
    "pad_too_long": lambda T: F(T).pad(T.rand(2, 3), (1, 1, 1, 1, 1, 1)),
    "pad_float": lambda T: F(T).pad(T.rand(2, 3), (1.0, 1)),
    "pad_value_reflect": lambda T: F(T).pad(T.rand(2, 3), (1, 1), mode="reflect", value=1.0),
    "pad_value_circular": lambda T: F(T).pad(T.rand(2, 3), (1, 1), mode="circular", value=2),
    "pad_constant_negative_size": lambda T: F(T).pad(T.rand(2, 3), (-2, -2)),
    "pad_constant_negative_left": lambda T: F(T).pad(T.rand(2, 3), (-4, 2)),
    "pad_reflect_1d_input": lambda T: F(T).pad(T.rand(3), (1, 1), mode="reflect"),
    "pad_reflect_4d_pad2": lambda T: F(T).pad(T.rand(1, 1, 1, 3), (1, 1), mode="reflect"),
    "pad_circular_5d_pad2": lambda T: F(T).pad(T.rand(1, 1, 1, 1, 3), (1, 1), mode="circular"),
    "pad_replicate_pad8": lambda T: F(T).pad(T.rand(1, 1, 1, 1, 3), (1,) * 8, mode="replicate"),
    "pad_reflect_big_left": lambda T: F(T).pad(T.rand(1, 2, 3), (3, 1), mode="reflect"),
    "pad_reflect_big_right": lambda T: F(T).pad(T.rand(1, 2, 3), (1, 3), mode="reflect"),
    "pad_reflect_big_h": lambda T: F(T).pad(T.rand(1, 2, 3), (1, 1, 2, 0), mode="reflect"),
    "pad_reflect_big_d": lambda T: F(T).pad(T.rand(2, 3, 3, 4), (0, 0, 0, 0, 0, 3),
                                            mode="reflect"),
    "pad_reflect_big_w_3d": lambda T: F(T).pad(T.rand(1, 2, 3, 4, 2), (0, 2, 0, 0, 0, 0),
                                               mode="reflect"),
    "pad_reflect_too_small_1d": lambda T: F(T).pad(T.rand(1, 2, 3), (-2, -2), mode="reflect"),
    "pad_reflect_zero_1d": lambda T: F(T).pad(T.rand(1, 3), (-2, -1), mode="reflect"),
    "pad_reflect_too_small_2d": lambda T: F(T).pad(T.rand(1, 3, 3), (-2, -1, -2, -1),
                                                   mode="reflect"),
    "pad_reflect_negative_w_2d": lambda T: F(T).pad(T.rand(1, 3, 3), (-2, -2, 0, 0),
                                                    mode="reflect"),
    "pad_reflect_too_small_3d": lambda T: F(T).pad(T.rand(1, 3, 3, 3), (-2,) * 6,
                                                   mode="reflect"),
    "pad_reflect_negative_w_3d": lambda T: F(T).pad(T.rand(1, 3, 3, 3), (-2, -2, 0, 0, 0, 0),
                                                    mode="reflect"),
    "pad_replicate_too_small_2d": lambda T: F(T).pad(T.rand(1, 3, 3), (-2, -2, -2, -2),
                                                     mode="replicate"),
    "pad_replicate_negative_h_2d": lambda T: F(T).pad(T.rand(1, 3, 3), (0, 0, -2, -2),
                                                      mode="replicate"),
    "pad_replicate_too_small_1d": lambda T: F(T).pad(T.rand(1, 3), (-2, -1), mode="replicate"),
    "pad_replicate_too_small_3d": lambda T: F(T).pad(T.rand(1, 3, 3, 3), (-2,) * 6,
                                                     mode="replicate"),
    "pad_reflect_empty_channels": lambda T: F(T).pad(T.rand(1, 0, 3), (1, 1), mode="reflect"),
    "pad_replicate_empty_unbatched": lambda T: F(T).pad(T.rand(0, 3, 3), (1, 1, 1, 1),
                                                        mode="replicate"),
    "pad_reflect_empty_3d": lambda T: F(T).pad(T.rand(1, 1, 3, 0, 3), (1,) * 6,
                                               mode="reflect"),
    "pad_reflect_bool": lambda T: F(T).pad(T.ones(1, 2, 3, dtype=T.bool), (1, 1),
                                           mode="reflect"),
    "pad_replicate_bool": lambda T: F(T).pad(T.ones(1, 2, 3, 3, dtype=T.bool), (1, 1, 1, 1),
                                             mode="replicate"),
    "pad_circular_wrap": lambda T: F(T).pad(T.rand(1, 2, 3), (4, 1), mode="circular"),
    "pad_circular_wrap_h": lambda T: F(T).pad(T.rand(1, 2, 3), (1, 1, 0, 3), mode="circular"),
    "pad_circular_negative": lambda T: F(T).pad(T.rand(1, 2, 3), (-2, -2), mode="circular"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    raises(ERRORS[name])


PAD_EDGES = {
    "reflect_int": lambda T: F(T).pad(T.arange(6).reshape(1, 2, 3), (2, 1), mode="reflect"),
    "replicate_int32": lambda T: F(T).pad(T.arange(6, dtype=T.int32).reshape(2, 3), (2, 1),
                                          mode="replicate"),
    "circular_int": lambda T: F(T).pad(T.arange(6).reshape(1, 2, 3), (2, 1), mode="circular"),
    "constant_int_value": lambda T: F(T).pad(T.arange(6).reshape(2, 3), (1, 1), value=-2.5),
    "constant_bool": lambda T: F(T).pad(T.ones(2, dtype=T.bool), (1, 1), value=0.0),
    "constant_0d": lambda T: F(T).pad(T.tensor(1.5), ()),
    "constant_to_empty": lambda T: F(T).pad(T.ones(2, 3), (-2, -1)),
    "reflect_empty_batch": lambda T: F(T).pad(T.ones(0, 2, 3, requires_grad=True), (1, 1),
                                              mode="reflect"),
    "replicate_empty_batch_3d": lambda T: F(T).pad(T.ones(0, 1, 3, 2, 3), (1,) * 6,
                                                   mode="replicate"),
    "replicate_zero_width_2d": lambda T: F(T).pad(T.ones(1, 3, 3), (-2, -1, 0, 0),
                                                  mode="replicate"),
    "reflect_zero_depth_3d": lambda T: F(T).pad(T.ones(1, 3, 3, 3), (0, 0, 0, 0, -2, -1),
                                                mode="reflect"),
    "circular_empty_channels": lambda T: F(T).pad(T.ones(1, 0, 3), (1, 1), mode="circular"),
    "circular_to_empty": lambda T: F(T).pad(T.ones(1, 2, 3), (-2, -1), mode="circular"),
    "replicate_no_grad": lambda T: F(T).pad(T.ones(1, 2, 3, requires_grad=True).detach(),
                                            (1, 1), mode="replicate"),
}


@pytest.mark.parametrize("name", list(PAD_EDGES))
def test_pad_edge_cases_match_torch(name):
    ok(PAD_EDGES[name])


def test_pad_saves_its_input_as_torch_does():
    """reflection/replication pads save ``self``: modifying it in place breaks their backward;
    constant and circular padding save nothing of it."""

    def program(T, mode):
        x = T.ones(1, 2, 3, requires_grad=True)
        h = x * 1
        y = F(T).pad(h, (1, 1), mode=mode)
        h.add_(1)
        y.sum().backward()
        return y, x.grad

    for mode in ("constant", "reflect", "replicate", "circular"):
        same(lambda T, mode=mode: program(T, mode))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_double_backward_matches_torch(mode):
    """Values of the second derivative (the double-backward nodes' names are jaxgrad's own
    ``<Node>Backward`` convention, and versions of gradients are test_grad_versions.py's, so
    neither is compared here)."""
    x0 = randn(2, 3, 4)

    def program(T):
        x = T.tensor(x0, requires_grad=True)
        y = F(T).pad(x, (2, 1, 1, 2), mode=mode) ** 2
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        return g.detach(), gg.clone()

    ok(program)


WARNINGS = {
    "mse_broadcast": lambda T: F(T).mse_loss(T.rand(3, 4), T.rand(4)),
    "l1_broadcast": lambda T: F(T).l1_loss(T.rand(3, 4), T.rand(4)),
    "softmax_implicit_dim": lambda T: F(T).softmax(T.rand(2, 3)),
    "log_softmax_implicit_dim": lambda T: F(T).log_softmax(T.rand(3)),
}


@pytest.mark.parametrize("name", list(WARNINGS))
def test_warnings_match_torch(name):
    assert captured_warnings(WARNINGS[name], torch) == captured_warnings(WARNINGS[name], J)


_SAME_PADDING_SCRIPT = """
import json, warnings
import {lib} as T
import {lib}.nn.functional as F
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        F.conv1d(T.ones(1, 1, 5), T.ones(1, 1, 4), padding="same")
    F.conv2d(T.ones(1, 1, 5, 5), T.ones(1, 1, 3, 2), padding="same")
print(json.dumps([(w.category.__name__, w.filename, str(w.message)) for w in caught]))
"""


def test_same_padding_warns_once_like_torch():
    """torch's TORCH_WARN_ONCE about an even 'same' kernel: once per process, pointing at the
    caller of F.conv1d. Run in fresh processes, since the first warning is the only one."""
    import json
    import subprocess
    import sys

    def warnings_of(lib):
        done = subprocess.run([sys.executable, "-c", _SAME_PADDING_SCRIPT.format(lib=lib)],
                              capture_output=True, text=True, check=True)
        caught = json.loads(done.stdout.strip().splitlines()[-1])
        return [(cls, where, normalise(message)) for cls, where, message in caught]

    assert warnings_of("jaxgrad") == warnings_of("torch")


def test_mse_broadcast_graph_expands_target():
    a, b = randn(3, 4), randn(4)

    def program(T):
        x = T.tensor(a, requires_grad=True)
        t = T.tensor(b, requires_grad=True)
        loss = F(T).mse_loss(x, t)
        loss.backward()
        return loss, next_functions(loss.grad_fn), x.grad, t.grad

    same(program)


def test_implicit_softmax_dims_match_torch():
    arrays = [randn(*shape) for shape in [(3,), (2, 3), (2, 3, 2), (2, 2, 2, 2)]]

    def program(T):
        return [F(T).softmax(T.tensor(a), _stacklevel=2) for a in arrays]

    same(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.one_hot(T.tensor([0, 3, 1])),
    lambda T: T.nn.functional.one_hot(T.tensor([[0, 1], [2, 0]]), 5),
    lambda T: T.nn.functional.one_hot(T.tensor(2)),
    lambda T: T.nn.functional.one_hot(T.tensor([], dtype=T.int64), 3),
    lambda T: T.nn.functional.one_hot(T.tensor([1.0])),
    lambda T: T.nn.functional.one_hot(T.tensor([1, 2], dtype=T.int32)),
    lambda T: T.nn.functional.one_hot(T.tensor([1, -1])),
    lambda T: T.nn.functional.one_hot(T.tensor([1, 3]), 3),
    lambda T: T.nn.functional.one_hot(T.tensor([], dtype=T.int64)),
    lambda T: T.nn.functional.one_hot(T.tensor([1, 2]), -2),
])
def test_one_hot(call):
    same(call)


@pytest.mark.parametrize("dtypes", [("float64", "float32", "float32"),
                                    ("float32", "float32", "float64"),
                                    ("float32", "float64", "float64")])
def test_linear_and_addmm_refuse_mixed_dtypes_as_torch(dtypes):
    def program(T):
        x, w, b = (T.ones(*s, dtype=getattr(T, d)) for s, d in zip(((2, 3), (4, 3), (4,)), dtypes))
        return attempt(lambda: T.nn.functional.linear(x, w, b)), attempt(
            lambda: T.addmm(b, x, w.t()))

    ok(program)


def test_linear_saves_addmm_scalars_as_torch():
    def program(T):
        x, w, b = (T.ones(*s, requires_grad=True) for s in ((2, 3), (4, 3), (4,)))
        fn = T.nn.functional.linear(x, w, b).grad_fn
        return type(fn).__name__, fn._saved_alpha, fn._saved_beta, fn._saved_mat1

    ok(program)


# --- dropout: the distribution, not torch's values ----------------------------------------------

def test_dropout_keeps_a_fraction_one_minus_p_scaled_by_its_inverse():
    J.manual_seed(0)
    x = J.ones(200_000, requires_grad=True)
    y = JF.dropout(x, 0.3)
    values = np.asarray(y.detach()._value)
    assert set(np.unique(values).tolist()) == {0.0, np.float32(1 / 0.7)}
    assert abs((values != 0).mean() - 0.7) < 0.005
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad._value), values)
    assert type(y.grad_fn).__name__ == "MulBackward0"


def test_dropout_is_reproducible_under_manual_seed():
    J.manual_seed(5)
    a = JF.dropout(J.ones(100), 0.5)
    J.manual_seed(5)
    assert J.equal(a, JF.dropout(J.ones(100), 0.5))


@pytest.mark.parametrize("p, training", [(0.0, True), (0.5, False), (1.0, True)])
def test_dropout_identities_and_p_one(p, training):
    a = randn(2, 3)

    def program(T):
        x = T.tensor(a, requires_grad=True)
        y = F(T).dropout(x, p, training)
        return y, y is x, next_functions(y.grad_fn)

    ok(program)


def test_dropout_inplace_bumps_version_and_records_mul():
    a = randn(2, 3)

    def program(T):
        x = T.tensor(a, requires_grad=True)
        y = x * 1
        z = F(T).dropout(y, 0.999999, inplace=True)
        return z is y, y._version, next_functions(y.grad_fn)

    ok(program)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_selu_statistics_and_torch_affine_map(feature):
    """Masks differ from torch's (another generator); what torch fixes is checked: a kept element
    becomes x a + alpha a p, a dropped one -alpha a (1 - p), the gradient is a where kept, and
    zero-mean unit-variance inputs keep their statistics."""
    p = 0.3
    J.manual_seed(0)
    x = J.randn(*((40, 50, 100) if feature else (400, 500)), requires_grad=True)
    f = JF.feature_alpha_dropout if feature else JF.alpha_dropout
    y = f(x, p, training=True)
    y.sum().backward()
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    g, xv, yv = (np.asarray(t._value) for t in (x.grad, x.detach(), y.detach()))
    kept = g != 0
    np.testing.assert_allclose(g[kept], a, rtol=1e-6)
    np.testing.assert_allclose(yv[kept], xv[kept] * a + alpha * a * p, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(yv[~kept], -alpha * a * (1 - p), rtol=1e-5)
    assert abs(kept.mean() - (1 - p)) < 0.03 and abs(yv.mean()) < 0.05 and abs(yv.std() - 1) < 0.05
    if feature:  # each (sample, channel) shares one draw
        assert (kept.all(axis=-1) | (~kept).all(axis=-1)).all()
    assert type(y.grad_fn).__name__ == "AddBackward0"


ALPHA_DROPOUT = {
    "eval_is_input": lambda T: (lambda x: F(T).alpha_dropout(x, 0.5) is x)(T.ones(3)),
    "p0_is_input": lambda T: (lambda x: F(T).alpha_dropout(x, 0.0, True) is x)(T.ones(3)),
    "p1_zeros": lambda T: (lambda x: (lambda y: (y, next_functions(y.grad_fn)))(
        F(T).alpha_dropout(x, 1.0, True)))(T.ones(2, 3, requires_grad=True)),
    "feature_p1_inplace": lambda T: (lambda x: (lambda y: (y is x, x._version))(
        F(T).feature_alpha_dropout(x, 1.0, True, inplace=True)))(T.ones(2, 3)),
    "bad_p": lambda T: F(T).alpha_dropout(T.ones(3), 1.5, True),
    "feature_1d": lambda T: F(T).feature_alpha_dropout(T.ones(3), 0.5, True),
    "feature_1d_eval": lambda T: F(T).feature_alpha_dropout(T.ones(3), 0.5, False),
    "module_eval": lambda T: (lambda m: (repr(m), m.eval()(T.ones(2))))(
        T.nn.AlphaDropout(0.2)),
    "feature_module_eval": lambda T: (lambda m: (repr(m), m.eval()(T.ones(2, 2))))(
        T.nn.FeatureAlphaDropout(0.2, inplace=True)),
    "module_bad_p": lambda T: T.nn.AlphaDropout(-0.1),
}


@pytest.mark.parametrize("name", list(ALPHA_DROPOUT))
def test_alpha_dropout_edges_match_torch(name):
    same(ALPHA_DROPOUT[name])


# --- shapes that do not broadcast: torch's errors and warnings ----------------------------------

BROADCAST_ERRORS = {
    "mse_mismatch": lambda T: F(T).mse_loss(T.ones(3), T.ones(2)),
    "l1_mismatch": lambda T: F(T).l1_loss(T.ones(3), T.ones(2)),
    "mse_mismatch_2d": lambda T: F(T).mse_loss(T.ones(2, 3), T.ones(4, 3), reduction="sum"),
    "l1_mismatch_none": lambda T: F(T).l1_loss(T.ones(2, 3), T.ones(4, 3), reduction="none"),
    "mse_mismatch_weight": lambda T: F(T).mse_loss(T.ones(3), T.ones(2), weight=T.ones(3)),
    "bce_weight_mismatch": lambda T: F(T).binary_cross_entropy(
        T.full((2, 3), 0.5), T.ones(2, 3), weight=T.ones(4)),
    "bce_weight_mismatch_2d": lambda T: F(T).binary_cross_entropy(
        T.full((2, 3), 0.5), T.ones(2, 3), weight=T.ones(5, 2)),
    "bce_weight_mismatch_3d": lambda T: F(T).binary_cross_entropy(
        T.full((2, 3), 0.5), T.ones(2, 3), weight=T.ones(5, 4, 2)),
    "bce_weight_grows_output": lambda T: F(T).binary_cross_entropy(
        T.full((2, 3), 0.5), T.ones(2, 3), weight=T.ones(2, 1, 3), reduction="sum"),
}


@pytest.mark.parametrize("name", list(BROADCAST_ERRORS))
def test_broadcast_errors_match_torch(name):
    raises(BROADCAST_ERRORS[name])
    assert (captured_warnings(BROADCAST_ERRORS[name], torch)
            == captured_warnings(BROADCAST_ERRORS[name], J))


@pytest.mark.parametrize("shape", [(2, 1), (1, 3), (3,)])
def test_broadcasting_losses_match_torch(shape):
    a, b, c = randn(2, 3), rand(*shape), rand(2, 3)

    def program(T):
        x = T.tensor(a, requires_grad=True)
        w = T.tensor(b)
        p = T.tensor(c, requires_grad=True)
        out = [F(T).mse_loss(x, T.ones(*shape)), F(T).l1_loss(x, T.ones(*shape)),
               F(T).binary_cross_entropy(p, T.ones(2, 3, dtype=T.float64), weight=w)]
        sum(out).backward()
        return out, x.grad, p.grad

    ok(program)


# --- class-index targets: torch 2.13's dtype and shape checks, in its order ----------------------

_TARGET_DTYPES = ["float32", "float64", "float16", "int32", "int16", "int8", "bool", "uint8"]


def _target(T, shape, dtype):
    return T.zeros(shape, dtype=getattr(T, dtype))


@pytest.mark.parametrize("dtype", _TARGET_DTYPES)
@pytest.mark.parametrize("where", ["nll_2d", "nll_1d", "nll_3d", "nll_4d", "cross_entropy",
                                   "cross_entropy_smoothing", "cross_entropy_probs",
                                   "embedding"])
def test_target_dtypes_match_torch(where, dtype):
    x2, x3, x4 = randn(3, 4), randn(3, 4, 5), randn(3, 4, 2, 2)

    def program(T):
        f = F(T)
        if where == "nll_2d":
            return f.nll_loss(T.tensor(x2), _target(T, 3, dtype))
        if where == "nll_1d":
            return f.nll_loss(T.tensor(x2[0]), _target(T, (), dtype))
        if where == "nll_3d":
            return f.nll_loss(T.tensor(x3), _target(T, (3, 5), dtype))
        if where == "nll_4d":
            return f.nll_loss(T.tensor(x4), _target(T, (3, 2, 2), dtype))
        if where == "cross_entropy":
            return f.cross_entropy(T.tensor(x2), _target(T, 3, dtype))
        if where == "cross_entropy_smoothing":
            return f.cross_entropy(T.tensor(x2), _target(T, 3, dtype), label_smoothing=0.1)
        if where == "cross_entropy_probs":
            return f.cross_entropy(T.tensor(x2), _target(T, (3, 4), dtype))
        return f.embedding(_target(T, 3, dtype), T.tensor(x2))

    same(program)


NLL_CHECK_ORDER = {
    "float_target_bad_weight": lambda T: F(T).nll_loss(T.randn(3, 4), T.zeros(3),
                                                       weight=T.ones(2)),
    "float_target_2d": lambda T: F(T).nll_loss(T.randn(3, 4), T.zeros(3, 2)),
    "long_target_2d": lambda T: F(T).nll_loss(T.randn(3, 4), T.zeros(3, 2, dtype=T.int64)),
    "float_target_weight_requires_grad": lambda T: F(T).nll_loss(
        T.randn(3, 4), T.zeros(3), weight=T.ones(4, requires_grad=True)),
    "weight_2d": lambda T: F(T).nll_loss(T.randn(3, 4), T.zeros(3, dtype=T.int64),
                                         weight=T.ones(2, 2)),
    "byte_target_out_of_bounds": lambda T: F(T).nll_loss(T.randn(3, 4),
                                                         T.full((3,), 7, dtype=T.uint8)),
    "3d_target_size_float": lambda T: F(T).nll_loss(T.randn(3, 4, 5), T.zeros(3, 6)),
    "3d_target_size_byte": lambda T: F(T).nll_loss(T.randn(3, 4, 5),
                                                   T.zeros(3, 6, dtype=T.uint8)),
    "4d_target_dims": lambda T: F(T).nll_loss(T.randn(3, 4, 2, 2), T.zeros(3, 2)),
    "4d_target_size": lambda T: F(T).nll_loss(T.randn(3, 4, 2, 2),
                                              T.zeros(3, 2, 3, dtype=T.int64)),
    "4d_bad_weight": lambda T: F(T).nll_loss(T.randn(3, 4, 2, 2), T.zeros(3, 2, 2, dtype=T.uint8),
                                             weight=T.ones(2)),
    "4d_weight_requires_grad": lambda T: F(T).nll_loss(
        T.randn(3, 4, 2, 2), T.zeros(3, 2), weight=T.ones(4, requires_grad=True)),
    "4d_out_of_bounds": lambda T: F(T).nll_loss(T.randn(3, 4, 2, 2),
                                                T.full((3, 2, 2), 7, dtype=T.int64)),
    "4d_byte_out_of_bounds": lambda T: F(T).nll_loss(T.randn(3, 4, 2, 2),
                                                     T.full((3, 2, 2), 7, dtype=T.uint8)),
    # the kernels read the class weight in the input's dtype before any target
    "weight_dtype": lambda T: F(T).nll_loss(T.randn(3, 4), T.zeros(3, dtype=T.int64),
                                            weight=T.ones(4, dtype=T.float64)),
    "weight_dtype_out_of_bounds": lambda T: F(T).nll_loss(
        T.randn(3, 4), T.full((3,), 7), weight=T.ones(4, dtype=T.float64)),
    "weight_dtype_all_ignored": lambda T: F(T).nll_loss(
        T.randn(3, 4), T.full((3,), -100), weight=T.ones(4, dtype=T.float64), reduction="none"),
    "weight_dtype_byte_target": lambda T: F(T).nll_loss(
        T.randn(3, 4), T.zeros(3, dtype=T.uint8), weight=T.ones(4, dtype=T.float64)),
    "weight_dtype_float_target": lambda T: F(T).nll_loss(
        T.randn(3, 4), T.zeros(3), weight=T.ones(4, dtype=T.float64)),
    "weight_int": lambda T: F(T).nll_loss(T.randn(4), T.tensor(1), weight=T.ones(4, dtype=T.int64)),
    "weight_dtype_double_input": lambda T: F(T).nll_loss(
        T.randn(3, 4, dtype=T.float64), T.zeros(3, dtype=T.int64), weight=T.ones(4)),
    "4d_weight_dtype_out_of_bounds": lambda T: F(T).nll_loss(
        T.randn(3, 4, 2, 2), T.full((3, 2, 2), 7), weight=T.ones(4, dtype=T.float64)),
    "4d_weight_dtype_byte": lambda T: F(T).nll_loss(
        T.randn(3, 4, 2, 2), T.zeros(3, 2, 2, dtype=T.uint8), weight=T.ones(4, dtype=T.float64)),
    "5d_weight_dtype": lambda T: F(T).nll_loss(T.randn(3, 4, 2, 2, 2), T.zeros(3, 2, 2, 2).long(),
                                               weight=T.ones(4, dtype=T.float16)),
    "cross_entropy_weight_dtype": lambda T: F(T).cross_entropy(
        T.randn(3, 4), T.zeros(3, dtype=T.int64), weight=T.ones(4, dtype=T.float64)),
    "cross_entropy_smoothing_weight_dtype": lambda T: F(T).cross_entropy(
        T.randn(3, 4), T.zeros(3, dtype=T.int64), weight=T.ones(4, dtype=T.float64),
        label_smoothing=0.1),
    "cross_entropy_module_weight_dtype": lambda T: T.nn.CrossEntropyLoss(
        weight=T.ones(4, dtype=T.float64))(T.randn(3, 4), T.zeros(3, dtype=T.int64)),
    "multi_margin_weight_dtype": lambda T: F(T).multi_margin_loss(
        T.randn(3, 4), T.full((3,), 7), weight=T.ones(4, dtype=T.float64)),
}


@pytest.mark.parametrize("name", list(NLL_CHECK_ORDER))
def test_nll_check_order_matches_torch(name):
    raises(NLL_CHECK_ORDER[name])


def test_byte_targets_match_torch():
    x = randn(3, 4)

    def program(T):
        xt = T.tensor(x, requires_grad=True)
        target = T.tensor([0, 3, 255], dtype=T.uint8)
        losses = [F(T).cross_entropy(xt, target, ignore_index=255),
                  F(T).cross_entropy(xt, target, ignore_index=255, label_smoothing=0.2),
                  F(T).nll_loss(xt, target, ignore_index=255, reduction="none")]
        sum(loss.sum() for loss in losses).backward()
        return losses, xt.grad

    ok(program)


@pytest.mark.parametrize("shape", [(8, 3), (8, 3, 5), (4, 3, 2, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_running_var_of_a_small_std_input(shape, dtype):
    """momentum=1 makes the running variance the batch's unbiased variance; at std 1e-4 it
    must come from the input, not from the saved 1/sqrt(var + eps)."""
    x = (randn(*shape) * 1e-4 + 1.0).astype(dtype)

    def program(T):
        mean = T.zeros(3, dtype=getattr(T, dtype))
        var = T.ones(3, dtype=getattr(T, dtype))
        F(T).batch_norm(T.tensor(x), mean, var, training=True, momentum=1.0)
        return mean, var * 1e8  # ~1, so that the comparison's atol does not hide the error

    ok(program, rtol=1e-6)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 4, 5), (3, 4, 2, 2), (2, 4, 2, 1, 3)])
def test_label_smoothing_mean_denominator_matches_torch(shape, weighted):
    """The smoothing term's mean divides by the targets' summed class weights (their int64
    count without ``weight``); DivBackward0 saves that denominator."""
    x, w = randn(*shape), rand(4)
    t = RS.randint(0, 4, (shape[0], *shape[2:]) if len(shape) > 1 else ())

    def program(T):
        xt = T.tensor(x, requires_grad=True)
        loss = F(T).cross_entropy(xt, T.tensor(t), weight=T.tensor(w) if weighted else None,
                                  ignore_index=2, label_smoothing=0.25)
        denominator = loss.grad_fn.next_functions[1][0].next_functions[0][0]._saved_other
        loss.backward()
        return loss, next_functions(loss.grad_fn), denominator, xt.grad

    ok(program)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 4, 2, 2)])
def test_all_targets_ignored_matches_torch(shape, smoothing, weighted):
    """A mean over no targets is 0 / 0 = nan, but the ignored targets' gradient is 0."""
    x, w = randn(*shape), rand(4)

    def program(T):
        xt = T.tensor(x, requires_grad=True)
        target = T.full((shape[0], *shape[2:]) if len(shape) > 1 else (), 2)
        loss = F(T).cross_entropy(xt, target, weight=T.tensor(w) if weighted else None,
                                  ignore_index=2, label_smoothing=smoothing)
        loss.backward()
        return loss, xt.grad

    ok(program)
