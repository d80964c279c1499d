"""Differential tests of ``jaxgrad.special`` and the top-level special functions (``i0``,
``sinc``, ``logit``, ``polygamma``, ``mvlgamma``): every public name of ``torch.special``
exists, values in float32 and float64 on edge values, the function / method / in-place /
``out=`` forms, grad_fn names, first and second derivatives (``.grad`` and ``autograd.grad``
with create_graph, gradcheck/gradgradcheck in float64) and torch's errors."""

from __future__ import annotations

import math

import pytest

from differential import attempt, ok, same

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402

EDGE = [0.0, -0.0, 1e-30, 1e-6, 0.3, -0.7, 1.0, -1.0, 2.5, -3.5, 12.0, -30.0, 100.0,
        float("inf"), float("-inf"), float("nan")]
PROBS = [0.0, 1e-30, 1e-6, 0.1, 0.5, 0.975, 1 - 1e-6, 1.0, -0.1, 1.5, float("nan")]
POSITIVE = [1e-6, 0.3, 0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 55.0]

UNARY = {  # torch.special name -> inputs
    "entr": EDGE, "erfcx": EDGE, "i0": EDGE, "i0e": EDGE, "i1": EDGE, "i1e": EDGE,
    "ndtr": EDGE, "log_ndtr": EDGE + [-10.0, -40.0, 5.0], "ndtri": PROBS, "expit": EDGE,
    "logit": PROBS, "sinc": EDGE + [0.5, 2.0, -4.0], "gammaln": EDGE, "psi": POSITIVE + [-0.5, 0.0],
    "digamma": POSITIVE, "erf": EDGE, "erfc": EDGE, "erfinv": PROBS, "exp2": EDGE, "expm1": EDGE,
    "log1p": EDGE, "round": EDGE + [0.5, 1.5, 2.5],
}


def test_every_public_name_of_torch_special_exists():
    names = [n for n in dir(torch.special) if not n.startswith("_")
             and n not in ("Tensor", "torch", "common_args", "multi_dim_common")]
    missing = [n for n in names if not hasattr(jaxgrad.special, n)]
    assert not missing
    assert sorted(jaxgrad.special.__all__) == sorted(names)
    for n in names:
        assert getattr(jaxgrad.special, n).__name__ == getattr(torch.special, n).__name__, n


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_values_and_out(name, dtype):
    def prog(T):
        d = getattr(T, dtype)
        fn = getattr(T.special, name)
        x = T.tensor(UNARY[name], dtype=d)
        out = T.empty(0, dtype=d)
        return fn(x), fn(x, out=out), out
    ok(prog, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("name", ["entr", "erfcx", "i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr",
                                  "ndtri", "logit", "sinc", "gammaln"])
def test_integral_and_bool_inputs_compute_in_float(name):
    ok(lambda T: (getattr(T.special, name)(T.tensor([0, 1, 2])),
                  getattr(T.special, name)(T.tensor([True, False]))), rtol=1e-5)


@pytest.mark.parametrize("name", ["i0", "sinc", "logit"])
def test_top_level_function_method_and_inplace(name):
    def prog(T):
        x = T.tensor([0.0, 0.25, 0.5, 0.9, 1.5], dtype=T.float64, requires_grad=True)
        y = x * 1
        inplace_fn = getattr(T, name + "_")(y * 1)
        inplace_method = getattr(y, name + "_")()
        out = T.empty(5, dtype=T.float64)
        plain = getattr(T, name)(x.detach(), out=out)
        z = getattr(T, name)(x)
        z.sum().backward()
        return (z, getattr(x.detach(), name)(), inplace_fn, inplace_method, y._version, plain,
                out, x.grad, getattr(T.special, name)(x).grad_fn.name())
    ok(prog)


def test_logit_eps_forms():
    def prog(T):
        x = T.tensor([-0.5, 0.0, 0.05, 0.3, 0.95, 1.0, 1.5], requires_grad=True)
        y = T.logit(x, 0.1)
        z = T.special.logit(x, eps=0.2)
        (y.sum() + z.sum()).backward()
        return y, z, x.grad, x.detach().clone().logit_(eps=0.1), T.logit(x.detach(), None)
    ok(prog)


BACKWARD = {  # f(T, x) -> tensor; x float64 requires grad
    "entr": (lambda T, x: T.special.entr(x), [0.2, 0.5, 1.0, 3.0]),
    "erfcx": (lambda T, x: T.special.erfcx(x), [-2.0, -0.3, 0.0, 0.7, 5.0]),
    "i0": (lambda T, x: T.i0(x), [-2.0, -0.3, 0.0, 0.7, 5.0]),
    "i0e": (lambda T, x: T.special.i0e(x), [-2.0, -0.3, 0.5, 0.7, 5.0]),
    "i1": (lambda T, x: T.special.i1(x), [-2.0, -0.3, 0.0, 1e-20, 0.7, 5.0]),
    "i1e": (lambda T, x: T.special.i1e(x), [-2.0, -0.3, 0.0, 1e-20, 0.7, 5.0]),
    "ndtr": (lambda T, x: T.special.ndtr(x), [-2.0, -0.3, 0.0, 0.7, 5.0]),
    "log_ndtr": (lambda T, x: T.special.log_ndtr(x), [-8.0, -2.0, -0.3, 0.0, 0.7, 5.0]),
    "ndtri": (lambda T, x: T.special.ndtri(x), [0.01, 0.3, 0.5, 0.9]),
    "expit": (lambda T, x: T.special.expit(x), [-2.0, 0.0, 3.0]),
    "logit": (lambda T, x: T.special.logit(x), [0.1, 0.5, 0.8]),
    "logit_eps": (lambda T, x: T.logit(x, eps=0.2), [0.1, 0.5, 0.75, 0.9]),
    "sinc": (lambda T, x: T.sinc(x), [-1.5, -0.3, 0.2, 0.7, 2.5]),
    "gammaln": (lambda T, x: T.special.gammaln(x), [0.3, 1.5, 4.0]),
    "psi": (lambda T, x: T.special.psi(x), [0.3, 1.5, 4.0]),
    "polygamma1": (lambda T, x: T.polygamma(1, x), [0.3, 1.5, 4.0]),
    "polygamma3": (lambda T, x: T.special.polygamma(3, x), [0.3, 1.5, 4.0]),
    "polygamma_method": (lambda T, x: x.polygamma(2), [0.3, 1.5, 4.0]),
    "multigammaln": (lambda T, x: T.special.multigammaln(x, 3), [1.2, 2.5, 4.0]),
    "mvlgamma": (lambda T, x: x.mvlgamma(1) + T.mvlgamma(x, p=2), [1.2, 2.5, 4.0]),
    "xlog1py_self": (lambda T, x: T.special.xlog1py(x, T.tensor([0.5, 2.0, 3.0],
                                                                 dtype=T.float64)),
                     [0.5, -1.5, 2.0]),
    "xlog1py_other": (lambda T, x: T.special.xlog1py(T.tensor([0.5, 0.0, 3.0], dtype=T.float64),
                                                     x), [0.5, 1.5, 2.0]),
    "xlog1py_both": (lambda T, x: T.special.xlog1py(x, x), [0.5, 1.5, 2.0]),
    "xlog1py_scalar_self": (lambda T, x: T.special.xlog1py(2.5, x), [0.5, 1.5, 2.0]),
    "xlog1py_scalar_other": (lambda T, x: T.special.xlog1py(x, 2.5), [0.5, 1.5, 2.0]),
    "zeta_other": (lambda T, x: T.special.zeta(T.tensor([2.0, 3.5, 5.0], dtype=T.float64), x),
                   [0.5, 1.5, 2.0]),
    "zeta_scalar_self": (lambda T, x: T.special.zeta(3.0, x), [0.5, 1.5, 2.0]),
}


# first derivatives that do not depend on the input (torch's create_graph gradient does not
# require grad; jaxgrad's does, and its derivative is zero)
LINEAR = {"xlog1py_self", "xlog1py_scalar_other"}


@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_first_and_second_derivatives(name):
    f, values = BACKWARD[name]

    def prog(T):
        x = T.tensor(values, dtype=T.float64, requires_grad=True)
        y = f(T, x)
        y.sum().backward(retain_graph=True)
        first = x.grad.clone()
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        if name in LINEAR:
            return y, first, g.detach().clone()
        (gg,) = T.autograd.grad(g.sum(), x)
        return y, first, g.detach().clone(), gg.clone(), type(y.grad_fn).__name__
    ok(prog, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(set(BACKWARD) - {"i1", "i1e"}))
def test_gradcheck_and_gradgradcheck(name):
    f, values = BACKWARD[name]
    x = jaxgrad.tensor(values, dtype=jaxgrad.float64, requires_grad=True)
    assert jaxgrad.autograd.gradcheck(lambda t: f(jaxgrad, t), (x,))
    assert jaxgrad.autograd.gradgradcheck(lambda t: f(jaxgrad, t), (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polygamma_values(dtype):
    def prog(T):
        d = getattr(T, dtype)
        x = T.tensor([-2.5, -1.0, -0.5, 0.0, 1e-3, 0.5, 1.0, 2.5, 10.0, 100.0, float("nan")],
                     dtype=d)
        out = T.empty(0, dtype=d)
        return ([T.polygamma(n, x) for n in range(5)], T.special.polygamma(2, x, out=out), out,
                x.polygamma(3), x.clone().polygamma_(2), T.polygamma(1, T.tensor([1, 2])))
    ok(prog, rtol=1e-5 if dtype == "float32" else 1e-11)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_values_and_overloads(dtype):
    def prog(T):
        d = getattr(T, dtype)
        x = T.tensor([1.0, 0.5, 2.0, 2.0, 3.0, 2.5, 4.0, 2.0, float("nan"), 2.0, 30.0], dtype=d)
        q = T.tensor([1.0, 1.0, 0.0, -1.0, -2.0, -2.5, -2.5, float("inf"), 1.0, 1e-4, 2.0],
                     dtype=d)
        out = T.empty(0, dtype=d)
        return (T.special.zeta(x, q), T.special.zeta(x, 2.0), T.special.zeta(3, q),
                T.special.zeta(x, q, out=out), out,
                T.special.zeta(T.tensor([2, 3]), T.tensor([1, 2])))
    ok(prog, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_xlog1py_values_and_overloads(dtype):
    def prog(T):
        d = getattr(T, dtype)
        x = T.tensor([0.0, 0.0, 0.0, 1.0, -2.0, float("nan"), 3.0], dtype=d)
        y = T.tensor([-1.0, float("nan"), -2.0, 0.5, 3.0, 1.0, float("inf")], dtype=d)
        return (T.special.xlog1py(x, y), T.special.xlog1py(x, 2), T.special.xlog1py(2, y),
                T.special.xlog1py(0.0, y), T.special.xlog1py(T.tensor([2, 3]), 2),
                T.special.xlog1py(x, y, out=T.empty(0, dtype=d)))
    ok(prog)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multigammaln_values(dtype):
    def prog(T):
        d = getattr(T, dtype)
        x = T.tensor([0.2, 1.0, 1.5, 2.5, 7.0, 40.0], dtype=d)
        out = T.empty(0, dtype=d)
        return ([T.special.multigammaln(x, p) for p in (1, 2, 5)], T.mvlgamma(x, 3, out=out), out,
                x.mvlgamma(2), x.clone().mvlgamma_(2), T.mvlgamma(T.tensor([3, 4]), 2))
    ok(prog, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_softmax_log_softmax_logsumexp_round_aliases():
    def prog(T):
        x = T.tensor([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]], requires_grad=True)
        s = T.special.softmax(x, 1, T.float64)
        ls = T.special.log_softmax(x, 0, dtype=T.float64)
        lse = T.special.logsumexp(x, 1, keepdim=True)
        r = T.special.round(x * 3)
        rd = T.special.round(x, decimals=1)
        (s.sum() + ls.sum() + lse.sum() + r.sum() + rd.sum()).backward()
        return (s, ls, lse, r, rd, x.grad, T.special.logsumexp(x.detach(), (0, 1), out=T.empty(0)),
                attempt(lambda: T.special.logsumexp(x, 0, out=T.empty(0))))
    ok(prog)


def test_grad_fn_names_of_aliases_and_new_ops():
    def prog(T):
        x = T.tensor([0.3, 0.7], requires_grad=True)
        s = T.special
        return [type(f(x).grad_fn).__name__ for f in (
            s.expit, s.entr, s.erfcx, s.i0, s.i0e, s.i1, s.i1e, s.ndtr, s.ndtri, s.log_ndtr,
            s.gammaln, s.psi, s.digamma, s.erf, s.erfc, s.erfinv, s.exp2, s.expm1, s.log1p,
            s.logit, s.sinc, s.round, lambda t: s.multigammaln(t + 2, 2),
            lambda t: s.polygamma(1, t), lambda t: t.polygamma(1), lambda t: (t * 1).polygamma_(1),
            lambda t: s.xlogy(t, t), lambda t: s.xlogy(2.0, t), lambda t: s.xlogy(t, 2.0),
            lambda t: s.xlog1py(t, t), lambda t: s.xlog1py(2.0, t), lambda t: s.xlog1py(t, 2.0),
            lambda t: s.zeta(t + 2, t), lambda t: s.zeta(2.0, t), lambda t: s.zeta(t + 2, 2.0),
            lambda t: s.gammainc(t, t), lambda t: s.softmax(t, 0), lambda t: s.log_softmax(t, 0),
            lambda t: s.logsumexp(t, 0))]
    ok(prog)


def test_zeta_derivative_for_input_raises():
    def prog(T):
        a = T.tensor([2.0, 3.0], requires_grad=True)
        q = T.tensor([1.0, 2.0], requires_grad=True)
        return (attempt(lambda: T.special.zeta(a, q).sum().backward()),
                attempt(lambda: T.special.zeta(a, 2.0).sum().backward()))
    same(prog)


def test_forward_ad_refused_for_zeta():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(T.tensor([1.5, 2.0]), T.tensor([0.1, 0.2]))
            return (attempt(lambda: T.special.zeta(T.tensor([2.0, 3.0]), d)),
                    attempt(lambda: T.special.zeta(d, 2.0)))
    same(prog)


def test_forward_ad_of_new_ops():
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(T.tensor([0.2, 0.6], dtype=T.float64),
                             T.tensor([1.0, -0.5], dtype=T.float64))
            return [fw.unpack_dual(f(x)).tangent for f in (
                T.special.entr, T.special.erfcx, T.i0, T.special.i1, T.special.i1e,
                T.special.log_ndtr, T.special.ndtri, T.logit, T.sinc,
                lambda t: T.polygamma(2, t), lambda t: T.mvlgamma(t + 2, 2),
                lambda t: T.special.xlog1py(t, t))]
    ok(prog, rtol=1e-10)


def test_errors():
    def prog(T):
        x = T.tensor([1.0, 2.0])
        return (attempt(lambda: T.polygamma(-1, x)), attempt(lambda: T.mvlgamma(x, 0)),
                attempt(lambda: T.special.entr(3)), attempt(lambda: T.i0(x, out=3)),
                attempt(lambda: T.special.zeta(x, 2.0, out=T.empty(2, requires_grad=True))),
                attempt(lambda: T.i0(T.tensor([1.0], requires_grad=True), out=T.empty(1))))
    same(prog)


def test_special_functions_follow_x64_scope_in_float32():
    """float32 in, float32 out, whatever the function computes internally."""
    x = jaxgrad.tensor([0.5, 2.0])
    for fn in (jaxgrad.special.zeta(x, 1.0), jaxgrad.polygamma(3, x), jaxgrad.mvlgamma(x + 1, 2),
               jaxgrad.special.log_ndtr(x)):
        assert fn.dtype == jaxgrad.float32 and fn._value.dtype.name == "float32"
    assert math.isclose(jaxgrad.special.zeta(jaxgrad.tensor([2.0]), 1.0).item(),
                        torch.special.zeta(torch.tensor([2.0]), 1.0).item(), rel_tol=1e-7)


@pytest.mark.parametrize("name", sorted(set(BACKWARD) - {"xlog1py_self", "xlog1py_both",
                                                          "xlog1py_scalar_other"}))
def test_func_grad_uses_the_rows_formulas(name):
    """JAX's autodiff over the rows' kernels (``func.grad``) gives torch's gradients."""
    f, values = BACKWARD[name]
    ok(lambda T: T.func.grad(lambda x: f(T, x).sum())(T.tensor(values, dtype=T.float64)),
       rtol=1e-10)
