"""Less common top-level functions and Tensor methods against torch: ``fill``, ``unravel_index``,
the deprecated inclusive ``range``, ``empty_permuted``, DLPack exchange, and the linear-algebra
functions torch removed and keeps only to raise."""

from __future__ import annotations

import numpy as np
import pytest

from differential import captured_warnings, ok, raises, val, weighted_grads

torch = pytest.importorskip("torch")

import jaxgrad as J  # noqa: E402

# --- fill -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tensor_value", [False, True])
def test_fill_values_and_grads(tensor_value):
    def program(T):
        x = T.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=T.float64, requires_grad=True)
        v = T.tensor(2.5, dtype=T.float64, requires_grad=True) if tensor_value else 2.5
        y = T.fill(x * 1, v)
        leaves = (x, v) if tensor_value else (x,)
        return y, x._version, weighted_grads(T, y, *leaves)

    ok(program)


def _fill_double_backward(T):
    x = T.tensor([1.0, -2.0, 3.0], dtype=T.float64, requires_grad=True)
    v = T.tensor(0.5, dtype=T.float64, requires_grad=True)
    w = T.tensor([1.0, 2.0, -4.0], dtype=T.float64, requires_grad=True)
    gx, gv = T.autograd.grad((T.fill(x * 2, v) * w).sum(), (x, v), create_graph=True)
    return x, v, w, gx, gv


def test_fill_double_backward():
    def program(T):
        x, v, w, gx, gv = _fill_double_backward(T)
        (gv * 3).backward()
        return gx.detach(), gv, w.grad, x.grad, v.grad

    ok(program)


def test_fill_double_backward_zero_gradient_has_no_history():
    ok(lambda T: _fill_double_backward(T)[3])


def test_fill_keeps_the_input_dtype_and_checks_the_value():
    ok(lambda T: T.fill(T.tensor([1, 2, 3]), 2.7))
    ok(lambda T: T.fill(T.tensor([1, 2, 3]), T.tensor(1.5)))
    ok(lambda T: T.fill(T.ones(2, requires_grad=True), T.tensor(3.0)))
    raises(lambda T: T.fill(T.ones(3), T.ones(2)))


# --- unravel_index --------------------------------------------------------------------------

UNRAVEL = {
    "vector": lambda T: T.unravel_index(T.tensor([4, 1, 0, 5]), (2, 3)),
    "scalar": lambda T: T.unravel_index(T.tensor(4), (2, 3)),
    "matrix_3d": lambda T: T.unravel_index(T.tensor([[7, 23], [0, 11]]), (2, 3, 4)),
    "negative": lambda T: T.unravel_index(T.tensor([-1, -7]), (2, 3)),
    "int32": lambda T: T.unravel_index(T.tensor([5], dtype=T.int32), (2, 3)),
    "int_shape": lambda T: T.unravel_index(T.tensor([1, 3]), 4),
    "size_shape": lambda T: T.unravel_index(T.tensor(5), T.Size([2, 3])),
    "empty_shape": lambda T: T.unravel_index(T.tensor(1), ()),
}


@pytest.mark.parametrize("name", list(UNRAVEL))
def test_unravel_index(name):
    ok(UNRAVEL[name])


UNRAVEL_ERRORS = {
    "float_indices": lambda T: T.unravel_index(T.tensor(1.0), (2, 3)),
    "bool_indices": lambda T: T.unravel_index(T.tensor(True), (2, 3)),
    "negative_dim": lambda T: T.unravel_index(T.tensor(1), (2, -3)),
    "float_dim": lambda T: T.unravel_index(T.tensor(1), (2.0, 3)),
    "tensor_shape": lambda T: T.unravel_index(T.tensor(1), T.tensor([2, 3])),
    "zero_dim": lambda T: T.unravel_index(T.tensor(0), (0,)),
    "python_int": lambda T: T.unravel_index(5, (2, 3)),
}


@pytest.mark.parametrize("name", list(UNRAVEL_ERRORS))
def test_unravel_index_errors(name):
    raises(UNRAVEL_ERRORS[name])


# --- range (deprecated, inclusive) ----------------------------------------------------------

RANGES = {
    "ints": lambda T: T.range(1, 4),
    "float_step": lambda T: T.range(0, 1, 0.1),
    "float64": lambda T: T.range(0, 1, 0.3, dtype=T.float64),
    "int64": lambda T: T.range(1, 7, 2, dtype=T.int64),
    "descending": lambda T: T.range(4, 1, -1),
    "partial_step": lambda T: T.range(1, 2.5),
    "one": lambda T: T.range(1, 1),
    "tensor_bound": lambda T: T.range(T.tensor(1), 3),
    "requires_grad": lambda T: T.range(1, 4, requires_grad=True),
}


@pytest.mark.parametrize("name", list(RANGES))
def test_range_is_inclusive_and_warns(name):
    ok(RANGES[name])
    warned = captured_warnings(RANGES[name], J)
    assert warned == captured_warnings(RANGES[name], torch) and len(warned) == 1


@pytest.mark.parametrize("args", [(1, 4, 0), (4, 1), (1, float("inf")), (float("nan"), 2)])
def test_range_errors(args):
    raises(lambda T: T.range(*args))


def test_range_int_dtype_cannot_require_grad():
    raises(lambda T: T.range(1, 4, dtype=T.int64, requires_grad=True))


# --- empty_permuted -------------------------------------------------------------------------


def _layout(t):
    return tuple(t.shape), t.stride(), t.dtype, t.requires_grad, t.is_contiguous(), t.is_leaf


@pytest.mark.parametrize(
    "size, order",
    [
        ((2, 3, 4), (0, 2, 1)),
        ((2, 3, 4), (2, 0, 1)),
        ((2, 3), (0, 1)),
        ((2, 0, 3), (1, 2, 0)),
        ((), ()),
    ],
)
def test_empty_permuted_lays_out_dimensions_in_the_given_order(size, order):
    ok(lambda T: _layout(T.empty_permuted(size, order)))
    ok(lambda T: _layout(T.empty_permuted(size, order, dtype=T.float64, requires_grad=True)))


@pytest.mark.parametrize("order", [(0, 0), (0,), (0, 2), (-1, 0)])
def test_empty_permuted_errors(order):
    raises(lambda T: T.empty_permuted((2, 3), order))


def test_empty_permuted_integer_cannot_require_grad():
    raises(lambda T: T.empty_permuted((2, 3), (1, 0), dtype=T.int32, requires_grad=True))


# --- DLPack ---------------------------------------------------------------------------------


def test_from_dlpack_shares_a_numpy_arrays_memory():
    def program(T):
        a = np.arange(6.0).reshape(2, 3)
        t = T.from_dlpack(a)
        t.mul_(2)
        a[0, 0] = -1.0
        return t, T.tensor(a.copy()), t.stride()

    ok(program)


def test_from_dlpack_of_a_tensor_shares_storage_not_the_version_counter():
    def program(T):
        x = T.arange(6.0).reshape(2, 3).t()
        y = T.from_dlpack(x)
        y.add_(1)
        return x, y, x._version, y._version, y.stride(), y._base is None, y.is_leaf

    ok(program)


def test_capsules_round_trip_once():
    def program(T):
        capsule = T.to_dlpack(T.tensor([[1.5, 2.0]], dtype=T.float64))
        first = T.from_dlpack(capsule)
        try:
            T.from_dlpack(capsule)
        except RuntimeError as e:
            return first, str(e)
        return first

    ok(program)


def test_capsules_cross_between_jaxgrad_and_torch():
    values = [[1.0, -2.0], [3.5, 4.0]]
    got = J.from_dlpack(torch.to_dlpack(torch.tensor(values)))
    assert got.dtype == J.float32 and got.tolist() == values
    back = torch.from_dlpack(J.to_dlpack(J.tensor(values, dtype=J.float64)))
    assert back.dtype == torch.float64 and back.tolist() == values
    assert J.from_dlpack(torch.tensor(values)).tolist() == values  # a torch tensor as producer
    half = J.from_dlpack(torch.tensor([1.5, -2.0], dtype=torch.bfloat16))
    assert half.dtype == J.bfloat16 and half.tolist() == [1.5, -2.0]


def test_from_dlpack_copy_and_device():
    def program(T):
        a = np.arange(3.0)
        copied, shared = T.from_dlpack(a, copy=True), T.from_dlpack(a, device="cpu")
        x = T.arange(3.0)
        x_copy = T.from_dlpack(x, copy=True)
        a[0], _ = -5.0, x.add_(1)
        return copied, shared, x_copy, str(shared.device)

    ok(program)


def test_utils_dlpack_names_match_torch():
    import torch.utils.dlpack as TD

    import jaxgrad.utils.dlpack as JD

    assert [(m.name, m.value) for m in JD.DLDeviceType] == [
        (m.name, m.value) for m in TD.DLDeviceType
    ]
    assert JD.__all__ == TD.__all__ and JD.from_dlpack is J.from_dlpack
    assert JD.to_dlpack is J.to_dlpack
    ok(lambda T: T.utils.dlpack.from_dlpack(T.utils.dlpack.to_dlpack(T.tensor([1, 2]))))


DLPACK_ERRORS = {
    "requires_grad": lambda T: T.from_dlpack(T.zeros(2, requires_grad=True)),
    "not_a_producer": lambda T: T.from_dlpack([1, 2]),
}


@pytest.mark.parametrize("name", list(DLPACK_ERRORS))
def test_from_dlpack_errors(name):
    raises(DLPACK_ERRORS[name])


def test_to_dlpack_exports_a_tensor_requiring_grad():
    ok(lambda T: T.from_dlpack(T.to_dlpack(T.ones(2, requires_grad=True))))


# --- removed linear algebra -----------------------------------------------------------------

REMOVED = {
    "eig": lambda T: T.eig(T.eye(2)),
    "eig_vectors": lambda T: T.eig(T.eye(2), True),
    "lstsq": lambda T: T.lstsq(T.eye(2), T.eye(2)),
    "solve": lambda T: T.solve(T.eye(2), T.eye(2)),
    "symeig": lambda T: T.symeig(T.eye(2), eigenvectors=True),
    "matrix_rank": lambda T: T.matrix_rank(T.eye(2)),
    "method_eig": lambda T: T.eye(2).eig(),
    "method_lstsq": lambda T: T.eye(2).lstsq(T.eye(2)),
    "method_solve": lambda T: T.eye(2).solve(T.eye(2)),
    "method_symeig": lambda T: T.eye(2).symeig(),
    "no_method_matrix_rank": lambda T: T.eye(2).matrix_rank(),
}


@pytest.mark.parametrize("name", list(REMOVED))
def test_removed_linalg_functions_raise_torchs_message(name):
    raises(REMOVED[name])


# --- memory and devices: share_memory_, storage_type, legacy storages, record_stream, ... -----


def test_share_memory_marks_the_storage_shared():
    def program(T):
        x = T.arange(4.0, requires_grad=True)
        before = x.is_shared()
        returned = x.share_memory_() is x
        views = x[1:].is_shared(), x.detach().is_shared(), x.untyped_storage().is_shared()
        return before, returned, x.is_shared(), views, x._version, T.ones(2).is_shared()

    ok(program)


@pytest.mark.parametrize(
    "dtype",
    [
        "float32",
        "float64",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
        "float16",
        "bfloat16",
        "complex64",
        "complex128",
    ],
)
def test_storage_type_is_the_legacy_storage_class(dtype):
    def program(T):
        cls = T.ones(2, dtype=getattr(T, dtype)).storage_type()
        return repr(cls), cls.dtype, cls is getattr(T, cls.__name__)

    ok(program)


def test_legacy_storage_classes_build_typed_storages():
    def program(T):
        empty, sized, data = T.FloatStorage(), T.DoubleStorage(3), T.LongStorage([4, 5, 6])
        return (
            type(empty).__name__,
            len(empty),
            len(sized),
            sized.dtype,
            data.tolist(),
            data.dtype,
            data.type(),
            isinstance(data, T.LongStorage),
            isinstance(data, T.IntStorage),
            isinstance(T.ones(2).storage(), T.FloatStorage),
            isinstance(sized, T.storage.TypedStorage),
        )

    ok(program)


@pytest.mark.parametrize("args, kwargs", [((2,), {"dtype": "float64"}), (("a",), {}), ((2, 3), {})])
def test_legacy_storage_constructor_errors(args, kwargs):
    raises(lambda T: T.FloatStorage(*args, **kwargs))


MEMORY_ERRORS = {
    "record_stream_none": lambda T: T.ones(2).record_stream(None),
    "record_stream_int": lambda T: T.ones(2).record_stream(1),
    "record_stream_missing": lambda T: T.ones(2).record_stream(),
    "xpu": lambda T: T.ones(2).xpu(),
    "xpu_string": lambda T: T.ones(2).xpu("xpu:0"),
    "xpu_index": lambda T: T.ones(2).xpu(0),
    "ipu": lambda T: T.ones(2).ipu(non_blocking=True),
    "ipu_index": lambda T: T.ones(2).ipu(0),
    "mtia": lambda T: T.ones(2).mtia(),
    "mtia_index": lambda T: T.ones(2).mtia(0),
    "module_load_into_leaf": lambda T: T.ones(2, requires_grad=True).module_load(T.zeros(2)),
}


@pytest.mark.parametrize("name", list(MEMORY_ERRORS))
def test_memory_and_device_errors(name):
    raises(MEMORY_ERRORS[name])


@pytest.mark.parametrize("assign", [False, True])
def test_module_load_copies_or_assigns_a_detached_value(assign):
    def program(T):
        x = T.zeros(2, dtype=T.float64)
        other = T.tensor([3.0, 4.0], dtype=T.float64, requires_grad=True)
        out = x.module_load(other * 2, assign=assign)
        return out, out is x, x, x._version, out._base is None

    ok(program)


# --- svd_lowrank / pca_lowrank: randomized, exact where q covers the rank ---------------------


def _matrix(T, shape, rank, seed=0):
    """A float64 leaf of ``shape`` and the given rank (fixed values, the same on both)."""
    rs = np.random.RandomState(seed)
    *batch, m, n = shape
    values = rs.randn(*batch, m, rank) @ rs.randn(*batch, rank, n)
    return T.tensor(values, dtype=T.float64, requires_grad=True)


def _described(T, U, S, V):
    """What the random sketch cannot change: S, the product U S V^H, orthonormal U and V."""
    eye = lambda k: T.eye(k, dtype=T.float64)
    return (
        S,
        U @ T.diag_embed(S) @ V.mH,
        tuple(U.shape),
        tuple(V.shape),
        (U.mH @ U - eye(U.shape[-1])).abs().max() < 1e-10,
        (V.mH @ V - eye(V.shape[-1])).abs().max() < 1e-10,
    )


LOWRANK = {  # name -> (shape, rank, q)
    "tall_low_rank": ((6, 5), 2, 2),
    "tall_q_above_rank": ((6, 5), 2, 4),
    "wide_low_rank": ((3, 7), 2, 3),
    "batched": ((2, 5, 4), 3, 3),
}


@pytest.mark.parametrize("name", list(LOWRANK))
def test_svd_lowrank_is_exact_where_q_covers_the_rank(name):
    shape, rank, q = LOWRANK[name]

    def program(T):
        A = _matrix(T, shape, rank)
        return _described(T, *T.svd_lowrank(A, q=q))

    ok(program)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_svd_lowrank_gradient_of_the_singular_values(shape):
    def program(T):
        A = _matrix(T, shape, min(shape))
        _, S, _ = T.svd_lowrank(A, q=min(shape), niter=1)
        (S * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
        return S, val(A.grad)  # (torch's .grad of the wide case is at version 2: see val)

    ok(program)


def test_svd_lowrank_second_derivative_of_the_singular_values():
    def program(T):
        A = _matrix(T, (4, 3), 3)
        _, S, _ = T.svd_lowrank(A, q=3, niter=1)
        (g,) = T.autograd.grad((S * S.detach()).sum(), A, create_graph=True)
        (g * T.arange(12.0, dtype=T.float64).reshape(4, 3)).sum().backward()
        return g.detach(), val(A.grad)

    ok(program, rtol=1e-9)


def test_svd_lowrank_with_a_mean_matrix():
    def program(T):
        A = _matrix(T, (6, 4), 2)
        M = T.tensor(np.linspace(-1, 1, 4), dtype=T.float64)  # broadcast over the rows
        U, S, V = T.svd_lowrank(A + M, q=3, M=M)
        return _described(T, U, S, V)

    ok(program)


PCA = {
    "centered": lambda T, A: T.pca_lowrank(A, q=3),
    "default_q": lambda T, A: T.pca_lowrank(A),
    "uncentered": lambda T, A: T.pca_lowrank(A, q=3, center=False, niter=3),
}


@pytest.mark.parametrize("name", list(PCA))
def test_pca_lowrank(name):
    ok(lambda T: _described(T, *PCA[name](T, _matrix(T, (7, 4), 3))))


@pytest.mark.parametrize("kwargs", [{"q": 5}, {"q": -1}, {"niter": -1}])
def test_pca_lowrank_errors(kwargs):
    raises(lambda T: T.pca_lowrank(T.ones(6, 4), **kwargs))


# --- utils.hooks ----------------------------------------------------------------------------


def test_removable_handle_removes_from_its_dicts():
    def program(T):
        from collections import OrderedDict

        hooks, extra, more = OrderedDict(), OrderedDict(), OrderedDict()
        one = T.utils.hooks.RemovableHandle(hooks, extra_dict=extra)
        two = T.utils.hooks.RemovableHandle(hooks, extra_dict=[extra, more])
        for handle in (one, two):
            hooks[handle.id] = extra[handle.id] = more[handle.id] = True
        one.remove()
        with two:
            kept = len(hooks), len(extra), len(more)
        return kept, (len(hooks), len(extra), len(more)), two.id - one.id

    ok(program)


class _NamedHook:
    def __call__(self, grad):
        return grad

    def __repr__(self):
        return "_NamedHook()"


def test_warn_if_has_hooks_skips_unserializable_hooks():
    def program(T):
        x = T.ones(2, requires_grad=True)
        T.utils.hooks.warn_if_has_hooks(x)  # no hooks: no warning
        x.register_hook(_NamedHook())
        x.register_hook(T.utils.hooks.unserializable_hook(_NamedHook()))
        T.utils.hooks.warn_if_has_hooks(x)

    warned = captured_warnings(program, J)
    assert warned == captured_warnings(program, torch) and len(warned) == 1


def test_backward_hook_is_the_one_modules_use():
    assert J.utils.hooks.BackwardHook is J.nn.modules.module.BackwardHook
    assert sorted(J.utils.hooks.__all__) == sorted(torch.utils.hooks.__all__)
