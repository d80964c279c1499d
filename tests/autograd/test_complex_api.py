"""The complex API against torch: views of complex memory as real and back (shared storage and
version counter, in-place changes through either), the conjugate and negative bits, the ops that
build and take apart complex tensors, their errors, and their gradients of first and second
order on every route (backward, forward AD, jaxgrad.func, compile)."""

from __future__ import annotations

import numpy as np
import pytest

from differential import next_functions, ok, raises

Z = np.array([1 + 2j, -3 + 0.5j, 0.25 - 1j])
A = np.array([1.0, -2.0, 0.5])
B = np.array([0.3, 2.0, -1.0])


def _leaves(T):
    return (T.tensor(Z, dtype=T.complex128, requires_grad=True),
            T.tensor(A, dtype=T.float64, requires_grad=True),
            T.tensor(B, dtype=T.float64, requires_grad=True))


# each: a real scalar loss of complex z and real a, b through the API under test
LOSSES = {
    "real": lambda T, z, a, b: (z.real * a).sum(),
    "imag": lambda T, z, a, b: (T.imag(z) ** 2 * a).sum(),
    "view_as_real": lambda T, z, a, b: (T.view_as_real(z * z) ** 2 * 1.5).sum(),
    "view_as_complex": lambda T, z, a, b: (
        T.view_as_complex(T.stack([a, b], -1)) * (2 + 1j)).abs().sum(),
    "conj": lambda T, z, a, b: (z.conj() * (2 + 3j) * z).abs().sum(),
    "conj_imag": lambda T, z, a, b: (z.conj().imag * a).sum(),
    "conj_real": lambda T, z, a, b: (z.conj().real ** 2).sum(),
    "conj_physical": lambda T, z, a, b: (T.conj_physical(z) * (2 + 3j) * z).real.sum(),
    "resolve_conj": lambda T, z, a, b: (z.conj().resolve_conj() * z).imag.sum(),
    "angle": lambda T, z, a, b: (z.angle() * a).sum() + (a * b).angle().sum(),
    "complex": lambda T, z, a, b: (T.complex(a, b) * (1 - 2j) * z).abs().sum(),
    "polar": lambda T, z, a, b: (T.polar(a.abs() + 0.5, b) * (1 - 2j)).imag.sum(),
    "mH": lambda T, z, a, b: (z.reshape(3, 1).mH @ (z * z).reshape(3, 1)).abs().sum(),
    "adjoint": lambda T, z, a, b: (T.adjoint(z.reshape(1, 3)) * a.reshape(3, 1)).real.sum(),
}


def _grads(T, name, z, a, b, create_graph=False):
    loss = LOSSES[name](T, z, a, b)
    return T.autograd.grad(loss, (z, a, b), create_graph=create_graph, allow_unused=True)


@pytest.mark.parametrize("name", LOSSES)
def test_gradients_as_torch(name):
    def program(T):
        z, a, b = _leaves(T)
        loss = LOSSES[name](T, z, a, b)
        loss.backward()
        return loss, [None if t.grad is None else t.grad.resolve_conj().clone() for t in (z, a, b)]
    ok(program)


@pytest.mark.parametrize("name", LOSSES)
def test_second_order_as_torch(name):
    def program(T):
        z, a, b = _leaves(T)
        first = [g for g in _grads(T, name, z, a, b, create_graph=True) if g is not None]
        total = sum((g.abs() ** 2).sum() for g in first if g.requires_grad)
        if not isinstance(total, T.Tensor):
            return "no second order"
        return [None if g is None else g.resolve_conj().clone()
                for g in T.autograd.grad(total, (z, a, b), allow_unused=True)]
    ok(program, rtol=1e-10)


@pytest.mark.parametrize("name", LOSSES)
def test_func_grad_as_torch(name):
    def program(T):
        z, a, b = (t.detach() for t in _leaves(T))
        return [g.clone() for g in T.func.grad(lambda z, a, b: LOSSES[name](T, z, a, b),
                                               argnums=(0, 1, 2))(z, a, b)]
    ok(program)


FORWARD = {
    "view_as_real": lambda T, z: T.view_as_real(z),
    "real": lambda T, z: z.real,
    "conj": lambda T, z: z.conj(),
    "conj_imag": lambda T, z: z.conj().imag,
    "angle": lambda T, z: z.angle(),
    "view_as_complex": lambda T, z: T.view_as_complex(T.view_as_real(z) * 2),
    "polar": lambda T, z: T.polar(z.real, z.imag),
    "complex": lambda T, z: T.complex(z.real, z.imag * 2),
}


@pytest.mark.parametrize("name", FORWARD)
def test_forward_ad_as_torch(name):
    def program(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            dz = fw.make_dual(T.tensor(Z, dtype=T.complex128),
                              T.tensor([1j, 1.0, 2 - 1j], dtype=T.complex128))
            out = fw.unpack_dual(FORWARD[name](T, dz))
            return out.primal.resolve_conj().resolve_neg(), \
                out.tangent.resolve_conj().resolve_neg().clone()
    ok(program)


def test_view_as_real_shares_storage_and_version():
    def program(T):
        z = T.tensor([1 + 2j, 3 - 4j])
        r = T.view_as_real(z)
        r[0, 1] = 7.0
        z.mul_(2)
        return (z, r, z._version, r._version, r.stride(), r.storage_offset(),
                r.data_ptr() == z.data_ptr(), r._base is z, r.is_contiguous())
    ok(program)


def test_real_and_imag_are_views():
    def program(T):
        z = T.zeros(2, 3, dtype=T.cfloat)
        z.real.add_(1)
        z.imag[1].mul_(3).add_(2)
        z.t().imag.sub_(0.5)
        z.real = T.tensor([5.0, 6.0, 7.0])
        return (z, z._version, z.real.stride(), z.imag.storage_offset(), z.imag._base is z,
                z.real.dtype, T.real(T.ones(2)).dtype)
    ok(program)


def test_view_as_complex_of_views():
    def program(T):
        x = T.arange(12.0).reshape(3, 2, 2)
        c = T.view_as_complex(x[1:])
        c.add_(1j)
        cc = T.view_as_complex(T.view_as_real(c))
        return x, c, c.stride(), c.storage_offset(), x._version, cc._base is x, cc.shape
    ok(program)


def test_conjugate_bit():
    def program(T):
        z = T.tensor([1 + 2j, 3 - 4j])
        c = z.conj()
        i = c.imag
        out = [c, c.is_conj(), T.is_conj(c), c.conj().is_conj(), c._base is z,
               c.data_ptr() == z.data_ptr(), i, i.is_neg(), T.is_neg(i),
               T.resolve_neg(i).is_neg(), c.resolve_conj().is_conj(), c.clone().is_conj(),
               (c + 0).is_conj(), c.detach().is_conj(), z.conj_physical().is_conj()]
        c.add_(1j)  # writes conj(c + 1j) into z
        out += [z, c, z._version]
        r = T.tensor([1.0, 2.0])
        out += [r.conj() is r, r.resolve_conj() is r, r.real is r, T.conj_physical(r) is r]
        return out
    ok(program)


def test_grad_fn_graphs():
    def program(T):
        z = T.tensor([1 + 2j, 3 - 4j], requires_grad=True)
        m = T.tensor([[1 + 1j, 2.0], [3.0, 4 - 1j]], requires_grad=True)
        return [next_functions(f.grad_fn) for f in (
            z.real, z.imag, z.conj(), z.conj().real, z.conj().imag, T.view_as_real(z),
            T.view_as_complex(T.view_as_real(z)), z.angle(), T.conj_physical(z), m.mH, m.H,
            m.adjoint(), z.conj().resolve_conj(), T.complex(z.real, z.imag),
            T.polar(z.abs(), z.angle()))]
    ok(program)


def test_in_place_through_real_view_rebases_history():
    def program(T):
        w = T.tensor([1 + 2j, 3 + 4j], requires_grad=True)
        y = w.clone()
        y.imag.mul_(3)
        T.view_as_real(y)[0].mul_(5)
        y.abs().sum().backward()
        return y, next_functions(y.grad_fn), w.grad.clone()
    ok(program)


def test_numpy_refuses_conjugate_and_negative_views():
    def program(T):
        c = T.tensor([1 + 2j]).conj()
        out = []
        for f in (lambda: c.numpy(), lambda: c.imag.numpy(), lambda: c.resolve_conj().numpy()):
            try:
                out.append(f().tolist())
            except RuntimeError as e:
                out.append(str(e))
        return out
    ok(program)


@pytest.mark.parametrize("call", [
    "view_as_real(ones(2))", "view_as_real(ones(2, dtype=cfloat).conj())",
    "view_as_complex(ones(2, dtype=cfloat))", "view_as_complex(ones(2, 2, dtype=int64))",
    "view_as_complex(ones(()))", "view_as_complex(ones(2, 3))",
    "view_as_complex(ones(2, 4)[:, ::2])", "view_as_complex(ones(3, 2)[:, :1])",
    "view_as_complex(ones(8)[1:7].reshape(3, 2))", "imag(ones(2))",
    "complex(ones(2), ones(2, dtype=float64))", "complex(ones(2, dtype=int64), ones(2))",
    "polar(ones(2), ones(2, dtype=float64))", "ones(3).mH", "ones(3).H", "ones(2, 2, 2).H",
    "adjoint(ones(3))",
])
def test_errors_as_torch(call):
    def program(T):
        return eval(call, {name: getattr(T, name) for name in dir(T) if not name.startswith("__")})
    raises(program)


def test_constructors_and_casts():
    def program(T):
        a, b = T.tensor([[1.0], [2.0]]), T.tensor([3.0, -4.0, 0.5])
        out = T.empty(2, 3, dtype=T.cfloat)
        T.complex(a, b, out=out)
        return (T.complex(a, b), T.polar(a, b), out, T.angle(T.tensor([-1, 0, 2])),
                T.angle(T.tensor([-1.0, -0.0, float("nan")])), T.tensor([1, 2]).cfloat(),
                T.tensor([1.0]).cdouble(), T.cfloat, T.cdouble,
                T.tensor([[1 + 1j, 2j]]).mH, T.tensor(1 + 1j).conj())
    ok(program)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compile"])
def test_step_through_complex_views(compiled):
    """A training step reading a parameter through conj/imag views and writing a buffer through
    its real and imaginary views; jaxgrad eager and ``jaxgrad.compile``d, against torch eager."""
    def program(T):
        w = T.tensor(Z.astype(np.complex64), requires_grad=True)
        buf = T.zeros(3, dtype=T.cfloat)
        x = T.tensor([1 + 1j, 2 - 1j, -0.5j], dtype=T.cfloat)

        def step(x):
            buf.real.copy_(x.real * 2)
            buf.imag.add_(1)
            loss = (w.conj() * x).real.sum() + w.imag.pow(2).sum() + buf.abs().sum()
            loss.backward()
            return loss.detach()

        run = T.compile(step) if compiled and T.__name__ == "jaxgrad" else step
        losses = [run(x) for _ in range(3)]
        return losses, w.grad.clone(), buf, buf._version
    ok(program)


# --- in-place changes through chains of dtype views (torch's test/autograd/test_complex.py) ----

VIEW_CHAINS = {
    "complex_then_real": lambda T, b: T.view_as_real(T.view_as_complex(b)),
    "complex_then_reshape": lambda T, b: T.view_as_complex(b).reshape(-1),
    "reshape_then_real": lambda T, b: T.view_as_real(T.view_as_complex(b).reshape(2, 2)),
    "select_of_real": lambda T, b: T.view_as_real(T.view_as_complex(b))[1],
    "real_part": lambda T, b: T.view_as_complex(b).real,
    "imag_of_transposed": lambda T, b: T.view_as_complex(b).t().imag,
}


@pytest.mark.parametrize("name", VIEW_CHAINS)
def test_in_place_through_view_chains(name):
    def program(T):
        x = T.tensor(np.arange(8.0).reshape(2, 2, 2) / 3, dtype=T.float64, requires_grad=True)
        v = VIEW_CHAINS[name](T, x.clone())
        v.mul_(2)
        v.sum().abs().backward() if v.is_complex() else v.sum().backward()
        return x.grad.clone(), next_functions(v.grad_fn), v._version
    ok(program)


def test_in_place_on_one_of_several_complex_views_raises():
    def program(T):
        out = []
        for requires_grad in (False, True):
            x = T.ones(2, 2, 2, dtype=T.float64, requires_grad=requires_grad)
            res = T.view_as_complex(x).unbind(0)
            try:
                res[0].add_(T.ones(2, dtype=T.cdouble, requires_grad=True))
                out.append("no error")
            except RuntimeError as e:
                out.append(str(e))
        return out
    ok(program)


def test_dtype_views_act_as_identity_under_gradcheck():
    def program(T):
        def func(z):
            c = T.view_as_complex(z)
            return T.view_as_real(T.select(c, c.dim() - 1, 0)).sum()

        z = T.tensor(np.linspace(-1, 1, 40).reshape(10, 2, 2), requires_grad=True)
        checked = T.autograd.gradcheck(func, [z])
        func(z).backward()
        z1 = z.detach().clone().requires_grad_(True)
        T.select(z1, z1.dim() - 2, 0).sum().backward()
        return checked, z.grad.clone(), z1.grad.clone()
    ok(program)
