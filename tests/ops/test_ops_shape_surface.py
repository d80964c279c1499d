"""Type and shape queries (result_type, can_cast, is_nonzero, is_same_size, broadcast_shapes),
numpy-style splitting (tensor_split, hsplit, vsplit, dsplit), ravel, narrow_copy and the
scatters of views, each run on torch and on jaxgrad (``differential.same``): values, dtypes,
grad_fn names, views' versions, first and second derivatives, errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import captured_warnings, cases, next_functions, ok, raises, same, val

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402


def _leaf(T, shape, dtype="float64", seed=0):
    values = np.random.RandomState(seed).randn(*shape)
    return T.tensor(values, dtype=getattr(T, dtype), requires_grad=True)


def _first_and_second(T, f, *leaves, create_graph=True, values_only=False):
    """Outputs of ``f(*leaves)``, the weighted first derivatives (with a graph) and the
    derivatives of their weighted sum: torch's orders one and two."""
    outs = f(*leaves)
    outs = outs if isinstance(outs, tuple) else (outs,)
    total = sum(((o * (T.arange(float(o.numel()), dtype=o.dtype).reshape(o.shape) + 1)).sum()
                 for o in outs if o.requires_grad), T.zeros((), dtype=T.float64))
    needs = [x for x in leaves if x.requires_grad]
    first = T.autograd.grad(total, needs, create_graph=create_graph, allow_unused=True)
    if not create_graph:  # (torch's masked_select backward fills zeros in place: version 1)
        return list(outs), [next_functions(o.grad_fn) for o in outs], [val(g) for g in first]
    used = [(g, x) for g, x in zip(first, needs) if g is not None and g.requires_grad]
    second = None
    if used:
        s = sum(((g * g).sum() for g, _ in used), T.zeros((), dtype=T.float64))
        second = T.autograd.grad(s, [x for _, x in used], allow_unused=True)
    if values_only:  # the derivatives' values (their own graphs are nn.functional's)
        return (list(outs), [next_functions(o.grad_fn) for o in outs],
                [None if g is None else g.detach().clone() for g in first],
                None if second is None else [g.detach().clone() for g in second])
    return list(outs), [next_functions(o.grad_fn) for o in outs], list(first), second


# --- queries ---------------------------------------------------------------------------------

QUERIES = {
    "result_type_int_float": lambda T: T.result_type(T.tensor([1, 2]), 2.5),
    "result_type_uint8_0d": lambda T: T.result_type(T.tensor([1], dtype=T.uint8), T.tensor(1)),
    "result_type_0d_float": lambda T: T.result_type(T.tensor([1]), T.tensor(1.0)),
    "result_type_half_double0d": lambda T: T.result_type(
        T.ones(2, dtype=T.float16), T.tensor(1.0, dtype=T.float64)),
    "result_type_scalars": lambda T: T.result_type(2, 3.0),
    "result_type_complex": lambda T: T.result_type(T.ones(2, dtype=T.float64), 1j),
    "result_type_bool": lambda T: T.result_type(T.tensor([True]), True),
    "result_type_scalar_first": lambda T: T.result_type(2, T.ones(2, dtype=T.int8)),
    "result_type_kw": lambda T: T.result_type(tensor=T.ones(2), other=T.ones(2, dtype=T.int32)),
    "can_cast_down": lambda T: T.can_cast(T.float32, T.int32),
    "can_cast_up": lambda T: T.can_cast(T.int64, T.float16),
    "can_cast_complex": lambda T: T.can_cast(T.complex64, T.float64),
    "can_cast_bool": lambda T: (T.can_cast(T.bool, T.uint8), T.can_cast(T.uint8, T.bool)),
    "can_cast_kw": lambda T: T.can_cast(from_=T.float64, to=T.float16),
    "can_cast_bad": lambda T: T.can_cast(1, T.float32),
    "is_nonzero": lambda T: [T.is_nonzero(T.tensor(v)) for v in (0.0, [1], [[0j]], -0.0, 2)],
    "is_nonzero_nan": lambda T: T.tensor(float("nan")).is_nonzero(),
    "is_nonzero_bool": lambda T: T.tensor([False]).is_nonzero(),
    "is_nonzero_empty": lambda T: T.tensor([]).is_nonzero(),
    "is_nonzero_many": lambda T: T.is_nonzero(T.tensor([1, 2])),
    "is_same_size": lambda T: (T.is_same_size(T.zeros(2, 3), T.ones(2, 3)),
                               T.zeros(2).is_same_size(T.zeros(2, 1))),
    "broadcast_shapes": lambda T: T.broadcast_shapes((2,), (3, 1), (1, 1, 1)),
    "broadcast_shapes_ints": lambda T: T.broadcast_shapes(3, (2, 1), T.Size([1, 3])),
    "broadcast_shapes_none": lambda T: T.broadcast_shapes(),
    "broadcast_shapes_zero": lambda T: T.broadcast_shapes((0, 1), (1, 4)),
    "broadcast_shapes_mismatch": lambda T: T.broadcast_shapes((2, 3), (4,)),
    "broadcast_shapes_mismatch_size": lambda T: T.broadcast_shapes((2, 3), T.Size([4])),
    "broadcast_shapes_negative": lambda T: T.broadcast_shapes((1, -1)),
    "broadcast_shapes_type": lambda T: T.broadcast_shapes("ab", (1,)),
}


@pytest.mark.parametrize("key", cases(QUERIES))
def test_queries(key):
    same(QUERIES[key])


# --- splitting ---------------------------------------------------------------------------------

SPLITS = {
    "sections": lambda T, x: T.tensor_split(x, 3),
    "sections_uneven": lambda T, x: T.tensor_split(x, 4, dim=1),
    "sections_more_than_size": lambda T, x: T.tensor_split(x, 6, 0),
    "indices": lambda T, x: T.tensor_split(x, [1, 4], dim=1),
    "indices_tuple_negative": lambda T, x: x.tensor_split((-2, 1, 9), 1),
    "indices_empty": lambda T, x: T.tensor_split(x, [], dim=1),
    "tensor_sections": lambda T, x: T.tensor_split(x, T.tensor(2)),
    "tensor_indices": lambda T, x: T.tensor_split(x, T.tensor([1, 3]), dim=-1),
    "kw_sections": lambda T, x: T.tensor_split(x, sections=2, dim=1),
    "kw_indices": lambda T, x: x.tensor_split(indices=[2]),
    "kw_tensor": lambda T, x: T.tensor_split(x, tensor_indices_or_sections=T.tensor([1])),
    "hsplit": lambda T, x: T.hsplit(x, 3),
    "hsplit_indices": lambda T, x: x.hsplit([1, 3]),
    "hsplit_1d": lambda T, x: T.hsplit(x.reshape(-1), 4),
    "vsplit": lambda T, x: T.vsplit(x, 2),
    "vsplit_indices": lambda T, x: x.vsplit([3]),
    "dsplit": lambda T, x: T.dsplit(x.reshape(2, 2, 6), 3),
    "dsplit_indices": lambda T, x: x.reshape(2, 2, 6).dsplit([2, 5]),
    "ravel": lambda T, x: T.ravel(x),
    "ravel_transposed": lambda T, x: x.t().ravel(),
    "ravel_0d": lambda T, x: x[0, 0].ravel(),
    "narrow_copy": lambda T, x: T.narrow_copy(x, 1, 2, 3),
    "narrow_copy_tensor_start": lambda T, x: x.narrow_copy(-1, T.tensor(1), 4),
}


@pytest.mark.parametrize("key", cases(SPLITS))
def test_splits(key):
    """Pieces (views of ``x`` where torch's are: the same grad_fn graphs), first and second
    derivatives."""
    ok(lambda T: _first_and_second(T, lambda x: SPLITS[key](T, x), _leaf(T, (4, 6))))


def test_narrow_copy_negative_start():
    """A negative start wraps in the forward (torch's backward then fails on it: not compared)."""
    ok(lambda T: _leaf(T, (4, 6)).detach().narrow_copy(0, -2, 2))


def test_tensor_split_views_share_storage():
    """The pieces are views: writing into one shows in the base, and bumps versions as torch."""
    def program(T):
        x = T.arange(12.0).reshape(3, 4)
        pieces = T.tensor_split(x, [1], dim=1)
        pieces[1].mul_(10)
        return x, pieces[0]._version, pieces[1]._version, pieces[1]._is_view()

    ok(program)


SPLIT_ERRORS = {
    "tensor_split_0d": lambda T: T.tensor_split(T.tensor(1.0), 2),
    "tensor_split_zero": lambda T: T.tensor_split(T.zeros(4, 6), 0),
    "tensor_split_float_tensor": lambda T: T.tensor_split(T.zeros(4), T.tensor([1.0])),
    "tensor_split_2d_tensor": lambda T: T.tensor_split(T.zeros(4), T.tensor([[1, 2]])),
    "tensor_split_dim": lambda T: T.tensor_split(T.zeros(4, 6), 2, dim=5),
    "hsplit_0d": lambda T: T.hsplit(T.tensor(1.0), 2),
    "hsplit_indivisible": lambda T: T.hsplit(T.zeros(4, 6), 4),
    "hsplit_zero": lambda T: T.hsplit(T.zeros(4, 6), 0),
    "vsplit_1d": lambda T: T.vsplit(T.zeros(3), 1),
    "vsplit_indivisible": lambda T: T.vsplit(T.zeros(4, 6), 3),
    "dsplit_2d": lambda T: T.dsplit(T.zeros(4, 6), 3),
    "dsplit_indivisible": lambda T: T.dsplit(T.zeros(2, 2, 4), 3),
    "narrow_copy_past_end": lambda T: T.narrow_copy(T.zeros(4, 6), 0, 3, 2),
    "narrow_copy_start": lambda T: T.zeros(4).narrow_copy(0, -6, 1),
}


@pytest.mark.parametrize("key", cases(SPLIT_ERRORS))
def test_split_errors(key):
    raises(SPLIT_ERRORS[key])


# --- scatters of views ------------------------------------------------------------------------------

SCATTERS = {
    "slice": ((4, 6), (2, 6), lambda T, x, s: T.slice_scatter(x, s, 0, 1, 3)),
    "slice_step": ((4, 6), (4, 2), lambda T, x, s: x.slice_scatter(s, dim=1, start=1, step=3)),
    "slice_negative": ((4, 6), (2, 6), lambda T, x, s: T.slice_scatter(x, s, start=-2)),
    "slice_defaults": ((4, 6), (4, 6), lambda T, x, s: T.slice_scatter(x, s)),
    "slice_end_past": ((4, 6), (4, 3), lambda T, x, s: T.slice_scatter(x, s, -1, 3, 100)),
    "select": ((4, 6), (6,), lambda T, x, s: T.select_scatter(x, s, 0, 1)),
    "select_negative": ((4, 6), (4,), lambda T, x, s: x.select_scatter(s, -1, -2)),
    "diagonal": ((4, 6), (4,), lambda T, x, s: T.diagonal_scatter(x, s)),
    "diagonal_offset": ((4, 6), (4,), lambda T, x, s: x.diagonal_scatter(s, 2)),
    "diagonal_below": ((4, 6), (3,), lambda T, x, s: T.diagonal_scatter(x, s, -1)),
    "diagonal_dims": ((4, 6), (4,), lambda T, x, s: T.diagonal_scatter(x, s, 0, 1, 0)),
    "diagonal_3d": ((2, 3, 4), (2, 3), lambda T, x, s: T.diagonal_scatter(
        x, s, 0, dim1=1, dim2=2)),
}


@pytest.mark.parametrize("key", cases(SCATTERS))
@pytest.mark.parametrize("needs", ["both", "self", "src"])
def test_scatters(key, needs):
    """Values and torch's grad_fn names; first and second derivatives of both inputs."""
    shape, src_shape, f = SCATTERS[key]

    def program(T):
        x, s = _leaf(T, shape), _leaf(T, src_shape, seed=1)
        x.requires_grad_(needs != "src")
        s.requires_grad_(needs != "self")
        return _first_and_second(T, lambda x, s: f(T, x, s), x, s)

    ok(program)


def test_scatters_cast_src_and_keep_input():
    """``src`` is cast to ``input``'s dtype; ``input`` itself is unchanged (not in place)."""
    def program(T):
        x = T.zeros(3, 4)
        out = T.slice_scatter(x, T.ones(1, 4, dtype=T.float64), 0, 1, 2)
        return out, x, x._version, T.select_scatter(x, T.ones(4, dtype=T.int64), 0, 2)

    ok(program)


SCATTER_ERRORS = {
    "slice_size": lambda T: T.slice_scatter(T.zeros(4, 6), T.zeros(3, 6), 0, 1, 3),
    "slice_size_negative": lambda T: T.slice_scatter(T.zeros(4, 6), T.zeros(2, 6), 0, -3),
    "slice_step_zero": lambda T: T.slice_scatter(T.zeros(4, 6), T.zeros(2, 6), 0, 1, 5, 0),
    "slice_step_negative": lambda T: T.slice_scatter(T.zeros(4, 6), T.zeros(2, 6), 0, 1, 5, -1),
    "slice_dim": lambda T: T.slice_scatter(T.zeros(4, 6), T.zeros(2, 6), 3),
    "select_size": lambda T: T.select_scatter(T.zeros(4, 6), T.zeros(5), 0, 1),
    "select_index": lambda T: T.select_scatter(T.zeros(4, 6), T.zeros(6), 0, 9),
    "diagonal_size": lambda T: T.diagonal_scatter(T.zeros(4, 6), T.zeros(3)),
}


@pytest.mark.parametrize("key", cases(SCATTER_ERRORS))
def test_scatter_errors(key):
    raises(SCATTER_ERRORS[key])


# --- asarray, frombuffer ---------------------------------------------------------------------------


def _asarray_case(f):
    """``f(T, t, u, nl)`` on a leaf requiring grad, one that does not and a non-leaf: the
    result, whether it is one of them, and the three's flags afterwards (asarray may set a
    leaf's requires_grad in place)."""
    def program(T):
        t = T.tensor([1.0, 2.0], requires_grad=True)
        u = T.tensor([1.0, 2.0])
        nl = t * 2
        a = f(T, t, u, nl)
        return (a, [a is t, a is u, a is nl], [t.requires_grad, u.requires_grad,
                                                nl.requires_grad])
    return program


ASARRAY = {
    "tensor": lambda T, t, u, nl: T.asarray(t),
    "tensor_rg_false": lambda T, t, u, nl: T.asarray(t, requires_grad=False),
    "tensor_rg_true": lambda T, t, u, nl: T.asarray(t, requires_grad=True),
    "tensor_copy": lambda T, t, u, nl: T.asarray(t, copy=True),
    "tensor_copy_rg_false": lambda T, t, u, nl: T.asarray(t, copy=True, requires_grad=False),
    "tensor_dtype": lambda T, t, u, nl: T.asarray(t, dtype=T.float64),
    "tensor_dtype_rg_false": lambda T, t, u, nl: T.asarray(t, dtype=T.float64,
                                                           requires_grad=False),
    "tensor_to_int": lambda T, t, u, nl: T.asarray(t, dtype=T.int64, requires_grad=False),
    "tensor_same_dtype_no_copy": lambda T, t, u, nl: T.asarray(t, dtype=T.float32, copy=False),
    "plain": lambda T, t, u, nl: T.asarray(u),
    "plain_rg_true": lambda T, t, u, nl: T.asarray(u, requires_grad=True),
    "plain_copy_rg_true": lambda T, t, u, nl: T.asarray(u, copy=True, requires_grad=True),
    "plain_dtype_rg_true": lambda T, t, u, nl: T.asarray(u, dtype=T.float64,
                                                         requires_grad=True),
    "plain_no_copy": lambda T, t, u, nl: T.asarray(u, copy=False, device="cpu"),
    "nonleaf": lambda T, t, u, nl: T.asarray(nl),
    "nonleaf_rg_false": lambda T, t, u, nl: T.asarray(nl, requires_grad=False),
    "nonleaf_copy": lambda T, t, u, nl: T.asarray(nl, copy=True),
    "nonleaf_copy_rg_false": lambda T, t, u, nl: T.asarray(nl, copy=True, requires_grad=False),
    "int_rg_true": lambda T, t, u, nl: T.asarray(u.long(), requires_grad=True),
    "alias_dtype_error": lambda T, t, u, nl: T.asarray(t, dtype=T.float64, copy=False),
    "list": lambda T, t, u, nl: T.asarray([1, 2.5]),
    "nested_dtype": lambda T, t, u, nl: T.asarray([[1, 2]], dtype=T.int8),
    "tuple_dtype": lambda T, t, u, nl: T.asarray((1, 2), dtype=T.float64),
    "int": lambda T, t, u, nl: T.asarray(3),
    "float_dtype": lambda T, t, u, nl: T.asarray(3.5, dtype=T.float64),
    "bool": lambda T, t, u, nl: T.asarray(True),
    "numpy_scalar": lambda T, t, u, nl: T.asarray(np.float64(2.5)),
    "numpy_int": lambda T, t, u, nl: T.asarray(np.int64(3)),
    "numpy_0d": lambda T, t, u, nl: T.asarray(np.array(3)),
    "numpy_dtype": lambda T, t, u, nl: T.asarray(np.array([1.5]), dtype=T.float32),
    "numpy_rg": lambda T, t, u, nl: T.asarray(np.array([1.5]), requires_grad=True),
    "numpy_transposed": lambda T, t, u, nl: T.asarray(np.array([[1.5, 2.0]]).T),
    "numpy_negative_strides": lambda T, t, u, nl: T.asarray(np.array([[1.5, 2.0]])[:, ::-1]),
    "numpy_alias_error": lambda T, t, u, nl: T.asarray(np.array([1], dtype=np.int32),
                                                       dtype=T.float32, copy=False),
    "list_no_copy": lambda T, t, u, nl: T.asarray([1, 2], copy=False),
    "scalar_no_copy": lambda T, t, u, nl: T.asarray(2, copy=False),
    "list_of_0d_tensors": lambda T, t, u, nl: T.asarray([T.tensor(1.0), T.tensor(2)]),
    "list_rg_int": lambda T, t, u, nl: T.asarray([1, 2], requires_grad=True),
    "list_rg": lambda T, t, u, nl: T.asarray([1.0, 2], requires_grad=True),
    "buffer": lambda T, t, u, nl: T.asarray(bytearray(b"\x01\x00\x00\x00")),
    "buffer_dtype": lambda T, t, u, nl: T.asarray(bytearray(b"\x01\x02"), dtype=T.uint8),
    "buffer_size": lambda T, t, u, nl: T.asarray(bytearray(b"\x01\x02")),
    "keyword_obj": lambda T, t, u, nl: T.asarray(obj=[1]),
}


@pytest.mark.parametrize("key", cases(ASARRAY))
def test_asarray(key):
    same(_asarray_case(ASARRAY[key]))


@pytest.mark.parametrize("key", ["tensor", "tensor_rg_false", "plain", "nonleaf", "tensor_copy"])
def test_asarray_warning(key):
    """torch warns (once a process; every time under set_warn_always) where requires_grad is
    left unspecified and the tensor requires grad."""
    program = _asarray_case(ASARRAY[key])
    for lib in (torch, jaxgrad):
        lib.set_warn_always(True)
    try:
        assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    finally:
        for lib in (torch, jaxgrad):
            lib.set_warn_always(False)


def test_asarray_shares_memory():
    """A tensor or numpy array is shared, not copied: writes through either side show."""
    def program(T):
        u = T.tensor([1.0, 2.0])
        a = T.asarray(u)
        a.add_(1)
        n = np.array([1, 2], dtype=np.int32)
        b = T.asarray(n)
        n[0] = 9
        b[1] = 7
        c = T.asarray(n, copy=True)
        n[1] = 5
        return u, u._version, b, c, n.tolist()

    ok(program)


def _buffer_program(make, **kw):
    def program(T):
        data = make()
        out = T.frombuffer(data, **kw) if "dtype" in kw else T.frombuffer(
            data, dtype=T.int16, **kw)
        return out
    return program


FROMBUFFER = {
    "int16": (lambda: bytearray(b"\x01\x00\x02\x00"), {}),
    "count_offset": (lambda: bytearray(b"\x01\x00\x02\x00"), {"count": 2, "offset": 1}),
    "count_negative": (lambda: bytearray(b"\x01\x00\x02\x00"), {"count": -2}),
    "count_zero": (lambda: bytearray(b"\x01\x00\x02\x00"), {"count": 0}),
    "count_too_many": (lambda: bytearray(b"\x01\x00\x02\x00"), {"count": 5}),
    "offset_end": (lambda: bytearray(b"\x01\x00\x02\x00"), {"offset": 4}),
    "offset_negative": (lambda: bytearray(b"\x01\x00\x02\x00"), {"offset": -1}),
    "odd_length": (lambda: bytearray(b"\x01\x00\x02"), {}),
    "empty": (lambda: bytearray(), {}),
    "memoryview": (lambda: memoryview(bytearray(b"\x05\x06\x07\x08")), {"count": 1}),
    "array_module": (lambda: __import__("array").array("i", [1, 2, 3]), {"offset": 2,
                                                                       "count": 3}),
    "not_a_buffer": (lambda: [1, 2], {}),
    "bytes": (lambda: b"\x01\x00", {}),
}


@pytest.mark.parametrize("key", cases(FROMBUFFER))
def test_frombuffer(key):
    make, kw = FROMBUFFER[key]
    same(_buffer_program(make, **kw))


def test_frombuffer_float_requires_grad():
    ok(lambda T: T.frombuffer(bytearray(8), dtype=T.float32, requires_grad=True))


def test_frombuffer_shares_memory():
    def program(T):
        data = bytearray(b"\x01\x02\x03")
        t = T.frombuffer(data, dtype=T.uint8)
        data[0] = 7
        t[1] = 9
        return t, bytes(data)

    ok(program)


# --- window functions, combinations ------------------------------------------------------------

WINDOWS = {
    "hann": lambda T: [T.hann_window(n) for n in (0, 1, 2, 5, 8)],
    "hann_symmetric": lambda T: T.hann_window(7, periodic=False),
    "hann_float64_grad": lambda T: T.hann_window(6, dtype=T.float64, requires_grad=True),
    "hamming": lambda T: [T.hamming_window(n) for n in (1, 2, 6)],
    "hamming_coefficients": lambda T: T.hamming_window(5, False, 0.5, 0.4),
    "hamming_float64": lambda T: T.hamming_window(9, True, alpha=0.6, beta=0.3,
                                                  dtype=T.float64),
    "bartlett": lambda T: [T.bartlett_window(n) for n in (1, 2, 5, 6)],
    "bartlett_symmetric": lambda T: [T.bartlett_window(n, False, dtype=T.float64)
                                     for n in (2, 5, 6)],
    "blackman": lambda T: [T.blackman_window(n, dtype=T.float64) for n in (1, 2, 5, 6)],
    "blackman_float32": lambda T: T.blackman_window(8, periodic=False),
    "kaiser": lambda T: [T.kaiser_window(n) for n in (1, 2, 5, 6)],
    "kaiser_beta": lambda T: T.kaiser_window(7, False, 3.0, dtype=T.float64),
    "kaiser_grad": lambda T: T.kaiser_window(4, True, 5.0, requires_grad=True),
    "negative": lambda T: T.hann_window(-1),
    "negative_kaiser": lambda T: T.kaiser_window(-2),
    "int_dtype": lambda T: T.hamming_window(4, dtype=T.int64),
    "int_dtype_blackman": lambda T: T.blackman_window(4, dtype=T.int32),
    "int_dtype_bartlett": lambda T: T.bartlett_window(4, dtype=T.uint8),
}


@pytest.mark.parametrize("key", cases(WINDOWS))
def test_windows(key):
    same(WINDOWS[key], rtol=1e-6)


COMBINATIONS = {
    "pairs": lambda T, x: T.combinations(x),
    "triples": lambda T, x: T.combinations(x, 3),
    "replacement": lambda T, x: T.combinations(x, 2, with_replacement=True),
    "replacement_3": lambda T, x: T.combinations(x, r=3, with_replacement=True),
    "one": lambda T, x: T.combinations(x, 1),
    "more_than_n": lambda T, x: T.combinations(x[:2], 3),
}


@pytest.mark.parametrize("key", cases(COMBINATIONS))
def test_combinations(key):
    """Values, the graph (StackBackward0 over MaskedSelectBackward0s) and first derivatives
    (the op is linear: no second order to compare)."""
    ok(lambda T: _first_and_second(T, lambda x: COMBINATIONS[key](T, x), _leaf(T, (4,)),
                                   create_graph=False))


COMBINATION_VALUES = {
    "zero": lambda T: T.combinations(T.arange(3.0), 0),
    "int": lambda T: T.combinations(T.tensor([3, 1, 2]), 2),
    "empty": lambda T: T.combinations(T.zeros(0), 2),
    "empty_replacement": lambda T: T.combinations(T.zeros(0), 2, True),
    "2d": lambda T: T.combinations(T.zeros(2, 2)),
    "negative": lambda T: T.combinations(T.zeros(2), -1),
}


@pytest.mark.parametrize("key", cases(COMBINATION_VALUES))
def test_combination_values(key):
    same(COMBINATION_VALUES[key])


# --- top-level forms of functional ops (torch's native signatures) ---------------------------------


def _inputs(T, *shapes):
    return [_leaf(T, shape, seed=i) for i, shape in enumerate(shapes)]


TOPLEVEL = {
    "dropout_eval": ((2, 3), lambda T, x: T.dropout(x, 0.5, False)),
    "dropout_p0": ((2, 3), lambda T, x: T.dropout(x, 0.0, True)),
    "alpha_dropout_eval": ((2, 3), lambda T, x: T.alpha_dropout(x, 0.5, False)),
    "feature_alpha_dropout_eval": ((2, 3, 2), lambda T, x: T.feature_alpha_dropout(
        x, 0.5, train=False)),
    "selu": ((2, 3), lambda T, x: T.selu(x)),
    "celu": ((2, 3), lambda T, x: T.celu(x, 0.5)),
    "celu_default": ((2, 3), lambda T, x: T.celu(x)),
    "threshold": ((2, 3), lambda T, x: T.threshold(x, 0.1, -2.0)),
    "layer_norm": ((2, 3), lambda T, x: T.layer_norm(x, [3])),
    "layer_norm_affine": ((2, 3), lambda T, x: T.layer_norm(
        x, (3,), T.linspace(0.5, 1.5, 3, dtype=T.float64),
        T.linspace(-1, 1, 3, dtype=T.float64), 1e-3, False)),
    "group_norm": ((2, 4, 3), lambda T, x: T.group_norm(x, 2)),
    "group_norm_affine": ((2, 4, 3), lambda T, x: T.group_norm(
        x, 2, T.linspace(0.5, 1.5, 4, dtype=T.float64), T.ones(4, dtype=T.float64), 1e-4)),
    "batch_norm_train": ((4, 3), lambda T, x: T.batch_norm(
        x, None, None, None, None, True, 0.1, 1e-5, False)),
    "batch_norm_affine": ((4, 3, 2), lambda T, x: T.batch_norm(
        x, T.linspace(0.5, 1.5, 3, dtype=T.float64), T.ones(3, dtype=T.float64), None, None,
        True, 0.1, 1e-5, True)),
    "instance_norm": ((2, 3, 4), lambda T, x: T.instance_norm(
        x, None, None, None, None, True, 0.1, 1e-5, False)),
    "embedding": ((5, 2), lambda T, w: T.embedding(w, T.tensor([[0, 4], [4, 1]]))),
    "embedding_padding": ((5, 2), lambda T, w: T.embedding(w, T.tensor([0, 4, 4, 1]), 4)),
    "triplet_mean": ((3, 4), lambda T, a: T.triplet_margin_loss(a, a * 2, a.flip(0))),
    "triplet_none": ((3, 4), lambda T, a: T.triplet_margin_loss(
        a, a.roll(1, 1), a.flip(0), 0.5, 1, 1e-6, True, 0)),
    "triplet_sum": ((3, 4), lambda T, a: T.triplet_margin_loss(
        a, a + 1, a.flip(0), reduction=2)),
    "triplet_mean_positional": ((3, 4), lambda T, a: T.triplet_margin_loss(
        a, a * 2, a.flip(0), 1.0, 2, 1e-6, False, 1)),
}


def test_toplevel_batch_norm_eval():
    """Evaluation mode: a linear map of the input (first derivatives only)."""
    ok(lambda T: _first_and_second(T, lambda x: T.batch_norm(
        x, None, None, T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64) * 2, False, 0.1,
        1e-5, False), _leaf(T, (4, 3)), create_graph=False))


@pytest.mark.parametrize("key", cases(TOPLEVEL))
def test_toplevel_forms(key):
    """Values, graphs, first and second derivatives as torch's top-level functions (the
    graphs of the derivatives are nn.functional's, tested with it)."""
    shape, f = TOPLEVEL[key]
    ok(lambda T: _first_and_second(T, lambda x: f(T, x), _leaf(T, shape), values_only=True))


def test_toplevel_eval_dropouts_return_input():
    ok(lambda T: [T.dropout(x, 0.5, False) is x for x in [T.ones(2)]]
       + [T.alpha_dropout(x, 0.3, False) is x for x in [T.ones(2)]])


INPLACE_TOPLEVEL = {
    "selu_": lambda T, x: T.selu_(x),
    "celu_": lambda T, x: T.celu_(x, 2.0),
    "dropout_": lambda T, x: T.dropout_(x, 0.0, True),
    "alpha_dropout_": lambda T, x: T.alpha_dropout_(x, 0.5, False),
    "feature_alpha_dropout_": lambda T, x: T.feature_alpha_dropout_(x, 0.5, False),
}


@pytest.mark.parametrize("key", cases(INPLACE_TOPLEVEL))
def test_toplevel_inplace(key):
    """The in-place forms return their input, modified, with its version bumped as torch's."""
    def program(T):
        leaf = _leaf(T, (2, 3))
        x = leaf * 1
        out = INPLACE_TOPLEVEL[key](T, x)
        grads = T.autograd.grad((out * out).sum(), leaf)
        return out is x, x, x._version, grads

    ok(program)


def test_toplevel_batch_norm_running_stats():
    """Training updates the running statistics in place as torch's native batch_norm."""
    def program(T):
        x = _leaf(T, (4, 3)).detach()
        mean, var = T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64)
        out = T.batch_norm(x, None, None, mean, var, True, 0.3, 1e-5, False)
        return out, mean, var

    ok(program)
