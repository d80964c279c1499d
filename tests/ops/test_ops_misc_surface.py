"""torch's smaller surface against torch: fmax/fmin, isreal, is_signed, numel, detach,
scalar_tensor, the ``*_copy`` ops and as_strided_scatter, Tensor's byte-level and Python-callable
methods, and the process-wide settings; values, dtypes, grad_fn graphs, first and second
derivatives (float64) and torch's errors.
"""

from __future__ import annotations

import warnings

import pytest

import jaxgrad
from differential import Raised, attempt, next_functions, ok, raises

torch = pytest.importorskip("torch")


def _leaf(T, values, dtype="float64"):
    return T.tensor(values, dtype=getattr(T, dtype), requires_grad=True)


def _grads(T, outs, *inputs):
    """First derivatives of a weighted sum of ``outs`` (with create_graph), and the second ones
    through their squares (values only: jaxgrad's double-backward graph is ``jax.vjp`` of the
    formula, not torch's composition)."""
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    loss = sum((o * T.linspace(0.5, 1.5, o.numel(), dtype=o.dtype).reshape(o.shape)).sum()
               for o in outs)
    first = T.autograd.grad(loss, inputs, create_graph=True, allow_unused=True)
    g = [f for f in first if f is not None and f.requires_grad]
    second = T.autograd.grad(sum((f * f).sum() for f in g), inputs,
                             allow_unused=True) if g else ()
    # (compared without versions: torch's as_strided backward fills zeros in place)
    return ([None if f is None else f.detach().clone() for f in first],
            [None if s is None else s.detach().clone() for s in second])


# --- fmax / fmin --------------------------------------------------------------------------------

X = [1.0, float("nan"), 2.0, 3.0, float("nan"), -1.0]
Y = [float("nan"), float("nan"), 2.0, 1.0, 4.0, 5.0]


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_values_graph_and_grads(name):
    def program(T):
        x, y = _leaf(T, X), _leaf(T, Y)
        out = getattr(T, name)(x, y)
        method = getattr(x, name)(y)
        ints = getattr(T, name)(T.tensor([1, 5]), T.tensor([3, 2]))
        mixed = getattr(T, name)(T.tensor([1, 2]), T.tensor(2.5))
        bools = getattr(T, name)(T.tensor([True, False]), T.tensor([False, False]))
        half = getattr(T, name)(T.tensor([1.0, float("nan")], dtype=T.float16),
                                T.tensor([0.5, 2.0]))
        o = T.empty(6, dtype=T.float64)
        getattr(T, name)(x.detach(), y.detach(), out=o)
        return (out, method, next_functions(out.grad_fn), _grads(T, out, x, y), ints, mixed,
                bools, half, o)

    ok(program)


def test_fmax_fmin_errors():
    raises(lambda T: T.fmax(T.tensor([1j]), T.tensor([1j])))
    raises(lambda T: T.fmin(T.tensor([1.0]), 2.0))
    raises(lambda T: T.fmax(T.ones(2), T.ones(3)))
    raises(lambda T: T.ones(2).fmax_(T.ones(2)))


# --- small queries and creation --------------------------------------------------------------

def test_isreal_is_signed_numel_detach_scalar_tensor():
    def program(T):
        x = _leaf(T, [1.0, 2.0])
        y = x * 2
        d = T.detach(y)
        z = x * 3
        same_z = T.detach_(z) is z
        return (T.isreal(T.tensor([1 + 0j, 1j, 2.5 + 0j])), T.isreal(x), x.isreal(),
                T.tensor([1j]).isreal(), T.isreal(T.tensor([1, 2])),
                [T.is_signed(T.tensor([1], dtype=getattr(T, d))) for d in
                 ("uint8", "int8", "int64", "bool", "float16", "complex64")],
                x.is_signed(), T.numel(T.ones(2, 3)), T.numel(T.ones(0)), d, d._version,
                d.requires_grad, same_z, z,
                T.scalar_tensor(3), T.scalar_tensor(3, dtype=T.int64), T.scalar_tensor(True),
                T.scalar_tensor(2.5, requires_grad=True), T.scalar_tensor(T.tensor(1.5)),
                T.scalar_tensor(-1, dtype=T.complex64))

    ok(program)
    raises(lambda T: T.numel(3))
    raises(lambda T: T.isreal([1.0]))


# --- nonzero_static, histogram ------------------------------------------------------------------

def test_nonzero_static():
    def program(T):
        x = T.tensor([[0, 1.0], [2, 0]])
        return (T.nonzero_static(x, size=3), T.nonzero_static(x, size=1, fill_value=7),
                T.nonzero_static(T.tensor(3.0), size=2), T.nonzero_static(T.tensor([0, 1]), size=0),
                x.nonzero_static(size=2), T.nonzero_static(T.tensor([True, False, True]), size=4),
                attempt(lambda: T.nonzero_static(x, size=-1)))

    ok(program)


def test_histogram():
    def program(T):
        x = T.tensor([1.0, 2, 1, 4])
        g = _leaf(T, [1.0, 2.0, 1.0, 4.0], "float32")
        h, e = T.histogram(g, 3)
        w = T.ones(4, requires_grad=True)
        hw = T.histogram(x, 3, weight=w)
        return (T.histogram(x, bins=4, range=(0.0, 4.0)),
                T.histogram(x, bins=T.tensor([0.0, 1, 2.5, 5]), weight=T.tensor([1.0, 2, 3, 4]),
                            density=True),
                T.histogram(x.double(), 3), T.histogram(T.tensor([1.0, 1.0]), 2),
                T.histogram(T.tensor([]), 2),
                T.histogram(T.tensor([1.0, float("nan"), 5.0]), 2, range=(0.0, 4.0)),
                T.histogram(T.arange(10.0).reshape(2, 5), 3, density=True), x.histogram(5),
                T.histogram(T.linspace(0, 1, 37), 7).hist, h, e, type(h.grad_fn).__name__,
                attempt(lambda: h.sum().backward()), hw, type(hw.bin_edges.grad_fn).__name__)

    ok(program)
    for bad in (lambda T: T.histogram(T.tensor([1, 2]), 3),
                lambda T: T.histogram(T.tensor([1.0]), 2, range=(3.0, 1.0)),
                lambda T: T.histogram(T.tensor([1.0]), 0),
                lambda T: T.histogram(T.tensor([1.0, float("inf")]), 2),
                lambda T: T.histogram(T.tensor([1.0, 2]), T.tensor([0.0, 1, 3], dtype=T.float64)),
                lambda T: T.histogram(T.tensor([1.0, 2]), 3, weight=T.ones(3)),
                lambda T: T.histogram(T.tensor([1.0, 2]), T.tensor([[0.0, 1, 3]]))):
        raises(bad)


def test_histogramdd():
    def program(T):
        x = T.tensor([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]])
        r = T.histogramdd(x.clone().requires_grad_(), 2)
        return (T.histogramdd(x, bins=[3, 3], weight=T.tensor([1.0, 2.0, 4.0, 8.0])),
                T.histogramdd(x, bins=2, range=[0.0, 1.0, 0.0, 2.0], density=True),
                T.histogramdd(x, bins=[T.tensor([0.0, 1, 2]), T.tensor([0.0, 2])]),
                T.histogramdd(T.tensor([[[1.0, 2.0], [3.0, 4.0]]]), bins=2),
                T.histogramdd(T.linspace(0, 1, 30).reshape(10, 3), bins=[2, 3, 4], density=True),
                type(r.hist.grad_fn).__name__, type(r.bin_edges[0].grad_fn).__name__)

    ok(program)
    for bad in (lambda T: T.histogramdd(T.ones(4, 2), bins=[2]),
                lambda T: T.histogramdd(T.ones(4, 2), bins=2, range=[0.0, 1.0]),
                lambda T: T.histogramdd(T.ones(4, 2), bins=[2, 0]),
                lambda T: T.histogramdd(T.ones(4, 2).long(), 2),
                lambda T: T.histogramdd(T.ones(4, 2), 2, weight=T.ones(3)),
                lambda T: T.histogramdd(T.ones(3), 2)):
        raises(bad)


# --- gradient (a composite: its graph is torch's slices, arithmetic and cat) --------------------

GRADIENT_CASES = [{}, {"spacing": 2.0}, {"spacing": [1.0, 3.0]}, {"dim": 1},
                  {"dim": -1, "spacing": 2}, {"dim": [0, 1], "spacing": 0.5}, {"edge_order": 2},
                  {"edge_order": 2, "spacing": [2.0, 0.5]}, {"coordinates": 1},
                  {"coordinates": 2}, {"coordinates": 1, "dim": 1}]


def test_gradient_values_graphs_and_derivatives():
    def program(T):
        results = []
        for kw in GRADIENT_CASES:
            kw = dict(kw)
            x = T.tensor([[float(i * i + j) / 7 for j in range(5)] for i in range(4)],
                         dtype=T.float64, requires_grad=True)
            coords = [T.tensor([0.0, 1.0, 3.0, 4.5], dtype=T.float64),
                      T.tensor([0.0, 0.5, 1.0, 3.0, 4.0], dtype=T.float64)]
            if "coordinates" in kw:
                kw["edge_order"] = kw.pop("coordinates")
                kw["spacing"] = coords[1:] if "dim" in kw else coords
            out = T.gradient(x, **kw)
            results.append((out, [next_functions(o.grad_fn) for o in out], _grads(T, out, x)))
        ints = T.gradient(T.tensor([1, 4, 9, 16]))
        return results, ints

    ok(program)
    for kw in ({"edge_order": 3}, {"spacing": [1.0]}, {"dim": [0, 0]},
               {"dim": [0], "spacing": [1.0, 2.0]}, {"dim": 5}):
        raises(lambda T, kw=kw: T.gradient(T.ones(3, 4), **kw))
    raises(lambda T: T.gradient(T.tensor([1, 2], dtype=T.uint8)))
    raises(lambda T: T.gradient(T.ones(2, 1)))
    raises(lambda T: T.gradient(T.ones(3), spacing=[T.ones(3, 1)]))


# --- the *_copy ops -------------------------------------------------------------------------

COPIES = {
    "alias": lambda T, x: T.alias_copy(x),
    "as_strided": lambda T, x: T.as_strided_copy(x, (2, 2), (1, 2), 1),
    "diagonal": lambda T, x: T.diagonal_copy(x, 0, 1, 2),
    "diagonal_offset": lambda T, x: T.diagonal_copy(x, offset=-1, dim1=2, dim2=1),
    "expand": lambda T, x: T.expand_copy(x[:, :1], (2, 2, 3, 4)),
    "permute": lambda T, x: T.permute_copy(x, (2, 0, 1)),
    "select": lambda T, x: T.select_copy(x, 1, -1),
    "slice": lambda T, x: T.slice_copy(x, 2, 1, None, 2),
    "split": lambda T, x: T.split_copy(x, 3, 2),
    "split_with_sizes": lambda T, x: T.split_with_sizes_copy(x, [1, 3], -1),
    "squeeze": lambda T, x: T.squeeze_copy(x[:1]),
    "squeeze_dim": lambda T, x: T.squeeze_copy(x[:1], 0),
    "squeeze_dims": lambda T, x: T.squeeze_copy(x[:1, :1], (0, 1)),
    "t": lambda T, x: T.t_copy(x[0]),
    "transpose": lambda T, x: T.transpose_copy(x, 0, 2),
    "unbind": lambda T, x: T.unbind_copy(x, 1),
    "unfold": lambda T, x: T.unfold_copy(x, 2, 2, 1),
    "unsqueeze": lambda T, x: T.unsqueeze_copy(x, -1),
    "view": lambda T, x: T.view_copy(x, (6, 4)),
}

SECOND_ORDER = {"expand", "split", "unfold"}


def test_copies_are_fresh_tensors_with_the_view_nodes_and_grads():
    def program(T):
        results = {}
        for name, f in COPIES.items():
            x = T.arange(24.0, dtype=T.float64).reshape(2, 3, 4).requires_grad_()
            out = f(T, x)
            outs = out if isinstance(out, tuple) else (out,)
            # one backward formula serves every copy: second derivatives for a few of them
            grads = _grads(T, out, x) if name in SECOND_ORDER else T.autograd.grad(
                sum((o * o).sum() for o in outs), x)[0].clone()
            results[name] = (type(out).__name__, [
                (o, o._is_view(), o.is_contiguous(), next_functions(o.grad_fn)) for o in outs],
                grads)
        results["ints"] = T.transpose_copy(T.arange(24).reshape(2, 3, 4), 0, 2)  # no history
        return results

    ok(program)


def test_copies_of_complex_detach_and_their_errors():
    def program(T):
        c = _leaf(T, [[1.0, 2.0], [3.0, -1.0]])
        z = T.complex(c, c * 2)
        real = T.view_as_real_copy(z)
        detached = T.detach_copy(c)
        back = attempt(lambda: detached.sum().backward())
        return (real, real._is_view(), next_functions(real.grad_fn), _grads(T, real, c),
                detached, detached.requires_grad, type(detached.grad_fn).__name__, back,
                T.view_as_complex_copy(c.detach()),
                attempt(lambda: T.view_as_complex_copy(c)),
                T.t_copy(T.tensor([1.0, 2.0])))

    ok(program)
    raises(lambda T: T.transpose_copy(T.ones(2, 3), 0, 2))
    raises(lambda T: T.view_copy(T.ones(2, 3), (4, 2)))
    raises(lambda T: T.expand_copy(T.ones(2, 3), (3, 3)))
    raises(lambda T: T.select_copy(T.ones(2, 3), 0, 5))
    raises(lambda T: T.transpose_copy(3, 0, 1))


def test_as_strided_scatter():
    def program(T):
        x, src = _leaf(T, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]), _leaf(T, [[10.0, 20.0], [30.0, 40.0]])
        out = T.as_strided_scatter(x, src, (2, 2), (1, 3), 1)
        method = x.detach().as_strided_scatter(src.detach()[0], (2,), (2,))
        return out, method, next_functions(out.grad_fn), _grads(T, out, x, src)

    ok(program)
    raises(lambda T: T.as_strided_scatter(T.zeros(4), T.ones(3), (2,), (2,)))


# --- Tensor surface ----------------------------------------------------------------------------

def test_tensor_bytes_casts_and_devices():
    def program(T):
        x = T.arange(6.0).reshape(2, 3)
        strided = x.new_empty_strided((2, 3), (1, 2))
        return (x.nbytes, x.itemsize, T.ones(3, dtype=T.float64).nbytes,
                T.ones(2, dtype=T.int16).itemsize, x.byte(), x.char(), (-x).char(),
                x.get_device(), T.get_device(x), strided.shape, strided.stride(), strided.dtype,
                x.new_empty_strided((2,), (3,), dtype=T.int64).dtype,
                attempt(lambda: x.pin_memory()), x.is_pinned(), x.is_set_to(x),
                x.is_set_to(x.view(6)), x.is_set_to(x[:]), x.is_set_to(x.clone()),
                x.dim_order(), x.t().dim_order(), T.ones(2, 3, 4).permute(2, 0, 1).dim_order(),
                attempt(lambda: T.ones(1, 3).dim_order(ambiguity_check=True)),
                T.is_storage(x.untyped_storage()), T.is_storage(x))

    ok(program)
    raises(lambda T: T.get_device(3))


def test_chalf_is_not_supported():
    """jaxgrad has no complex32: chalf raises instead of returning a ComplexHalf tensor."""
    with pytest.raises(TypeError, match="complex32"):
        jaxgrad.ones(2).chalf()


def test_python_callable_maps():
    def program(T):
        z = T.arange(3.0)
        a = z.apply_(lambda v: v * 2)
        after_apply = (z.clone(), z._version, a is z)
        z.map_(T.tensor([1.0, 2.0, 3.0]), lambda p, q: p + q)
        after_map = (z.clone(), z._version)
        z.map2_(T.tensor([1.0, 2.0, 3.0]), T.tensor(10.0), lambda p, q, r: p + q + r)
        ints = T.arange(3)
        ints.apply_(lambda v: v * 3)
        base = T.zeros(2, 3)
        base[1].apply_(lambda v: v + 7)  # through a view, into the base
        return (after_apply, after_map, z, z._version, ints, base,
                attempt(lambda: _leaf(T, [1.0]).apply_(lambda v: v)),
                attempt(lambda: T.ones(2).map_(T.ones(3), lambda p, q: p)))

    ok(program)


def test_as_subclass_and_method_forms_of_nn_ops():
    def program(T):
        class Sub(T.Tensor):
            pass

        x = _leaf(T, [[-1.0, 0.2], [2.0, -3.0]])
        s = (x * 2).as_subclass(Sub)
        h = x.hardshrink(0.5)
        p = x.prelu(_leaf(T, [0.25, 0.5]))
        w = _leaf(T, [0.25, 0.5])
        p2 = x.prelu(w)
        return (type(s).__name__, s.detach().clone(), type(s.grad_fn).__name__,
                attempt(lambda: x.as_subclass(int)), h, next_functions(h.grad_fn),
                _grads(T, h, x), p, next_functions(p.grad_fn), _grads(T, p2, x, w),
                attempt(lambda: x.prelu(T.ones(3, dtype=T.float64))),
                attempt(lambda: x.prelu(T.ones(2))))

    ok(program)


# --- process settings -------------------------------------------------------------------------

def test_process_settings_like_torch():
    def program(T):
        threads = T.get_num_threads()
        T.set_num_threads(1)
        one = T.get_num_threads()
        T.set_num_threads(threads)
        T.set_float32_matmul_precision("medium")
        precision = T.get_float32_matmul_precision()
        T.set_float32_matmul_precision("highest")
        states = []
        for mode in ("warn", 2, "default", 1, 0):
            T.set_deterministic_debug_mode(mode)
            states.append((T.get_deterministic_debug_mode(),
                           T.are_deterministic_algorithms_enabled(),
                           T.is_deterministic_algorithms_warn_only_enabled()))
        T.use_deterministic_algorithms(True, warn_only=True)
        states.append(T.get_deterministic_debug_mode())
        T.use_deterministic_algorithms(False)
        return (one, precision, T.get_float32_matmul_precision(), states,
                T.get_deterministic_debug_mode(), T.compiled_with_cxx11_abi(),
                (T.has_lapack, T.has_mkl, T.has_openmp, T.has_spectral),
                [attempt(lambda v=v: T.set_num_threads(v)) for v in (0, -1, 2.5)],
                attempt(lambda: T.set_num_interop_threads(0)),
                [attempt(lambda m=m: T.set_deterministic_debug_mode(m)) for m in ("x", 3, 1.5)],
                attempt(lambda: T.use_deterministic_algorithms(1)),
                attempt(lambda: T.use_deterministic_algorithms(True, warn_only=1)),
                attempt(lambda: T.set_flush_denormal(1)))

    ok(program)


def test_float32_matmul_precision_warns_on_an_unknown_value():
    for lib in (torch, jaxgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_float32_matmul_precision("low")
        assert [str(w.message).replace("torch", "jaxgrad").split(" (Triggered")[0]
                for w in caught] == [
            "low is not one of 'highest', 'high', or 'medium'; the currentsetFloat32Matmul"
            "Precision call has no effect."]
        assert lib.get_float32_matmul_precision() == "highest"


def test_flush_denormal_is_refused_by_jaxgrad():
    """XLA decides denormal handling: jaxgrad reports that it cannot switch it (torch can)."""
    assert jaxgrad.set_flush_denormal(True) is False
    assert isinstance(attempt(lambda: jaxgrad.set_flush_denormal(1)), Raised)


def test_deprecated_non_inplace_resize():
    def program(T):
        x = T.arange(6.0, dtype=T.float64).reshape(2, 3).requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = x.resize(3, 2)
            q = x.t().resize(6)
            s = x.resize_as(T.ones(1, 6))
        weights = T.arange(6.0, dtype=T.float64).reshape(3, 2)
        g = T.autograd.grad((r * weights).sum() + (q * q).sum() + s.sum(), x)
        return (r, q, s, r._base is x, next_functions(r.grad_fn), g[0].clone(),
                [(str(w.message), w.filename == __file__) for w in caught],
                attempt(lambda: x.resize(4)), T.arange(4).resize(2, 2))

    ok(program)
