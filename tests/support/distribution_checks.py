"""Differential checks of a distribution against torch.distributions: one program per
distribution and dtype that reads everything deterministic a user can observe (shapes, moments,
log_prob, cdf, icdf, entropy, their gradients in the parameters, repr, expand, sample shapes),
compared by ``differential.same``."""

from __future__ import annotations

import numpy as np

from differential import attempt, ok, val


def _params(T, arrays, dtype):
    return [T.tensor(a, dtype=getattr(T, dtype), requires_grad=True)
            if isinstance(a, np.ndarray) and a.dtype.kind == "f" else
            (T.tensor(a) if isinstance(a, np.ndarray) else a) for a in arrays]


def _grads(T, out, params):
    leaves = [p for p in params if isinstance(p, T.Tensor) and p.requires_grad]
    if not out.requires_grad:
        return None
    weight = T.arange(1.0, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    grads = attempt(lambda: T.autograd.grad((out * weight).sum(), leaves, allow_unused=True,
                                            retain_graph=True))
    if not isinstance(grads, tuple):
        return grads  # (the backward raised: compared as an error)
    return [val(g) for g in grads]  # (gradients' versions are tested elsewhere)


def describe_distribution(T, make, arrays, dtype, values=(), methods=("log_prob", "cdf"),
                          icdf_values=None, sample_shape=(2,)):
    """Everything deterministic about ``make(D, *params)`` (params made from ``arrays``: float
    arrays become leaves of ``dtype`` requiring grad)."""
    D = T.distributions
    params = _params(T, arrays, dtype)
    d = make(D, *params)
    out = {"batch_shape": d.batch_shape, "event_shape": d.event_shape, "repr": repr(d),
           "has_rsample": d.has_rsample}
    out["support"] = attempt(lambda: repr(d.support))
    for name in ("mean", "mode", "variance", "stddev"):
        out[name] = attempt(lambda name=name: getattr(d, name))
    out["entropy"] = attempt(d.entropy)
    if isinstance(out["entropy"], T.Tensor):
        out["entropy_grads"] = _grads(T, out["entropy"], params)
    for i, v in enumerate(values):
        value = T.tensor(v, dtype=getattr(T, dtype)) if np.asarray(v).dtype.kind == "f" else (
            T.tensor(v))
        for method in methods:
            result = attempt(lambda method=method, value=value: getattr(d, method)(value))
            out[f"{method}[{i}]"] = result
            if isinstance(result, T.Tensor):
                out[f"{method}[{i}]_grads"] = _grads(T, result, params)
    if icdf_values is not None:
        q = T.tensor(icdf_values, dtype=getattr(T, dtype))
        out["icdf"] = attempt(lambda: d.icdf(q))
        if isinstance(out["icdf"], T.Tensor):
            out["icdf_grads"] = _grads(T, out["icdf"], params)
    # (sample_shape (2,) draws the shape the expanded distribution draws below: one sampler
    # kernel compiled for both)
    drawn = d.sample(sample_shape)
    out["sample"] = (drawn.shape, drawn.dtype)
    if d.has_rsample:
        r = d.rsample(sample_shape)
        out["rsample_shape"] = (r.shape, r.requires_grad)
    big = (2, *d.batch_shape)
    e = d.expand(big)
    # (its log_prob is not recomputed here: every op at one more shape is one more compile)
    out["expand"] = (e.batch_shape, e.event_shape, e.sample().shape, repr(e))
    return out


def check_distribution(make, arrays, dtype, **kw):
    """``describe_distribution`` on torch and on jaxgrad must agree."""
    return ok(lambda T: describe_distribution(T, make, arrays, dtype, **kw),
              rtol=1e-5 if dtype == "float32" else 1e-10)
