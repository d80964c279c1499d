"""Differential tests of ``igamma``/``igammac`` (function, method, in place, ``out=``, and
``jaxgrad.special.gammainc``/``gammaincc``): values, torch's derivatives (``other`` only: the
derivative for the input raises torch's NotImplementedError) and the refusal of forward AD that
the op table marks."""

from __future__ import annotations

import pytest

from differential import attempt, ok, same

A = [0.5, 2.0, 1.0, 3.5, -1.0, 0.0, float("inf")]
X = [0.2, 3.0, 0.0, 1.5, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("name", ["igamma", "igammac"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_in_every_form(name, dtype):
    def prog(T):
        d = getattr(T, dtype)
        a, x = T.tensor(A, dtype=d), T.tensor(X, dtype=d)
        special = getattr(T.special, {"igamma": "gammainc", "igammac": "gammaincc"}[name])
        out = T.empty(len(A), dtype=d)
        inplace = a.clone()
        return (getattr(T, name)(a, x), getattr(a, name)(x), getattr(inplace, name + "_")(x),
                inplace._version, special(a, x), getattr(T, name)(a, x, out=out), out,
                special.__name__)
    ok(prog)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_argument_and_dtype_errors(name):
    def prog(T):
        fn = getattr(T, name)
        return (fn(T.tensor([1, 2]), T.tensor([1.0, 2.0])),
                attempt(lambda: fn(T.tensor([1, 2]), T.tensor([1, 2]))),
                attempt(lambda: fn(T.tensor([1.0]), 2.0)),
                attempt(lambda: T.special.gammainc(T.tensor([1.0]), 2.0)))
    ok(prog)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_backward_other_only(name):
    def prog(T):
        a = T.tensor([0.5, 2.0, 3.5], dtype=T.float64, requires_grad=True)
        x = T.tensor([1.0, 3.0, 0.5], dtype=T.float64, requires_grad=True)
        y = getattr(T, name)(a.detach(), x)
        y.sum().backward()
        both = getattr(T, name)(a, x)
        return (y, x.grad, type(both.grad_fn).__name__,
                attempt(lambda: both.sum().backward()),
                T.autograd.gradcheck(lambda t: getattr(T, name)(a.detach(), t), (x,)))
    ok(prog)


@pytest.mark.parametrize("case", ["both", "other", "self", "special", "inplace_other",
                                  "plain", "out"])
def test_forward_ad_is_refused(case):
    def prog(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(T.tensor([0.7, 1.5, 2.0]), T.tensor([0.1, 0.2, 0.3]))
            p = T.tensor([1.0, 2.0, 3.0])
            return attempt({"both": lambda: T.igamma(d, d), "other": lambda: T.igamma(p, d),
                            "self": lambda: T.igammac(d, p),
                            "special": lambda: T.special.gammaincc(p, d),
                            "inplace_other": lambda: p.clone().igamma_(d),
                            "plain": lambda: T.igamma(p, p),
                            "out": lambda: T.igamma(p, d, out=T.empty(3))}[case])
    same(prog)
