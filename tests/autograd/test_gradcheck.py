"""Differential tests of gradcheck / gradgradcheck against torch.autograd.gradcheck.

Wrong backwards are made with plain ops: ``.detach()`` inside a composite, or tensor hooks that
rescale, replace or freeze the gradient flowing through an intermediate.
"""

from __future__ import annotations

import importlib
import itertools
import warnings

import pytest

import jaxgrad
from differential import Raised, attempt, bug, captured_warnings, leaf, ok, raises, run, same, torch


def seed_function(x, y):
    return 3 * x + 2 * y + x.exp() + y.exp()


def detached_square(x):
    return x * x.detach()  # d/dx is x, not 2x


def with_hook(hook):
    """A function whose backward passes its gradient through ``hook`` at an intermediate
    (gradcheck's undefined-gradient check sends None through it: left alone)."""
    def f(x):
        h = x * 1.0
        h.register_hook(lambda g: None if g is None else hook(g))
        return (h * h).sum()
    return f


def ignores_grad_output(x):
    """sum(x^2) whose gradient arriving at the output is replaced by ones: right for the unit
    grad_output of a scalar, wrong for any other."""
    y = (x * x).sum()
    y.register_hook(lambda g: None if g is None else g * 0 + 1)
    return y


def leading_line(result):
    assert isinstance(result, Raised), result
    return result.cls, result.message.splitlines()[0]


def gradcheck_of(func, inputs, **kw):
    return lambda T: attempt(lambda: T.autograd.gradcheck(func, inputs(T), **kw))


def gradgradcheck_of(func, inputs, **kw):
    return lambda T: attempt(lambda: T.autograd.gradgradcheck(func, inputs(T), **kw))


def two_leaves(T):
    return leaf(T, [0.5, -1.0, 2.0]), leaf(T, [1.5, 0.25, -0.75])


# --- passing checks ------------------------------------------------------------------------


@pytest.mark.parametrize("fast_mode", [False, True])
def test_seed_example_passes(fast_mode):
    ta, jb = ok(gradcheck_of(seed_function, two_leaves, fast_mode=fast_mode))
    assert ta is True and jb is True


@pytest.mark.parametrize("func", [
    lambda x, w: (x @ w).tanh(),
    lambda x, w: ((x @ w).sigmoid(), (x * x).sum(dim=1)),
    lambda x, w: (x.unsqueeze(-1) * w).sum(),
    lambda x, w: x.t() @ x.relu() + w.sum(),
], ids=["matmul_tanh", "two_outputs", "broadcast_sum", "transpose_relu"])
def test_compositions_pass(func):
    def inputs(T):
        return (leaf(T, [[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]),
                leaf(T, [[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]]))

    ta, jb = ok(gradcheck_of(func, inputs))
    assert ta is True and jb is True


def test_scalar_and_empty_inputs():
    ok(gradcheck_of(lambda s, e, x: (s * x).exp() + e.sum(),
                    lambda T: (leaf(T, 0.5), T.zeros(0, dtype=T.float64, requires_grad=True),
                               leaf(T, [1.0, 2.0]))))


def test_non_tensor_and_constant_inputs():
    ok(gradcheck_of(lambda x, k, c: (x * k + c).sin(),
                    lambda T: (leaf(T, [0.5, 1.0]), 2.5, T.tensor([1.0, 3.0], dtype=T.float64))))


def test_identity_returns_the_perturbed_input():
    ok(gradcheck_of(lambda x: x, lambda T: (leaf(T, [1.0, 2.0]),)))


def test_single_tensor_inputs_and_list_outputs():
    ok(gradcheck_of(lambda x: [x.exp(), x * 2], lambda T: leaf(T, [1.0, 2.0])))


def test_inputs_that_do_not_require_grad_are_skipped():
    ok(gradcheck_of(lambda x, y: x * y, lambda T: (leaf(T, [1.0, 2.0]),
                                                   T.tensor([3.0, 4.0], dtype=T.float64))))


def test_unused_input_has_zero_jacobian():
    ok(gradcheck_of(lambda x, y: x.exp(), two_leaves))


def test_integer_output_is_ignored():
    ok(gradcheck_of(lambda x: (x.exp(), x.argmax()), lambda T: (leaf(T, [1.0, 3.0, 2.0]),)))


def test_constant_function_passes():
    ok(gradcheck_of(lambda x: x.detach() * 0, lambda T: (leaf(T, [1.0, 2.0]),)))


def test_function_closing_over_its_input_sees_the_perturbation():
    def program(T):
        x = leaf(T, [0.5, 1.5])
        return T.autograd.gradcheck(lambda _: (x * x).sum(), (x,))

    ok(program)


# --- failing checks ------------------------------------------------------------------------


def test_detach_inside_composite_fails_with_torchs_message():
    ta, jb = raises(gradcheck_of(detached_square, lambda T: (leaf(T, [1.0, 2.0]),)))
    assert leading_line(ta) == leading_line(jb) == (
        "GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")


def test_raise_exception_false_returns_false():
    ta, jb = ok(gradcheck_of(detached_square, lambda T: (leaf(T, [1.0, 2.0]),),
                             raise_exception=False))
    assert ta is False and jb is False


def test_gradcheck_error_is_a_runtime_error():
    def program(T):
        module = importlib.import_module(f"{T.__name__}.autograd.gradcheck")
        try:
            T.autograd.gradcheck(detached_square, (leaf(T, [1.0]),))
        except module.GradcheckError as e:
            return (type(e).__name__, isinstance(e, RuntimeError),
                    issubclass(module.GradcheckError, RuntimeError),
                    callable(T.autograd.gradcheck), module.gradcheck is T.autograd.gradcheck,
                    module.gradgradcheck is T.autograd.gradgradcheck,
                    # as in torch, the package attribute is the function, not the module
                    attempt(lambda: T.autograd.gradcheck.GradcheckError))
        return None

    ta, _ = ok(program)
    assert ta is not None


def test_mismatch_reports_output_and_input_index():
    def func(x, y):
        return x.exp(), x * y.detach() + y

    ta, _jb = raises(gradcheck_of(func, two_leaves))
    assert "output 1 with respect to input 1" in ta.message


def test_hook_scaling_the_gradient_is_caught():
    raises(gradcheck_of(with_hook(lambda g: g * 2), lambda T: (leaf(T, [1.0, 2.0]),)))


def test_backward_ignoring_grad_output_is_caught():
    ta, _jb = raises(gradcheck_of(ignores_grad_output, lambda T: (leaf(T, [1.5, 2.0]),)))
    assert ta.message == "backward not multiplied by grad_output"


def test_backward_ignoring_grad_output_raise_exception_false():
    ta, _ = ok(gradcheck_of(ignores_grad_output, lambda T: (leaf(T, [1.5, 2.0]),),
                            raise_exception=False))
    assert ta is False


@pytest.mark.parametrize("rtol", [1e-3, 1e-4])
def test_relative_tolerance(rtol):
    same(gradcheck_of(with_hook(lambda g: g * 1.0005), lambda T: (leaf(T, [1.0, 2.0]),),
                      rtol=rtol))


@pytest.mark.parametrize("atol", [1e-5, 1e-2])
def test_absolute_tolerance(atol):
    def func(x):
        return x * x + x.detach() * 1e-3  # an analytical gradient off by 1e-3

    same(gradcheck_of(func, lambda T: (leaf(T, [0.0, 0.0]),), atol=atol))


@pytest.mark.parametrize("eps", [1e-6, 0.5])
def test_eps_changes_the_numerical_jacobian(eps):
    same(gradcheck_of(lambda x: x ** 3, lambda T: (leaf(T, [1.0, 2.0]),), eps=eps))


@pytest.mark.parametrize("nondet_tol", [0.0, 1e-3])
def test_non_reentrant_backward(nondet_tol):
    def program(T):
        calls = itertools.count()
        func = with_hook(lambda g: g * (1 + 1e-6 * next(calls)))
        return attempt(lambda: T.autograd.gradcheck(func, (leaf(T, [1.0, 2.0]),),
                                                    nondet_tol=nondet_tol))

    same(program)


def test_non_differentiable_output_with_nonzero_numerical_gradient():
    raises(gradcheck_of(lambda x: x.detach() * 2, lambda T: (leaf(T, [1.0, 2.0]),)))


def test_output_shape_changing_under_perturbation():
    raises(gradcheck_of(lambda x: x[x > 1.0], lambda T: (leaf(T, [1.0000005, 3.0]),)))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_fast_mode_catches_wrong_gradient(fast_mode):
    ta, _jb = same(gradcheck_of(detached_square, lambda T: (leaf(T, [1.0, 2.0]),),
                               fast_mode=fast_mode, raise_exception=False))
    assert ta is False
    if fast_mode:  # the random projections differ: compare the error's leading line only
        program = gradcheck_of(detached_square, lambda T: (leaf(T, [1.0, 2.0]),),
                               fast_mode=True)
        assert leading_line(program(torch)) == leading_line(
            program(jaxgrad))


def test_fast_mode_non_differentiable_output():
    raises(gradcheck_of(lambda x: x.detach() * 2, lambda T: (leaf(T, [1.0, 2.0]),),
                        fast_mode=True))


# --- input validation ------------------------------------------------------------------------


def test_no_input_requires_grad():
    raises(gradcheck_of(lambda x: x * 2, lambda T: (T.tensor([1.0], dtype=T.float64),)))


def test_stride_zero_input():
    raises(gradcheck_of(lambda x: x * 2, lambda T: (leaf(T, [1.0]).expand(3),)))


def test_single_precision_input_warns():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        return T.autograd.gradcheck(lambda t: t * 2, (x,), raise_exception=False)

    ok(program)
    warned = captured_warnings(program, jaxgrad)
    assert warned == captured_warnings(program, torch)
    assert warned and warned[0][0] == "UserWarning"


@pytest.mark.parametrize("options", [
    dict(check_forward_ad=False, check_backward_ad=False),
    dict(check_batched_grad=True, check_backward_ad=False, check_forward_ad=True),
    dict(check_batched_forward_grad=True),
], ids=["no_mode", "batched_without_backward", "batched_forward_without_forward"])
def test_invalid_option_combinations(options):
    raises(gradcheck_of(lambda x: x * 2, lambda T: (leaf(T, [1.0]),), **options))


def test_check_undefined_grad_false_and_masked_are_accepted():
    ok(gradcheck_of(seed_function, two_leaves, check_undefined_grad=False, masked=True,
                    check_grad_dtypes=True))


# --- gradgradcheck -------------------------------------------------------------------------------


def test_gradgradcheck_passes_with_random_grad_outputs():
    def program(T):
        x, y = two_leaves(T)
        return T.autograd.gradgradcheck(lambda a, b: (a * b).sin() + a ** 3, (x, y))

    ta, jb = ok(program)
    assert ta is True and jb is True


def test_gradgradcheck_with_explicit_grad_outputs():
    def program(T):
        x, y = two_leaves(T)
        v = leaf(T, [1.0, -0.5, 0.25])
        return T.autograd.gradgradcheck(seed_function, (x, y), (v,)), x, y, v

    ok(program)


def frozen_grad_path(x):
    h = x * x
    h.register_hook(lambda g: g.detach())  # the gradient no longer depends on grad_output
    return h * 3


def test_gradgradcheck_catches_a_wrong_double_backward():
    ta, jb = raises(gradgradcheck_of(frozen_grad_path, lambda T: (leaf(T, [1.0, 2.0]),),
                                     grad_outputs=None))
    assert leading_line(ta) == leading_line(jb)


def test_gradgradcheck_message_with_explicit_grad_outputs():
    def program(T):
        v = leaf(T, [0.5, -1.0])
        return attempt(lambda: T.autograd.gradgradcheck(frozen_grad_path, (leaf(T, [1.0, 2.0]),),
                                                        v))

    ta, _ = same(program)
    assert ta.cls == "GradcheckError"


def test_gradgradcheck_raise_exception_false():
    ta, _ = ok(gradgradcheck_of(frozen_grad_path, lambda T: (leaf(T, [1.0, 2.0]),),
                                raise_exception=False))
    assert ta is False


def test_gradgradcheck_of_a_linear_function():
    ok(gradgradcheck_of(lambda x: 2 * x + 1, lambda T: (leaf(T, [1.0, 2.0]),)))


@pytest.mark.parametrize("options", [
    dict(check_rev_over_rev=False),
    dict(check_rev_over_rev=False, check_fwd_over_rev=True),
    dict(check_rev_over_rev=False, check_fwd_over_rev=True, check_undefined_grad=False,
         check_batched_grad=True),
], ids=["no_mode", "undefined_grad_without_rev", "batched_without_rev"])
def test_gradgradcheck_invalid_option_combinations(options):
    raises(gradgradcheck_of(lambda x: x * x, lambda T: (leaf(T, [1.0]),), **options))


# --- undefined output gradients ---------------------------------------------------------------


def hooked_at_output(hook, outputs=1):
    """``outputs`` copies of exp(x), the first with ``hook`` on it."""
    def f(x):
        ys = [x.exp() for _ in range(outputs)]
        ys[0].register_hook(hook)
        return tuple(ys) if outputs > 1 else ys[0]
    return f


def raise_runtime_error_on_none(g):
    if g is None:
        raise RuntimeError("no gradient")
    return g


def test_backward_failing_on_undefined_grad():
    program = gradcheck_of(hooked_at_output(raise_runtime_error_on_none),
                           lambda T: (leaf(T, [1.0, 2.0]),))
    ta, _ = raises(program)
    assert ta.cls == "GradcheckError"
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_hook_seeing_none_raises_through_gradcheck():
    ta, _ = raises(gradcheck_of(hooked_at_output(lambda g: g * 1), lambda T: (leaf(T, [1.0]),)))
    assert ta.cls == "TypeError"


def test_undefined_grad_check_can_be_disabled():
    ok(gradcheck_of(hooked_at_output(raise_runtime_error_on_none),
                    lambda T: (leaf(T, [1.0, 2.0]),), check_undefined_grad=False))


@pytest.mark.parametrize("outputs", [1, 3])
def test_backward_inventing_gradients_for_undefined_ones(outputs):
    def program(T):
        x = leaf(T, [1.0, 2.0])
        func = hooked_at_output(lambda g: T.ones(2, dtype=T.float64) if g is None else g,
                                outputs)
        return attempt(lambda: T.autograd.gradcheck(func, (x,)))

    ta, _ = raises(program)
    assert ta.cls == "GradcheckError"


def test_undefined_one_output_at_a_time():
    def program(T):
        seen = []

        def func(x):
            a, b = x.exp(), x.sin()
            a.register_hook(lambda g: seen.append(("a", g is None)))
            b.register_hook(lambda g: seen.append(("b", g is None)))
            return a, b

        return attempt(lambda: T.autograd.gradcheck(func, (leaf(T, [1.0, 2.0]),))), seen

    ok(program)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_modes_and_accepted_options(fast_mode):
    ta, jb = ok(gradgradcheck_of(seed_function, two_leaves, fast_mode=fast_mode,
                                 gen_non_contig_grad_outputs=True, check_undefined_grad=False))
    assert ta is True and jb is True


# --- batched gradients (check_batched_grad: jaxgrad.func.vmap of the vjp) -------------------------


def matmul_and_broadcast(x, w):
    return (x @ w).tanh(), (x.unsqueeze(-1) * w.sum()).sum(dim=0)


def matrix_inputs(T):
    return (leaf(T, [[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]),
            leaf(T, [[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]]))


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("func", [
    seed_function,
    lambda x, y: (x.unsqueeze(0) * y.unsqueeze(1)).softmax(dim=1),
    lambda x, y: (x.exp(), y * 2, x.argmax()),  # an integer output after the others
    lambda x, y: x[1:].sin() + y[:2].cos(),
], ids=["seed", "softmax", "integer_output", "slices"])
def test_batched_grad_passes(func, fast_mode):
    ta, jb = ok(gradcheck_of(func, two_leaves, check_batched_grad=True, fast_mode=fast_mode))
    assert ta is True and jb is True


def test_batched_grad_with_matrices_and_non_tensor_inputs():
    ok(gradcheck_of(lambda x, k, w: matmul_and_broadcast(x * k, w),
                    lambda T: (matrix_inputs(T)[0], 2.5, matrix_inputs(T)[1]),
                    check_batched_grad=True))


def test_batched_grad_of_an_unused_input_is_zero():
    ok(gradcheck_of(lambda x, y: x.exp(), two_leaves, check_batched_grad=True))


def test_batched_grad_through_a_hook():
    ok(gradcheck_of(with_hook(lambda g: g * 3 - g * 2), lambda T: (leaf(T, [1.0, 2.0]),),
                    check_batched_grad=True))


def branching_on_the_gradient(x):
    """A hook that looks at the gradient's values: impossible under vmap."""
    h = x * 1.0
    h.register_hook(lambda g: None if g is None else (g * 2 if bool(g.sum() > 1e9) else g))
    return h


@pytest.mark.parametrize("fast_mode", [False, True])
def test_integer_output_between_float_outputs(fast_mode):
    # torch pairs the float outputs' Jacobians with all outputs (an IndexError in slow mode)
    same(gradcheck_of(lambda x, y: (x.exp(), x.argmax(), y * 2), two_leaves,
                      fast_mode=fast_mode))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_batched_grad_failure_is_a_gradcheck_error(fast_mode):
    program = gradcheck_of(branching_on_the_gradient, lambda T: (leaf(T, [1.0, 2.0]),),
                           check_batched_grad=True, fast_mode=fast_mode)
    ta, jb = run(program, torch), run(program, jaxgrad)
    assert ta.cls == jb.cls == "GradcheckError"
    for result in (ta, jb):  # the inner error is each vmap's own
        assert result.message.startswith("While computing batched gradients, got: ")
        assert ("\n\ngradcheck or gradgradcheck failed while testing batched gradient "
                "computation.\n") in result.message


def test_random_operation_in_a_batched_backward():
    # torch's gradcheck batches with its legacy vmap: its message for a random draw
    def program(T):
        def func(x):
            h = x * 1.0
            h.register_hook(lambda g: None if g is None else g + 0 * T.randn(2, dtype=T.float64))
            return h

        return attempt(lambda: T.autograd.gradcheck(func, (leaf(T, [1.0, 2.0]),),
                                                    check_batched_grad=True))

    ta, _ = raises(program)
    assert ta.cls == "GradcheckError"


def test_batched_grad_failure_with_raise_exception_false():
    ta, jb = ok(gradcheck_of(branching_on_the_gradient, lambda T: (leaf(T, [1.0, 2.0]),),
                             check_batched_grad=True, raise_exception=False))
    assert ta is False and jb is False


def test_batched_grad_runs_after_the_jacobian_check():
    # a wrong Jacobian is reported first, even when batching would fail too
    def func(x):
        return branching_on_the_gradient(x) * x.detach()

    ta, jb = raises(gradcheck_of(func, lambda T: (leaf(T, [1.0, 2.0]),), check_batched_grad=True))
    assert leading_line(ta) == leading_line(jb)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_batched_grad(fast_mode):
    def program(T):
        x, y = two_leaves(T)
        v = leaf(T, [1.0, -0.5, 0.25])
        return T.autograd.gradgradcheck(lambda a, b: (a * b).sin() + a ** 3, (x, y), (v,),
                                        check_batched_grad=True, fast_mode=fast_mode)

    ta, jb = ok(program)
    assert ta is True and jb is True


def test_batched_grad_draws_grad_outputs_from_the_global_generator():
    def program(T):
        T.manual_seed(0)
        T.autograd.gradcheck(seed_function, two_leaves(T), check_batched_grad=True)
        after_batched = T.rand(3)
        T.manual_seed(0)
        T.autograd.gradcheck(seed_function, two_leaves(T))
        return bool((T.rand(3) == after_batched).all())

    ta, jb = ok(program)
    assert ta is False and jb is False


# --- forward mode (check_forward_ad: jaxgrad.func.jvp) ----------------------------------------


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("options", [
    dict(check_forward_ad=True),
    dict(check_forward_ad=True, check_backward_ad=False),
    dict(check_forward_ad=True, check_backward_ad=False, check_batched_forward_grad=True),
    dict(check_forward_ad=True, check_batched_forward_grad=True, check_batched_grad=True),
    dict(check_forward_ad=True, check_undefined_grad=False),
], ids=["with_backward", "forward_only", "batched_forward", "all", "no_undefined"])
def test_forward_ad_passes_and_calls_func_as_often_as_torch(options, fast_mode):
    def program(T):
        calls = []

        def func(a, k, b):
            calls.append(tuple(a.shape))
            return (a * b.sum()).sin() * k, b.exp(), a.argmax()

        x, y = two_leaves(T)
        return T.autograd.gradcheck(func, (x, 2.0, y[:2]), fast_mode=fast_mode,
                                    **options), calls

    (ta, calls), _ = ok(program)
    assert ta is True and calls


@pytest.mark.parametrize("func", [
    lambda x, w: (x @ w).tanh(),
    lambda x, w: x.t() @ x.relu() + w.sum(),
    lambda x, w: (x.unsqueeze(-1) * w).mean(dim=0),
    lambda x, w: x.clone(),  # w unused: zero tangents
], ids=["matmul_tanh", "transpose_relu", "broadcast_mean", "unused"])
def test_forward_ad_compositions(func):
    ta, _ = ok(gradcheck_of(func, matrix_inputs, check_forward_ad=True,
                            check_batched_forward_grad=True))
    assert ta is True


def floor_at_an_integer(T):
    return (leaf(T, [1.0, 2.5]),)


def test_forward_ad_mismatch_message():
    # the numerical derivative of floor at 1.0 is 1 / (2 eps); both forward modes say 0
    ta, _ = raises(gradcheck_of(lambda x: x.floor(), floor_at_an_integer, check_forward_ad=True,
                                check_backward_ad=False))
    assert ta.message.startswith(
        "Jacobian computed with forward mode mismatch for output 0 with respect to input 0,")


def test_forward_ad_mismatch_message_fast_mode():
    ta, jb = raises(gradcheck_of(lambda x: x.floor(), floor_at_an_integer, check_forward_ad=True,
                                 check_backward_ad=False, fast_mode=True))
    assert leading_line(ta) == leading_line(jb)


def test_backward_failure_hides_forward_failure():
    ta, _ = raises(gradcheck_of(lambda x: x.floor(), floor_at_an_integer, check_forward_ad=True))
    assert ta.message.startswith("Jacobian mismatch for output 0 with respect to input 0,")


def test_forward_ad_no_differentiable_outputs():
    raises(gradcheck_of(lambda x: x.detach() * 2, lambda T: (leaf(T, [1.0, 2.0]),),
                        check_forward_ad=True, check_backward_ad=False))
    ok(gradcheck_of(lambda x: x.detach() * 0, lambda T: (leaf(T, [1.0, 2.0]),),
                    check_forward_ad=True, check_backward_ad=False,
                    check_batched_forward_grad=True))


def test_forward_ad_inputs_do_not_require_grad_inside():
    def program(T):
        seen = []

        def func(x, y):
            seen.append((x.requires_grad, y.requires_grad))
            return x * y

        x, y = two_leaves(T)
        T.autograd.gradcheck(func, (x, y), check_forward_ad=True, check_backward_ad=False,
                             check_undefined_grad=False)
        return seen

    ok(program)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_forward_over_reverse(fast_mode):
    ta, _ = ok(gradgradcheck_of(lambda x: x.sin() * x, lambda T: (leaf(T, [0.5, -1.0]),),
                                check_fwd_over_rev=True, fast_mode=fast_mode))
    assert ta is True
    ok(gradgradcheck_of(lambda x: x.sin() * x, lambda T: (leaf(T, [0.5, -1.0]),),
                        check_fwd_over_rev=True, check_rev_over_rev=False,
                        check_undefined_grad=False, fast_mode=fast_mode))


# --- torch's deprecated Jacobian helpers -----------------------------------------------------


def jacobian_helpers(T):
    return importlib.import_module(f"{T.__name__}.autograd.gradcheck")


def test_get_numerical_jacobian():
    def program(T):
        a, b = two_leaves(T)
        get = jacobian_helpers(T).get_numerical_jacobian

        def fn(inputs):
            return 2 * inputs[0] + inputs[1] ** 2, inputs[0] * 3

        return ([j.clone() for j in get(fn, (a, b), eps=1e-6)],  # torch's are written in place
                [j.clone() for j in get(fn, (a, b), target=(b,), eps=1e-6)],
                attempt(lambda: get(fn, (a, b), grad_out=2.0)))

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_get_analytical_jacobian():
    def program(T):
        a, b = two_leaves(T)
        get = jacobian_helpers(T).get_analytical_jacobian
        def cloned(result):  # torch writes its Jacobians in place
            jacobians, *flags = result
            return [j.clone() for j in jacobians], flags

        return (cloned(get((a, b), a * b.exp())), cloned(get((a, 3.0), a.sin())),
                attempt(lambda: get((a,), a * 2, grad_out=2.0)))

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_get_numerical_jacobian_wrt_specific_input():
    def program(T):
        a, b = two_leaves(T)
        get = jacobian_helpers(T).get_numerical_jacobian_wrt_specific_input
        fn = lambda x, y: (x * y, y.sum())
        return [j.clone() for j in get(fn, 1, (a, b), fn(a, b), 1e-6)]

    ok(program)


# --- custom Functions under the forward check -------------------------------------------------


def square_function(T):
    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return 2 * x * grad_output

    return Square


@pytest.mark.parametrize("fast_mode", [False, True])
def test_function_without_jvp_is_refused_by_the_forward_check(fast_mode):
    def program(T):
        square, calls = square_function(T), []

        def func(t):
            calls.append(1)
            return square.apply(t) + 1

        x = leaf(T, [1.0, 2.0])
        return attempt(lambda: T.autograd.gradcheck(func, (x,), check_forward_ad=True,
                                                    fast_mode=fast_mode,
                                                    raise_exception=False)), len(calls)

    (ta, _), _ = same(program)
    assert ta.cls == "NotImplementedError"


@pytest.mark.parametrize("inner", [
    lambda square, w, t: square.apply(w) * t,  # applied to a closed-over tensor only
    lambda square, w, t: square.apply(t.detach()) * t,  # to a detached input
], ids=["closure", "detached"])
def test_function_without_jvp_off_the_inputs_path_is_fine(inner):
    def program(T):
        square, w = square_function(T), leaf(T, [0.5, 1.5])
        return T.autograd.gradcheck(lambda t: inner(square, w, t), (leaf(T, [1.0, 2.0]),),
                                    check_forward_ad=True, check_batched_forward_grad=True,
                                    raise_exception=False)

    same(program)



@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("make_input", [
    lambda base: base * 1,  # a non-leaf
    lambda base: base[0],  # a view
    lambda base: base.t(),  # a transposed view
], ids=["non_leaf", "row_view", "transposed"])
def test_all_checks_on_non_leaf_and_view_inputs(make_input, fast_mode):
    def program(T):
        base = leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        x = make_input(base)
        return (T.autograd.gradcheck(lambda a: (a * a.exp()).sum(0), (x,), check_batched_grad=True,
                                     check_forward_ad=True, check_batched_forward_grad=True,
                                     fast_mode=fast_mode),
                T.autograd.gradgradcheck(lambda a: a.sin() * a, (x,), check_batched_grad=True,
                                         check_fwd_over_rev=True, fast_mode=fast_mode))

    ta, _ = ok(program)
    assert ta == (True, True)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_forward_over_reverse_through_a_saved_output(fast_mode):
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return T.autograd.gradgradcheck(lambda a: a.exp() * a.tanh() + a.sigmoid(), (x,),
                                        check_fwd_over_rev=True, fast_mode=fast_mode,
                                        raise_exception=False)

    ta, _ = ok(program)
    assert ta is True


# --- the forward check runs custom Functions' jvp on dual tensors, as torch's does -------------


def doubling_function(T, jvp_factor, inplace=None):
    """``2 * x`` (in place when asked) whose jvp multiplies by ``jvp_factor`` (``inplace``:
    whether the jvp writes the tangent in place)."""
    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if inplace is None:
                return x * 2
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return 2 * g

        @staticmethod
        def jvp(ctx, x_t):
            return x_t.mul_(jvp_factor) if inplace else x_t * jvp_factor

    return Double


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("jvp_factor", [2.0, 3.0])
def test_forward_check_uses_the_functions_jvp(jvp_factor, fast_mode):
    def program(T):
        double = doubling_function(T, jvp_factor)
        x = leaf(T, [1.0, 2.0, 3.0])
        results = [attempt(lambda backward=backward: T.autograd.gradcheck(
            double.apply, (x,), check_forward_ad=True, check_backward_ad=backward,
            check_undefined_grad=backward, fast_mode=fast_mode)) for backward in (True, False)]
        # (fast mode's random vectors differ from torch's: the first line says what failed)
        return [r if r is True else leading_line(r) for r in results]

    same(program)


@pytest.mark.parametrize("inplace", [True, False])
def test_forward_check_runs_the_inplace_jvp_checks(inplace):
    def program(T):
        double = doubling_function(T, 2.0, inplace=inplace)
        x = leaf(T, [1.0, 2.0, 3.0])
        return attempt(lambda: T.autograd.gradcheck(lambda a: double.apply(a.clone()), (x,),
                                                    check_forward_ad=True))

    same(program)


@pytest.mark.parametrize("jvp_view", ["view", "clone", "view_of_clone"])
def test_forward_check_runs_the_view_jvp_checks(jvp_view):
    def program(T):
        class Narrow(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.narrow(0, 0, 2)

            @staticmethod
            def backward(ctx, g):
                return T.cat([g, g.new_zeros(1)])

            @staticmethod
            def jvp(ctx, x_t):
                res = x_t.narrow(0, 0, 2)
                if jvp_view != "view":
                    res = res.clone()
                return res.view_as(res) if jvp_view == "view_of_clone" else res

        x = leaf(T, [1.0, 2.0, 3.0])
        return attempt(lambda: T.autograd.gradcheck(Narrow.apply, (x,), check_forward_ad=True))

    same(program)


def test_forward_check_sees_the_dual_level():
    def program(T):
        seen = []

        def func(a):
            seen.append((T.autograd.forward_ad._current_level, a.requires_grad))
            return a * 2

        x = leaf(T, [1.0, 2.0])
        T.autograd.gradcheck(func, (x,), check_forward_ad=True, check_backward_ad=False,
                             check_undefined_grad=False)
        return sorted(set(seen)), T.autograd.forward_ad._current_level

    same(program)


# --- complex inputs and outputs: conjugate Wirtinger derivatives, real and imaginary parts -------


def torch_or_jaxgrad(t):
    """The library of tensor ``t`` (for functions of the inputs only)."""
    return torch if isinstance(t, torch.Tensor) else jaxgrad


def complex_leaf(T, values=(1 + 2j, -0.5 + 0.25j, 0.3 - 1j)):
    return T.tensor(list(values), dtype=T.complex128, requires_grad=True)


def complex_and_real_leaves(T):
    return complex_leaf(T), leaf(T, [0.5, -1.0, 2.0])


def run_both(program):
    """``program`` run on torch and on jaxgrad, warnings ignored (as ``same`` does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(program, torch), run(program, jaxgrad)


def without_fast_mode_projections(result):
    """A fast-mode failure's message without its two lines of random projections (fast mode's
    random vectors differ from torch's): the first line, and the slow-mode report in full."""
    assert isinstance(result, Raised), result
    return result.cls, [line for line in result.message.splitlines()
                        if not line.startswith(("numerical:", "analytical:"))]


def wrong_squared_modulus(T):
    """|z|^2 (C -> R) whose backward and jvp forget the factor 2 (right: 2 * g * z and
    2 * Re(t * conj(z)))."""
    class SquaredModulus(T.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            ctx.save_for_forward(z)
            return (z * z.conj()).real.clone()  # not a view: torch asserts on a view's jvp

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return g * z

        @staticmethod
        def jvp(ctx, t):
            z, = ctx.saved_tensors
            return (t * z.conj()).real

    return SquaredModulus


def wrong_complex_square(T):
    """z^2 (C -> C) whose backward forgets the conjugate (right: g * conj(2 z)) and whose jvp
    conjugates (right: 2 z t)."""
    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            ctx.save_for_forward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return g * 2 * z

        @staticmethod
        def jvp(ctx, t):
            z, = ctx.saved_tensors
            return t * 2 * z.conj()

    return Square


def wrong_complex_square_apply(z):
    return wrong_complex_square(torch_or_jaxgrad(z)).apply(z)


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("func", [
    lambda z: z.abs(),
    lambda z: (z * z.conj()).real.sum(),
    lambda z: z * z,
    lambda z: z.conj() * z,
    lambda z: z.exp() / (z + 3),
    lambda z: torch_or_jaxgrad(z).view_as_real(z * (2 - 1j)),
    lambda z: (z.abs(), z.sin(), z.real * 2),
], ids=["abs", "squared_modulus", "square", "conj_times_self", "exp_ratio", "view_as_real",
        "three_outputs"])
def test_complex_input_passes(func, fast_mode):
    ta, jb = ok(gradcheck_of(func, lambda T: (complex_leaf(T),), fast_mode=fast_mode,
                             check_batched_grad=True))
    assert ta is True and jb is True


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("func", [
    lambda z, x: z * x,  # C x R -> C
    lambda z, x: (x * (1 + 2j), z.imag * x),  # R -> C, then C x R -> R
    lambda z, x: torch_or_jaxgrad(z).complex(x, x.sin()).exp(),  # R -> C only
    lambda z, x: torch_or_jaxgrad(z).view_as_complex(torch_or_jaxgrad(z).stack(
        [x, x * x], -1)) * z,
], ids=["complex_times_real", "real_to_complex", "complex_of_reals", "view_as_complex"])
def test_mixed_real_and_complex_inputs_pass(func, fast_mode):
    ta, jb = ok(gradcheck_of(func, complex_and_real_leaves, fast_mode=fast_mode,
                             check_forward_ad=True))
    assert ta is True and jb is True


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("options", [
    dict(check_forward_ad=True),
    dict(check_forward_ad=True, check_backward_ad=False),
    dict(check_forward_ad=True, check_batched_forward_grad=True, check_batched_grad=True),
    dict(check_forward_ad=True, check_undefined_grad=False),
], ids=["with_backward", "forward_only", "batched", "no_undefined"])
def test_complex_forward_ad_passes_and_calls_func_as_often_as_torch(options, fast_mode):
    def program(T):
        calls = []

        def func(z, k, x):
            calls.append((z.dtype.is_complex, x.dtype.is_complex))
            return (z * x.sum()).sin() * k, z.abs(), x.exp(), z.real.argmax()

        z, x = complex_and_real_leaves(T)
        return T.autograd.gradcheck(func, (z, 2.0, x[:2]), fast_mode=fast_mode,
                                    **options), calls

    (ta, calls), _ = ok(program)
    assert ta is True and calls


@pytest.mark.parametrize("inputs", [
    lambda T: (complex_leaf(T),),
    lambda T: (complex_leaf(T)[:2], complex_leaf(T, [0.25 - 0.5j, 2j])),
    lambda T: (complex_leaf(T) * 1,),  # a non-leaf
    lambda T: (complex_leaf(T).conj(),),  # a conjugate view
], ids=["leaf", "two_inputs", "non_leaf", "conjugate_view"])
def test_complex_all_checks(inputs):
    ok(gradcheck_of(lambda *zs: sum(z * z.exp() for z in zs), inputs, check_forward_ad=True,
                    check_batched_grad=True, check_batched_forward_grad=True))


def test_complex_single_precision_input_warns_and_passes_loosely():
    def program(T):
        z = complex_leaf(T).detach().to(T.complex64).requires_grad_()
        return (T.autograd.gradcheck(lambda t: t * t, (z,), raise_exception=False),
                T.autograd.gradcheck(lambda t: t * t, (z,), eps=1e-3, atol=1e-2))

    ta, _ = ok(program)
    assert ta == (False, True)
    warned = captured_warnings(program, jaxgrad)
    assert warned == captured_warnings(program, torch) and warned


@pytest.mark.parametrize("function", [wrong_squared_modulus, wrong_complex_square],
                         ids=["complex_to_real", "complex_to_complex"])
def test_wrong_complex_backward_fails_with_torchs_message(function):
    ta, _ = raises(lambda T: attempt(lambda: T.autograd.gradcheck(
        function(T).apply, (complex_leaf(T),))))
    assert ta.cls == "GradcheckError"
    if function is wrong_complex_square:
        assert ta.message.startswith(
            "While considering the imaginary part of complex outputs only, Jacobian mismatch "
            "for output 0 with respect to input 0,\n")
    else:
        assert ta.message.startswith("Jacobian mismatch for output 0 with respect to input 0,")


@pytest.mark.parametrize("function", [wrong_squared_modulus, wrong_complex_square],
                         ids=["complex_to_real", "complex_to_complex"])
def test_wrong_complex_backward_fails_in_fast_mode(function):
    def program(T):
        return attempt(lambda: T.autograd.gradcheck(function(T).apply, (complex_leaf(T),),
                                                    fast_mode=True))

    ta, jb = run_both(program)
    assert without_fast_mode_projections(ta) == without_fast_mode_projections(jb)
    assert ta.message.splitlines()[0] == (
        ("While considering the imaginary part of complex outputs only, "
         if function is wrong_complex_square else "")
        + "Jacobian mismatch for output 0 with respect to input 0,")
    assert "Below, we recompute numerical and analytical jacobians in slow mode" in ta.message


def test_real_part_of_a_complex_output_is_checked_after_the_imaginary_part():
    def conj_backward(T):
        class Identity(T.autograd.Function):  # the backward conjugates: only Im is wrong
            @staticmethod
            def forward(ctx, z):
                return z * 1

            @staticmethod
            def backward(ctx, g):
                return g.conj()

        return Identity

    ta, _ = raises(lambda T: attempt(lambda: T.autograd.gradcheck(
        conj_backward(T).apply, (complex_leaf(T),))))
    assert ta.message.startswith("While considering the imaginary part of complex outputs only")

    def real_part_wrong(T):
        class Doubled(T.autograd.Function):  # Re of the output scaled by 2, backward says 1
            @staticmethod
            def forward(ctx, z):
                return z + z.real

            @staticmethod
            def backward(ctx, g):
                return g

        return Doubled

    ta, _ = raises(lambda T: attempt(lambda: T.autograd.gradcheck(
        real_part_wrong(T).apply, (complex_leaf(T),))))
    assert ta.message.startswith("While considering the real part of complex outputs only")


def test_complex_output_index_in_the_message():
    # only the outputs that are complex get the prefix; indices count differentiable outputs
    ta, _ = raises(gradcheck_of(lambda z, x: (x.exp(), z * z.detach()), complex_and_real_leaves))
    assert ta.message.startswith(
        "While considering the imaginary part of complex outputs only, Jacobian mismatch for "
        "output 1 with respect to input 0,")
    ta, _ = raises(gradcheck_of(lambda z, x: (z.abs(), x * x.detach()), complex_and_real_leaves))
    assert ta.message.startswith("Jacobian mismatch for output 1 with respect to input 1,")


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("function", [wrong_squared_modulus, wrong_complex_square],
                         ids=["complex_to_real", "complex_to_complex"])
def test_wrong_complex_jvp_fails_with_torchs_message(function, fast_mode):
    def program(T):
        return attempt(lambda: T.autograd.gradcheck(
            function(T).apply, (complex_leaf(T),), check_forward_ad=True,
            check_backward_ad=False, fast_mode=fast_mode))

    ta, jb = run_both(program)
    assert isinstance(ta, Raised) and ta.cls == "GradcheckError"
    assert ta.message.startswith(
        "While considering the imaginary part of complex inputs only, Jacobian computed with "
        "forward mode mismatch for output 0 with respect to input 0,\n")
    if fast_mode:
        assert without_fast_mode_projections(ta) == without_fast_mode_projections(jb)
    else:
        same(program)


def test_complex_input_index_in_the_forward_message():
    # torch compares the position among the inputs that require grad with the positions of the
    # complex inputs among all inputs: without x, input 0 (of those requiring grad) is inputs[1]
    # and its mismatch gets no prefix. (z: no signed zeros in the jvp's products, see
    # test_signed_zeros_of_complex_and_real_tangents)
    def program(T, x_requires_grad):
        x = leaf(T, [0.5, -1.0, 2.0]).requires_grad_(x_requires_grad)
        z = complex_leaf(T, [1 - 2j, 0.5 - 0.25j, 0.3 - 1j])
        return attempt(lambda: T.autograd.gradcheck(
            lambda a, z: wrong_complex_square(T).apply(z) + a, (x, z),
            check_forward_ad=True, check_backward_ad=False))

    ta, _ = raises(lambda T: program(T, False))
    assert ta.message.startswith("Jacobian computed with forward mode mismatch for output 0 "
                                 "with respect to input 0,")
    ta, _ = raises(lambda T: program(T, True))
    assert ta.message.startswith("While considering the imaginary part of complex inputs only, "
                                 "Jacobian computed with forward mode mismatch for output 0 "
                                 "with respect to input 1,")


def test_complex_backward_failure_hides_forward_failure():
    ta, _ = raises(gradcheck_of(lambda z: z * z.detach(), lambda T: (complex_leaf(T),),
                                check_forward_ad=True))
    assert "forward mode" not in ta.message.splitlines()[0]


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("options", [dict(), dict(check_forward_ad=True)],
                         ids=["backward", "forward"])
def test_complex_raise_exception_false_returns_false(options, fast_mode):
    ta, jb = ok(gradcheck_of(wrong_complex_square_apply, lambda T: (complex_leaf(T),),
                             fast_mode=fast_mode, raise_exception=False, **options))
    assert ta is False and jb is False


@pytest.mark.parametrize("fast_mode", [False, True])
def test_complex_non_differentiable_output(fast_mode):
    raises(gradcheck_of(lambda z: z.detach() * 2, lambda T: (complex_leaf(T),),
                        fast_mode=fast_mode))
    ok(gradcheck_of(lambda z: z.detach() * 0, lambda T: (complex_leaf(T),), fast_mode=fast_mode,
                    check_forward_ad=True))


def test_complex_numerical_jacobian_wrt_specific_input():
    def program(T):
        get = jacobian_helpers(T).get_numerical_jacobian_wrt_specific_input
        z, x = complex_and_real_leaves(T)
        return ([j.clone() for j in get(lambda t: (t * t.conj()).real, 0, (z,), (z.abs(),),
                                        1e-6)],
                [j.clone() for j in get(lambda t: t * 1j, 0, (x,), (x * 1j,), 1e-6,
                                        is_forward_ad=True)],
                # complex outputs: only the forward check may see them (torch's assertion)
                attempt(lambda: get(lambda t: t * t, 0, (z,), (z * z,), 1e-6)),
                attempt(lambda: get(lambda t: t * 1j, 0, (x,), (x * 1j,), 1e-6)))

    ok(program)


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("func", [
    lambda z: z * z * z.conj(),
    lambda z: z.abs() * z.exp(),
    lambda z: (z * z).abs(),
], ids=["cubic", "abs_exp", "abs_of_square"])
def test_complex_gradgradcheck_passes(func, fast_mode):
    ta, jb = ok(gradgradcheck_of(func, lambda T: (complex_leaf(T),), fast_mode=fast_mode,
                                 check_fwd_over_rev=True, check_batched_grad=True))
    assert ta is True and jb is True


def test_complex_gradgradcheck_with_explicit_grad_outputs():
    def program(T):
        z, x = complex_and_real_leaves(T)
        v = complex_leaf(T, [0.5 - 1j, 0.25j, -1.0])
        return T.autograd.gradgradcheck(lambda a, b: a * a * b, (z, x), (v,)), z, x, v

    ok(program)


def exp_without_double_backward(z):
    """exp(z) whose backward uses exp(z) kept on ctx (computed in forward, so without a graph):
    right first derivatives, no second ones."""
    T = torch_or_jaxgrad(z)

    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.exp = z.exp()
            return ctx.exp.clone()

        @staticmethod
        def backward(ctx, g):
            return g * ctx.exp.conj()

    return Exp.apply(z)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_complex_gradgradcheck_catches_a_wrong_double_backward(fast_mode):
    ta, _ = ok(gradcheck_of(exp_without_double_backward, lambda T: (complex_leaf(T),)))
    assert ta is True
    program = gradgradcheck_of(exp_without_double_backward, lambda T: (complex_leaf(T),),
                               fast_mode=fast_mode)
    ta, jb = run_both(program)
    assert leading_line(ta) == leading_line(jb)
    assert ta.message.startswith("While considering the imaginary part of complex outputs only")
    ta, jb = ok(gradgradcheck_of(exp_without_double_backward, lambda T: (complex_leaf(T),),
                                 raise_exception=False, fast_mode=fast_mode))
    assert ta is False and jb is False


@bug("the forward formulas of add and mul, for a complex tangent with a real one, give "
     "-0.0 parts where torch (which computes in complex, the real tangent as x+0j) gives "
     "+0.0; gradcheck prints them in its forward-mode mismatch messages")
@pytest.mark.parametrize("op", ["add", "mul"])
def test_signed_zeros_of_complex_and_real_tangents(op):
    def program(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            c = fw.make_dual(T.tensor([1 + 1j, -2 + 1j], dtype=T.complex128),
                             T.tensor([complex(0.0, -0.0), 0j], dtype=T.complex128))
            a = fw.make_dual(T.tensor([0.5, -1.0], dtype=T.float64),
                             T.zeros(2, dtype=T.float64))
            tangent = fw.unpack_dual(c + a if op == "add" else c * a)[1]
        return str(T.view_as_real(tangent).signbit().tolist())

    ok(program)

