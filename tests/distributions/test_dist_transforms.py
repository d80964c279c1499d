"""Transforms that need more than elementwise maps (correlation Cholesky, positive definite,
cat/stack, a distribution's cdf) and the ``biject_to``/``transform_to`` registries, against
torch.distributions."""

from __future__ import annotations

import pytest

from differential import ok, raises


def _roundtrip(T, t, x):
    y = t(x)
    out = {"y": y, "inv": t.inv(y), "repr": repr(t), "domain": repr(t.domain),
           "codomain": repr(t.codomain), "bijective": t.bijective}
    try:
        out["ladj"] = t.log_abs_det_jacobian(x, y)
    except NotImplementedError:
        out["ladj"] = "NotImplementedError"
    return out


def test_structured_transforms():
    def program(T):
        D = T.distributions
        x = T.tensor([0.3, -1.2, 2.0], dtype=T.float64, requires_grad=True)
        m = T.tensor([[0.3, -1.2], [2.0, 0.1]], dtype=T.float64, requires_grad=True)
        out = {
            "corr_cholesky": _roundtrip(T, D.CorrCholeskyTransform(), x),
            "positive_definite": _roundtrip(T, D.PositiveDefiniteTransform(), m),
            "cat": _roundtrip(T, D.CatTransform([D.ExpTransform(), D.SigmoidTransform()], 0,
                                                [2, 1]), x),
            "stack": _roundtrip(T, D.StackTransform([D.ExpTransform(), D.TanhTransform()], 1),
                                m),
            "cdf": _roundtrip(T, D.CumulativeDistributionTransform(D.Normal(0.0, 1.0)), x),
            "shapes": (D.CorrCholeskyTransform().forward_shape((2, 3)),
                       D.CorrCholeskyTransform().inverse_shape((2, 3, 3))),
        }
        out["grad"] = T.autograd.grad(out["corr_cholesky"]["ladj"].sum()
                                      + out["cat"]["y"].sum(), x)
        return out
    ok(program)


CONSTRAINTS = {
    "real": lambda c, T: c.real,
    "positive": lambda c, T: c.positive,
    "nonnegative": lambda c, T: c.nonnegative,
    "greater_than": lambda c, T: c.greater_than(2.0),
    "less_than": lambda c, T: c.less_than(-1.0),
    "unit_interval": lambda c, T: c.unit_interval,
    "interval": lambda c, T: c.interval(-2.0, 3.0),
    "half_open": lambda c, T: c.half_open_interval(0.0, 1.0),
    "simplex": lambda c, T: c.simplex,
    "independent": lambda c, T: c.independent(c.positive, 1),
    "lower_cholesky": lambda c, T: c.lower_cholesky,
    "corr_cholesky": lambda c, T: c.corr_cholesky,
    "positive_definite": lambda c, T: c.positive_definite,
    "cat": lambda c, T: c.cat([c.positive, c.real], 0, [1, 2]),
    "stack": lambda c, T: c.stack([c.positive, c.real, c.unit_interval], 0),
    "boolean": lambda c, T: c.boolean,
}


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registries(registry, name):
    def program(T):
        D = T.distributions
        t = getattr(D, registry)(CONSTRAINTS[name](D.constraints, T))
        shape = (2, 2) if name in ("lower_cholesky", "positive_definite") else (3,)
        x = T.tensor([0.3, -1.2, 0.8, 0.5][:shape[0] * (shape[1] if len(shape) > 1 else 1)],
                     dtype=T.float64).reshape(shape)
        return _roundtrip(T, t, x)
    # (no registration: torch raises NotImplementedError)
    unregistered = name == "boolean" or (
        registry == "biject_to" and name in ("lower_cholesky", "positive_definite"))
    if unregistered:
        raises(program)
    else:
        ok(program)


def test_register_errors():
    raises(lambda T: T.distributions.biject_to.register(3, lambda c: None))
