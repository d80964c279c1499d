"""jaxgrad.nn.functional against torch.nn.functional: values, gradients, grad_fn graphs
(``next_functions``), versions, errors and warnings, in float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest

from differential import captured_warnings, next_functions, ok, raises, same, val

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
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    raises(ERRORS[name])


WARNINGS = {
    "mse_broadcast": lambda T: F(T).mse_loss(T.rand(3, 4), T.rand(4)),
    "l1_broadcast": lambda T: F(T).l1_loss(T.rand(3, 4), T.rand(4)),
    "softmax_implicit_dim": lambda T: F(T).softmax(T.rand(2, 3)),
    "log_softmax_implicit_dim": lambda T: F(T).log_softmax(T.rand(3)),
}


@pytest.mark.parametrize("name", list(WARNINGS))
def test_warnings_match_torch(name):
    assert captured_warnings(WARNINGS[name], torch) == captured_warnings(WARNINGS[name], J)


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
