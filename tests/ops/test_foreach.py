"""torch's ``_foreach_*`` ops: values, gradients, the one Foreach node out of place (its name and
next_functions), the per-tensor nodes and versions in place, and torch's errors. Every case runs
on torch and on jaxgrad (``differential.same``)."""

from __future__ import annotations

import pytest

from differential import attempt, ok, same

torch = pytest.importorskip("torch")

UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round",
         "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "clone"]


def _leaves(T, dtype=None):
    dtype = dtype or T.float64
    return [T.tensor([0.25, 0.75], dtype=dtype, requires_grad=True),
            T.tensor(0.5, dtype=dtype, requires_grad=True)]


def _others(T, dtype=None):
    dtype = dtype or T.float64
    return [T.tensor([0.5, 0.75], dtype=dtype, requires_grad=True),
            T.tensor(-1.5, dtype=dtype, requires_grad=True)]


def _observe(T, results, inputs):
    """Values, flags and node names of the results, the node's inputs, and the gradients.
    (torch's Foreach nodes have no Python class of their own, ``type(node)`` is CppFunction:
    their ``name()`` is what torch shows, so that is compared.)"""
    loss = sum(r.sum() * (i + 1) for i, r in enumerate(results))
    grads = T.autograd.grad(loss, inputs, allow_unused=True)
    node = results[0].grad_fn
    # (jaxgrad lists a None edge for a number operand where torch lists none: the edges to
    # tensors are compared; a gradient's version is the engine's business)
    return ([(r.detach(), r.requires_grad, r.is_leaf, r._version) for r in results],
            node.name(), node is results[-1].grad_fn,
            [f.name() for f, _ in node.next_functions if f is not None],
            [r.output_nr for r in results],
            [None if g is None else g.detach().clone() for g in grads])


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    def program(T):
        a = _leaves(T)
        return _observe(T, getattr(T, f"_foreach_{name}")(a), a)
    ok(program)


BINARY_CALLS = {
    "add_list": lambda T, a, b: T._foreach_add(a, b),
    "add_list_alpha": lambda T, a, b: T._foreach_add(a, b, alpha=2),
    "add_scalar": lambda T, a, b: T._foreach_add(a, 2.5),
    "add_scalar_list": lambda T, a, b: T._foreach_add(a, [2, 3.5]),
    "add_scalar_tensor": lambda T, a, b: T._foreach_add(a, T.tensor(2.0)),
    "sub_list": lambda T, a, b: T._foreach_sub(a, b, alpha=0.5),
    "sub_scalar": lambda T, a, b: T._foreach_sub(a, 1),
    "sub_scalar_list": lambda T, a, b: T._foreach_sub(a, [1, 2]),
    "mul_list": lambda T, a, b: T._foreach_mul(a, b),
    "mul_scalar": lambda T, a, b: T._foreach_mul(a, 3),
    "mul_scalar_list": lambda T, a, b: T._foreach_mul(a, [3, -1]),
    "div_list": lambda T, a, b: T._foreach_div(a, b),
    "div_scalar": lambda T, a, b: T._foreach_div(a, 4),
    "div_scalar_list": lambda T, a, b: T._foreach_div(a, [4, 0.5]),
    "maximum_list": lambda T, a, b: T._foreach_maximum(a, b),
    "maximum_scalar_tie": lambda T, a, b: T._foreach_maximum(a, 0.75),
    "maximum_scalar_list": lambda T, a, b: T._foreach_maximum(a, [0.5, 0.0]),
    "minimum_list": lambda T, a, b: T._foreach_minimum(a, b),
    "minimum_scalar": lambda T, a, b: T._foreach_minimum(a, 0.5),
    "pow_list": lambda T, a, b: T._foreach_pow(a, b),
    "pow_scalar": lambda T, a, b: T._foreach_pow(a, 2),
    "pow_scalar_list": lambda T, a, b: T._foreach_pow(a, [2, 0.5]),
    "pow_scalar_base": lambda T, a, b: T._foreach_pow(2.0, a),
    "clamp_min_list": lambda T, a, b: T._foreach_clamp_min(a, b),
    "clamp_min_scalar": lambda T, a, b: T._foreach_clamp_min(a, 0.5),
    "clamp_max_scalar_list": lambda T, a, b: T._foreach_clamp_max(a, [0.5, 0.0]),
    "lerp_list": lambda T, a, b: T._foreach_lerp(a, b, b),
    "lerp_scalar": lambda T, a, b: T._foreach_lerp(a, b, 0.25),
    "lerp_scalar_list": lambda T, a, b: T._foreach_lerp(a, b, [0.25, 2.0]),
    "addcmul_scalar": lambda T, a, b: T._foreach_addcmul(a, b, b, value=2),
    "addcmul_scalar_list": lambda T, a, b: T._foreach_addcmul(a, b, a, [2, 3]),
}


@pytest.mark.parametrize("case", sorted(BINARY_CALLS))
def test_binary_and_ternary(case):
    def program(T):
        a, b = _leaves(T), _others(T)
        return _observe(T, BINARY_CALLS[case](T, a, b), a + b)
    ok(program)


def test_float32_lists_compute_in_float32_and_mixed_dtypes_per_pair():
    ok(lambda T: [[r.detach() for r in T._foreach_add(_leaves(T, T.float32), 0.1)],
                  T._foreach_mul([T.ones(2, dtype=T.float64), T.arange(3)], 0.1),
                  T._foreach_exp([T.arange(3), T.ones(1, dtype=T.float64)])])


INPLACE_CALLS = {
    "exp_": lambda T, c, b: T._foreach_exp_(c),
    "sqrt_": lambda T, c, b: T._foreach_sqrt_(c),
    "add_scalar_": lambda T, c, b: T._foreach_add_(c, 2),
    "add_list_alpha_": lambda T, c, b: T._foreach_add_(c, b, alpha=2),
    "sub_scalar_list_": lambda T, c, b: T._foreach_sub_(c, [1, 2]),
    "mul_list_": lambda T, c, b: T._foreach_mul_(c, b),
    "mul_scalar_list_": lambda T, c, b: T._foreach_mul_(c, [2, 3]),
    "div_scalar_": lambda T, c, b: T._foreach_div_(c, 2),
    "maximum_list_": lambda T, c, b: T._foreach_maximum_(c, b),
    "pow_scalar_": lambda T, c, b: T._foreach_pow_(c, 2),
    "pow_list_": lambda T, c, b: T._foreach_pow_(c, b),
    "clamp_min_list_": lambda T, c, b: T._foreach_clamp_min_(c, b),
    "clamp_min_scalar_list_": lambda T, c, b: T._foreach_clamp_min_(c, [0.5, 0]),
    "lerp_": lambda T, c, b: T._foreach_lerp_(c, b, 0.25),
    "addcmul_": lambda T, c, b: T._foreach_addcmul_(c, b, b, [2, 3]),
    "zero_": lambda T, c, b: T._foreach_zero_(c),
}


@pytest.mark.parametrize("case", sorted(INPLACE_CALLS))
def test_inplace_runs_the_per_tensor_inplace_op(case):
    def program(T):
        a, b = _leaves(T), _others(T)
        c = [x.clone() for x in a]
        returned = INPLACE_CALLS[case](T, c, b)
        grads = T.autograd.grad(sum(x.sum() for x in c), a + b, allow_unused=True)
        return returned is c, c, [x._version for x in c], [
            None if g is None else g.detach().clone() for g in grads]
    ok(program)


def test_inplace_maximum_with_a_number_records_not_implemented():
    def program(T):
        c = [x.clone() for x in _leaves(T)]
        T._foreach_maximum_(c, 0.5)
        return c, attempt(lambda: c[0].sum().backward())
    ok(program)


def test_results_save_what_the_per_tensor_op_saves():
    def program(T):
        a = _leaves(T)
        b = T._foreach_exp(a)  # saves its results: modifying one breaks the backward
        T._foreach_add_(b, 1)
        return b, attempt(lambda: (b[0].sum() + b[1]).backward())
    ok(program)


def test_allow_mutation_on_saved_tensors():
    def program(T):
        with T.autograd.graph.allow_mutation_on_saved_tensors():
            a = [T.tensor(1.0, requires_grad=True), T.tensor(1.0, requires_grad=True)]
            b = T._foreach_exp(a)
            T._foreach_add_(b, 1)
            (b[0] + b[1]).backward()
        return [a[0].grad, a[1].grad], [r.detach() for r in T._foreach_exp(a)]
    ok(program)


@pytest.mark.parametrize("call", [
    lambda T, a, b: T._foreach_add(a, b[:1]),
    lambda T, a, b: T._foreach_exp([]),
    lambda T, a, b: T._foreach_add(a, [1]),
    lambda T, a, b: T._foreach_add_(a, 1),
    lambda T, a, b: T._foreach_exp(a[0]),
    lambda T, a, b: T._foreach_mul(a, [T.ones(3), T.ones(1)]),
    lambda T, a, b: T._foreach_lerp(a, b[:1], 0.5),
    lambda T, a, b: T._foreach_addcmul(a, b, b, [1]),
    lambda T, a, b: T._foreach_copy_([x.clone() for x in a], b[:1]),
])
def test_errors(call):
    same(lambda T: attempt(lambda: call(T, _leaves(T), _others(T))))


def test_addcdiv_forward():
    # (torch's backward of _foreach_addcdiv fails on 0-d tensors with its own error)
    ok(lambda T: [(r.detach(), r.requires_grad) for r in T._foreach_addcdiv(
        _leaves(T), _others(T), _leaves(T), [0.5, 2])])


@pytest.mark.parametrize("name", ["add", "mul", "div"])
def test_one_tensor_operand(name):
    # (torch's backward of these overloads fails with its own error; the forward is compared)
    def program(T):
        a, b = _leaves(T), _others(T)
        results = getattr(T, f"_foreach_{name}")(a, b[1])
        return [(r.detach(), r.requires_grad) for r in results], results[0].grad_fn.name()
    ok(program)


@pytest.mark.parametrize("ord", [2, 1, 3, 0, -1, float("inf")])
def test_norm_is_one_node(ord):
    def program(T):
        a = _leaves(T) + [T.tensor([[1.0, 2.0], [0.0, -2.0]], dtype=T.float64,
                                   requires_grad=True)]
        return _observe(T, T._foreach_norm(a, ord), a)
    ok(program)


def test_max_is_one_node_sharing_ties():
    def program(T):
        a = [T.tensor([3.0, 3.0, 1.0], requires_grad=True), T.tensor(2.0, requires_grad=True)]
        return _observe(T, T._foreach_max(a), a)
    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T._foreach_max([T.zeros(0)]),
    lambda T: T._foreach_max([T.tensor([1, 5])]),
    lambda T: T._foreach_norm([T.tensor([1, 2])]),
    lambda T: T._foreach_norm([T.zeros(0)], float("inf")),
    lambda T: T._foreach_norm([T.zeros(0)], -1),
    lambda T: T._foreach_norm([T.zeros(0)]),
    lambda T: T._foreach_norm(_leaves(T, T.float32), dtype=T.float64),
])
def test_norm_dtypes_and_refusals(call):
    same(lambda T: attempt(lambda: call(T)))


@pytest.mark.parametrize("call", [
    lambda T: T._foreach_add([T.tensor([1, 2]), T.tensor([3])], 1.5),
    lambda T: T._foreach_add_([T.tensor([1, 2]), T.tensor([3])], 1.5),
    lambda T: T._foreach_div([T.tensor([1, 2])], [T.tensor([3, 4])]),
    lambda T: T._foreach_exp([T.tensor([1, 2])]),
    lambda T: T._foreach_mul([T.tensor([1, 2])], [T.tensor([0.5], dtype=T.float64)]),
    lambda T: T._foreach_maximum([T.tensor([1, 2])], 1.5),
    lambda T: T._foreach_neg([T.tensor([True])]),
    lambda T: T._foreach_sub([T.tensor([True])], [T.tensor([True])]),
    lambda T: T._foreach_sub([T.tensor([True])], 1),
    lambda T: T._foreach_pow([T.tensor([2])], -1),
    lambda T: T._foreach_exp_(tuple(x.clone() for x in _leaves(T))),
])
def test_dtypes_and_per_tensor_refusals(call):
    same(lambda T: attempt(lambda: call(T)))


def test_copy_records_not_implemented():
    def program(T):
        a = _leaves(T)
        c = [x.clone() for x in a]
        returned = T._foreach_copy_(c, [T.tensor([5.0, 6.0]), T.tensor(7)])
        d = [T.zeros(2), T.zeros(())]
        T._foreach_copy_(d, [x.clone() for x in a])
        return (returned is c, c, [x._version for x in c], d,
                attempt(lambda: c[0].sum().backward()), attempt(lambda: d[1].backward()))
    ok(program)


def test_copy_zero_norm_values():
    def program(T):
        c = [T.zeros(2), T.zeros(())]
        T._foreach_copy_(c, [T.tensor([1.0, 2.0]), T.tensor(3.0)])
        z = [T.ones(2)]
        T._foreach_zero_(z)
        norms = T._foreach_norm([T.tensor([3.0, 4.0]), T.tensor(-2.0)])
        return c, [x._version for x in c], z, [n.detach() for n in norms]
    ok(program)
