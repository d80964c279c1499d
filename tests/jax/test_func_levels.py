"""torch.func's rules that PyTorch's test_eager_transforms.py checks, against torch: functionalize,
debug_unwrap, a Function's vmap staticmethod (its in_dims where the batch dims lie, pytree
arguments, a forward never run), an input returned as-is and saved, data-dependent shapes and
forward-mode AD under vmap, jacrev one row at a time."""

from __future__ import annotations

import itertools

import pytest

import jaxgrad
from differential import bug, ok, raises, same, torch


def data(T, *shape):
    n = 1
    for s in shape:
        n *= s
    return (T.arange(n, dtype=T.float32) * 0.37 - 1.1).sin().reshape(shape)


# --- functionalize ------------------------------------------------------------------------------

def _write_through_view(x):
    x.view(-1).add_(1)
    return x * 2


FUNCTIONALIZE = {
    "values": lambda T: T.func.functionalize(lambda x: x.view(-1).mul(2))(data(T, 2, 2)),
    "input_written_back": lambda T: (lambda x: (T.func.functionalize(_write_through_view)(x), x,
                                                x._version))(data(T, 3)),
    "returned_input_unchanged_is_itself": lambda T: (lambda x: T.func.functionalize(
        lambda a: a)(x) is x)(data(T, 2)),
    "returned_input_written": lambda T: (lambda x: (T.func.functionalize(
        lambda a: a.add_(1))(x) is x, x))(data(T, 2)),
    "autograd_through": lambda T: (lambda x: (lambda out: (out, out.grad_fn.next_functions[0][0]
                                                           .name()))(
        T.func.functionalize(lambda a: a.view(2).mul(2))(x * 1)))(
        data(T, 2).requires_grad_()),
    "write_back_is_recorded": lambda T: (lambda y: (T.func.functionalize(
        lambda a: a.add_(1))(y), y, y._version))(data(T, 2).requires_grad_() * 1),
    "grads_reach_leaf": lambda T: (lambda x: (T.func.functionalize(lambda a: (a * 3).sum())(x)
                                              .backward(), x.grad)[1])(
        data(T, 2).requires_grad_()),
    "same_output_twice": lambda T: (lambda x: (lambda o: (o, o[0] is o[1], x))(
        T.func.functionalize(lambda a: (a.add_(1), a))(x)))(data(T, 2)),
    "kwargs": lambda T: (lambda x: (T.func.functionalize(lambda *, a: a.mul_(2))(a=x), x))(
        data(T, 2)),
    "grad_of_functionalize": lambda T: T.func.grad(T.func.functionalize(
        lambda a: a.clone().mul_(a).sum()))(data(T, 3)),
    "functionalize_of_vmap": lambda T: T.func.functionalize(T.func.vmap(
        lambda a: a.clone().add_(1)))(data(T, 2, 3)),
    "bad_remove": lambda T: T.func.functionalize(lambda a: a, remove="views"),
    "old_style_function": lambda T: T.func.functionalize(old_style_sin(T).apply)(data(T, 3)),
    "new_style_function": lambda T: T.func.functionalize(new_style_sin(T).apply)(data(T, 3)),
    "function_of_inner_tensor": lambda T: T.func.functionalize(
        lambda x: x + new_style_sin(T).apply(T.ones(1)))(data(T, 3)),
    # an output view is remade on its base's final history (the write after it counts)
    "view_of_written_base": lambda T: _view_results(T, _select_then_mul),
    "view_of_argument": lambda T: (lambda x: (lambda out: (out, out._base is x, x.grad_fn))(
        T.func.functionalize(lambda a: a[0])(x)))(data(T, 2, 2).requires_grad_() * 1),
    "views_share_their_base": lambda T: (lambda x: (lambda o: (o, o[0]._base is o[1]._base))(
        T.func.functionalize(_two_views)(x)))(data(T, 2, 2).requires_grad_()),
    "views_under_no_grad": lambda T: (lambda x: _no_grad_call(T, _two_views, x))(
        data(T, 2, 2).requires_grad_()),
}

# torch remakes an output of unbind/split by that op (UnbindBackward0); jaxgrad by one as_strided,
# so its refusal names AsStrided: the CreationMeta (the refusal itself) is kept
MULTI_OUTPUT_VIEW_WRITTEN = pytest.param(
    "multi_output_view_written", marks=bug("the remade view's node is AsStridedBackward0"))
FUNCTIONALIZE["multi_output_view_written"] = lambda T: (lambda out: out.mul_(2))(
    T.func.functionalize(_unbind_then_add)(data(T, 2, 3).requires_grad_()))


def _select_then_mul(x):
    base = x.clone()
    out = base[0]
    base.mul_(x)
    return out


def _two_views(x):
    base = x.clone()
    out, flat = base[0], base.view(-1)
    base.mul_(x)
    return out, flat


def _unbind_then_add(x):
    base = x.clone()
    out = base.unbind(0)[0]
    base.add_(1)
    return out


def _view_results(T, f):
    x = data(T, 2, 2).requires_grad_()
    out = T.func.functionalize(f)(x)
    out.sum().backward()
    return out, out._base.shape, x.grad


def _no_grad_call(T, f, x):
    with T.no_grad():
        return T.func.functionalize(f)(x)


def old_style_sin(T):
    class Sin(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            return grad

    return Sin


def new_style_sin(T):
    class Sin(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad

    return Sin


@pytest.mark.parametrize("name", [n if n != "multi_output_view_written" else
                                  MULTI_OUTPUT_VIEW_WRITTEN for n in FUNCTIONALIZE])
def test_functionalize(name):
    if name in ("bad_remove", "old_style_function", "new_style_function",
                "function_of_inner_tensor", "multi_output_view_written"):
        raises(FUNCTIONALIZE[name])
    else:
        ok(FUNCTIONALIZE[name])


def test_functionalize_refuses_writing_a_leaf_that_requires_grad():
    """torch words it "a view of a leaf Variable..." (its functional wrapper is a view of the
    leaf); jaxgrad's private copy is the leaf's own alias, so the message names a leaf."""
    for T in (torch, jaxgrad):
        x = data(T, 2).requires_grad_()
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad is being used"):
            T.func.functionalize(lambda a: a.add_(1))(x)


def test_debug_unwrap_gives_back_the_input():
    for T in (torch, jaxgrad):
        seen = []

        def f(x, seen=seen, T=T):
            seen.append((T.func.debug_unwrap(x), T.func.debug_unwrap(x, recurse=False)))
            return x.sin()

        x = data(T, 2, 3)
        T.func.vmap(T.func.vmap(f))(x)
        T.func.grad(lambda y, T=T: f(y).sum())(x)
        assert seen[0][0] is x and tuple(seen[0][1].shape) == (3,)
        assert seen[1][0] is x and seen[1][1] is x
        assert T.func.debug_unwrap(x) is x


# --- a Function's vmap staticmethod -------------------------------------------------------------

def vmap_rule_function(T, record):
    class Scale(T.autograd.Function):
        @staticmethod
        def forward(x, y):
            raise AssertionError("vmap runs the vmap staticmethod, not forward")

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, x, y):
            record.append((info.batch_size, info.randomness, in_dims, tuple(x.shape),
                           [tuple(t.shape) for t in y]))
            return (x * 2, [t + 1 for t in y]), (in_dims[0], [0, None])

    return Scale


VMAP_RULES = {
    "in_dims_0": lambda T, rec: T.func.vmap(vmap_rule_function(T, rec).apply,
                                            in_dims=(0, [0, None]))(
        data(T, 4, 3), [data(T, 4, 2), data(T, 5)]),
    "in_dims_1": lambda T, rec: T.func.vmap(vmap_rule_function(T, rec).apply,
                                            in_dims=(1, [-1, None]), randomness="same")(
        data(T, 3, 4), [data(T, 2, 4), data(T, 5)]),
    "nested": lambda T, rec: T.func.vmap(T.func.vmap(vmap_rule_function(T, rec).apply,
                                                     in_dims=(1, [0, None])),
                                         in_dims=(0, [None, None]))(
        data(T, 2, 3, 4), [data(T, 4, 2), data(T, 5)]),
}


@pytest.mark.parametrize("name", list(VMAP_RULES))
def test_function_vmap_rule_sees_torch_in_dims(name):
    records = {}

    def program(T):
        records[T.__name__] = rec = []
        out = VMAP_RULES[name](T, rec)
        return out

    ok(program)
    assert records["jaxgrad"] == records["torch"]


def returns_input_function(T, save_for, save, dirty):
    class A(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            save_fn = ctx.save_for_forward if save_for == "jvp" else ctx.save_for_backward
            if dirty:
                ctx.mark_dirty(inputs[0])
            if save == "input":
                save_fn(inputs[0])
            elif save == "output":
                save_fn(output)

        @staticmethod
        def backward(ctx, grad):
            return grad

        @staticmethod
        def jvp(ctx, tangent):
            return tangent.add_(0) if dirty else tangent.view_as(tangent)

    return A


@pytest.mark.parametrize("save_for,save,dirty,route", list(itertools.product(
    ["jvp", "vjp"], ["input", "output", "neither"], [False, True], ["eager", "grad", "jvp"])))
def test_saving_an_input_returned_as_is(save_for, save, dirty, route):
    def program(T):
        A = returns_input_function(T, save_for, save, dirty)
        x = T.tensor(2.0)
        if route == "grad":
            return T.func.grad(lambda a: A.apply(a.clone()))(x)
        if route == "jvp":
            return T.func.jvp(lambda a: A.apply(a.clone()), (x,), (T.tensor(1.0),))
        return A.apply(x.clone())

    same(program)


VERSIONS = {
    "vmap": lambda T: T.func.vmap(lambda a: a.clone().add_(1).mul_(2))(data(T, 2, 3)),
    "vmap_two": lambda T: T.func.vmap(lambda a: (a * 2, a.clone().add_(1)))(data(T, 2, 3)),
    "vjp": lambda T: T.func.vjp(lambda a: a.clone().add_(1), data(T, 3))[0],
    "vjp_connected": lambda T: T.func.vjp(lambda a: a.clone().add_(1),
                                          data(T, 3).requires_grad_())[0]._version,
    "vjp_aux": lambda T: T.func.vjp(lambda a: (a * 2, a.clone().add_(1)), data(T, 3),
                                    has_aux=True)[2],
    "jvp": lambda T: T.func.jvp(lambda a: a.clone().add_(1).mul_(2), (data(T, 3),),
                                (data(T, 3),)),
    "grad_value_aux": lambda T: T.func.grad_and_value(
        lambda a: (a.clone().sum().add_(1), a.clone().add_(1)), has_aux=True)(data(T, 3))[1],
    "jacrev_aux": lambda T: T.func.jacrev(lambda a: (a.sum(), a.clone().add_(1)),
                                          has_aux=True)(data(T, 3))[1],
    "jacfwd_aux": lambda T: T.func.jacfwd(lambda a: (a.sum(), a.clone().add_(1)),
                                          has_aux=True)(data(T, 3))[1],
}


@pytest.mark.parametrize("name", list(VERSIONS))
def test_results_keep_the_versions_reached_inside(name):
    ok(VERSIONS[name])


# --- shapes that depend on values; forward AD under vmap; jacrev one row at a time --------------

DYNAMIC = {
    "nonzero": lambda T: T.func.vmap(lambda x: x.nonzero())(data(T, 2, 3)),
    "masked_select": lambda T: T.func.vmap(lambda x: x.masked_select(x > 0))(data(T, 2, 3)),
    "unique": lambda T: T.func.vmap(lambda x: x.unique())(data(T, 2, 3)),
    "unique_dim": lambda T: T.func.vmap(lambda x: x.unique(dim=0))(data(T, 2, 3)),
    "unique_consecutive": lambda T: T.func.vmap(lambda x: T.unique_consecutive(x))(
        data(T, 2, 3)),
    "bool_mask": lambda T: T.func.vmap(lambda x: x[x > 0])(data(T, 2, 3)),
    "grad_bool_mask": lambda T: T.func.grad(lambda x: x[x > 0].sum())(data(T, 5)),
    "grad_nonzero": lambda T: T.func.grad(lambda x: x[x.nonzero()[:, 0]].sum())(data(T, 5)),
    "grad_masked_select": lambda T: T.func.grad(lambda x: x.masked_select(x > 0).sum())(
        data(T, 5)),
}


@pytest.mark.parametrize("name", list(DYNAMIC))
def test_data_dependent_shapes(name):
    same(DYNAMIC[name])


def _dual_tangent(T, primal, tangent, use):
    fwAD = T.autograd.forward_ad
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        return fwAD.unpack_dual(dual.sin() * use).tangent


FORWARD_AD_IN_VMAP = {
    "batched_primal": lambda T: T.func.vmap(lambda x: _dual_tangent(T, x, T.ones(3), 1.0))(
        data(T, 2, 3)),
    "batched_tangent": lambda T: T.func.vmap(lambda x: _dual_tangent(T, T.ones(3), x, 1.0))(
        data(T, 2, 3)),
    "batched_result": lambda T: T.func.vmap(lambda x: _dual_tangent(T, T.ones(3), T.ones(3), x))(
        data(T, 2, 3)),
    "jacobian_forward_vectorized": lambda T: T.autograd.functional.jacobian(
        lambda x: x.sin().sum(), data(T, 3), strategy="forward-mode", vectorize=True),
    "jacobian_forward_inside_vmap": lambda T: T.func.vmap(
        lambda x: T.autograd.functional.jacobian(lambda y: y.sin().sum(), x,
                                                 strategy="forward-mode", vectorize=True))(
        data(T, 5, 3)),
    "jacobian_forward_of_unbatched_inside_vmap": lambda T: T.func.vmap(
        lambda x: x * T.autograd.functional.jacobian(lambda y: y.sin().sum(), T.ones(3),
                                                     strategy="forward-mode", vectorize=True))(
        data(T, 5, 3)),
}


@pytest.mark.parametrize("name", list(FORWARD_AD_IN_VMAP))
def test_forward_ad_dual_tensors_under_vmap(name):
    same(FORWARD_AD_IN_VMAP[name])


def test_gradcheck_batched_forward_grad_still_batches_dual_tensors():
    x = jaxgrad.tensor([0.3, -0.7], dtype=jaxgrad.float64, requires_grad=True)
    assert jaxgrad.autograd.gradcheck(lambda t: t.sin() * t, (x,), check_forward_ad=True,
                                      check_batched_forward_grad=True)


def dynamic_backward_function(T):
    class IdentityWithNonzero(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            grad.nonzero()
            return grad

    return IdentityWithNonzero


@pytest.mark.parametrize("chunk_size", [1, 2])
def test_jacrev_one_row_at_a_time_does_not_vmap(chunk_size):
    same(lambda T: T.func.jacrev(lambda x: dynamic_backward_function(T).apply(x),
                                 chunk_size=chunk_size)(data(T, 3)))


# --- tensors that escape a transform ------------------------------------------------------------

def _escaping(T, transform):
    kept = []

    def f(x):
        y = x.sin()
        kept.extend([y, y[1:]])
        return (y * x).sum()

    x = data(T, 3)
    if transform == "grad":
        T.func.grad(f)(x)
    elif transform == "grad_of_grad":
        T.func.grad(lambda z: T.func.grad(f)(z).sum())(x)
    elif transform == "vjp":
        T.func.vjp(f, x)
    elif transform == "jvp":
        T.func.jvp(f, (x,), (T.ones(3),))
    elif transform == "jacrev":
        T.func.jacrev(f)(x)
    elif transform == "leaf_requiring_grad":
        T.func.grad(f)(x.requires_grad_())
    y, view = kept[0], kept[1]
    return y + 1, view * 2, y.sum(), y.detach(), view.detach()


@pytest.mark.parametrize("transform", [
    "grad", "grad_of_grad", "vjp", "jvp", "jacrev",
    pytest.param("leaf_requiring_grad", marks=bug(
        "an escaped tensor is released detached; torch's ops on it still reach the outer "
        "graph (the history jaxgrad keeps is one node for the whole transform)"))])
def test_escaped_tensors_act_as_their_values(transform):
    """torch.func's dead wrappers: a tensor kept from inside a finished level acts as its value.
    (Its own flags read detached here; torch's still show the dead level's grad_fn.)"""
    ok(lambda T: _escaping(T, transform))


def test_functionalize_keeps_the_multi_output_refusal():
    for T in (torch, jaxgrad):
        out = T.func.functionalize(_unbind_then_add)(data(T, 2, 3).requires_grad_())
        with pytest.raises(RuntimeError, match="output of a function that returns multiple views"):
            out.mul_(2)
