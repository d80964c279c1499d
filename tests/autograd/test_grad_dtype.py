"""Differential tests: a leaf's ``grad_dtype`` (the dtype the engine casts its gradients to,
None keeping any dtype), read when the gradient arrives; AccumulateGrad keeping the dtype of
what reaches it (a direct call, in place into an existing ``.grad``, out of place under
``create_graph``); the compiled backward keyed on ``grad_dtype``.
"""

from __future__ import annotations

import pytest

from differential import attempt, ok, val


def _double_grad_function(T):
    class DoubleGrad(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.to(T.float64)

    return DoubleGrad


def _leaf(T, grad_dtype):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    if grad_dtype != "default":
        x.grad_dtype = None if grad_dtype is None else getattr(T, grad_dtype)
    return x


GRAD_DTYPES = ["default", None, "float16", "float64", "bfloat16"]


@pytest.mark.parametrize("grad_dtype", GRAD_DTYPES)
def test_an_op_gradient_is_cast_to_the_leafs_grad_dtype(grad_dtype):
    def program(T):
        seen = []
        x = _leaf(T, grad_dtype)
        x.register_hook(lambda g: seen.append(str(g.dtype)))
        (x * 3).sum().backward()
        return val(x.grad), seen, x.grad._version

    ok(program)


@pytest.mark.parametrize("grad_dtype", GRAD_DTYPES)
def test_autograd_grad_returns_the_leafs_grad_dtype(grad_dtype):
    def program(T):
        x = _leaf(T, grad_dtype)
        return T.autograd.grad((x * 3).sum(), x)

    ok(program)


@pytest.mark.parametrize("grad_dtype", GRAD_DTYPES)
def test_the_compiled_backward_casts_to_the_grad_dtype_of_each_leaf(grad_dtype):
    def program(T):
        results = []
        for _ in range(3):  # the second and third runs hit the cached program
            x = _leaf(T, grad_dtype)
            y = T.tensor([1.0, 2.0], requires_grad=True)
            (x * y).sum().backward()
            (x * y).sum().backward()
            results.append((val(x.grad), val(y.grad), x.grad._version))
        return results

    ok(program)


@pytest.mark.parametrize("grad_dtype", ["default", "float16"])
def test_a_custom_functions_gradient_is_cast_to_the_grad_dtype(grad_dtype):
    def program(T):
        x = _leaf(T, grad_dtype)
        _double_grad_function(T).apply(x).sum().backward()
        return val(x.grad)

    ok(program)


def test_a_leaf_without_grad_dtype_keeps_a_custom_functions_float64_gradient():
    def program(T):
        x = _leaf(T, None)
        _ = x.clone()  # the leaf's AccumulateGrad exists before grad_dtype changes
        _double_grad_function(T).apply(x).sum().backward()
        return val(x.grad)

    ok(program)


def test_an_intermediate_receives_its_own_dtype_from_a_custom_function():
    def program(T):
        seen = []
        x = T.tensor([1.0, 2.0], requires_grad=True)
        z = x.exp()
        z.register_hook(lambda g: seen.append(str(g.dtype)))
        _double_grad_function(T).apply(z).sum().backward()
        return val(x.grad), seen

    ok(program)


@pytest.mark.parametrize("grad_dtype", ["default", None, "float16"])
@pytest.mark.parametrize("grad_mode", [True, False])
def test_a_direct_call_of_accumulate_grad_keeps_the_gradients_dtype(grad_dtype, grad_mode):
    def program(T):
        x = _leaf(T, grad_dtype)
        acc = (x * 2).grad_fn.next_functions[0][0]
        with T.set_grad_enabled(grad_mode):
            acc(T.ones(2, dtype=T.float64))
            first = str(x.grad.dtype)
            acc(T.ones(2, dtype=T.float64))
        return first, val(x.grad)

    ok(program)


@pytest.mark.parametrize("create_graph", [False, True])
def test_accumulating_into_a_grad_of_another_dtype(create_graph):
    def program(T):
        k = T.tensor([1.0, 2.0], requires_grad=True)
        k.grad_dtype = None
        (k * 2).sum().backward()
        k.grad = k.grad.to(T.bfloat16)
        (k * 3).sum().backward(create_graph=create_graph)  # in place keeps bfloat16
        low = T.tensor([3.0, 4.0], requires_grad=True, dtype=T.bfloat16)
        low.grad_dtype = None
        (low * 2).sum().backward()
        low.grad = low.grad.to(T.float32)
        (low * 3).sum().backward(create_graph=create_graph)
        return val(k.grad), val(low.grad)

    ok(program)


def test_grad_dtype_errors():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        non_leaf = x * 2
        out = [attempt(lambda: non_leaf.grad_dtype)]

        def set_on_non_leaf():
            non_leaf.grad_dtype = T.float16

        def assign_mismatched_grad():
            x.grad_dtype = T.float16
            x.grad = T.tensor([1.0, 1.0])

        def change_with_grad_present():
            x.grad_dtype = T.float32
            x.grad = T.tensor([1.0, 1.0])
            x.grad_dtype = T.float16

        out += [attempt(set_on_non_leaf), attempt(assign_mismatched_grad),
                attempt(change_with_grad_present), str(x.grad_dtype)]
        x.grad_dtype = None  # always allowed
        out.append(x.grad_dtype)
        return out

    ok(program)


def test_a_custom_functions_float64_gradient_is_cast_to_what_the_next_node_expects():
    """A Function's backward returning float64 for a float32 input: the engine casts it to the
    dtype the next node (or the captured input) expects; a leaf's grad_dtype decides for it."""
    def program(T):
        x = T.ones(2, requires_grad=True)
        function = _double_grad_function(T)
        y = x * 1
        direct = T.autograd.grad(function.apply(x).sum(), x)[0]
        non_leaf = T.autograd.grad(function.apply(y).sum(), y)[0]
        through = T.autograd.grad(function.apply(y.exp()).sum(), y)[0]
        function.apply(x).sum().backward()
        wide = T.ones(2, requires_grad=True)
        wide.grad_dtype = T.float64
        function.apply(wide).sum().backward()
        return direct, non_leaf, through, x.grad, wide.grad
    ok(program)


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
