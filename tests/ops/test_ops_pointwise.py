"""addcmul, addcdiv, lerp and square (the pointwise ops torch's optimizers are written in)
against torch: values, grad_fn, gradients of every input, in-place versions and second order;
torch's dtype and Scalar-kind refusals of add/sub's alpha, addcdiv and lerp on every form."""

from __future__ import annotations

import numpy as np
import pytest

from differential import attempt, leaf, ok, raises, same, val

A, B, C = [0.5, -1.5, 2.0], [1.25, 0.75, -3.0], [2.0, -0.5, 4.0]


def grads_of(T, out, inputs):
    grads = T.autograd.grad(out.square().sum(), inputs, create_graph=True, allow_unused=True)
    grads = [T.zeros(3, dtype=T.float64) if g is None else g for g in grads]
    second = T.autograd.grad(sum(g.sum() for g in grads), inputs, allow_unused=True)
    # create_graph gradients: values only (their grad_fn is jaxgrad's generic double-backward node)
    # (and the engine's accumulation buffers' versions are tested elsewhere)
    return out, [g.detach() for g in grads], [None if g is None else g.clone() for g in second]


OPS = {
    "addcmul": lambda T, a, b, c: T.addcmul(a, b, c, value=0.3),
    "addcmul_method": lambda T, a, b, c: a.addcmul(b, c),
    "addcdiv": lambda T, a, b, c: T.addcdiv(a, b, c, value=-2),
    "addcdiv_method": lambda T, a, b, c: a.addcdiv(b, c),
    "lerp_scalar_low": lambda T, a, b, c: T.lerp(a, b, 0.1),
    "lerp_scalar_high": lambda T, a, b, c: a.lerp(b, 0.9),
    "lerp_tensor": lambda T, a, b, c: T.lerp(a, b, c / 5),
    "square": lambda T, a, b, c: T.square(a) + b.square() * c,
}


@pytest.mark.parametrize("name", OPS)
def test_pointwise_op_values_and_gradients(name):
    def program(T):
        a, b, c = leaf(T, A), leaf(T, B), leaf(T, C)
        return grads_of(T, OPS[name](T, a, b, c), (a, b, c))

    ok(program)


@pytest.mark.parametrize("name", OPS)
def test_pointwise_op_float32(name):
    def program(T):
        a, b, c = (T.tensor(v, requires_grad=True) for v in (A, B, C))
        out = OPS[name](T, a, b, c)
        return out, T.autograd.grad(out.sum(), (a, b, c), allow_unused=True)

    ok(program)


INPLACE = {
    "addcmul_": lambda a, b, c: a.addcmul_(b, c, value=-1),
    "addcdiv_": lambda a, b, c: a.addcdiv_(b, c, value=0.5),
    "lerp_scalar_": lambda a, b, c: a.lerp_(b, 0.7),
    "lerp_tensor_": lambda a, b, c: a.lerp_(b, c),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_pointwise_ops(name):
    def program(T):
        a0, b, c = leaf(T, A), leaf(T, B), leaf(T, C)
        a = a0 * 1
        out = INPLACE[name](a, b, c)
        return out is a, a, a._version, T.autograd.grad(a.sum(), (a0, b, c), allow_unused=True)

    ok(program)


def test_inplace_pointwise_op_on_a_leaf_requiring_grad_raises():
    raises(lambda T: leaf(T, A).addcmul_(leaf(T, B), leaf(T, C)))


def test_inplace_pointwise_op_broadcast_error():
    raises(lambda T: leaf(T, A).detach().lerp_(T.ones(2, 3, dtype=T.float64), 0.5))


SCALAR_ARGUMENTS = {
    "add_alpha": lambda T, a, b: T.add(a, b, alpha=0.25),
    "sub_alpha": lambda T, a, b: a.sub(b, alpha=-3),
    "rsub": lambda T, a, b: T.rsub(a, 2.5, alpha=0.5),
    "addcmul_tensor_value": lambda T, a, b: T.addcmul(a, a, b, value=T.tensor(0.5)),
    "addcdiv": lambda T, a, b: T.addcdiv(a, b, a.exp(), value=1.5),
    "add_tensor_alpha": lambda T, a, b: T.add(a, b, alpha=T.tensor(2.0)),
    "lerp": lambda T, a, b: T.lerp(a, b, 0.75),
}


@pytest.mark.parametrize("name", SCALAR_ARGUMENTS)
def test_scalar_arguments_saved_and_differentiated(name):
    """Scalar factors (alpha, value, weight) are traced kernel arguments: values, gradients and
    ``grad_fn._saved_<name>`` as torch's (a 0-d tensor counts as its value)."""

    def program(T):
        a, b = leaf(T, A), leaf(T, B)
        out = SCALAR_ARGUMENTS[name](T, a, b)
        fn = out.grad_fn
        saved = {k: getattr(fn, "_saved_" + k) for k in ("alpha", "value", "weight")
                 if hasattr(fn, "_saved_" + k)}
        out.sum().backward()
        return out, val(a.grad), val(b.grad), saved  # .grad versions: test_grad_versions.py

    ok(program)


def test_new_scalar_values_reuse_the_compiled_kernels():
    """A scheduled learning rate in ``p.add_(g, alpha=-lr)`` must not compile a kernel per step."""
    import jaxgrad
    from jaxgrad._ops._table import jitted_forward

    p, g = jaxgrad.ones(3), jaxgrad.full((3,), 0.5)
    p.add_(g, alpha=-0.1)
    p.lerp_(g, 0.1)
    p.addcmul_(g, g, value=0.1)
    before = jitted_forward.cache_info().misses
    for lr in (0.2, 0.3, 0.4):
        p.add_(g, alpha=-lr)
        p.lerp_(g, lr)
        p.addcmul_(g, g, value=lr)
    assert jitted_forward.cache_info().misses == before


def _i(T):
    return T.tensor([3, 4])


def _f(T):
    return T.tensor([1.5, 2.5])


# torch's checks of dtypes and Scalar kinds: alpha_check (on the common dtype), integer addcdiv,
# lerp's missing type promotion and its kernels' missing integral loops
REFUSALS = {
    "add_float_alpha": lambda T: _i(T).add(_i(T), alpha=0.5),
    "add_alpha_1.0": lambda T: T.add(_i(T), _i(T), alpha=1.0),
    "add_number_first": lambda T: T.add(2, _i(T), alpha=0.5),
    "add_number_other": lambda T: _i(T).add(2, alpha=0.5),
    "add_out": lambda T: T.add(_i(T), _i(T), alpha=0.5, out=_f(T)),
    "add_0d_tensor_alpha": lambda T: _i(T).add(_i(T), alpha=T.tensor(2.0)),
    "add_bool_alpha_float": lambda T: _i(T).bool().add(_i(T).bool(), alpha=0.5),
    "add_true_alpha": lambda T: _f(T).add(_f(T), alpha=True),
    "add_complex_alpha": lambda T: _f(T).add(_f(T), alpha=1j),
    "add_": lambda T: _i(T).add_(_i(T), alpha=0.5),
    "sub": lambda T: _i(T).sub(_i(T), alpha=0.5),
    "sub_": lambda T: _i(T).sub_(_i(T), alpha=0.5),
    "rsub_number": lambda T: T.rsub(_i(T), 2, alpha=0.5),
    "rsub_complex_alpha": lambda T: T.rsub(_f(T), 2, alpha=1j),
    "foreach_add": lambda T: T._foreach_add([_i(T)], [_i(T)], alpha=0.5),
    "foreach_add_": lambda T: T._foreach_add_([_i(T)], [_i(T)], alpha=1.0),
    "foreach_sub_": lambda T: T._foreach_sub_([_i(T)], [_i(T)], alpha=0.5),
    # the .Tensor overload checks its tensor is 0-d before alpha (and before broadcasting)
    "foreach_add_tensor_": lambda T: T._foreach_add_([_i(T)], _i(T), alpha=0.5),
    "foreach_add_tensor": lambda T: T._foreach_add([_i(T)], _i(T), alpha=0.5),
    "foreach_add_tensor_bool_alpha": lambda T: T._foreach_add([_i(T)], _i(T), alpha=True),
    "foreach_add_tensor_no_alpha": lambda T: T._foreach_add([_f(T)], _f(T)),
    "foreach_mul_tensor_": lambda T: T._foreach_mul_([_f(T)], _f(T)),
    "foreach_div_tensor": lambda T: T._foreach_div([_f(T)], T.tensor([2.0])),
    "foreach_add_0d_alpha": lambda T: T._foreach_add_([_i(T)], T.tensor(1), alpha=0.5),
    "foreach_add_0d_bool_alpha": lambda T: T._foreach_add([_i(T)], T.tensor(2), alpha=True),
    "foreach_add_0d_float_": lambda T: T._foreach_add_([_i(T)], T.tensor(1.0), alpha=0.5),
    "addcdiv": lambda T: _i(T).addcdiv(_i(T), _i(T)),
    "addcdiv_": lambda T: _i(T).addcdiv_(_i(T), _i(T)),
    "addcdiv_float_self": lambda T: _f(T).addcdiv(_i(T), _i(T)),
    "addcdiv_bool": lambda T: _f(T).addcdiv(_i(T).bool(), _i(T).bool()),
    "addcdiv_before_shapes": lambda T: _i(T).addcdiv(_i(T), T.ones(3, dtype=T.int64)),
    "addcdiv_out": lambda T: T.addcdiv(_i(T), _i(T), _i(T), out=_i(T)),
    "foreach_addcdiv": lambda T: T._foreach_addcdiv([_i(T)], [_i(T)], [_i(T)]),
    "foreach_addcdiv_": lambda T: T._foreach_addcdiv_([_i(T)], [_i(T)], [_i(T)], value=2),
    "lerp_scalar": lambda T: _i(T).lerp(_i(T), 0.5),
    "lerp_int_weight": lambda T: _i(T).lerp(_i(T), 1),
    "lerp_": lambda T: _i(T).lerp_(_i(T), 0.5),
    "lerp_out": lambda T: T.lerp(_i(T), _i(T), 0.5, out=_i(T)),
    "lerp_tensor": lambda T: _i(T).lerp(_i(T), _i(T)),
    "lerp_bool": lambda T: _i(T).bool().lerp(_i(T).bool(), 0.5),
    "lerp_int8": lambda T: _i(T).to(T.int8).lerp(_i(T).to(T.int8), 0.5),
    "lerp_end_dtype": lambda T: _f(T).lerp(_f(T).double(), 0.5),
    "lerp_end_int": lambda T: _i(T).lerp(_f(T), 0.5),
    "lerp_weight_dtype": lambda T: _f(T).lerp(_f(T), _i(T)),
    "lerp_shapes_before_kernel": lambda T: _i(T).lerp(T.ones(3, dtype=T.int64), 0.5),
    "foreach_lerp": lambda T: T._foreach_lerp([_i(T)], [_i(T)], 0.5),
    "foreach_lerp_": lambda T: T._foreach_lerp_([_f(T), _i(T)], [_f(T), _i(T)], 0.5),
    "foreach_lerp_tensors": lambda T: T._foreach_lerp_([_i(T)], [_i(T)], [_i(T)]),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_dtype_and_scalar_kind_refusals(name):
    raises(REFUSALS[name])


def test_alpha_and_weight_kinds_torch_accepts():
    ok(lambda T: [
        _i(T).add(_i(T), alpha=np.int64(2)), _i(T).add(_f(T), alpha=0.5),
        _i(T).add(T.tensor(1.5), alpha=0.5), _i(T).bool().add(_i(T).bool(), alpha=True),
        _f(T).to(T.complex64).add(_f(T), alpha=1j), _f(T).lerp(_f(T), T.tensor(0.5).double()),
        _f(T).half().lerp(_f(T).half(), 0.5), _i(T).addcdiv(_i(T), _f(T)),
        T._foreach_add([_f(T)], [_f(T)], alpha=1.0),
        T._foreach_add([_i(T)], T.tensor(2.0), alpha=0.5),
        T._foreach_add([_f(T)], T.tensor(2.0), alpha=2)])


@pytest.mark.parametrize("op", ["addcdiv", "addcmul", "lerp"])
@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True)])
@pytest.mark.parametrize("modified", [0, 1, 2])
def test_ternary_saves_and_version_checks(op, needs, modified):
    """What the node saves, whichever inputs require grad (torch's codegen saves an input two
    formulas read unconditionally: addcdiv's tensor2, lerp's weight), seen through an in-place
    write before backward."""
    def program(T):
        leaves = [T.tensor([1.0, 2.0], requires_grad=n) for n in needs]
        args = [x * 1 if n else T.tensor([3.0, 4.0]) + i
                for i, (x, n) in enumerate(zip(leaves, needs))]
        out = getattr(T, op)(*args)
        args[modified].mul_(2)
        return attempt(lambda: T.autograd.grad(out.sum(), [x for x in leaves if x.requires_grad]))
    same(program)
