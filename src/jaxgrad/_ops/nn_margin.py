"""Multi-class margin losses: ``multi_margin_loss`` and ``multilabel_margin_loss``.

Both save ``self`` and ``target`` (and ``weight``), as derivatives.yaml's formulas name them;
their backward ops (``multi_margin_loss_backward``, ``multilabel_margin_loss_backward``) have no
derivative of their own in torch, so a create_graph gradient is a ``NotImplemented`` node.
A hinge term counts where it is strictly positive, as torch's CPU kernels test ``z > 0``.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op

NONE, MEAN, SUM = 0, 1, 2


def _as_matrix(x):
    """(nframe, dim) view of a 0-d, 1-d or 2-d input."""
    return x.reshape((1, -1)) if x.ndim <= 1 else x


def _per_sample(grad, nframe, reduction, dtype):
    """The gradient reaching each sample's loss."""
    if reduction == NONE:
        return jnp.broadcast_to(grad.reshape(-1), (nframe,)).astype(dtype)
    scale = grad / nframe if reduction == MEAN else grad
    return jnp.full((nframe,), scale, dtype)


def _reduce(loss, reduction, target_ndim):
    if reduction == MEAN:
        return jnp.mean(loss)
    if reduction == SUM:
        return jnp.sum(loss)
    return loss if target_ndim > 0 else loss.reshape(())


# --- multi_margin_loss ------------------------------------------------------------------------


def _multi_margin_terms(x, target, weight, p, margin):
    """Per (sample, class): the hinge ``margin - x[y] + x[j]`` (j != y), the mask of the
    positive ones, and the per-sample class weight."""
    x = _as_matrix(x)
    dim = x.shape[1]
    y = target.reshape(-1)
    picked = jnp.take_along_axis(x, y[:, None], 1)
    z = margin - picked + x
    other = jnp.arange(dim)[None, :] != y[:, None]
    active = other & (z > 0)
    w = jnp.ones((x.shape[0], 1), x.dtype) if weight is None else weight.reshape(-1)[y][:, None]
    return x, z, active, w


def _multi_margin_loss(x, target, weight, p, margin, reduction):
    m, z, active, w = _multi_margin_terms(x, target, weight, p, margin)
    h = z if p == 1 else z * z
    loss = jnp.sum(jnp.where(active, h * w, jnp.zeros((), m.dtype)), 1) / m.shape[1]
    return _reduce(loss.astype(x.dtype), reduction, target.ndim)


def _multi_margin_loss_grad(grad, self, target, weight, p, margin, reduction):
    m, z, active, w = _multi_margin_terms(self, target, weight, p, margin)
    dim = m.shape[1]
    g = _per_sample(grad, m.shape[0], reduction, m.dtype)[:, None]
    slope = jnp.ones_like(z) if p == 1 else 2 * z
    per = jnp.where(active, slope * w / dim * g, jnp.zeros((), m.dtype))
    y = target.reshape(-1)
    onehot = jnp.arange(dim)[None, :] == y[:, None]
    out = per - jnp.where(onehot, jnp.sum(per, 1, keepdims=True), jnp.zeros((), m.dtype))
    return out.reshape(self.shape)


MULTI_MARGIN_LOSS = Op(
    "multi_margin_loss", "MultiMarginLossBackward0", _multi_margin_loss, inputs=("self",),
    aux=("target", "weight"), grads={"self": _multi_margin_loss_grad},
    grad_nodes={"self": "NotImplemented"})


# --- multilabel_margin_loss -------------------------------------------------------------------


def _multilabel_terms(x, target):
    """The (sample, target position, class) hinge terms of multilabel_margin_loss: targets are
    read up to the first -1; ``is_target`` marks the classes listed."""
    x = _as_matrix(x)
    t = _as_matrix(target)
    dim = x.shape[1]
    valid = jnp.cumprod((t != -1).astype(jnp.int32), axis=1).astype(bool)
    safe = jnp.where(valid, t, 0)
    is_target = jnp.any(valid[:, :, None] & (safe[:, :, None] == jnp.arange(dim)), axis=1)
    picked = jnp.take_along_axis(x, safe, 1)
    z = 1 - picked[:, :, None] + x[:, None, :]
    active = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return x, z, active, is_target, safe


def _multilabel_margin_loss(x, target, reduction):
    m, z, active, is_target, _ = _multilabel_terms(x, target)
    loss = jnp.sum(jnp.where(active, z, jnp.zeros((), m.dtype)), (1, 2)) / m.shape[1]
    return (_reduce(loss.astype(x.dtype), reduction, 1 if x.ndim == 2 else 0),
            is_target.astype(x.dtype).reshape(target.shape))


def _multilabel_margin_loss_grad(grad, self, target, reduction):
    m, _, active, _, safe = _multilabel_terms(self, target)
    dim = m.shape[1]
    g = _per_sample(grad, m.shape[0], reduction, m.dtype)[:, None, None] / dim
    a = jnp.where(active, g, jnp.zeros((), m.dtype))
    out = jnp.sum(a, 1)  # + at the other classes
    down = jnp.sum(a, 2)  # - at each listed target
    onehot = safe[:, :, None] == jnp.arange(dim)
    out = out - jnp.sum(jnp.where(onehot, down[:, :, None], jnp.zeros((), m.dtype)), 1)
    return out.reshape(self.shape)


MULTILABEL_MARGIN_LOSS = Op(
    "multilabel_margin_loss", "MultilabelMarginLossBackward0", _multilabel_margin_loss,
    inputs=("self",), aux=("target",), outputs=("result", "is_target"), nondiff_outputs=(1,),
    grads={"self": _multilabel_margin_loss_grad},
    grad_nodes={"self": "NotImplemented"})
