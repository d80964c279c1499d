"""Differential tests of in-place ops, views, ``.data``/``detach()`` aliasing and versions.

torch is the oracle for values, gradients, ``_version``, grad_fn names (CopySlices,
AsStridedBackward0, ...), next_functions, strides and the "modified by an inplace operation"
errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from differential import attempt, leaf, next_functions, ok, raises, val

# --- in-place ops on non-leaves ------------------------------------------------------------------

_INPLACE = {
    "add_": lambda T, y, w: y.add_(w),
    "add_alpha": lambda T, y, w: y.add_(w, alpha=2),
    "add_scalar": lambda T, y, w: y.add_(3.0),
    "sub_": lambda T, y, w: y.sub_(w),
    "mul_": lambda T, y, w: y.mul_(w),
    "mul_scalar": lambda T, y, w: y.mul_(2.5),
    "div_": lambda T, y, w: y.div_(w),
    "div_scalar": lambda T, y, w: y.div_(4.0),
    "zero_": lambda T, y, w: y.zero_(),
    "fill_": lambda T, y, w: y.fill_(7.0),
    "copy_": lambda T, y, w: y.copy_(w),
    "copy_const": lambda T, y, w: y.copy_(T.tensor([[9.0, 8.0], [7.0, 6.0]], dtype=T.float64)),
    "copy_broadcast": lambda T, y, w: y.copy_(w[0]),
    "exp_": lambda T, y, w: y.exp_(),
    "clamp_": lambda T, y, w: y.clamp_(1.5, 3.5),
    "clamp_min": lambda T, y, w: y.clamp_(min=2.5),
    "iadd": lambda T, y, w: y.__iadd__(w),
    "imul": lambda T, y, w: y.__imul__(w),
    "isub_scalar": lambda T, y, w: y.__isub__(1.0),
    "itruediv": lambda T, y, w: y.__itruediv__(w),
    "neg_": lambda T, y, w: y.neg_(),
    "pow_": lambda T, y, w: y.pow_(2),
    "sigmoid_": lambda T, y, w: y.sigmoid_(),
    "tanh_": lambda T, y, w: y.tanh_(),
    "relu_": lambda T, y, w: y.relu_(),
}


@pytest.mark.parametrize("op", list(_INPLACE))
def test_inplace_on_nonleaf(op):
    def program(T):
        x = leaf(T, [[1.0, -2.0], [3.0, 4.0]])
        w = leaf(T, [[0.5, 2.0], [-1.0, 3.0]])
        y = x * 1
        r = _INPLACE[op](T, y, w)
        same_obj = r is y
        graph = next_functions(y.grad_fn)
        (y * y).sum().backward()
        return same_obj, y, graph, val(x.grad), val(w.grad)

    ok(program)


@pytest.mark.parametrize("op", list(_INPLACE))
def test_inplace_on_tensor_not_requiring_grad(op):
    def program(T):
        y = T.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=T.float64)
        w = leaf(T, [[0.5, 2.0], [-1.0, 3.0]])
        _INPLACE[op](T, y, w)
        graph = next_functions(y.grad_fn)
        if y.requires_grad:
            (y * y).sum().backward()
        return y, graph, val(w.grad)

    ok(program)


def test_chain_of_inplace_ops_versions_and_grad():
    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0])
        y = x * 2
        versions = [y._version]
        y.add_(1)
        versions.append(y._version)
        y.mul_(x)
        versions.append(y._version)
        y += 1
        versions.append(y._version)
        y.exp_()
        versions.append(y._version)
        y.sum().backward()
        return versions, y, val(x.grad), next_functions(y.grad_fn)

    ok(program)


def test_requires_grad_underscore_on_leaf():
    def program(T):
        x = T.tensor([1.0, 2.0])
        r = x.requires_grad_()
        a = (r is x, x.requires_grad, x.is_leaf, x._version)
        x.requires_grad_(False)
        b = x.requires_grad
        x.requires_grad = True
        (x * 3).sum().backward()
        return a, b, val(x.grad)

    ok(program)


# --- __setitem__ ---------------------------------------------------------------------------------

_SETITEM = {
    "int_scalar": lambda T, y, v: y.__setitem__(0, 5.0),
    "slice_scalar": lambda T, y, v: y.__setitem__(slice(1, None), -1.0),
    "row_tensor": lambda T, y, v: y.__setitem__(1, v[0]),
    "column_tensor": lambda T, y, v: y.__setitem__((slice(None), 0), v[:, 1]),
    "element_tensor": lambda T, y, v: y.__setitem__((2, 1), v[1, 1]),
    "ellipsis": lambda T, y, v: y.__setitem__(Ellipsis, 2.0),
    "broadcast_row": lambda T, y, v: y.__setitem__(slice(0, 2), v[0]),
    "step_slice": lambda T, y, v: y.__setitem__(slice(None, None, 2), v[:2] * 3),
    "list_index_scalar": lambda T, y, v: y.__setitem__([0, 2], 1.0),
    "tensor_index_tensor": lambda T, y, v: y.__setitem__(T.tensor([2, 0]), v[:2]),
    "bool_mask_scalar": lambda T, y, v: y.__setitem__(y > 2, 0.0),
    "bool_mask_row": lambda T, y, v: y.__setitem__(T.tensor([True, False, True]), v[0]),
    "advanced_pair": lambda T, y, v: y.__setitem__(([0, 2], [1, 0]), v[0]),
    "mixed_slice_adv": lambda T, y, v: y.__setitem__((slice(None), [1]), v[:, :1]),
    "negative_index": lambda T, y, v: y.__setitem__(-1, v[2]),
    # full slices are skipped: these write y itself (fill_ / copy_), not a view of it
    "ellipsis_0d_tensor": lambda T, y, v: y.__setitem__(Ellipsis, v[0, 0]),
    "ellipsis_int_tensor": lambda T, y, v: y.__setitem__(Ellipsis, T.tensor(4)),
    "full_slice_scalar": lambda T, y, v: y.__setitem__(slice(None), 3.0),
    "full_slices_scalar": lambda T, y, v: y.__setitem__((slice(None), slice(0, 2)), 3.0),
    "full_slice_broadcast": lambda T, y, v: y.__setitem__(slice(None), v[1]),
    "full_slice_same_shape": lambda T, y, v: y.__setitem__(slice(None), v * 2),
    # values are viewed without leading 1s, then expanded (if their shape still differs)
    "column_leading_one": lambda T, y, v: y.__setitem__((slice(None), 0), v[:1, 0]),
    "row_leading_ones": lambda T, y, v: y.__setitem__(0, v.unsqueeze(0)[:, :1]),
    "none": lambda T, y, v: y.__setitem__(None, v),
    "list_leading_one": lambda T, y, v: y.__setitem__([0, 2], v[:1]),
    "ellipsis_list": lambda T, y, v: y.__setitem__((Ellipsis, [1]), 5.0),
    "none_list": lambda T, y, v: y.__setitem__((None, [1]), v[:1]),
    "fill_0d_tensor": lambda T, y, v: y.fill_(v[1, 1]),
    "numpy_int_value": lambda T, y, v: y.__setitem__(1, np.int64(7)),
    "numpy_float64_value": lambda T, y, v: y.__setitem__([0, 2], np.float64(-2.5)),
}


@pytest.mark.parametrize("case", list(_SETITEM))
def test_setitem(case):
    def program(T):
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        v = leaf(T, [[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]])
        y = x * 1
        _SETITEM[case](T, y, v)
        graph = next_functions(y.grad_fn)
        (y * y.detach() + y).sum().backward()
        return y, graph, val(x.grad), val(v.grad)

    ok(program)


_SETITEM_ERRORS = {
    "value_does_not_expand": lambda T, y, v: y.__setitem__(0, v[:, 0]),
    "fill_1d_tensor": lambda T, y, v: y.fill_(v[1]),
    "list_value": lambda T, y, v: y.__setitem__(0, [1.0, 2.0]),
    "ndarray_value": lambda T, y, v: y.__setitem__([0, 2], np.ones(2)),
    "numpy_float32_value": lambda T, y, v: y.__setitem__(Ellipsis, np.float32(2.0)),
    "none_value": lambda T, y, v: y.__setitem__(0, None),
}


@pytest.mark.parametrize("case", list(_SETITEM_ERRORS))
def test_setitem_errors(case):
    def program(T):
        y = leaf(T, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]) * 1
        _SETITEM_ERRORS[case](T, y, leaf(T, [[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]]))

    raises(program)


@pytest.mark.parametrize("case", list(_SETITEM))
def test_setitem_plain_tensor(case):
    def program(T):
        y = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=T.float64)
        v = T.tensor([[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]], dtype=T.float64)
        _SETITEM[case](T, y, v)
        return y

    ok(program)


def test_setitem_value_requires_grad_into_plain_tensor():
    def program(T):
        y = T.zeros(3, 2, dtype=T.float64)
        v = leaf(T, [1.0, 2.0])
        y[1] = v * 2
        graph = next_functions(y.grad_fn)
        (y ** 2).sum().backward()
        return y, graph, val(v.grad)

    ok(program)


# --- .data versus detach() ----------------------------------------------------------------------

def test_data_shares_storage_not_version():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        d = y.data
        d.add_(10)
        return y, d, y._version, d._version, d.requires_grad, d.is_leaf

    ok(program)


def test_detach_shares_storage_and_version():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        d = y.detach()
        d.add_(10)
        d.mul_(2)
        return y, d, y._version, d._version, d.requires_grad, d.is_leaf

    ok(program)


def test_base_write_visible_through_data_and_detach():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        d = y.data
        e = y.detach()
        y.add_(1)
        return d, e, y._version, d._version, e._version

    ok(program)


def test_leaf_data_write_no_error_no_version():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        x.data.mul_(3)
        x.data += 1
        (x * x).sum().backward()
        return x, val(x.grad)

    ok(program)


def test_leaf_detach_write_bumps_version():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        x.detach().mul_(3)
        return x, x.detach()._version

    ok(program)


def test_data_setter_replaces_contents():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        x.data = T.tensor([5.0, 6.0, 7.0], dtype=T.float64)
        (x * x).sum().backward()
        return x, val(x.grad), x._version

    ok(program)


def test_detach_write_breaks_saved_output():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x.exp()
        y.detach().zero_()
        return attempt(lambda: y.sum().backward()), x.grad

    ok(program)


def test_data_write_silently_changes_saved_output():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x.exp()
        y.data.mul_(2)
        y.sum().backward()
        return val(x.grad), y

    ok(program)


# --- views ------------------------------------------------------------------------------------------

_VIEWS = {
    "slice": lambda b: b[1:],
    "step_slice": lambda b: b[::2],
    "view": lambda b: b.view(2, 3),
    "reshape": lambda b: b.reshape(3, 2),
    "transpose": lambda b: b.view(2, 3).transpose(0, 1),
    "t": lambda b: b.view(2, 3).t(),
    "unsqueeze": lambda b: b.unsqueeze(0),
    "squeeze": lambda b: b.view(1, 6).squeeze(0),
    "select": lambda b: b.view(2, 3).select(1, 1),
    "int_index": lambda b: b.view(2, 3)[1],
    "expand_free_view": lambda b: b[2:4].view(2, 1),
    "permute": lambda b: b.view(1, 2, 3).permute(2, 0, 1),
    "flatten": lambda b: b.view(2, 3).flatten(),
    "diag_like": lambda b: b.view(2, 3)[:, 1:].t(),
}


@pytest.mark.parametrize("kind", list(_VIEWS))
def test_view_shares_storage_both_ways(kind):
    def program(T):
        b = T.arange(6, dtype=T.float64)
        v = _VIEWS[kind](b)
        info = (v.shape, v.stride(), v.is_contiguous(), v.storage_offset(), v._base is b)
        v.mul_(10)
        after_view = (b.clone(), b._version, v._version)
        b.add_(1)
        return info, after_view, v, b, v._version

    ok(program)


@pytest.mark.parametrize("kind", list(_VIEWS))
def test_inplace_on_view_of_nonleaf_grad(kind):
    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        w = leaf(T, [2.0])
        b = x * 1
        v = _VIEWS[kind](b)
        v.mul_(w)
        info = (type(b.grad_fn).__name__, type(v.grad_fn).__name__, next_functions(b.grad_fn),
                next_functions(v.grad_fn), b._version, v._version, v.is_leaf, v.requires_grad)
        (b * b).sum().backward()
        return info, b, val(x.grad), val(w.grad)

    ok(program)


@pytest.mark.parametrize("kind", list(_VIEWS))
def test_inplace_on_base_regenerates_view_grad_fn(kind):
    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        b = x * 1
        v = _VIEWS[kind](b)
        before = type(v.grad_fn).__name__
        b.mul_(3)
        info = (before, type(v.grad_fn).__name__, next_functions(v.grad_fn), v)
        (v * v).sum().backward()
        return info, val(x.grad)

    ok(program)


def test_view_of_plain_base_written_with_grad_value():
    def program(T):
        b = T.zeros(6, dtype=T.float64)
        w = leaf(T, [1.0, 2.0])
        v = b[2:4]
        v.copy_(w * 3)
        info = (b.requires_grad, b.is_leaf, type(b.grad_fn).__name__, next_functions(b.grad_fn),
                v.requires_grad, type(v.grad_fn).__name__)
        (b * T.arange(6, dtype=T.float64)).sum().backward()
        return info, b, val(w.grad)

    ok(program)


def test_view_of_view_inplace_and_grads():
    def program(T):
        x = leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = x * 2
        v1 = b[:, 1:]
        v2 = v1[1]
        v2.mul_(2)
        info = (v2._base is b, v1._base is b, type(b.grad_fn).__name__,
                type(v1.grad_fn).__name__, next_functions(b.grad_fn))
        (b.sum() + v1.sum() * 2).backward()
        return info, b, val(x.grad)

    ok(program)


def test_two_inplace_on_different_views():
    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0, 4.0])
        b = x * 2
        b[:2].add_(x[2:])
        b[2:].mul_(x[:2])
        g = next_functions(b.grad_fn)
        b.sum().backward()
        return b, g, val(x.grad)

    ok(program)


def test_inplace_on_view_then_use_view_in_graph():
    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0, 4.0])
        b = x.sin()
        v = b[1:3]
        v.exp_()
        out = (v * 3).sum() + (b * b).sum()
        out.backward()
        return val(x.grad), b, v

    ok(program)


def test_view_is_contiguous_and_strides():
    def program(T):
        b = T.arange(24, dtype=T.float64).view(2, 3, 4)
        cases = [b, b.transpose(0, 2), b[:, 1], b[..., ::2], b.permute(1, 0, 2), b[0].t(),
                 b.unsqueeze(1), b[:, :1, :].squeeze(1), b.view(6, 4)[1:5], b.reshape(4, 6),
                 b.transpose(1, 2).reshape(2, 12), b[:, 1:2].contiguous(), b.expand(2, 2, 3, 4)]
        return [(c.shape, c.stride(), c.is_contiguous(), c.storage_offset()) for c in cases]

    ok(program)


def test_reshape_of_noncontiguous_copies():
    def program(T):
        b = T.arange(6, dtype=T.float64).view(2, 3)
        r = b.t().reshape(6)
        r.mul_(100)
        return b, r, b._version, r._version

    ok(program)


def test_view_of_noncontiguous_raises():
    def program(T):
        b = T.arange(6, dtype=T.float64).view(2, 3)
        return b.t().view(6)

    raises(program)


def test_unbind_outputs_are_views():
    def program(T):
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        b = x * 1
        a, c = b.unbind(0)
        return a._base is b, a.stride(), c.storage_offset(), type(a.grad_fn).__name__

    ok(program)


def test_inplace_on_unbind_output_raises():
    def program(T):
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        a, c = (x * 1).unbind(0)
        return attempt(lambda: a.mul_(2)), attempt(lambda: c.__setitem__(0, 1.0))

    ok(program)


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


def test_copy_slices_name_is_torchs():
    def program(T):
        y = T.ones(3, requires_grad=True) * 1
        y[0:1].mul_(2)
        return y.grad_fn.name(), type(y.grad_fn).__name__
    ok(program)


# --- detach_ ------------------------------------------------------------------------------------

def test_detach_inplace_on_nonleaf():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        r = y.detach_()
        return r is y, y, y.requires_grad, y.is_leaf, y.grad_fn, y._version

    ok(program)


def test_detach_inplace_keeps_graph_of_consumers():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        z = y * 3
        y.detach_()
        z.sum().backward()
        return val(x.grad), y

    ok(program)


def test_detach_inplace_on_view_raises():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        return y[:1].detach_()

    raises(program)


# --- modified-by-an-inplace-operation errors --------------------------------------------------

_SAVED = {
    # op producing the graph, which tensor to modify afterwards
    "sin_input": (lambda T, x, h: h.sin(), "h"),
    "mul_input": (lambda T, x, h: h * x, "h"),
    "pow_input": (lambda T, x, h: h ** 2, "h"),
    "div_input": (lambda T, x, h: x / h, "h"),
    "matmul_input": (lambda T, x, h: h.view(1, 3) @ x.view(3, 1), "h"),
    "exp_output": (lambda T, x, h: h.exp(), "out"),
    "tanh_output": (lambda T, x, h: h.tanh(), "out"),
    "sigmoid_output": (lambda T, x, h: h.sigmoid(), "out"),
    "relu_output": (lambda T, x, h: h.relu(), "out"),
    "sqrt_output": (lambda T, x, h: h.sqrt(), "out"),
    "mul_scalar_input": (lambda T, x, h: h * 2, "h"),
    "add_input": (lambda T, x, h: h + x, "h"),
    "sum_input": (lambda T, x, h: h.sum(), "h"),
    "view_input": (lambda T, x, h: h.view(3, 1), "h"),
    "neg_input": (lambda T, x, h: -h, "h"),
    "clone_input": (lambda T, x, h: h.clone(), "h"),
    "exp_input": (lambda T, x, h: h.exp(), "h"),
    "mul_both_modify_x_leaf_data": (lambda T, x, h: h * x, "x.data"),
}


_SAVED_BUGS: dict[str, str] = {}


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=_SAVED_BUGS[c]))
    if c in _SAVED_BUGS else c for c in _SAVED])
def test_modified_saved_tensor(case):
    """Raises exactly when the op saved the modified tensor (checked by torch)."""

    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0])
        h = x * 1.5
        make, target = _SAVED[case]
        out = make(T, x, h)
        {"h": lambda: h.add_(1), "out": lambda: out.mul_(2),
         "x.data": lambda: x.data.add_(1)}[target]()
        err = attempt(lambda: out.sum().backward())
        return err, val(x.grad), h._version

    ok(program)


def test_modified_saved_tensor_message_for_leaf_input():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x.sin()
        with T.no_grad():
            x.mul_(2)
        return attempt(lambda: y.sum().backward()), x._version

    ok(program)


def test_modified_saved_tensor_message_for_view_output():
    def program(T):
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        h = x * 1
        v = h[0]
        y = v.exp()
        h.add_(1)
        return attempt(lambda: y.sum().backward()), v._version

    ok(program)


def test_modified_saved_tensor_version_numbers():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        h = x * 2
        y = h * h
        h.add_(1)
        h.add_(1)
        h.mul_(3)
        return [attempt(lambda: y.sum().backward())]

    ok(program)


def test_modified_then_retain_graph_second_time():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        h = x * 2
        y = (h.exp()).sum()
        y.backward(retain_graph=True)
        first = val(x.grad)
        h.zero_()
        err = attempt(y.backward)
        return first, err, val(x.grad)

    ok(program)


def test_no_error_when_modification_after_backward():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        h = x * 2
        y = (h * h).sum()
        y.backward()
        h.add_(1)
        return val(x.grad), h

    ok(program)


def test_saved_output_modified_in_place_with_inplace_op_itself():
    # exp_ saves its own result: modifying it again afterwards breaks the backward
    def program(T):
        x = leaf(T, [1.0, 2.0])
        h = x * 1
        h.exp_()
        ok_grad = attempt(lambda: T.autograd.grad(h.sum(), x, retain_graph=True))
        h.add_(1)
        return ok_grad, attempt(lambda: h.sum().backward())

    ok(program)


# --- in-place on leaves ------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["add_", "mul_", "zero_", "fill_", "copy_", "exp_", "iadd",
                                "setitem", "clamp_"])
def test_inplace_on_leaf_requiring_grad_raises(op):
    def program(T):
        x = leaf(T, [1.0, 2.0])
        f = {
            "add_": lambda: x.add_(1), "mul_": lambda: x.mul_(2), "zero_": lambda: x.zero_(),
            "fill_": lambda: x.fill_(3.0), "copy_": lambda: x.copy_(T.ones(2)),
            "exp_": lambda: x.exp_(), "iadd": lambda: x.__iadd__(1),
            "setitem": lambda: x.__setitem__(0, 5.0), "clamp_": lambda: x.clamp_(0, 1),
        }[op]
        return attempt(f), x, x._version

    ok(program)


@pytest.mark.parametrize("op", ["add_", "setitem", "mul_", "copy_"])
def test_inplace_on_view_of_leaf_raises(op):
    def program(T):
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        v = x[0]
        f = {"add_": lambda: v.add_(1), "setitem": lambda: v.__setitem__(0, 5.0),
             "mul_": lambda: x.view(4).mul_(2), "copy_": lambda: x.t().copy_(x.detach())}[op]
        return attempt(f), x, x._version

    ok(program)


def test_inplace_on_leaf_under_no_grad_seed_004():
    def program(T):
        x = T.tensor([2.0, 3.0], requires_grad=True)
        with T.no_grad():
            x += 1
            y = x * x
        return x, x._version, y.requires_grad, x.is_leaf, x.grad_fn

    ok(program)


def test_inplace_on_leaf_under_no_grad_then_backward():
    def program(T):
        x = leaf(T, [2.0, 3.0])
        with T.no_grad():
            x.mul_(2)
            x[0] = 10.0
        (x * x).sum().backward()
        return x, val(x.grad)

    ok(program)


def test_inplace_on_leaf_not_requiring_grad_with_grad_value():
    def program(T):
        c = T.tensor([1.0, 2.0], dtype=T.float64)
        w = leaf(T, [3.0, 4.0])
        c.mul_(w)
        info = (c.is_leaf, c.requires_grad, type(c.grad_fn).__name__, next_functions(c.grad_fn))
        c.sum().backward()
        return info, c, val(w.grad)

    ok(program)


def test_inplace_int_dtype_result_cast_error():
    def program(T):
        c = T.tensor([1, 2])
        return attempt(lambda: c.mul_(1.5)), attempt(lambda: c.add_(1)), c

    ok(program)


# --- view replay (_force_original_view_tracking) ---------------------------------------------------

def _view_tracking(T):
    """torch.autograd._force_original_view_tracking (jaxgrad's is in autograd.grad_mode)."""
    if T.__name__ == "torch":
        return T.autograd._force_original_view_tracking, T.autograd.is_view_replay_enabled
    from jaxgrad.autograd import grad_mode
    return grad_mode._force_original_view_tracking, grad_mode.is_view_replay_enabled


def test_view_replay_grad_fns():
    """Views made with view replay on get their own view ops' nodes back after an in-place
    change (a chain of them to the base's CopySlices); made without, AsStridedBackward0."""
    def program(T):
        tracking, enabled = _view_tracking(T)
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with tracking(True):
            b = x.clone()
            v = b.view(-1)[1:]
            w = b.t()
            inside = enabled()
        plain = b[0]
        v.mul_(3)
        graphs = [next_functions(v.grad_fn), next_functions(w.grad_fn),
                  next_functions(plain.grad_fn)]
        (v.sum() + 2 * w.sum() + plain.sum()).backward()
        return inside, enabled(), graphs, val(x.grad)

    ok(program)


def test_view_replay_as_function_decorator_and_threads():
    def program(T):
        import threading

        tracking, enabled = _view_tracking(T)
        seen = [enabled()]
        tracking(True)
        seen.append(enabled())
        other = []
        thread = threading.Thread(target=lambda: other.append(enabled()))
        thread.start()
        thread.join()
        with tracking(False):
            seen.append(enabled())
        seen.append(enabled())
        tracking(False)

        @tracking(True)
        def inside():
            return enabled()

        seen += [inside(), enabled(), other]
        return seen

    ok(program)


def test_view_replay_off_by_default_after_clone():
    def program(T):
        tracking, _ = _view_tracking(T)
        x = T.ones(2, 2, requires_grad=True)
        with tracking(False):
            tracking(True)
            a = x.clone().view(-1)
            a.add_(1)
        b = x.clone().view(-1)
        b.add_(1)
        return type(a.grad_fn).__name__, type(b.grad_fn).__name__

    ok(program)


# --- saved results of in-place ops on views, retain_grad, views requiring grad via their base ----

def test_inplace_on_view_saved_result_double_backward():
    """The result an in-place op on a view saves unpacks with the view's grad_fn: a double
    backward goes through the base's CopySlices once (torch's is_inplace_on_view)."""
    def program(T):
        x = T.tensor([[[[1.0, 3.0, -2.0]]]], requires_grad=True)
        y = x * 2
        y.view(-1).relu_()
        (g,) = T.autograd.grad(y.pow(2), [x], grad_outputs=T.ones_like(y), create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), [x])
        return g.detach(), gg  # (the nodes of a create_graph backward have their own names)

    ok(program)


def _top_nodes(fn, depth):
    """The grad_fn graph below ``fn`` down to ``depth`` levels (a create_graph gradient's
    formula nodes beneath those are one node per formula here, torch's chain of ops there)."""
    if fn is None or depth == 0:
        return None if fn is None else type(fn).__name__
    return (type(fn).__name__, [_top_nodes(n, depth - 1) for n, _ in fn.next_functions])


def test_copy_slices_create_graph_gradient_graph():
    """Under create_graph, CopySlices runs torch's ops, recorded: the gradient copied into a new
    tensor, the view's slice of it cloned for the in-place op's node, whose result is copied
    back (so the base's gradient is a CopySlices at version 2, the slice's a CloneBackward0)."""
    def program(T):
        w = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
        z = T.zeros(5, dtype=T.float64)
        z.narrow(0, 1, 3).copy_(w)
        (gw,) = T.autograd.grad((z**3).sum(), w, create_graph=True)
        x = T.tensor([1.0, -2.0, 0.5, 3.0, 1.5], dtype=T.float64, requires_grad=True)
        y = x * 1
        y[1:4].mul_(x[:3])
        (gx,) = T.autograd.grad((y**3).sum(), x, create_graph=True)
        b = x.clone()
        b[::2].sin_()
        (gb,) = T.autograd.grad(b.pow(2).sum(), x, create_graph=True)
        again = [T.autograd.grad(g.pow(2).sum(), leaf) for g, leaf in ((gw, w), (gx, x), (gb, x))]
        # (down to the in-place op's own formula node, whose inputs come in another order)
        return [(val(g), g._version, _top_nodes(g.grad_fn, depth))
                for g, depth in ((gw, 3), (gx, 0), (gb, 1))], again

    ok(program)


def test_inplace_on_view_saved_result_modified_again():
    def program(T):
        x = T.tensor([1.0, -3.0, 2.0], requires_grad=True)
        y = x * 2
        v = y[:2]
        v.exp_()
        graph = next_functions(y.grad_fn)
        v.mul_(2)
        return graph, attempt(lambda: y.sum().backward())

    ok(program)


def test_retain_grad_over_inplace_on_view():
    def program(T):
        base = T.tensor([1.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2).sum().backward()
        return view.grad, view2.grad

    ok(program)


def test_view_requires_grad_when_its_base_does():
    def program(T):
        a = T.randn(2, 3)
        b = a[:]
        a.requires_grad = True
        seen = [b.requires_grad, b.is_leaf, attempt(lambda: a.add_(5)),
                attempt(lambda: b.add_(5))]
        w = T.ones(3, requires_grad=True)
        c = T.zeros(3)
        d, e = c[:1], c[1:2]
        c.add_(w)
        seen += [d.requires_grad, attempt(lambda: d.mul_(2))]  # (its grad_fn field is empty)
        seen.append(e.is_leaf)  # reading it gives the view its grad_fn: then it may change
        e.mul_(3)
        c.sum().backward()
        return seen, val(w.grad), val(e)

    ok(program)


def test_view_made_requires_grad_itself():
    def program(T):
        x = T.zeros(3)
        v = x[:2]
        v.requires_grad_()
        return v.requires_grad, v.is_leaf, attempt(lambda: v.add_(1))

    ok(program)


# --- .data, attribute deletion, version counters ----------------------------------------------------

def test_attribute_deletion_and_data_assignment():
    def program(T):
        x = T.randn(5, 5, requires_grad=True)
        del x.grad
        seen = [x.grad]
        for name in ("data", "requires_grad", "_grad_fn", "_backward_hooks"):
            seen.append(attempt(lambda name=name: delattr(x, name)))
        a = T.tensor(1.0, requires_grad=True)
        a.data = T.tensor(2.0)
        seen += [attempt(lambda: setattr(x, "data", None)), val(a),
                 attempt(lambda: setattr(a, "data", T.tensor(3)))]
        return seen

    ok(program)


def _preserve_version_counter(T):
    if T.__name__ == "torch":
        return T.autograd._unsafe_preserve_version_counter
    from jaxgrad.autograd import grad_mode
    return grad_mode._unsafe_preserve_version_counter


def test_unsafe_preserve_version_counter():
    def program(T):
        preserve = _preserve_version_counter(T)
        x = T.ones(2, requires_grad=True).clone()
        x.add_(1)
        x.add_(2)
        seen = [x._version]
        with preserve(x):
            x.mul_(2)
            x.mul_(3)
        seen.append(x._version)
        y = T.ones(2, requires_grad=True).clone()
        with preserve((x, y)):
            x.mul_(2)
            y.mul_(3)
        seen += [x._version, y._version, attempt(lambda: preserve([x]))]
        with T.inference_mode():
            z = T.ones(1)
        seen.append(attempt(lambda: preserve(z)))
        return seen, x

    ok(program)


# --- no_grad views modified in place, detach_ of a saved input ------------------------------------

def test_repr_of_a_no_grad_view_modified_in_place_and_volatile():
    def program(T):
        a = T.ones(1, requires_grad=True)
        with T.no_grad():
            b = a[:]
            b *= 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            volatile = a.volatile
        return repr(b), repr(a), volatile, [str(w.message) for w in caught]

    ok(program)


def test_saved_original_detached_in_place_raises_on_every_backward_path():
    def program(T):
        a = T.tensor(1.0, requires_grad=True).clone()
        b = a.sin()  # saves its input, the original tensor
        a.detach_()
        raised = attempt(lambda: b.backward())
        c = T.tensor(1.0, requires_grad=True).clone()
        d = c.exp()  # saves its output: detaching the input is fine
        c.detach_()
        d.backward()
        return raised, d.grad_fn is not None

    ok(program)
