"""Elementwise math on a number's parts against torch: copysign, float_power, ldexp, frexp,
positive, gcd, lcm, bitwise shifts and the ``<<``/``>>`` operators; their method and in-place
forms, dtypes, grad_fn graphs, first and second derivatives (float64) and torch's errors.
"""

from __future__ import annotations

import pytest

from differential import next_functions, ok, raises, same, val

torch = pytest.importorskip("torch")


def _leaf(T, values, dtype="float64"):
    return T.tensor(values, dtype=getattr(T, dtype), requires_grad=True)


def _grads(T, out, *inputs, order2=True):
    """First derivatives of a weighted sum of ``out``, and the second ones through them (with
    the first derivatives' grad_fn names: jaxgrad's graph beneath them is ``jax.vjp`` of the
    formula, not torch's composition; see the README)."""
    w = T.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
    first = T.autograd.grad((out * w).sum(), inputs, create_graph=order2, allow_unused=True)
    # (compared without versions: torch's zeros_like(other) in copysign's formula is a
    # zero-filled empty tensor, version 1; a row's gradients carry one version for all inputs)
    return_first = tuple(val(f) for f in first)
    if not order2:
        return return_first
    g = [f for f in first if f is not None and f.requires_grad]
    second = T.autograd.grad(sum((f * f).sum() for f in g), inputs, allow_unused=True) if g else ()
    return return_first, tuple(val(t) for t in second), [type(f.grad_fn).__name__ for f in g]


X = [1.5, -2.0, 0.0, -0.0, 3.25]
SIGNS = [-1.0, 2.0, -0.0, 0.0, -3.0]


# --- copysign ----------------------------------------------------------------------------------

@pytest.mark.parametrize("other", ["tensor", "tensor_grad", "number", "negzero"])
def test_copysign_values_graph_and_grads(other):
    def program(T):
        x = _leaf(T, X)
        o = {"tensor": T.tensor(SIGNS, dtype=T.float64),
             "tensor_grad": _leaf(T, SIGNS), "number": -2.0, "negzero": -0.0}[other]
        out = T.copysign(x, o)
        inputs = (x, o) if other == "tensor_grad" else (x,)
        return out, next_functions(out.grad_fn), _grads(T, out, *inputs)

    ok(program)


def test_copysign_method_inplace_and_dtypes():
    def program(T):
        x = _leaf(T, X, "float32")
        y = x * 1
        r = y.copysign_(T.tensor(SIGNS))
        r.sum().backward()
        ints = T.tensor([1, -2, 3])
        return (r is y, y, y._version, next_functions(y.grad_fn), x.grad,
                x.copysign(-1), T.copysign(ints, -1), T.copysign(ints, T.tensor([-1, 2, -3])),
                T.copysign(T.tensor([True, False]), -1.5),
                T.copysign(x.detach().half(), T.tensor(SIGNS)))

    ok(program)


def test_copysign_errors():
    raises(lambda T: T.tensor([1, 2]).copysign_(-1))
    raises(lambda T: T.copysign(T.ones(2), T.ones(3)))


# --- float_power --------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["tensor_number", "tensor_tensor", "number_tensor", "int_base",
                                  "complex"])
def test_float_power_is_pow_in_double(case):
    def program(T):
        x = _leaf(T, [0.5, 1.5, 2.0], "float32")
        e = _leaf(T, [2.0, -1.0, 0.5], "float32")
        if case == "tensor_number":
            out, inputs = T.float_power(x, 3), (x,)
        elif case == "tensor_tensor":
            out, inputs = x.float_power(e), (x, e)
        elif case == "number_tensor":
            out, inputs = T.float_power(2, e), (e,)
        elif case == "int_base":
            out, inputs = T.float_power(T.tensor([1, 2, 3]), e), (e,)
        else:
            out, inputs = T.float_power(x, 2j), ()
        grads = _grads(T, out.real if out.is_complex() else out, *inputs) if inputs else None
        return out, next_functions(out.grad_fn), grads

    ok(program)


def test_float_power_inplace():
    def program(T):
        x = _leaf(T, [0.5, 1.5, 2.0])
        y = x * 1
        r = y.float_power_(T.tensor([2.0, 3.0, 0.5], dtype=T.float32))
        r.sum().backward()
        z = T.tensor([1.0, 2.0], dtype=T.float64).float_power_(2)
        return r is y, y, y._version, next_functions(y.grad_fn), x.grad, z

    ok(program)


def test_float_power_inplace_needs_the_result_dtype():
    raises(lambda T: T.tensor([1.0, 2.0]).float_power_(2))
    raises(lambda T: T.tensor([1.0, 2.0], dtype=T.float64).float_power_(2j))


# --- ldexp, frexp ----------------------------------------------------------------------------------

@pytest.mark.parametrize("other_grad", [False, True])
def test_ldexp_values_graph_and_grads(other_grad):
    def program(T):
        x = _leaf(T, [1.5, -2.0, 0.25])
        o = _leaf(T, [1.0, -2.0, 3.0]) if other_grad else T.tensor([1, -2, 3])
        out = T.ldexp(x, o)
        inputs = (x, o) if other_grad else (x,)
        return out, next_functions(out.grad_fn), _grads(T, out, *inputs)

    ok(program)


def test_ldexp_forms_and_dtypes():
    def program(T):
        x = _leaf(T, [1.5, -2.0, 0.25], "float32")
        y = x * 1
        r = y.ldexp_(T.tensor([1, 2, 3]))
        r.sum().backward()
        z = T.tensor([1.0, 2.0])
        T.ldexp_(z, T.tensor([2, 2]))
        return (r is y, y, y._version, x.grad, z, x.ldexp(T.tensor([1, 1, 1])),
                T.ldexp(T.tensor([1, 2]), T.tensor([1, 2])),
                T.ldexp(T.tensor([1.0, 2.0]), T.tensor([1.5, 2.0])))

    ok(program)


def test_frexp_values_dtypes_and_grad():
    def program(T):
        x = _leaf(T, [8.0, -3.0, 0.0, 0.375, 1e-3])
        m, e = T.frexp(x)
        m2, e2 = x.detach().float().frexp()
        h = T.frexp(T.tensor([1.0, -6.0], dtype=T.float16))
        return (m, e, m2, e2, h.mantissa, h.exponent, next_functions(m.grad_fn),
                type(T.frexp(x)).__name__, T.frexp(x).exponent, _grads(T, m, x))

    ok(program)


def test_frexp_special_values():
    ok(lambda T: tuple(T.frexp(T.tensor([float("inf"), float("-inf"), float("nan"), -0.0]))))


def test_frexp_errors():
    raises(lambda T: T.frexp(T.tensor([1, 2])))
    raises(lambda T: T.frexp(T.tensor([1j])))


# --- positive ----------------------------------------------------------------------------------

def test_positive_is_the_tensor_itself():
    def program(T):
        x = _leaf(T, [1.0, -2.0])
        return T.positive(x) is x, x.positive() is x, (+x) is x, T.positive(T.tensor([1, 2]))

    ok(program)


def test_positive_refuses_bool():
    raises(lambda T: T.positive(T.tensor([True])))
    raises(lambda T: +T.tensor([True]))


# --- gcd, lcm ------------------------------------------------------------------------------------

A = [12, -18, 0, 7, 0, -5]
B = [8, 12, 0, -3, 4, 0]


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_forms(name):
    def program(T):
        a, b = T.tensor(A), T.tensor(B)
        c = a.clone()
        r = getattr(c, name + "_")(b)
        d = a.clone()
        getattr(T, name + "_")(d, b)
        small = getattr(T, name)(a.to(T.int8), b.to(T.int16))
        return (getattr(T, name)(a, b), getattr(a, name)(b), r is c, c, c._version, d, small,
                getattr(T, name)(T.tensor([[6], [10]]), T.tensor([4, 15])))

    ok(program)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_errors(name):
    raises(lambda T: getattr(T, name)(T.tensor([1.0]), T.tensor([2.0])))
    raises(lambda T: getattr(T, name)(T.tensor([True]), T.tensor([False])))
    raises(lambda T: getattr(T, name)(T.tensor([4]), 2))
    raises(lambda T: getattr(T.tensor([4]), name + "_")(T.tensor([[2], [3]])))


# --- shifts --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "int16"])
def test_shifts_match_torch_in_and_out_of_range(dtype):
    def program(T):
        d = getattr(T, dtype)
        a = T.tensor([1, 5, 127, 0, 100, 3, 64], dtype=d)
        if dtype != "uint8":
            a = a * T.tensor([1, -1, 1, 1, -1, 1, -1], dtype=d)
        s = T.tensor([0, 1, 3, 7, 8, 63, 70], dtype=d)
        return (T.bitwise_left_shift(a, s), T.bitwise_right_shift(a, s), a << 2, a >> 1,
                a.bitwise_left_shift(3), a.bitwise_right_shift(s))

    ok(program)


def test_shift_scalar_forms_operators_and_inplace():
    def program(T):
        a = T.tensor([12, -18, 0, 7])
        s = T.tensor([1, 2, 3, 0])
        b = a.clone()
        b <<= 2
        c = a.clone()
        c >>= s
        d = a.clone()
        r = d.bitwise_left_shift_(s)
        e = a.clone().bitwise_right_shift_(1)
        return (3 << s, 64 >> s, T.bitwise_left_shift(3, s), T.bitwise_right_shift(100, s),
                b, b._version, c, r is d, d, e, T.tensor([True, False]) << 1,
                T.tensor([1, 2], dtype=T.int8) << T.tensor([7, 1]),
                a << T.tensor([1, 2, 3, 4], dtype=T.int8))

    ok(program)


def test_shift_errors():
    raises(lambda T: T.tensor([1.5]) << 1)
    raises(lambda T: T.bitwise_right_shift(T.tensor([1.5]), 1))
    raises(lambda T: T.bitwise_left_shift(T.tensor([1, 2]), T.tensor([1, 2, 3])))
    raises(lambda T: T.tensor([1], dtype=T.int8).bitwise_left_shift_(T.tensor([1.5])))
    same(lambda T: T.tensor([True]) << T.tensor([True]))


# --- finite differences (float64, jaxgrad alone) ---------------------------------------------------

FD = {
    "copysign": (lambda T, x, o: T.copysign(x, o), [[1.5, -2.0, 0.7], [-1.0, 2.0, -3.0]]),
    "copysign_number": (lambda T, x: T.copysign(x, -1.0), [[1.5, -2.0, 0.7]]),
    "ldexp": (lambda T, x, o: T.ldexp(x, o), [[1.5, -2.0, 0.7], [1.0, -2.0, 0.5]]),
    "frexp": (lambda T, x: T.frexp(x).mantissa, [[1.5, -2.3, 0.7]]),
    "float_power": (lambda T, x, e: T.float_power(x, e), [[1.5, 2.0, 0.7], [2.0, -1.0, 0.5]]),
}


@pytest.mark.parametrize("name", FD)
def test_finite_differences(name):
    import jaxgrad

    f, values = FD[name]
    inputs = tuple(jaxgrad.tensor(v, dtype=jaxgrad.float64, requires_grad=True) for v in values)

    def fn(*xs):
        return f(jaxgrad, *xs)

    assert jaxgrad.autograd.gradcheck(fn, inputs)
    assert jaxgrad.autograd.gradgradcheck(fn, inputs)


# --- quantile, nanquantile ---------------------------------------------------------------------

MODES = ["linear", "lower", "higher", "midpoint", "nearest"]
QARGS = {
    "all": lambda T: (0.3,),
    "dim1": lambda T: (0.3, 1),
    "dim0_keep": lambda T: (0.75, 0, True),
    "all_keep": lambda T: (0.6, None, True),
    "qvec_dim1_keep": lambda T: (T.tensor([0.3, 0.5, 1.0], dtype=T.float64), 1, True),
    "qvec_dim0": lambda T: (T.tensor([0.0, 0.25], dtype=T.float64), 0),
    "qvec_all": lambda T: (T.tensor([0.1, 0.9], dtype=T.float64),),
    "q0d_tensor": lambda T: (T.tensor(0.4, dtype=T.float64), -1),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("args", QARGS)
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_values_graph_and_grads(name, args, mode):
    def program(T):
        x = _leaf(T, [[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0], [0.5, -2.0, 7.0, 8.0]])
        out = getattr(T, name)(x, *QARGS[args](T), interpolation=mode)
        return out, out._version, next_functions(out.grad_fn), _grads(T, out, x, order2=False)

    ok(program)


def test_quantile_create_graph_gradient_has_no_history():
    def program(T):
        x = _leaf(T, [[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0]])
        (g,) = T.autograd.grad(T.quantile(x, 0.3, dim=1).sum(), x, create_graph=True)
        return g

    ok(program)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_with_nans_method_and_float32(name):
    def program(T):
        nan = float("nan")
        x = _leaf(T, [[3.0, nan, 4.0, 1.5], [nan, nan, nan, nan], [0.5, -2.0, 7.0, 8.0]],
                  "float32")
        out = getattr(x, name)(T.tensor([0.2, 0.5]), dim=1)
        whole = getattr(T, name)(x, 0.5)
        return out, whole, next_functions(out.grad_fn), _grads(T, out, x, order2=False)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.quantile(T.tensor([1.0, 2.0]), 1.5),
    lambda T: T.quantile(T.tensor([1.0, 2.0]), T.tensor([0.5, 1.5])),
    lambda T: T.quantile(T.tensor([1.0, 2.0]), 0.5, interpolation="cubic"),
    lambda T: T.quantile(T.tensor([1, 2]), 0.5),
    lambda T: T.quantile(T.tensor([1.0, 2.0]), T.tensor([0.5], dtype=T.float64)),
    lambda T: T.quantile(T.tensor([1.0, 2.0]), T.tensor([[0.5]])),
    lambda T: T.quantile(T.tensor([]), 0.5),
    lambda T: T.nanquantile(T.tensor([1.0, 2.0]), 0.5, dim=2),
], ids=["q_range", "qvec_range", "mode", "int_input", "q_dtype", "q_2d", "empty", "dim"])
def test_quantile_errors(call):
    raises(call)


def test_quantile_of_a_scalar_tensor():
    ok(lambda T: (T.quantile(T.tensor(2.5), 0.5), T.quantile(T.tensor(2.5), 0.5, dim=0,
                                                               keepdim=True)))


# --- msort, bincount, histc ----------------------------------------------------------------------

def test_msort_graph_and_grads():
    def program(T):
        x = _leaf(T, [[3.0, 1.0], [2.0, 4.0], [-1.0, 0.5]])
        out = T.msort(x)
        return out, x.msort(), next_functions(out.grad_fn), _grads(T, out, x, order2=False)

    ok(program)


def test_bincount_forms_dtypes_and_grad_fn():
    def program(T):
        i = T.tensor([1, 1, 3, 0, 5])
        w = T.tensor([0.5, 1.0, 2.0, 1.0, 3.0], requires_grad=True)
        out = T.bincount(i, w)
        return (T.bincount(i), i.bincount(minlength=8), out, i.int().bincount(),
                T.bincount(i, w.detach().double()), T.bincount(i, T.tensor([1, 2, 3, 4, 5])),
                T.bincount(i, T.tensor([True, False, True, True, False])),
                T.bincount(T.tensor([], dtype=T.long)), T.bincount(i, minlength=2))

    ok(program)


def test_bincount_weights_are_not_differentiable():
    def program(T):
        w = T.tensor([0.5, 1.0], requires_grad=True)
        T.bincount(T.tensor([0, 2]), w).sum().backward()

    raises(program)


@pytest.mark.parametrize("call", [
    lambda T: T.bincount(T.tensor([-1, 2])),
    lambda T: T.bincount(T.tensor([1.0])),
    lambda T: T.bincount(T.tensor([[1]])),
    lambda T: T.bincount(T.tensor([1, 2]), T.ones(3)),
    lambda T: T.bincount(T.tensor([1, 2]), minlength=-1),
    lambda T: T.bincount(T.tensor([True])),
], ids=["negative", "float", "2d", "weights_len", "minlength", "bool"])
def test_bincount_errors(call):
    raises(call)


def test_histc_values():
    def program(T):
        x = T.tensor([1.0, 2.0, 1.0, 2.5, 7.0, -1.0], requires_grad=True)
        y = T.tensor([0.1, 0.2, 0.3, 0.7, 1.0, 0.95, 0.05], dtype=T.float64)
        return (T.histc(x), T.histc(x, bins=4), T.histc(x, 4, 0, 3), x.histc(3, 1, 1),
                T.histc(y, 10, 0, 1), T.histc(x, 5, min=-1, max=2.5),
                T.histc(T.tensor([2.0, 2.0]), 3), T.histc(T.tensor([]), 3),
                T.histc(T.tensor([[1.0, 2.0], [3.0, 4.0]]), 2),
                T.histc(T.tensor([1.0, float("nan"), 2.0]), 2, 0, 2))

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.histc(T.tensor([1.0]), 4, 3, 0),
    lambda T: T.histc(T.tensor([1.0]), 0),
    lambda T: T.histc(T.tensor([1, 2])),
    lambda T: T.histc(T.tensor([float("nan")]), 3),
    lambda T: T.histc(T.tensor([float("inf"), 1.0]), 3),
], ids=["range", "bins", "int", "nan", "inf"])
def test_histc_errors(call):
    raises(call)


# --- trapezoid, trapz, cumulative_trapezoid ------------------------------------------------------

TRAPEZOID = {
    "default": lambda T, y, x: T.trapezoid(y),
    "dx": lambda T, y, x: T.trapezoid(y, dx=2.5),
    "x": lambda T, y, x: T.trapezoid(y, x),
    "dim0": lambda T, y, x: T.trapezoid(y, dim=0),
    "x_2d": lambda T, y, x: T.trapezoid(y, x * T.tensor([[1.0], [2.0]], dtype=T.float64)),
    "trapz_x": lambda T, y, x: T.trapz(y, x),
    "trapz_dx": lambda T, y, x: T.trapz(y, dx=2),
    "cumulative": lambda T, y, x: T.cumulative_trapezoid(y),
    "cumulative_dx": lambda T, y, x: T.cumulative_trapezoid(y, dx=0.5, dim=0),
    "cumulative_x": lambda T, y, x: T.cumulative_trapezoid(y, x),
}


@pytest.mark.parametrize("case", TRAPEZOID)
def test_trapezoid_graph_and_grads(case):
    def program(T):
        y = _leaf(T, [[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
        x = _leaf(T, [0.0, 1.0, 3.5])
        out = TRAPEZOID[case](T, y, x)
        return out, next_functions(out.grad_fn), _grads(T, out, y, x, order2=False)

    ok(program)


def test_trapezoid_edge_cases():
    # (an empty integral is torch's at::zeros: version 1 there, so compared without versions)
    ok(lambda T: (T.trapezoid(T.tensor([1, 2, 3])), val(T.trapezoid(T.ones(0))),
                  val(T.trapezoid(T.ones(2, 0), dim=1)), T.cumulative_trapezoid(T.ones(0)),
                  T.cumulative_trapezoid(T.tensor([1, 2])), T.trapezoid(T.tensor([2.0]))))


@pytest.mark.parametrize("call", [
    lambda T: T.trapezoid(T.ones(2, 3), T.ones(2)),
    lambda T: T.trapezoid(T.tensor([True, False])),
    lambda T: T.trapezoid(T.ones(3), dx=1j),
    lambda T: T.cumulative_trapezoid(T.ones(3), T.tensor([True, False, True])),
    lambda T: T.trapezoid(T.ones(3), dim=2),
], ids=["x_len", "bool", "complex_dx", "bool_x", "dim"])
def test_trapezoid_errors(call):
    raises(call)
