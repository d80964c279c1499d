"""``__torch_dispatch__`` wrapper subclasses against torch: a tensor made with
``Tensor._make_wrapper_subclass`` that holds another tensor and computes every op on it. Values,
types, autograd (records above the subclass; backward ops dispatch to it too), in-place ops,
views, factories, values read back, and autograd.functional over such tensors."""

from __future__ import annotations

import importlib

import pytest

import jaxgrad
from differential import ok, raises


def wrapper_class(T):
    """torch's LoggingTensor pattern, written once for either library (``calls`` logs ops)."""
    tree_map = importlib.import_module(f"{T.__name__}.utils._pytree").tree_map

    class Wrapper(T.Tensor):
        calls: list = []

        @staticmethod
        def __new__(cls, elem, *args, **kwargs):
            r = T.Tensor._make_wrapper_subclass(
                cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
                dtype=elem.dtype, layout=elem.layout, device=elem.device,
                requires_grad=kwargs.get("requires_grad", False))
            r.elem = elem.detach() if r.requires_grad else elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, cls) else e

            def wrap(e):
                return cls(e) if isinstance(e, T.Tensor) else e

            cls.calls.append(func)
            return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))

    return Wrapper


def show(x):
    """A wrapper as (class name, its values, requires_grad, grad_fn name); others as they are."""
    if hasattr(x, "elem"):
        fn = x.grad_fn
        return (type(x).__name__, x.elem.detach(), x.requires_grad,
                None if fn is None else type(fn).__name__)
    if isinstance(x, (list, tuple)):
        return type(x)(show(v) for v in x)
    return x


def leaf(T, W, values=(0.5, -1.0, 2.0), requires_grad=True):
    return W(T.tensor(list(values), dtype=T.float64), requires_grad=requires_grad)


def _backward(T, W, f):
    x = leaf(T, W)
    f(x).backward()
    return show(x.grad)


PROGRAMS = {
    "forward": lambda T, W: show((leaf(T, W) * 2).sin().sum()),
    "scalar_operands": lambda T, W: show([3 * leaf(T, W), leaf(T, W) + 1, 2 ** leaf(T, W)]),
    "backward": lambda T, W: _backward(T, W, lambda x: (x * x).sin().sum()),
    "backward_two_paths": lambda T, W: _backward(T, W, lambda x: (x.exp() + x * 3).sum()),
    "views": lambda T, W: _backward(T, W, lambda x: x.view(3, 1).t().narrow(1, 0, 2).sum()),
    "reductions": lambda T, W: _backward(T, W, lambda x: x.mean() + x.max() * x.std()),
    "cat": lambda T, W: _backward(T, W, lambda x: T.cat([x, x * 2]).prod()),
    "inplace": lambda T, W: (lambda x: (lambda y: (show(y.mul_(2).add_(1)), y._version,
                                                    show(y.grad_fn)))(x * 1))(leaf(T, W)),
    "inplace_backward": lambda T, W: _backward(T, W, lambda x: (x * 1).mul_(x).sum()),
    "factories": lambda T, W: show([T.zeros_like(leaf(T, W)), T.ones_like(leaf(T, W)),
                                    leaf(T, W).new_zeros(2),
                                    T.zeros_like(leaf(T, W), requires_grad=True)]),
    "detach": lambda T, W: show(leaf(T, W).detach()),
    "values_back": lambda T, W: (leaf(T, W).sum().item(), bool(leaf(T, W).sum() > 0),
                                 float(leaf(T, W)[0])),
    "tolist_refused": lambda T, W: leaf(T, W).tolist(),
    "repr": lambda T, W: [T.Tensor.__repr__(t, tensor_contents="<held>") for t in (
        leaf(T, W), leaf(T, W) * 2, leaf(T, W, requires_grad=False),
        W(T.ones(2), requires_grad=True))],
    "grad_create_graph": lambda T, W: (lambda x: show(T.autograd.grad(
        T.autograd.grad((x ** 3).sum(), x, create_graph=True)[0].sum(), x)))(leaf(T, W)),
    "functional_vjp": lambda T, W: show(T.autograd.functional.vjp(
        lambda a: a.exp() * 2, leaf(T, W, requires_grad=False),
        W(T.ones(3, dtype=T.float64)))),
    "functional_hvp": lambda T, W: show(T.autograd.functional.hvp(
        lambda a: (a ** 3).sum(), leaf(T, W, requires_grad=False),
        W(T.ones(3, dtype=T.float64)))),
    "functional_jacobian": lambda T, W: show(T.autograd.functional.jacobian(
        lambda a: a.sin(), leaf(T, W, requires_grad=False))),
    "leaf_inplace_refused": lambda T, W: leaf(T, W).add_(1),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_wrapper_subclass_matches_torch(name):
    program = (lambda T: PROGRAMS[name](T, wrapper_class(T)))
    if name.endswith("refused"):
        raises(program)
    else:
        ok(program)


def test_every_op_reaches_the_subclass():
    """Forward and backward ops both reach ``__torch_dispatch__`` (their names are jaxgrad's
    rows, not torch's aten overloads)."""
    W = wrapper_class(jaxgrad)
    x = leaf(jaxgrad, W)
    W.calls.clear()
    y = (x * 2).sin().sum()
    forward = len(W.calls)
    y.backward()
    assert forward == 3 and len(W.calls) > forward
    assert all(callable(f) and f.__module__ == "torch._ops.aten" for f in W.calls)


def test_plain_tensors_are_untouched_once_a_subclass_exists():
    wrapper_class(jaxgrad)
    x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert type(x.grad) is jaxgrad.Tensor and x.grad.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("route", ["vmap", "grad", "make_dual"])
def test_routes_on_jax_arrays_refuse_a_subclass(route):
    """jaxgrad.func transforms and forward-mode AD compute on JAX arrays, which a wrapper
    subclass does not hold: they refuse it (torch runs them on it) rather than give no tangent
    or a JAX type error."""
    W = wrapper_class(jaxgrad)
    x = W(jaxgrad.tensor([1.0, 2.0]))
    fw = jaxgrad.autograd.forward_ad
    run = {"vmap": lambda: jaxgrad.func.vmap(jaxgrad.sin)(x),
           "grad": lambda: jaxgrad.func.grad(lambda t: t.sin().sum())(x),
           "make_dual": lambda: fw.make_dual(x, x)}[route]
    with fw.dual_level(), pytest.raises(NotImplementedError, match="__torch_dispatch__ subclass"):
        run()
