"""Differential tests of ``Tensor.storage()`` (torch's deprecated TypedStorage, warning once) and
``Tensor.untyped_storage()``: sizes count the whole storage a view lives in, addresses agree
with ``data_ptr()``, elements read and write the storage (no version bump), torch's errors."""

from __future__ import annotations

import warnings

import pytest

import jaxgrad
from differential import attempt, ok, same
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
