"""Differential tests of ``Tensor.storage()`` (torch's deprecated TypedStorage, warning once) and
``Tensor.untyped_storage()``: sizes count the whole storage a view lives in, addresses agree
with ``data_ptr()``, elements read and write the storage (no version bump), torch's errors."""

from __future__ import annotations

import copy
import warnings

import pytest

import jaxgrad
from differential import attempt, ok, raises, same, val
from jaxgrad._core import storage as _storage


def storage_of(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.storage()


def summary(s, x):
    return (len(s), s.size(), str(s.dtype).split(".")[1], str(s.device), s.nbytes(),
            s.element_size(), s.data_ptr() == x.data_ptr() - x.storage_offset() * x.element_size(),
            s.tolist(), list(s), s.is_shared(), s.is_cuda)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_typed_storage_of_a_view_is_its_base_storage(dtype):
    def prog(T):
        base = T.tensor([1, 0, 3, 4, 5]).to(getattr(T, dtype))
        x = base[1:4]
        s = storage_of(x)
        return (summary(s, x), s[0], type(s[-1]).__name__, storage_of(base).data_ptr() ==
                s.data_ptr(), [attempt(lambda i=i: s[i]) for i in (5, -6, 1.5, slice(0, 2))])
    ok(prog)


def test_typed_storage_writes_reach_the_tensors_without_a_version_bump():
    def prog(T):
        base = T.tensor([1.5, -2.0, 3.25, 4.0])
        view = base[2:]
        s = storage_of(view)
        s[0] = 7.0
        s[-1] = 3
        return base.clone(), view.clone(), base._version, attempt(lambda: s.__setitem__(0, "a"))
    ok(prog)


def test_typed_storage_prints_like_torch():
    def prog(T):
        return [str(storage_of(t)) for t in (T.tensor([1.0, 2.0]), T.tensor([1, 2]),
                                             T.empty(0), T.tensor([1.5], dtype=T.float64))]
    same(prog)


def test_storage_warns_once_per_process_as_torch():
    def prog(T):
        if T is jaxgrad:  # (both flags reset: the first call of the process is what is compared)
            _storage.typed_storage_warning.warned = False
        else:
            T.storage._warn_typed_storage_removal.__dict__["has_warned"] = False
        T.set_warn_always(True)  # (torch's flag does not apply to this warning)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                T.ones(2).storage()
                T.ones(2).storage()
        finally:
            T.set_warn_always(False)
        return [(str(w.message), w.category.__name__, w.filename == __file__) for w in caught]
    ok(prog)


def test_untyped_storage_counts_bytes_and_agrees_with_the_typed_one():
    def prog(T):
        x = T.tensor([1.0, 2.0, 0.5], dtype=T.float64)[1:]
        u, s = x.untyped_storage(), storage_of(x)
        return (len(u), u.nbytes(), u.size(), u.data_ptr() == s.data_ptr(), u[8], u.tolist(),
                str(u.device), storage_of(x).untyped().nbytes(),
                str(T.tensor([1.0, 2.0]).untyped_storage()).split("\n")[:-1])
    ok(prog)


# --- data_ptr -------------------------------------------------------------------------------------

def test_data_ptr_views_share_storage_address_plus_offset():
    ok(lambda T: (lambda x: [x[1:].data_ptr() - x.data_ptr(), x[:, 2].data_ptr() - x.data_ptr(),
                             x.detach().data_ptr() == x.data_ptr(),
                             x.view(-1).data_ptr() == x.data_ptr(),
                             x.clone().data_ptr() == x.data_ptr()])(T.zeros(3, 4)))


def test_data_ptr_of_distinct_storages_differ():
    ok(lambda T: len({T.zeros(2).data_ptr() for _ in range(1)} | {T.zeros(2).data_ptr()}) == 2)


def test_data_ptr_same_dtype_type_keeps_storage():
    ok(lambda T: (lambda y: y.data_ptr() == y.type(T.IntTensor).data_ptr())(
        T.zeros(3, dtype=T.int32)))


# --- set_ -----------------------------------------------------------------------------------------

def test_set_takes_source_storage_and_layout():
    def program(T):
        base = T.arange(6.0)
        t = T.zeros(2)
        t.set_(base[1:])
        before = (t.clone(), t._version, t.storage_offset(), t.data_ptr() - base.data_ptr())
        base.add_(1)  # writes through the shared storage
        return before, t.clone()
    ok(program)


def test_set_without_source_is_empty():
    ok(lambda T: (lambda t: (t.set_(), t.shape, t._version))(T.ones(3)))


def test_set_dtype_mismatch_and_leaf_errors():
    raises(lambda T: T.zeros(2).set_(T.zeros(2, dtype=T.int64)))
    raises(lambda T: T.zeros(2, requires_grad=True).set_(T.zeros(3)))


def test_set_on_parameter_under_no_grad_then_backward():
    def program(T):
        p = T.nn.Parameter(T.ones(6, dtype=T.float64))
        for _ in range(2):
            with T.no_grad():
                p.set_(p[1:])
                p.grad = None
            T.cat((p, p)).sum().backward()
        return p.shape, val(p.grad)
    ok(program)


def test_set_gives_leaf_a_new_accumulator():
    def program(T):
        x = T.rand(2, requires_grad=True)
        edge = T.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with T.no_grad():
            x.set_(T.rand_like(x))
        return (attempt(lambda: T.autograd.grad(out.sum(), x)),
                T.autograd.grad(out.sum(), edge))
    ok(program)


def test_copy_copy_shares_storage_with_its_own_version_counter():
    """copy.copy (torch's __reduce_ex__ unpickled at once): a new leaf over the same storage
    and geometry, filled by set_ (version 1); a Parameter is one over ``.data`` (version 0)."""
    def program(T):
        a = T.tensor([1.0, 2.0])
        b = copy.copy(a)
        out = [b is a, b._version, b.data_ptr() == a.data_ptr(), b._is_view()]
        b.add_(1)
        a.mul_(2)
        out += [val(a), val(b), a._version, b._version]
        w = T.tensor([1.0, 2.0], requires_grad=True)
        w.grad = T.ones(2)
        y = w * 2
        out += [val(copy.copy(w)), copy.copy(w).grad, val(copy.copy(y))]
        a.foo = [5]
        f = copy.copy(a)
        out += [f.foo is a.foo]
        v = a[1:2]
        g = copy.copy(v)
        out += [g._is_view(), g.storage_offset(), g.data_ptr() == v.data_ptr()]
        g.add_(10)
        out += [val(a), val(v), val(g), v._version, g._version]
        out += [copy.copy(T.arange(6).reshape(2, 3).t()).stride()]
        p = T.nn.Parameter(T.ones(2))
        e = copy.copy(p)
        out += [type(e).__name__, e is p, e._version]
        with T.no_grad():
            e.mul_(3)
        return out + [val(p), val(e), p._version, e._version]

    ok(program)
