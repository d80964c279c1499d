"""``_ctc_loss``: the connectionist temporal classification loss, torch's CPU algorithm.

The forward runs the alpha recursion over the blank-extended targets in log space and returns
each sample's negative log likelihood and the log-alphas (saved, as torch saves them); the
gradient is torch's ``ctc_loss_backward``: ``exp(log_probs) - exp(log(sum alpha beta) + nll -
log_probs)`` where the input is live (zero past each input length, and for an infinite loss
under ``zero_infinity``) - a gradient that assumes ``log_probs`` came out of a log_softmax. It has
no derivative of its own in torch: a create_graph gradient is a ``NotImplemented`` node.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._table import Op


def _padded_targets(targets, target_lengths):
    """(N, max target length) targets, from a padded 2-D ``targets`` or concatenated 1-D."""
    width = max(max(target_lengths, default=0), 1)
    if targets.ndim == 2:
        return targets[:, :width] if targets.shape[1] >= width else jnp.pad(
            targets, ((0, 0), (0, width - targets.shape[1])))
    starts = np.cumsum((0,) + tuple(target_lengths))[:-1]
    index = np.minimum(starts[:, None] + np.arange(width)[None, :], max(targets.shape[0] - 1, 0))
    return targets[index] if targets.shape[0] else jnp.zeros((len(target_lengths), width),
                                                             targets.dtype)


def _extended(targets, target_lengths, blank):
    """The blank-extended labels l' (N, S), which positions are real, and where the skip
    transition from s - 2 is allowed."""
    padded = _padded_targets(targets, target_lengths).astype(jnp.int32)
    n, width = padded.shape
    size = 2 * width + 1
    s = np.arange(size)
    labels = jnp.where((s % 2 == 1)[None, :], padded[:, np.minimum(s // 2, width - 1)], blank)
    lengths = np.asarray(target_lengths, np.int64)
    valid = s[None, :] <= 2 * lengths[:, None]
    previous = jnp.concatenate([jnp.full((n, 2), -1, labels.dtype), labels[:, :-2]], axis=1)
    skip = (s[None, :] % 2 == 1) & (s[None, :] >= 2) & (labels != previous)
    return labels, jnp.asarray(valid), skip


def _lse(*terms):
    stacked = jnp.stack(terms)
    top = jnp.max(stacked, axis=0)
    safe = jnp.where(jnp.isfinite(top), top, 0)
    return jnp.where(jnp.isfinite(top), safe + jnp.log(jnp.sum(jnp.exp(stacked - safe), 0)),
                     top)


def _shift(x, k, fill):
    return jnp.concatenate([jnp.full(x.shape[:-1] + (k,), fill, x.dtype), x[..., :-k]], -1)


def _emissions(log_probs, labels):
    """(T, N, S): log_probs at each extended label."""
    return jnp.take_along_axis(log_probs, jnp.broadcast_to(labels[None], (log_probs.shape[0],)
                                                           + labels.shape), axis=2)


def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    labels, valid, skip = _extended(targets, target_lengths, blank)
    neg = jnp.asarray(-jnp.inf, log_probs.dtype)
    emit = _emissions(log_probs, labels)
    s = np.arange(labels.shape[1])
    first = jnp.where((s[None, :] < 2) & valid, emit[0], neg)

    def step(previous, e):
        alpha = e + _lse(previous, _shift(previous, 1, neg),
                         jnp.where(skip, _shift(previous, 2, neg), neg))
        alpha = jnp.where(valid, alpha, neg)
        return alpha, alpha

    _, rest = jax.lax.scan(step, first, emit[1:])
    log_alpha = jnp.concatenate([first[None], rest], axis=0)  # (T, N, S)
    last = np.maximum(np.asarray(input_lengths, np.int64) - 1, 0)
    final = log_alpha[last, np.arange(len(last))]  # (N, S)
    ends = 2 * np.asarray(target_lengths, np.int64)
    rows = np.arange(len(ends))
    total = _lse(final[rows, ends], jnp.where(jnp.asarray(ends > 0), final[rows,
                                                                         np.maximum(ends - 1, 0)],
                                             neg))
    return -total, jnp.swapaxes(log_alpha, 0, 1)


def _ctc_loss_grad(grad, log_probs, targets, result0, result1, input_lengths, target_lengths,
                   blank, zero_infinity):
    labels, valid, skip = _extended(targets, target_lengths, blank)
    neg = jnp.asarray(-jnp.inf, log_probs.dtype)
    emit = _emissions(log_probs, labels)
    t_count = log_probs.shape[0]
    lengths = np.asarray(input_lengths, np.int64)
    ends = 2 * np.asarray(target_lengths, np.int64)
    s = np.arange(labels.shape[1])
    skip_next = jnp.concatenate([skip[:, 2:], jnp.zeros_like(skip[:, :2])], axis=1)
    start = jnp.where(((s[None, :] == ends[:, None]) | (s[None, :] == ends[:, None] - 1)) & valid,
                      0.0, neg).astype(log_probs.dtype)

    def step(following, inputs):
        t, e = inputs
        up1 = jnp.concatenate([following[:, 1:], jnp.full_like(following[:, :1], neg)], 1)
        up2 = jnp.concatenate([following[:, 2:], jnp.full_like(following[:, :2], neg)], 1)
        beta = e + _lse(following, up1, jnp.where(skip_next, up2, neg))
        beta = jnp.where(valid, beta, neg)
        t_last = jnp.asarray(lengths - 1)[:, None]
        beta = jnp.where(t == t_last, e + start, jnp.where(t < t_last, beta, neg))
        return beta, beta

    init = jnp.full(labels.shape, neg, log_probs.dtype)
    _, betas = jax.lax.scan(step, init, (jnp.arange(t_count), emit), reverse=True)
    log_alpha = jnp.swapaxes(result1, 0, 1)  # (T, N, S)
    ab = log_alpha + betas
    onehot = labels[:, :, None] == jnp.arange(log_probs.shape[2])  # (N, S, C)
    top = jnp.max(jnp.where(valid[None], ab, neg), axis=2, keepdims=True)
    safe = jnp.where(jnp.isfinite(top), top, 0)
    summed = jnp.einsum("tns,nsc->tnc", jnp.where(valid[None], jnp.exp(ab - safe), 0), onehot
                        .astype(log_probs.dtype))
    lcab = jnp.log(summed) + safe
    nll = result0[None, :, None]
    res = (jnp.exp(log_probs) - jnp.exp(lcab + nll - log_probs)) * grad[None, :, None]
    live = (np.arange(t_count)[:, None] < lengths[None, :])[:, :, None]
    if zero_infinity:
        live = live & ~jnp.isinf(result0)[None, :, None]
    return jnp.where(live, res, jnp.zeros((), res.dtype))


CTC_LOSS = Op("_ctc_loss", "CtcLossBackward0", _ctc_loss, inputs=("log_probs",),
              aux=("targets",), outputs=("result0", "result1"), nondiff_outputs=(1,),
              grads={"log_probs": _ctc_loss_grad}, grad_nodes={"log_probs": "NotImplemented"})
