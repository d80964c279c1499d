"""Gradients at the points where torch's formulas choose a value: kinks, zeros, ties, the bounds
of clamps and thresholds, poles (first order, eager engine, float64), compared with torch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from differential import ok

# every case is evaluated at all of these points (one tensor); the cases place their kinks on them
PTS = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 20.0]


def F(T):
    return T.nn.functional


EDGE_CASES = {
    "relu": lambda T, x: F(T).relu(x),
    "abs": lambda T, x: x.abs(),
    "sign": lambda T, x: x.sign(),
    "elu": lambda T, x: F(T).elu(x),
    "leaky_relu": lambda T, x: F(T).leaky_relu(x, 0.1),
    "hardtanh": lambda T, x: F(T).hardtanh(x),
    "relu6": lambda T, x: F(T).relu6(x),
    "hardsigmoid": lambda T, x: F(T).hardsigmoid(x),
    "hardshrink": lambda T, x: F(T).hardshrink(x, 0.5),
    "softshrink": lambda T, x: F(T).softshrink(x, 0.5),
    "threshold": lambda T, x: F(T).threshold(x, 1.0, 0.0),
    "clamp": lambda T, x: x.clamp(-1.0, 1.0),
    "clamp_min": lambda T, x: x.clamp(min=0.5),
    "clamp_t": lambda T, x: T.clamp(x, T.full_like(x, -1.0), T.full_like(x, 1.0)),
    "celu": lambda T, x: F(T).celu(x),
    "selu": lambda T, x: F(T).selu(x),
    "gelu": lambda T, x: F(T).gelu(x),
    "gelu_tanh": lambda T, x: F(T).gelu(x, approximate="tanh"),
    "silu": lambda T, x: F(T).silu(x),
    "mish": lambda T, x: F(T).mish(x),
    "softplus": lambda T, x: F(T).softplus(x, beta=1, threshold=1.0),
    "logsigmoid": lambda T, x: F(T).logsigmoid(x),
    "sqrt": lambda T, x: x.abs().sqrt(),
    "rsqrt": lambda T, x: x.abs().rsqrt(),
    "log": lambda T, x: x.abs().log(),
    "pow_half": lambda T, x: x.abs() ** 0.5,
    "pow2": lambda T, x: x ** 2,
    "pow0": lambda T, x: x ** 0,
    "pow_t": lambda T, x: T.pow(x.abs(), x),
    "xlogy": lambda T, x: T.xlogy(x, x.abs()),
    "norm": lambda T, x: (x * 0).norm(),
    "norm2": lambda T, x: T.linalg.vector_norm(x * 0),
    "norm1": lambda T, x: T.linalg.vector_norm(x * 0, 1),
    "norminf": lambda T, x: T.linalg.vector_norm(x, float("inf")),
    "normalize": lambda T, x: F(T).normalize((x * 0).reshape(1, -1)),
    "cos_sim": lambda T, x: F(T).cosine_similarity((x * 0).reshape(1, -1), T.ones(1, len(PTS), dtype=x.dtype)),
    "atan2": lambda T, x: T.atan2(x * 0, x * 0),
    "max": lambda T, x: T.stack([x, x.abs()]).max(),
    "max_dim": lambda T, x: T.stack([x, x.abs()]).max(0).values,
    "amax": lambda T, x: T.stack([x, x.abs()]).amax(0),
    "maximum": lambda T, x: T.maximum(x, x.abs()),
    "median": lambda T, x: T.stack([x, x.abs(), x.abs()]).median(0).values,
    "sort": lambda T, x: T.stack([x, x.abs()]).sort(0).values,
    "l1": lambda T, x: F(T).l1_loss(x, x.abs()),
    "smooth_l1": lambda T, x: F(T).smooth_l1_loss(x, T.zeros_like(x), beta=1.0),
    "huber": lambda T, x: F(T).huber_loss(x, T.zeros_like(x), delta=1.0),
    "bce": lambda T, x: F(T).binary_cross_entropy((x.abs() / 20), T.ones_like(x)),
    "max_pool": lambda T, x: F(T).max_pool1d(T.stack([x, x]).reshape(1, 1, -1), 2),
    "fmod": lambda T, x: T.fmod(x, 1.0),
    "remainder": lambda T, x: T.remainder(x, 1.0),
    "round": lambda T, x: x.round(),
    "prod0": lambda T, x: (x * 0).prod(),
    "prod": lambda T, x: x.prod(),
    "cumprod": lambda T, x: T.cumprod(x * 0, 0),
    "std": lambda T, x: (x * 0).std(),
    "var": lambda T, x: (x*0).var(),
    "logsumexp": lambda T, x: T.logsumexp(x * 0 - float("inf"), 0),
    "erfinv": lambda T, x: T.erfinv(x / 20),
    "acos": lambda T, x: T.acos(x / 3),
    "asin": lambda T, x: T.asin(x / 3),
    "tanh": lambda T, x: x.tanh(),
    "pairwise": lambda T, x: F(T).pairwise_distance(x.reshape(1,-1), x.reshape(1,-1)),
    "frac": lambda T, x: x.frac(),
    "trunc": lambda T, x: x.trunc(),
    "nan_to_num": lambda T, x: T.nan_to_num(x / (x*0)),
    "exp2": lambda T, x: T.exp2(x),
    "lgamma": lambda T, x: T.lgamma(x),
    "digamma": lambda T, x: T.digamma(x.abs()+1),
    "log1p": lambda T, x: x.abs().log1p(),
    "expm1": lambda T, x: x.expm1(),
    "hardswish": lambda T, x: F(T).hardswish(x),
    "softsign": lambda T, x: F(T).softsign(x),
    "tanhshrink": lambda T, x: F(T).tanhshrink(x),
    "prelu": lambda T, x: F(T).prelu(x, T.tensor([0.25], dtype=x.dtype)),
    "glu": lambda T, x: F(T).glu(T.cat([x, x])),
    "kl": lambda T, x: F(T).kl_div(x.abs().log(), x.abs(), reduction="sum"),
    "masked": lambda T, x: x.masked_fill(x == 0, 1.0),
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_gradient_at_edge_points(name):
    def program(T):
        x = T.tensor(PTS, dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad(EDGE_CASES[name](T, x).sum(), x, allow_unused=True)
        return None if g is None else g.detach().clone()
    ok(program)


# Every route a gradient can take uses the row's formulas (one rule on every route): torch.func's
# transforms in jaxgrad.func, and a JAX user's own jax.grad / jax.jit / jax.jacfwd of jaxgrad code
# (compared with torch.func, its counterpart).

def _summed(T, name):
    return lambda x: EDGE_CASES[name](T, x).sum()


def _jax_route(transform):
    """``transform`` (a JAX function transform) of the case on JAX arrays, as a JAX user writes it."""
    def route(T, name, x):
        if T.__name__ == "torch":
            return T.func.grad(_summed(T, name))(x)
        f = _summed(T, name)
        with jax.enable_x64(True):  # float64 in the user's own transform: the user's x64 on
            return T.from_jax(transform(lambda a: f(T.from_jax(a)).jax())(x.jax()))
    return route


ROUTES = {
    "func.grad": lambda T, name, x: T.func.grad(_summed(T, name))(x),
    "func.vjp": lambda T, name, x: T.func.vjp(_summed(T, name), x)[1](T.ones((), dtype=x.dtype))[0],
    "func.jacrev": lambda T, name, x: T.func.jacrev(_summed(T, name))(x).clone(),
    "func.vmap(grad)": lambda T, name, x: T.func.vmap(T.func.grad(_summed(T, name)))(
        x.reshape(1, -1))[0],
    "jax.grad": _jax_route(jax.grad),
    "jax.jit(jax.grad)": _jax_route(lambda f: jax.jit(jax.grad(f))),
}

def _cases(routes, known):
    """(name, route) pairs; those in ``known`` are strict xfails with the reason given."""
    return [pytest.param(name, route, marks=pytest.mark.xfail(strict=True, reason=known[
        (name, route)])) if (name, route) in known else pytest.param(name, route)
        for name in sorted(EDGE_CASES) for route in routes]


@pytest.mark.parametrize(("name", "route"), _cases(ROUTES, {}))
def test_gradient_at_edge_points_on_every_route(name, route):
    def program(T):
        return ROUTES[route](T, name, T.tensor(PTS, dtype=T.float64))
    ok(program)


# Forward mode: torch's forward-derivative formulas at the same points (a tangent of ones). Where
# torch's forward formula is not its backward formula transposed (Op.tangent: atan2, pow, prelu,
# std, xlogy), jaxgrad.func.jvp/jacfwd and forward AD use it; the user's own jax.jvp cannot be told
# from the linearization inside jax.grad, whose transpose must be the backward formula, so there
# JAX's tangent is the backward formula transposed (NaN where torch's masks, or the reverse).
# nan_to_num's formula ``t * isfinite(x)`` becomes a select in XLA: a NaN tangent gives 0 there.
FORWARD_ROUTES = ("func.jvp", "func.jacfwd", "jax.jvp")
KNOWN_FORWARD = {
    **{(name, "jax.jvp"): "the user's jax.jvp gets the transposed backward formula"
       for name in ("atan2", "pow_t", "prelu", "std", "xlogy")},
    **{("nan_to_num", route): "XLA rewrites t * isfinite(x) as a select (NaN tangent -> 0)"
       for route in ("func.jvp", "jax.jvp")},
}


@pytest.mark.parametrize(("name", "route"), _cases(FORWARD_ROUTES, KNOWN_FORWARD))
def test_tangent_at_edge_points_on_every_route(name, route):
    def program(T):
        x = T.tensor(PTS, dtype=T.float64)
        f = lambda x: EDGE_CASES[name](T, x)
        if route == "func.jacfwd":
            return T.func.jacfwd(_summed(T, name))(x)
        if route == "jax.jvp" and T.__name__ != "torch":
            with jax.enable_x64(True):
                return T.from_jax(jax.jvp(lambda a: f(T.from_jax(a)).jax(), (x.jax(),),
                                          (jnp.ones(x.shape, jnp.float64),))[1])
        return T.func.jvp(f, (x,), (T.ones_like(x),))[1].clone()
    ok(program)
