"""A non-tensor where torch's argument parser requires a Tensor: torch's TypeError, with the
function form's position (``input`` is 1), the method form's (``self`` not counted), no position
for a keyword, Python's message for an operator; Python numbers torch accepts keep working."""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import (
    bug,
    distinct_leaf,
    next_functions,
    raises,
    run_on_distinct_leaf,
    same,
    torch,
)


def _t(T):
    return T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)


UNARY = ["abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "sign", "neg",
         "reciprocal", "square", "logical_not", "sum", "mean", "prod", "amax", "amin", "max", "min",
         "argmax", "argmin", "clone", "t", "nonzero", "flatten", "squeeze", "unbind"]
BAD = [3, 2.5, True, None, [1.0], "a", np.ones(2)]


@pytest.mark.parametrize("name, bad", [
    pytest.param(name, bad, id=f"{name}-{bad!r}", marks=[bug(
        "flatten of a 1-d numpy array returns it: flatten only fails on attribute access, and "
        "an array has ndim")] if name == "flatten" and isinstance(bad, np.ndarray) else [])
    for name in UNARY for bad in BAD])
def test_unary_function_form(name, bad):
    raises(lambda T: getattr(T, name)(bad))


@pytest.mark.parametrize("program", [
    lambda T: T.softmax(3, 0),
    lambda T: T.log_softmax([1.0], 0),
    lambda T: T.reshape(3, (1,)),
    lambda T: T.transpose(3, 0, 1),
    lambda T: T.unsqueeze(3, 0),
    lambda T: T.permute(3, (0,)),
    lambda T: T.select(3, 0, 0),
    lambda T: T.exp(input=3),
    lambda T: T.sum(input=[1.0]),
], ids=["softmax", "log_softmax", "reshape", "transpose", "unsqueeze", "permute", "select",
        "exp_keyword", "sum_keyword"])
def test_shape_ops_and_keywords(program):
    raises(program)


BINARY = ["mm", "bmm", "mv", "dot", "matmul", "maximum", "minimum", "isclose", "equal",
          "allclose"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("bad", [3, None, "a", [1.0]], ids=repr)
@pytest.mark.parametrize("form", ["first", "second", "method", "keyword"])
def test_binary_tensor_only(name, bad, form):
    def program(T):
        t = _t(T)
        if form == "first":
            return getattr(T, name)(bad, t)
        if form == "second":
            return getattr(T, name)(t, bad)
        if form == "keyword":
            param = {"mm": "mat2", "bmm": "mat2", "mv": "vec", "dot": "tensor"}.get(name, "other")
            return getattr(T, name)(t, **{param: bad})
        return getattr(t, name)(bad)

    raises(program)


@pytest.mark.parametrize("name, bad, form", [
    (name, bad, form)
    for name in ("add", "sub", "mul", "div") for bad in (None, "a", [1.0])
    for form in ("function", "method", "inplace", "operator", "reflected")
    # a str or list + or * a Tensor is Python's concatenation or repetition, not torch's
    if not (form in ("operator", "reflected") and bad is not None and name in ("add", "mul"))])
def test_arithmetic_other(name, bad, form):
    symbols = {"add": "+", "sub": "-", "mul": "*", "div": "/"}

    def program(T):
        t = _t(T).detach()
        if form == "function":
            return getattr(T, name)(t, bad)
        if form == "method":
            return getattr(t, name)(bad)
        if form == "inplace":
            return getattr(t, name + "_")(bad)
        if form == "operator":
            return eval(f"t {symbols[name]} bad")
        return eval(f"bad {symbols[name]} t")

    raises(program)


@pytest.mark.parametrize("program", [
    lambda T: _t(T) @ None,
    lambda T: None @ _t(T),
    lambda T: _t(T).addcmul(_t(T), 2),
    lambda T: T.addcmul(_t(T), _t(T), 2),
    lambda T: T.addcdiv(_t(T), 3, _t(T)),
    lambda T: T.cat([_t(T), 3]),
    lambda T: T.cat((_t(T), "a"), 1),
    lambda T: T.stack([_t(T), None]),
    lambda T: T.cat(3),
    lambda T: T.stack(3),
    lambda T: T.expand(3, 2),
    lambda T: _t(T).sum_to_size(3).exp_(),
])
def test_other_tensor_only(program):
    raises(program)


def test_inplace_operator():
    def program(T):
        t = _t(T).detach()
        t += None
        return t

    raises(program)


@pytest.mark.parametrize("program", [
    lambda T, F: F.relu([1.0]),
    lambda T, F: F.relu(3),
    lambda T, F: F.gelu(3),
    lambda T, F: F.silu(3),
    lambda T, F: F.linear(3, _t(T)),
    lambda T, F: F.linear(_t(T), 3),
    lambda T, F: F.linear(_t(T), _t(T), 3),
    lambda T, F: F.linear(input=3, weight=_t(T)),
    lambda T, F: F.bilinear(3, _t(T), T.ones(1, 2, 2)),
    lambda T, F: F.cross_entropy(3, T.tensor([0, 1])),
    lambda T, F: F.cross_entropy(_t(T), 3),
    lambda T, F: F.nll_loss(3, T.tensor([0, 1])),
    lambda T, F: F.nll_loss(_t(T), None),
    lambda T, F: F.max_pool2d(3, 2),
    lambda T, F: F.avg_pool2d([1.0], 2),
    lambda T, F: F.dropout(3),
    lambda T, F: F.layer_norm(3, (2,)),
    lambda T, F: F.pad(3, (1, 1)),
])
def test_nn_functional(program):
    raises(lambda T: program(T, T.nn.functional))


# --- Python numbers torch accepts keep working --------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda T: T.add(_t(T), 2),
    lambda T: T.add(2, _t(T)),
    lambda T: T.add(_t(T), 2, alpha=3),
    lambda T: T.sub(2, _t(T)),
    lambda T: T.sub(2.5, _t(T), alpha=3),
    lambda T: T.sub(2, 3),
    lambda T: T.add(2, 3.5),
    lambda T: T.mul(_t(T), 2.0),
    lambda T: T.mul(2.0, _t(T)),
    lambda T: T.div(2, _t(T)),
    lambda T: T.div(2, _t(T), rounding_mode="floor"),
    lambda T: T.div(2, 3),
    lambda T: _t(T) + 2,
    lambda T: 2 - _t(T),
    lambda T: 2.0 * _t(T),
    lambda T: 1 / _t(T),
    lambda T: _t(T) ** 2,
    lambda T: 2 ** _t(T),
    lambda T: T.pow(_t(T), 0.5),
    lambda T: T.pow(2, _t(T)),
    lambda T: T.where(_t(T) > 2, _t(T), 0.0),
    lambda T: T.where(_t(T) > 2, 1.0, _t(T)),
    lambda T: T.clamp(_t(T), min=0),
    lambda T: T.clamp(_t(T), max=2.5),
    lambda T: _t(T).clamp(1, 3),
    lambda T: T.eq(_t(T), 2),
    lambda T: _t(T) > 2,
    lambda T: T.lerp(_t(T), _t(T) * 2, 0.5),
    lambda T: T.addcmul(_t(T), _t(T), _t(T), value=2),
    lambda T: _t(T).detach().add_(1).mul_(2.0).sub_(1).div_(4),
    lambda T: _t(T).detach().fill_(3),
    lambda T: _t(T).detach().copy_(3),
    lambda T: T.square(_t(T)),
    lambda T: T.exp(_t(T).int()),
    lambda T: T.tensor([1, 2]) * np.int64(3),
    lambda T: T.cat([_t(T), _t(T)], 1),
    lambda T: T.stack((_t(T), _t(T))),
    lambda T: T.nn.functional.linear(_t(T), _t(T), None),
    lambda T: T.nn.functional.relu(_t(T) - 2),
])
def test_numbers_still_accepted(program):
    same(program)


def test_number_first_records_torchs_nodes():
    """A number first in ``sub``/``div`` is wrapped as a 0-d tensor (SubBackward0, DivBackward0
    saving it as ``self``); the operators ``2 - t``, ``2 / t`` are rsub's and reciprocal's."""
    def program(T):
        t = _t(T)
        outs = [T.sub(2, t), T.sub(2, t, alpha=3), T.div(2, t), T.true_divide(2.5, t),
                T.div(2, t, rounding_mode="trunc"), 2 - t, 2 / t]
        # (torch's wrapped number keeps int64; jaxgrad's 0-d tensor has the result dtype)
        saved = [outs[2].grad_fn._saved_self.item(), outs[2].grad_fn._saved_other]
        grads = [T.autograd.grad(o.sum(), t) for o in outs]
        return outs, [next_functions(o.grad_fn) for o in outs], saved, grads

    same(program)


def test_parameter_is_a_tensor():
    def program(T):
        w = T.nn.Parameter(T.ones(2, 2))
        return T.mm(w, w), w.mm(w), T.exp(w), T.cat([w, w])

    same(program)


def test_docstring_and_name_kept():
    import jaxgrad

    assert jaxgrad.addcmul.__name__ == "addcmul"
    assert ">>> jaxgrad.addcmul" in jaxgrad.addcmul.__doc__
    assert "torch's graph" in jaxgrad.nn.functional.linear.__doc__


# --- numpy's keyword names: axis=, keepdims=, x= --------------------------------------------------

IDX = [[0, 3], [2, 2], [1, 0]]

ALIASES = {
    "sum_axis": lambda T, x: x.sum(axis=1),
    "sum_axis_keepdims": lambda T, x: T.sum(x, axis=(0, 1), keepdims=True),
    "sum_x": lambda T, x: T.sum(x=x),
    "mean_keepdims": lambda T, x: x.mean(dim=0, keepdims=True),
    "max_axis": lambda T, x: T.max(x, axis=1, keepdims=True),
    "min_axis": lambda T, x: x.min(axis=0),
    "amax_axis": lambda T, x: T.amax(x, axis=1),
    "amin_keepdims": lambda T, x: x.amin(1, keepdims=True),
    "std_axis": lambda T, x: x.std(axis=1, keepdims=True),
    "var_axis": lambda T, x: T.var(x, axis=0),
    "prod_axis": lambda T, x: x.prod(axis=1, keepdims=True),
    "argmax_axis": lambda T, x: T.argmax(x, axis=1, keepdims=True),
    "argmin_axis": lambda T, x: x.argmin(axis=0),
    "all_axis": lambda T, x: T.all(x > 0, axis=1),
    "any_axis": lambda T, x: (x > 0).any(axis=0, keepdims=True),
    "cumsum_axis": lambda T, x: T.cumsum(x, axis=1),
    "softmax_axis": lambda T, x: T.softmax(x, axis=1),
    "log_softmax_axis": lambda T, x: x.log_softmax(axis=0),
    "squeeze_axis": lambda T, x: x[None].squeeze(axis=0),
    "unsqueeze_axis": lambda T, x: T.unsqueeze(x, axis=0),
    "cat_axis": lambda T, x: T.cat([x, x], axis=1),
    "stack_axis": lambda T, x: T.stack([x, x], axis=-1),
    "unbind_axis": lambda T, x: T.unbind(x, axis=1)[2],
    "chunk_axis": lambda T, x: x.chunk(2, axis=1)[1],
    "select_axis": lambda T, x: x.select(axis=1, index=2),
    "gather_axis": lambda T, x: x.gather(axis=1, index=T.tensor(IDX)),
    "index_select_axis": lambda T, x: T.index_select(x, axis=0, index=T.tensor([2])),
    "topk_axis": lambda T, x: x.topk(2, axis=0),
    "sort_axis": lambda T, x: T.sort(x, axis=0),
    "argsort_axis": lambda T, x: x.argsort(axis=0),
    "add_x2": lambda T, x: T.add(x, x2=x),
    "mul_x1": lambda T, x: T.mul(x1=x, other=x),
    "axis_and_dim": lambda T, x: x.sum(dim=1, axis=1),
    "keepdim_and_keepdims": lambda T, x: x.sum(1, keepdim=True, keepdims=True),
}


@pytest.mark.parametrize("case", list(ALIASES))
def test_numpy_keyword_names_where_torch_takes_them(case):
    same(lambda T: run_on_distinct_leaf(T, ALIASES[case]))


NO_ALIASES = {
    "norm_axis": lambda T, x: x.norm(axis=1),
    "split_axis": lambda T, x: x.split(2, axis=1),
    "softmax_keepdims": lambda T, x: x.softmax(dim=1, keepdims=True),
    "cumsum_keepdims": lambda T, x: T.cumsum(x, 1, keepdims=True),
    "transpose_axis": lambda T, x: x.transpose(axis=0),
    "flatten_axis": lambda T, x: x.flatten(axis=0),
}


@pytest.mark.parametrize("case", list(NO_ALIASES))
def test_no_numpy_keyword_names_where_torch_takes_none(case):
    """torch's Python-level functions (norm, split) and parameters not named dim/keepdim take
    no numpy names: a TypeError either way (torch's message lists its overloads)."""
    for T in (torch, jaxgrad):
        with pytest.raises(TypeError):
            NO_ALIASES[case](T, distinct_leaf(T))
