"""Tensor and op surface test_autograd.py needs (issue 13): data_ptr, set_, the legacy
``Tensor.new``, empty_strided, grad_dtype, index_reduce, isin, searchsorted, bucketize,
nextafter, and rand/randn with complex or integral dtypes. Every case runs on torch and on
jaxgrad (``differential.same``).
"""

from __future__ import annotations

import warnings

import pytest

from differential import attempt, normalise, ok, raises, val

torch = pytest.importorskip("torch")

import jaxgrad  # noqa: E402

# --- data_ptr ---------------------------------------------------------------------------------

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


# --- set_ -------------------------------------------------------------------------------------

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


# --- Tensor.new, empty_strided ----------------------------------------------------------------

def test_legacy_new():
    def program(T):
        x = T.zeros(2, dtype=T.float64)
        return (x.new(2, 3).shape, x.new(2, 3).dtype, x.new([1, 2]), x.new().shape,
                x.new(x.shape).dtype, x.new(x).data_ptr() == x.data_ptr())
    ok(program)


def test_empty_strided_layout_and_grad_layout():
    def program(T):
        c = T.empty_strided((2, 2), (4, 2)).copy_(T.arange(4.0).reshape(2, 2))
        c.requires_grad_()
        (c * 2).sum().backward()
        return c, c.stride(), c.storage_offset(), c.grad, c.grad.stride()
    ok(program)


def test_empty_strided_mismatch():
    raises(lambda T: T.empty_strided((2, 2), (1,)))


# --- grad_dtype -------------------------------------------------------------------------------

def test_grad_dtype_get_set_and_assignment_checks():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        seen = [x.grad_dtype]
        x.grad_dtype = T.float16
        seen.append(x.grad_dtype)
        seen.append(attempt(lambda: setattr(x, "grad", T.ones(2))))
        x.grad_dtype = None
        x.grad = T.ones(2, dtype=T.float64)
        seen += [x.grad_dtype, x.grad.dtype]
        seen.append(attempt(lambda: setattr(x, "grad_dtype", T.float16)))
        seen.append(attempt(lambda: setattr(x, "grad_dtype", 3)))
        y = x * 2
        seen.append(attempt(lambda: y.grad_dtype))
        seen.append(attempt(lambda: setattr(y, "grad_dtype", T.float16)))
        seen.append(attempt(lambda: setattr(x, "grad", x)))
        return seen
    ok(program)


# --- index_reduce -----------------------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_grads(reduce, include_self):
    def program(T):
        x = T.tensor([[1.0, -2.0], [3.0, 0.5], [2.0, 2.0]], dtype=T.float64,
                     requires_grad=True)
        src = T.tensor([[2.0, 3.0], [4.0, 2.0], [6.0, -7.0], [3.0, 1.0]], dtype=T.float64,
                       requires_grad=True)
        out = x.index_reduce(0, T.tensor([0, 2, 0, 0]), src, reduce, include_self=include_self)
        (out * T.arange(1.0, 7.0, dtype=T.float64).reshape(3, 2)).sum().backward()
        return out, val(x.grad), val(src.grad)
    ok(program)


def test_index_reduce_ties_share_gradient():
    def program(T):
        x = T.ones(2, 2, dtype=T.float64, requires_grad=True)
        src = T.ones(2, 2, dtype=T.float64, requires_grad=True)
        out = T.index_reduce(x, 1, T.tensor([1, 1]), src, "amax")
        out.sum().backward()
        return out, val(x.grad), val(src.grad)
    ok(program)


def test_index_reduce_inplace_and_integral_mean():
    ok(lambda T: (T.tensor([1, 2, 3]).index_reduce(0, T.tensor([0, 0]), T.tensor([4, 5]),
                                                    "mean"),
                  (lambda t: (t.index_reduce_(0, T.tensor([1]), T.tensor([3.0]), "prod"),
                              t._version))(T.ones(2))))


@pytest.mark.parametrize("bad", range(6))
def test_index_reduce_errors(bad):
    def program(T):
        x, s, i = T.ones(3, 2), T.ones(3, 2), T.tensor([0, 2, 0])
        return [lambda: x.index_reduce(0, i, s, "sum"),
                lambda: x.index_reduce(0, i.float(), s, "mean"),
                lambda: x.index_reduce(0, i[:2], s, "mean"),
                lambda: x.index_reduce(0, i, s.double(), "mean"),
                lambda: x.index_reduce(0, i[None], s, "mean"),
                lambda: x.index_reduce(0, T.tensor([0, 5, 0]), s, "mean")][bad]()
    raises(program)


def test_index_reduce_beta_warning():
    import warnings

    def messages(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.ones(2).index_reduce(0, T.tensor([0]), T.ones(1), "amax")
        return [normalise(str(w.message)) for w in caught]
    # a once-per-process warning: compare the text of the first one either library gave
    torch_seen, jaxgrad_seen = messages(torch), messages(jaxgrad)
    if torch_seen and jaxgrad_seen:
        assert torch_seen == jaxgrad_seen


# --- isin, searchsorted, bucketize, nextafter --------------------------------------------------

def test_isin():
    ok(lambda T: (T.isin(T.tensor([[1, 2], [3, 4.0]], requires_grad=True), T.tensor([2, 3])),
                  T.isin(T.tensor([1, 2, 3]), 2), T.isin(3, T.tensor([1, 3])),
                  T.isin(T.tensor([1, 2, 3]), T.tensor([2]), invert=True)))


def test_searchsorted_and_bucketize():
    def program(T):
        s = T.tensor([[1.0, 3, 5], [2, 4, 6]], requires_grad=True)
        v = T.tensor([[3.0, 6], [1, 7]], requires_grad=True)
        return (T.searchsorted(s, v), T.searchsorted(s[0], v, right=True),
                T.searchsorted(s[0], 3), T.searchsorted(s[0], v, out_int32=True),
                T.searchsorted(s[0], v, side="right"),
                T.searchsorted(T.tensor([5.0, 1, 3]), T.tensor([2.0, 4]),
                               sorter=T.tensor([1, 2, 0])),
                T.bucketize(v, s[0]), T.bucketize(T.tensor([1.0, 3, 7]), s[0], right=True))
    ok(program)


def test_searchsorted_side_errors():
    raises(lambda T: T.searchsorted(T.tensor([1.0]), T.tensor([1.0]), side="middle"))
    raises(lambda T: T.searchsorted(T.tensor([1.0]), T.tensor([1.0]), right=True, side="left"))


def test_nextafter_values_and_grads():
    def program(T):
        a = T.tensor([1.0, 2.0, 3.0, 0.0], requires_grad=True)
        b = T.tensor([0.0, 2.0, 5.0, 0.0], requires_grad=True)
        y = T.nextafter(a, b)
        (y * T.tensor([3.0, 5.0, 7.0, 11.0])).sum().backward()
        z = a.detach().clone().requires_grad_().clone()
        z.nextafter_(T.tensor(0.0))
        return y, val(a.grad), val(b.grad), z
    ok(program)
    raises(lambda T: T.nextafter(T.tensor([1, 2]), T.tensor([3, 4])))


# --- sampling with complex or integral dtypes ---------------------------------------------------

@pytest.mark.parametrize("factory", ["rand", "randn"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_sampling(factory, dtype):
    ok(lambda T: (lambda t: (t.shape, t.dtype, t.requires_grad))(
        getattr(T, factory)(3, dtype=getattr(T, dtype), requires_grad=True)))
    ok(lambda T: (lambda t: (t.uniform_().dtype, t.normal_().dtype, t._version))(
        T.zeros(2, dtype=getattr(T, dtype))))


@pytest.mark.parametrize("call", range(5))
def test_integral_sampling_raises(call):
    raises(lambda T: [lambda: T.randn(2, dtype=T.int64), lambda: T.rand(2, dtype=T.int64),
                      lambda: T.zeros(2, dtype=T.int64).normal_(),
                      lambda: T.zeros(2, dtype=T.int64).uniform_(),
                      lambda: T.randn(2, dtype=T.bool)][call]())


# --- numerics and node names ------------------------------------------------------------------

@pytest.mark.parametrize("base", ["zeros", "scalar zero", "scalar two"])
def test_pow_gradient_of_exponent_at_zero_base(base):
    def program(T):
        b = T.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        if base == "zeros":
            out = T.zeros(3) ** b
        else:
            out = (0 if base == "scalar zero" else 2) ** b
        out.sum().backward()
        return out, val(b.grad)
    ok(program)


@pytest.mark.parametrize("name", ["min", "max", "median", "nanmedian"])
@pytest.mark.parametrize("values", [[1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [float("nan")] * 3,
                                    [1.0, float("nan"), float("nan")]])
def test_full_reductions_share_gradient_among_ties(name, values):
    def program(T):
        x = T.tensor(values, requires_grad=True)
        out = getattr(T, name)(x)
        out.backward()
        return out, val(x.grad)
    ok(program)


@pytest.mark.parametrize("call", range(8))
def test_sum_mean_overload_node_names(call):
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        out = [lambda: x.sum(), lambda: x.sum(dim=None), lambda: T.sum(x, None),
               lambda: x.sum(None, True), lambda: x.sum(dim=[]), lambda: x.mean(dim=None),
               lambda: x.mean(), lambda: x.sum(dtype=T.float64)][call]()
        out.sum().backward()
        return out, val(x.grad)
    ok(program)


# --- atan2 at the origin ----------------------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
def test_atan2_gradient_is_zero_where_both_inputs_are_zero(create_graph):
    def program(T):
        x = T.tensor([0.0, 1.0, 0.0, -0.0], dtype=T.float64, requires_grad=True)
        y = T.tensor([0.0, 0.0, 2.0, -0.0], dtype=T.float64, requires_grad=True)
        gx, gy = T.autograd.grad(T.atan2(x, y).sum(), (x, y), create_graph=create_graph)
        # (the double-backward node's name is the engine's business, not atan2's)
        return gx.detach(), gy.detach(), gx.requires_grad
    ok(program)


# --- as_strided over the whole storage ------------------------------------------------------------

def _strided_views(T):
    """as_strided views reaching past their input's own elements, of non-contiguous inputs and
    overlapping ones, each with its gradient into the leaf under the input's view."""
    results = []
    for make in (lambda base: base[2:6].as_strided((5,), (1,), 0),
                 lambda base: base.view(3, 4).t().as_strided((3, 2), (1, 4), 1),
                 lambda base: base[::2].as_strided((3, 3), (2, 1), 0),
                 lambda base: base[4:].as_strided((2, 2), (1, 1), 2)):
        leaf = T.arange(12.0, requires_grad=True)
        view = make(leaf * 1)
        (view * T.arange(1.0, view.numel() + 1).view(view.shape)).sum().backward()
        results.append((view, view.stride(), view.storage_offset(), leaf.grad))
    return results


def test_as_strided_reaches_the_whole_storage():
    ok(_strided_views)


def test_in_place_on_an_as_strided_view_past_its_input():
    def program(T):
        leaf = T.arange(8.0, requires_grad=True)
        base = leaf * 1
        view = base[1:3].as_strided((4,), (2,), 0)
        view.mul_(10)
        base.pow(2).sum().backward()
        return base, view, view._version, base._version, leaf.grad
    ok(program)


# --- double backward that torch refuses: scatter_reduce/index_reduce "prod" with repeated zeros ---

@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
@pytest.mark.parametrize("src_values", [[0.0, 0.0], [0.0, 2.0], [3.0, 2.0]])
def test_prod_gradient_of_repeated_zeros_is_not_differentiable_again(op, src_values):
    def program(T):
        inp = T.tensor([1.0], dtype=T.float64, requires_grad=True)
        src = T.tensor(src_values, dtype=T.float64, requires_grad=True)
        out = getattr(T, op)(inp, 0, T.tensor([0, 0]), src, "prod")
        _, grad_src = T.autograd.grad(out.sum(), (inp, src), create_graph=True)
        first = T.autograd.grad(getattr(T, op)(inp, 0, T.tensor([0, 0]), src, "prod").sum(),
                                src)
        second = attempt(lambda: [val(g) for g in T.autograd.grad(grad_src.sum(), src)])
        return grad_src.grad_fn.name() == "torch::autograd::Error", first, second
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index_reduce's beta warning
        ok(program)


def test_copy_slices_name_is_torchs():
    def program(T):
        y = T.ones(3, requires_grad=True) * 1
        y[0:1].mul_(2)
        return y.grad_fn.name(), type(y.grad_fn).__name__
    ok(program)


@pytest.mark.parametrize("alias,target", [("greater", "gt"), ("greater_equal", "ge"),
                                          ("less", "lt"), ("less_equal", "le"),
                                          ("not_equal", "ne")])
def test_comparison_aliases(alias, target):
    def program(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        inplace = x.detach().clone()
        getattr(inplace, alias + "_")(T.tensor([2.0, 2.0, 2.0]))
        return (getattr(T, alias)(x, 2), getattr(x, alias)(T.tensor([3.0, 2.0, 1.0])),
                inplace, inplace._version, getattr(T, alias).__name__,
                hasattr(T, alias + "_"), getattr(T, alias)(x, 2).equal(getattr(T, target)(x, 2)))
    ok(program)
