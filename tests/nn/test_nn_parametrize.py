"""nn.utils.parametrize and nn.utils.parametrizations against torch: registration (class swap,
repr, state_dict keys), values and gradients through parametrizations, right_inverse
assignment, tuple originals, removal, caching, transfer, and orthogonal / weight_norm /
spectral_norm."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from differential import Raised, attempt, next_functions, ok, raises, set_weights, val


def _symmetric(T):
    class Symmetric(T.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def _scale(T, factor=2.0, inverse=True):
    class Scale(T.nn.Module):
        def forward(self, X):
            return X * factor

    if inverse:
        Scale.right_inverse = lambda self, X: X / factor
    return Scale()


def _grads(module):
    return [(name, val(p.grad)) for name, p in module.named_parameters()]


def _weighted_sum(T, w):
    weights = T.arange(float(w.numel()), dtype=w.dtype).view(w.shape) - 2
    return (w * weights).sum()


def _linear(T, n_in=3, n_out=3):
    return set_weights(T, T.nn.Linear(n_in, n_out))


def test_register_swaps_class_and_keeps_grads_flowing():
    def program(T):
        P = T.nn.utils.parametrize
        m = _linear(T)
        before = list(m.state_dict())
        P.register_parametrization(m, "weight", _symmetric(T))
        w = m.weight
        _weighted_sum(T, w).backward()
        return (
            type(m).__name__,
            type(m).__bases__[0].__name__,
            repr(m),
            before,
            list(m.state_dict()),
            [n for n, _ in m.named_parameters()],
            w,
            next_functions(w.grad_fn),
            _grads(m),
            P.is_parametrized(m),
            P.is_parametrized(m, "weight"),
            P.is_parametrized(m, "bias"),
            P.type_before_parametrizations(m).__name__,
            isinstance(m, T.nn.Linear),
            m.parametrizations.weight.original._version,
            m(T.ones(2, 3, dtype=T.float64)),
        )

    ok(program)


def test_second_order_through_a_parametrization():
    def program(T):
        m = _linear(T)
        T.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(T))
        original = m.parametrizations.weight.original
        (g,) = T.autograd.grad((m.weight**3).sum(), original, create_graph=True)
        (gg,) = T.autograd.grad(_weighted_sum(T, g), original)
        return val(g), gg

    ok(program)


def test_assignment_goes_through_right_inverse():
    def program(T):
        m = _linear(T)
        T.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(T))
        original = m.parametrizations.weight.original
        version = original._version
        m.weight = T.arange(9.0, dtype=T.float64).view(3, 3)
        return version, original, original._version, m.weight, original.requires_grad

    ok(program)


def test_chained_parametrizations():
    def program(T):
        P = T.nn.utils.parametrize
        m = _linear(T)
        P.register_parametrization(m, "weight", _symmetric(T))
        P.register_parametrization(m, "weight", _scale(T, 3.0))
        w = m.weight
        _weighted_sum(T, w).backward()
        m.weight = T.eye(3, dtype=T.float64)
        return (
            repr(m),
            w,
            next_functions(w.grad_fn),
            _grads(m),
            m.weight,
            list(m.state_dict()),
            m.parametrizations.weight.original,
        )

    ok(program)


def test_parametrize_a_buffer_and_bias():
    def program(T):
        P = T.nn.utils.parametrize
        m = _linear(T)
        m.register_buffer("scale", T.ones(3, dtype=T.float64))
        P.register_parametrization(m, "scale", _scale(T))
        P.register_parametrization(m, "bias", _scale(T, -1.0))
        return (
            list(m.state_dict()),
            [n for n, _ in m.named_buffers()],
            m.scale,
            m.bias,
            type(m.parametrizations.scale.original).__name__,
            repr(m),
        )

    ok(program)


def test_tuple_originals():
    def program(T):
        P = T.nn.utils.parametrize

        class Split(T.nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, X):
                return X / 2, X / 2

        m = _linear(T)
        P.register_parametrization(m, "weight", Split())
        plist = m.parametrizations.weight
        w = m.weight
        _weighted_sum(T, w).backward()
        m.weight = T.ones(3, 3, dtype=T.float64)
        refused = attempt(lambda: P.remove_parametrizations(m, "weight", leave_parametrized=False))
        return (
            list(m.state_dict()),
            hasattr(plist, "original"),
            plist.ntensors,
            plist.is_tensor,
            w,
            next_functions(w.grad_fn),
            _grads(m),
            plist.original0,
            plist.original1,
            refused,
        )

    ok(program)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    def program(T):
        P = T.nn.utils.parametrize
        m = _linear(T)
        weight = m.weight
        P.register_parametrization(m, "weight", _scale(T))
        P.register_parametrization(m, "bias", _scale(T, 5.0))
        P.remove_parametrizations(m, "weight", leave_parametrized=leave)
        middle = (type(m).__name__, list(m.state_dict()), m.weight is weight, m.weight)
        P.remove_parametrizations(m, "bias", leave_parametrized=leave)
        return (
            middle,
            type(m).__name__,
            hasattr(m, "parametrizations"),
            list(m.state_dict()),
            m.weight,
            m.bias,
            "weight" in type(m).__dict__,
            P.is_parametrized(m),
        )

    ok(program)


def test_remove_tuple_originals_leaves_a_new_parameter():
    def program(T):
        P = T.nn.utils.parametrize
        P.register_parametrization(m := _linear(T), "weight", _split(T))
        P.remove_parametrizations(m, "weight")
        return type(m).__name__, m.weight, type(m.weight).__name__, list(m.state_dict())

    ok(program)


def _split(T):
    class Split(T.nn.Module):
        def forward(self, a, b):
            return a * b

        def right_inverse(self, X):
            return X, T.ones_like(X)

    return Split()


def test_cached_computes_once():
    def program(T):
        P = T.nn.utils.parametrize
        calls = []

        class Counted(T.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X * 2

        m = P.register_parametrization(_linear(T), "weight", Counted())
        outside = m.weight is m.weight
        with P.cached():
            with P.cached():
                inner = m.weight is m.weight
            still = m.weight is m.weight
        after = m.weight is m.weight
        return len(calls), outside, inner, still, after

    ok(program)


def test_transfer_parametrizations_and_params():
    def program(T):
        P = T.nn.utils.parametrize
        src = _linear(T)
        P.register_parametrization(src, "weight", _symmetric(T))
        P.register_parametrization(src, "bias", _scale(T))
        dst = P.transfer_parametrizations_and_params(src, _linear(T, 3, 3).float().double())
        one = P.transfer_parametrizations_and_params(src, T.nn.Module(), "bias")
        shared = dst.parametrizations.weight.original is src.parametrizations.weight.original
        return (
            repr(dst),
            shared,
            dst.weight,
            dst.bias,
            list(dst.state_dict()),
            repr(one),
            list(one.state_dict()),
            one.bias,
        )

    ok(program)


def test_train_mode_reaches_parametrizations():
    def program(T):
        m = _linear(T).eval()
        T.nn.utils.parametrize.register_parametrization(m, "weight", p := _scale(T))
        first = p.training
        m.train()
        return first, p.training, m.parametrizations.training

    ok(program)


def test_deepcopy_and_pickle():
    def program(T):
        m = T.nn.utils.parametrize.register_parametrization(_linear(T), "weight", _symmetric(T))
        c = copy.deepcopy(m)
        refused = attempt(lambda: pickle.dumps(m))
        return type(c).__name__, c.weight, c.weight is m.weight, refused, repr(c)

    ok(program)


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "dtype",
        "shape",
        "not_tensor",
        "second_dtype",
        "second_shape",
        "second_not_tensor",
        "inverse_shape",
        "inverse_dtype",
        "inverse_not_tensor",
        "no_inverse",
        "inverse_bad_type",
        "remove_missing",
        "empty_list",
        "inverse_changes_dtype",
        "tuple_bad_element",
        "tuple_wrong_length",
        "tuple_wrong_dtype",
    ],
)
def test_registration_errors(case):
    def program(T):
        P = T.nn.utils.parametrize

        def module_returning(f, inverse=None):
            cls = type("F", (T.nn.Module,), {"forward": lambda self, X: f(X)})
            if inverse is not None:
                cls.right_inverse = lambda self, X: inverse(X)
            return cls()

        m = _linear(T)
        if case == "missing":
            return P.register_parametrization(m, "nope", _scale(T))
        if case == "dtype":
            return P.register_parametrization(m, "weight", module_returning(lambda X: X.float()))
        if case == "shape":
            return P.register_parametrization(m, "weight", module_returning(lambda X: X[0]))
        if case == "not_tensor":
            return P.register_parametrization(m, "weight", module_returning(lambda X: 3))
        if case == "empty_list":
            return P.ParametrizationList([], m.weight)
        if case == "inverse_changes_dtype":
            return P.register_parametrization(
                m, "weight", module_returning(lambda X: X, lambda X: X.float())
            )
        if case == "tuple_bad_element":
            return P.register_parametrization(
                m, "weight", module_returning(lambda a, *b: a, lambda X: (X, 3))
            )
        if case.startswith("tuple_"):
            P.register_parametrization(m, "weight", _split(T))
            if case == "tuple_wrong_length":
                m.parametrizations.weight[0].right_inverse = lambda X: (X,)
            else:
                m.parametrizations.weight[0].right_inverse = lambda X: (X, X.float())
            m.weight = T.ones(3, 3, dtype=T.float64)
            return m.weight
        if case == "remove_missing":
            return P.remove_parametrizations(m, "weight")
        P.register_parametrization(m, "weight", _scale(T))
        if case == "second_dtype":
            return P.register_parametrization(m, "weight", module_returning(lambda X: X.float()))
        if case == "second_shape":
            return P.register_parametrization(m, "weight", module_returning(lambda X: X.T[:2]))
        if case == "second_not_tensor":
            return P.register_parametrization(m, "weight", module_returning(lambda X: [X]))
        if case == "inverse_shape":
            return P.register_parametrization(
                m, "weight", module_returning(lambda X: X, lambda X: X[0])
            )
        if case == "inverse_dtype":
            return P.register_parametrization(
                m, "weight", module_returning(lambda X: X, lambda X: X.int())
            )
        if case == "inverse_not_tensor":
            return P.register_parametrization(
                m, "weight", module_returning(lambda X: X, lambda X: 1)
            )
        if case == "no_inverse":
            P.register_parametrization(m, "weight", module_returning(lambda X: X))
            m.weight = T.ones(3, 3, dtype=T.float64)
        if case == "inverse_bad_type":
            m.parametrizations.weight[0].right_inverse = lambda X: X.float()
            m.weight = T.ones(3, 3, dtype=T.float64)
        return m.weight

    raises(program)


def test_unsafe_allows_shape_and_dtype_changes():
    def program(T):
        P = T.nn.utils.parametrize

        class Head(T.nn.Module):
            def forward(self, X):
                return X[:2].float()

        m = P.register_parametrization(_linear(T), "weight", Head(), unsafe=True)
        P.register_parametrization(m, "weight", _scale(T), unsafe=True)
        return m.weight, m.parametrizations.weight.unsafe, repr(m)

    ok(program)


# --- orthogonal ----------------------------------------------------------------------------------

_ORTHOGONAL = [
    dict(),
    dict(orthogonal_map="cayley"),
    dict(orthogonal_map="householder"),
    dict(use_trivialization=False),
    dict(orthogonal_map="householder", use_trivialization=False),
    dict(orthogonal_map="cayley", use_trivialization=False),
]


@pytest.mark.parametrize("kw", _ORTHOGONAL, ids=lambda kw: "-".join(map(str, kw.values())))
def test_orthogonal_square(kw):
    def program(T):
        m = T.nn.utils.parametrizations.orthogonal(_linear(T), **kw)
        w = m.weight
        _weighted_sum(T, w).backward()
        base = getattr(m.parametrizations.weight[0], "base", None)
        return (
            w,
            next_functions(w.grad_fn),
            _grads(m),
            list(m.state_dict()),
            repr(m),
            base,
            bool(T.allclose(w.T @ w, T.eye(3, dtype=T.float64))),
        )

    ok(program)


@pytest.mark.parametrize("kw", _ORTHOGONAL[3:], ids=lambda kw: "-".join(map(str, kw.values())))
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 3)])
def test_orthogonal_rectangular_without_trivialization(kw, shape):
    def program(T):
        m = T.nn.Module()
        rs = np.random.RandomState(1)
        m.weight = T.nn.Parameter(T.tensor(rs.randn(*shape)))
        T.nn.utils.parametrizations.orthogonal(m, **kw)
        w = m.weight
        _weighted_sum(T, w).backward()
        return w, next_functions(w.grad_fn), _grads(m)

    ok(program)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3)])
def test_orthogonal_rectangular_trivialization_is_orthogonal(shape):
    """The completion of a rectangular matrix draws random numbers: compare what it must give."""

    def program(T):
        m = T.nn.Module()
        m.weight = T.nn.Parameter(T.tensor(np.random.RandomState(1).randn(*shape)))
        T.nn.utils.parametrizations.orthogonal(m)
        w = m.weight if shape[0] >= shape[1] else m.weight.T
        eye = T.eye(w.shape[1], dtype=w.dtype)
        return (
            bool(T.allclose(w.T @ w, eye)),
            m.parametrizations.weight[0].base.shape,
            list(m.state_dict()),
            type(w.grad_fn).__name__,
        )

    ok(program)


def test_orthogonal_assignment():
    def program(T):
        m = T.nn.utils.parametrizations.orthogonal(_linear(T))
        Q = T.linalg.qr(T.tensor(np.random.RandomState(3).randn(3, 3))).Q
        m.weight = Q
        after_q = (m.weight, m.parametrizations.weight.original)
        m.weight = T.tensor(np.random.RandomState(4).randn(3, 3))
        return after_q, m.weight, m.parametrizations.weight[0].base

    ok(program)


@pytest.mark.parametrize(
    "case", ["vector", "map", "complex_householder", "no_weight", "assign_shape", "assign_exp"]
)
def test_orthogonal_errors(case):
    def program(T):
        P = T.nn.utils.parametrizations
        if case == "vector":
            return P.orthogonal(T.nn.Linear(2, 2), "bias")
        if case == "map":
            return P.orthogonal(T.nn.Linear(2, 2), orthogonal_map="qr")
        if case == "complex_householder":
            m = T.nn.Module()
            m.weight = T.nn.Parameter(T.ones(3, 2, dtype=T.complex64))
            return P.orthogonal(m, orthogonal_map="householder")
        if case == "no_weight":
            return P.orthogonal(T.nn.ReLU())
        m = P.orthogonal(_linear(T), use_trivialization=case != "assign_exp")
        m.weight = T.eye(2, dtype=T.float64) if case == "assign_shape" else T.eye(3)
        return m.weight

    raises(program)


# --- weight_norm ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make,dim",
    [
        ("linear", 0),
        ("linear", 1),
        ("linear", None),
        ("conv", 0),
        ("conv", 1),
        ("conv", 2),
        ("conv", -1),
    ],
)
def test_weight_norm(make, dim):
    def program(T):
        module = T.nn.Linear(3, 2) if make == "linear" else T.nn.Conv1d(3, 2, 2)
        m = T.nn.utils.parametrizations.weight_norm(set_weights(T, module), dim=dim)
        plist = m.parametrizations.weight
        w = m.weight
        g0, v0 = plist.original0, plist.original1
        (gg, gv) = T.autograd.grad(_weighted_sum(T, w), (g0, v0), create_graph=True)
        second = T.autograd.grad((gg**2).sum() + _weighted_sum(T, gv), (g0, v0))
        return (
            repr(m),
            list(m.state_dict()),
            w,
            next_functions(w.grad_fn),
            g0,
            v0,
            val(gg),
            val(gv),
            second,
        )

    ok(program)


def test_weight_norm_loads_old_state_dict_keys():
    def program(T):
        old = {
            "weight_g": T.full((2, 1), 2.0, dtype=T.float64),
            "weight_v": T.tensor(np.random.RandomState(2).randn(2, 3)),
            "bias": T.zeros(2, dtype=T.float64),
        }
        m = T.nn.utils.parametrizations.weight_norm(_linear(T, 3, 2))
        result = m.load_state_dict(old)
        return repr(result), m.weight, list(m.state_dict())

    ok(program)


def test_weight_norm_removal():
    def program(T):
        P = T.nn.utils
        m = P.parametrizations.weight_norm(_linear(T, 3, 2))
        P.parametrize.remove_parametrizations(m, "weight")
        return type(m).__name__, m.weight, list(m.state_dict())

    ok(program)


def test_weight_norm_interface_and_norm_except_dim():
    def program(T):
        v = T.tensor(np.random.RandomState(5).randn(2, 3, 4), requires_grad=True)
        out = []
        for dim in (-1, 0, 1, 2):
            n = T.norm_except_dim(v, 2, dim)
            out.append((n, next_functions(n.grad_fn)))
        g = T.tensor(np.random.RandomState(6).randn(2, 1, 1), requires_grad=True)
        w, norms = T._weight_norm_interface(v, g, 0)
        _weighted_sum(T, w).backward()
        return out, w, norms, v.grad, g.grad

    ok(program)


# --- spectral_norm --------------------------------------------------------------------------------


def _fixed_vectors(T, m):
    sn = m.parametrizations.weight[0]
    with T.no_grad():
        rs = np.random.RandomState(7)
        sn._u.copy_(T.nn.functional.normalize(T.tensor(rs.randn(*sn._u.shape)), dim=0))
        sn._v.copy_(T.nn.functional.normalize(T.tensor(rs.randn(*sn._v.shape)), dim=0))
    return sn


@pytest.mark.parametrize("make", ["linear", "conv", "conv_transpose"])
def test_spectral_norm(make):
    def program(T):
        module = {
            "linear": lambda: T.nn.Linear(4, 3),
            "conv": lambda: T.nn.Conv2d(2, 3, 2),
            "conv_transpose": lambda: T.nn.ConvTranspose2d(2, 3, 2),
        }[make]()
        m = T.nn.utils.parametrizations.spectral_norm(set_weights(T, module), n_power_iterations=2)
        sn = _fixed_vectors(T, m)
        versions = (sn._u._version, sn._v._version)
        w = m.weight
        _weighted_sum(T, w).backward()
        trained = (sn._u.clone(), sn._v.clone(), sn._u._version, sn._v._version)
        m.eval()
        w_eval = m.weight
        return (
            repr(m),
            list(m.state_dict()),
            sn.dim,
            versions,
            w,
            next_functions(w.grad_fn),
            _grads(m),
            trained,
            w_eval,
            sn._u._version,
        )

    ok(program)


def test_spectral_norm_of_a_vector_and_errors():
    def program(T):
        m = T.nn.utils.parametrizations.spectral_norm(_linear(T), "bias")
        return (
            m.bias,
            list(m.state_dict()),
            attempt(lambda: T.nn.utils.parametrizations.spectral_norm(T.nn.ReLU())),
            attempt(
                lambda: T.nn.utils.parametrizations.spectral_norm(
                    T.nn.Linear(2, 2), n_power_iterations=0
                )
            ),
            attempt(lambda: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(2, 2), dim=2)),
        )

    ta, _ = ok(program)
    assert all(isinstance(x, Raised) for x in ta[2:])


def test_geqrf():
    def program(T):
        A = T.tensor(np.random.RandomState(8).randn(2, 4, 3), requires_grad=True)
        a, tau = T.geqrf(A)
        return (
            a,
            tau,
            T.geqrf(A.detach().mT),
            attempt(lambda: a.sum().backward()),
            attempt(lambda: T.geqrf(T.ones(3))),
            attempt(lambda: T.geqrf(T.ones(2, 2, dtype=T.int64))),
        )

    ok(program)
