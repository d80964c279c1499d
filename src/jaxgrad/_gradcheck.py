"""``gradcheck`` and ``gradgradcheck``: finite differences against the backward engine.

This follows ``torch/autograd/gradcheck.py`` (PyTorch 2.13) for real-valued functions:

- the *numerical* Jacobian perturbs each element of each input that requires grad in place
  (through ``input.data``, so a function that closes over its inputs sees the perturbation
  too) and takes central differences ``(f(x + eps) - f(x - eps)) / (2 * eps)``;
- the *analytical* Jacobian is built row by row with ``autograd.grad`` and unit
  ``grad_outputs``, twice, to check that the backward is deterministic (``nondet_tol``);
- both are compared with ``allclose``: ``|a - n| <= atol + rtol * |n|``;
- then the backward must be multiplied by ``grad_output`` (zero ``grad_outputs`` give zero
  gradients) and, with ``check_undefined_grad``, must cope with zero output gradients.

Jacobians are laid out as torch lays them out: one ``(input.numel(), output.numel())``
matrix per (output, input) pair, and failures raise :class:`GradcheckError` with torch's
messages ("Jacobian mismatch for output 0 with respect to input 0, ...").

``fast_mode=True`` is supported (torch's random projections ``v^T J u``; the random vectors
come from jaxgrad's generator, so their values differ from torch's). Options that need
forward-mode AD or vmap (``check_forward_ad``, ``check_batched_grad``,
``check_batched_forward_grad``, ``gradgradcheck(check_fwd_over_rev=True)``) and complex
inputs or outputs raise ``NotImplementedError``: jaxgrad has neither forward-mode AD nor
batched gradients nor complex autograd.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ._api import allclose, stack, where
from ._creation import zeros_like
from ._dtypes import bool_, complex128, float64, promote_types
from ._engine import _input_edges, _root_edges, execute, grad
from ._functional import _one_hot
from ._grad_mode import set_grad_enabled
from ._graph import GraphRoot
from ._random import Generator, rand
from ._tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    r"""Error raised by :func:`gradcheck` and :func:`gradgradcheck`.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.gradcheck import GradcheckError
    >>> issubclass(GradcheckError, RuntimeError)
    True
    """


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


# --- small helpers -----------------------------------------------------------------------


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_tensor(x: Any) -> bool:
    return isinstance(x, Tensor) and (x.is_floating_point() or x.is_complex())


def _differentiable_inputs(inputs: Sequence[Any]) -> list[Tensor]:
    return [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]


def _differentiable_outputs(func_out: Any) -> tuple[Tensor, ...]:
    return tuple(o for o in _as_tuple(func_out) if o.requires_grad)


def _stack_or_empty(tensors: list[Tensor], dim: int, shape: tuple[int, int],
                    like: Tensor) -> Tensor:
    """``stack(tensors, dim)``, or an empty ``shape`` matrix when there is nothing to stack."""
    return stack(tensors, dim) if tensors else like.new_zeros(shape)


def _allclose_with_type_promotion(a: Tensor, b: Tensor, rtol: float, atol: float) -> bool:
    promoted = promote_types(a.dtype, b.dtype)
    return allclose(a.to(promoted), b.to(promoted), rtol, atol)


def _mismatch_message(analytical: Tensor, numerical: Tensor, output_idx: int,
                      input_idx: int) -> str:
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


# --- input validation --------------------------------------------------------------------


def _check_options(check_forward_ad: bool, check_backward_ad: bool, check_batched_grad: bool,
                   check_batched_forward_grad: bool) -> None:
    """torch's assertions on the option combinations, then what jaxgrad cannot check."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    for name, requested in (("check_forward_ad", check_forward_ad),
                            ("check_batched_grad", check_batched_grad),
                            ("check_batched_forward_grad", check_batched_forward_grad)):
        if requested:
            raise NotImplementedError(
                f"gradcheck: {name}=True is not supported: jaxgrad has no forward-mode AD and "
                "no batched (vmap) gradients. Use the default check_backward_ad=True.")


def _check_inputs(inputs: tuple) -> None:
    """torch's _check_inputs: warn about non-double inputs; at least one must require grad."""
    any_input_requiring_grad = False
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp.dtype not in (float64, complex128):
            warnings.warn(
                f"Input #{idx} requires gradient and "
                "is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are "
                "not of double precision floating point or complex. ",
                stacklevel=4,
            )
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only "
                "supports inputs that are non-overlapping to be able to "
                "compute the numerical gradients correctly. You should call "
                ".contiguous on the input before passing it to gradcheck.")
        if inp.is_complex():
            raise NotImplementedError(
                "gradcheck: complex inputs are not supported by jaxgrad yet.")
        any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of them have requires_grad=True.")


def _check_outputs(outputs: tuple[Tensor, ...]) -> None:
    if any(o.is_complex() for o in outputs):
        raise NotImplementedError("gradcheck: complex outputs are not supported by jaxgrad yet.")


# --- numerical Jacobians -------------------------------------------------------------------


def _check_same_dtype_and_shape(before: Tensor, after: Tensor, eps: float,
                                index: tuple | None) -> None:
    on_index = f"on index {index} " if index is not None else ""
    if before.shape != after.shape:
        raise AssertionError(
            f"Expected `func` to return outputs with the same shape"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" shapes {before.shape} and {after.shape}.")
    if before.dtype != after.dtype:
        raise AssertionError(
            f"Expected `func` to return outputs with the same dtype"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" dtypes {before.dtype} and {after.dtype}.")


def _central_difference(call: Callable[[], tuple], data: Tensor, below: Tensor, above: Tensor,
                        eps: float, index: tuple | None) -> list[Tensor]:
    """``(f(above) - f(below)) / (2 * eps)``, flattened, for every output of ``call``, where
    ``data`` (a ``.data`` alias of an input, so the input itself) is set in place to ``below``,
    then ``above``, then restored. ``index`` is the perturbed element, for error messages."""
    original = data.clone()
    data.copy_(below)
    before = call()
    data.copy_(above)
    after = call()
    data.copy_(original)
    columns = []
    for a, b in zip(before, after):
        _check_same_dtype_and_shape(a, b, eps, index)
        columns.append(((b - a) / (2 * eps)).detach().reshape(-1))
    return columns


def _float_outputs(func_out: Any) -> list[Tensor]:
    return [o for o in _as_tuple(func_out) if _is_float_tensor(o)]


def _differentiable_positions(float_outputs: list[Tensor]) -> list[int]:
    """Where each output that requires grad sits among the floating-point outputs."""
    return [k for k, o in enumerate(float_outputs) if o.requires_grad]


def _outputs_of(func: Callable, inputs: tuple) -> Callable[[], tuple]:
    """Call ``func(*inputs)`` for its floating-point outputs, cloned (an output may alias an
    input that is perturbed next)."""
    return lambda: tuple(o.clone() for o in _float_outputs(func(*inputs)))


def _numerical_jacobians(func: Callable, inputs: tuple, float_outputs: list[Tensor],
                         eps: float) -> list[list[Tensor]]:
    """``[input][float output]``: the ``(input.numel(), output.numel())`` finite-difference
    Jacobians, for every input that requires grad and every floating-point output."""
    call = _outputs_of(func, inputs)
    jacobians = []
    for inp in _differentiable_inputs(inputs):
        data = inp.data
        original = data.clone()
        below, above = original - eps, original + eps
        columns = []
        for flat_index, index in enumerate(itertools.product(*map(range, inp.shape))):
            element = _one_hot(inp, flat_index, bool_)
            columns.append(_central_difference(call, data, where(element, below, original),
                                               where(element, above, original), eps, index))
        jacobians.append([
            _stack_or_empty([column[k] for column in columns], 0, (inp.numel(), out.numel()),
                            out).to(out.dtype)
            for k, out in enumerate(float_outputs)])
    return jacobians


def _check_no_differentiable_outputs(func: Callable, inputs: tuple, func_out: Any,
                                     eps: float) -> None:
    for per_input in _numerical_jacobians(func, inputs, _float_outputs(func_out), eps):
        for jacobian in per_input:
            if bool((jacobian != 0).sum() > 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# --- analytical Jacobians ------------------------------------------------------------------


def _vjps(output: Tensor, diff_inputs: list[Tensor], grad_output: Tensor) -> tuple:
    return grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)


def _stack_columns(vjps_per_column: list[tuple], diff_inputs: list[Tensor],
                   width: int) -> tuple[list[Tensor], bool, bool]:
    """One ``(input.numel(), width)`` matrix per input from per-column vjps (None is zero),
    with whether every gradient had its input's size, and its input's dtype."""
    sizes_ok = types_ok = True
    jacobians = []
    for i, inp in enumerate(diff_inputs):
        columns = []
        for vjps in vjps_per_column:
            g = vjps[i]
            if g is None:
                columns.append(zeros_like(inp).reshape(-1))
                continue
            if g.size() != inp.size():
                sizes_ok = False
            elif g.dtype != inp.dtype:
                types_ok = False
            if g.numel() != inp.numel():
                raise AssertionError(
                    f"Expected out_jacobian column to have {g.numel()} elements, "
                    f"but got {inp.numel()}")
            columns.append(g.detach().reshape(-1).to(inp.dtype))
        jacobians.append(_stack_or_empty(columns, 1, (inp.numel(), width), inp))
    return jacobians, sizes_ok, types_ok


def _analytical_jacobians(inputs: tuple, output: Tensor, nondet_tol: float,
                          check_grad_dtypes: bool, v: Tensor | None = None) -> list[Tensor]:
    """Per input that requires grad: the Jacobian of ``output`` from the engine (or, given
    ``v``, the single column ``v^T J``), computed twice to check the backward is reentrant."""
    diff_inputs = _differentiable_inputs(inputs)
    if v is None:
        grad_outputs = [_one_hot(output, j) for j in range(output.numel())]
    else:
        grad_outputs = [v.reshape(output.shape)]

    def jacobians() -> tuple[list[Tensor], bool, bool]:
        vjps = [_vjps(output, diff_inputs, g) for g in grad_outputs]
        return _stack_columns(vjps, diff_inputs, len(grad_outputs))

    first, sizes_ok, types_ok = jacobians()
    second, _, _ = jacobians()
    reentrant = all(a.numel() == 0 or float((a - b).abs().max()) <= nondet_tol
                    for a, b in zip(first, second))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with "
            "same input and grad_output multiple times gives different values, "
            "although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    return first


# --- slow and fast modes -------------------------------------------------------------------


def _slow_gradcheck(func: Callable, func_out: Any, inputs: tuple, outputs: tuple,
                    eps: float, rtol: float, atol: float, check_grad_dtypes: bool,
                    nondet_tol: float) -> None:
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, func_out, eps)
        return
    float_outputs = _float_outputs(func_out)
    numerical = _numerical_jacobians(func, inputs, float_outputs, eps)
    positions = _differentiable_positions(float_outputs)
    for i, output in enumerate(outputs):
        analytical = _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes)
        for j, (a, per_output) in enumerate(zip(analytical, numerical)):
            n = per_output[positions[i]]
            if not _allclose_with_type_promotion(a, n, rtol, atol):
                raise GradcheckError(_mismatch_message(a, n, i, j))


def _random_unit_vector(x: Tensor, generator: Generator) -> Tensor:
    vec = rand(x.numel(), generator=generator).to(x.dtype)
    return vec / (vec * vec).sum().sqrt()


def _fast_gradcheck(func: Callable, func_out: Any, inputs: tuple, outputs: tuple,
                    eps: float, rtol: float, atol: float, check_grad_dtypes: bool,
                    nondet_tol: float) -> None:
    """torch's fast mode: compare ``v^T J u`` from the engine with ``v^T (J u)`` from finite
    differences along ``u``, for random unit vectors ``u`` (per input) and ``v`` (per output);
    on a mismatch, recompute the full Jacobians for the message."""
    diff_inputs = _differentiable_inputs(inputs)
    generator = Generator()
    all_u = [_random_unit_vector(inp, generator) for inp in diff_inputs]
    all_v = [_random_unit_vector(out, generator) for out in outputs]
    call = _outputs_of(func, inputs)
    numerical_ju = []
    for inp, u in zip(diff_inputs, all_u):
        original, delta = inp.detach().clone(), u.reshape(inp.shape) * eps
        numerical_ju.append(_central_difference(call, inp.data, original - delta,
                                                original + delta, eps, None))
    positions = _differentiable_positions(_float_outputs(func_out))
    if not outputs:
        for per_input in numerical_ju:
            if any(ju.numel() and float(ju.abs().max()) > nondet_tol for ju in per_input):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    for j, (output, v) in enumerate(zip(outputs, all_v)):
        vjs = _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes, v)
        for i, (vj, u) in enumerate(zip(vjs, all_u)):
            analytical = vj.T.squeeze(0).dot(u)
            numerical = (v * numerical_ju[i][positions[j]]).sum()
            tolerance = atol * float(u.sum()) * float(v.sum())
            if not _allclose_with_type_promotion(analytical, numerical, rtol, tolerance):
                raise GradcheckError(
                    _mismatch_message(analytical, numerical, j, i)
                    + _slow_mode_report(func, inputs, func_out, outputs, i, j, rtol, atol, eps))


def _slow_mode_report(func: Callable, inputs: tuple, func_out: Any, outputs: tuple,
                      input_idx: int, output_idx: int, rtol: float, atol: float,
                      eps: float) -> str:
    float_outputs = _float_outputs(func_out)
    position = _differentiable_positions(float_outputs)[output_idx]
    numerical = _numerical_jacobians(func, inputs, float_outputs, eps)[input_idx][position]
    analytical = _analytical_jacobians(inputs, outputs[output_idx], float("inf"),
                                       False)[input_idx]
    max_diff = (numerical - analytical).abs().max()
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {numerical}\n"
        f"Analytical:\n{analytical}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if allclose(analytical, numerical, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


# --- checks on the backward itself ---------------------------------------------------------


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple, masked: bool | None) -> None:
    diff_inputs = _differentiable_inputs(inputs)
    grads = grad(outputs, diff_inputs, tuple(zeros_like(o) for o in outputs),
                 allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        is_zero = allclose(gi, zeros_like(gi)) if masked else bool((gi == 0).all())
        if not is_zero:
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")


def _warn_undefined_grad_bc_breaking() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking "
        "feature is enabled by default, but it may break existing callers "
        "of this function. If this is true for you, you can call this "
        'function with "check_undefined_grad=False" to disable the feature',
        stacklevel=4,
    )


def _grad_with_undefined_outputs(outputs: tuple, inputs: list[Tensor],
                                 undefined: Sequence[bool]) -> tuple:
    """``autograd.grad(outputs, inputs, zeros, allow_unused=True)``, except that the outputs
    flagged ``undefined`` send no gradient at all (None, which hooks and backward functions
    then receive), as torch's ``UndefinedGrad`` wrapper makes them do. Public ``grad`` cannot
    take None for a non-scalar output, so this starts the engine from a hand-made root."""
    root_grads = [None if u else zeros_like(o) for o, u in zip(outputs, undefined)]
    with set_grad_enabled(False):
        return tuple(execute(GraphRoot(_root_edges(outputs), root_grads), False, False,
                             _input_edges(inputs), False))


def _check_undefined_grad_support(outputs: tuple, diff_inputs: list[Tensor],
                                  undefined: Sequence[bool]) -> None:
    try:
        grads = _grad_with_undefined_outputs(outputs, diff_inputs, undefined)
    except RuntimeError as e:
        _warn_undefined_grad_bc_breaking()
        raise GradcheckError(
            "Expected backward function to handle undefined output grads. "
            'Please look at "Notes about undefined output gradients" in '
            '"tools/autograd/derivatives.yaml"') from e
    if any(g is not None and not bool((g == 0).all()) for g in grads):
        _warn_undefined_grad_bc_breaking()
        raise GradcheckError(
            "Expected all input grads to be undefined or zero when all output grads are "
            'undefined or zero. Please look at "Notes about undefined output gradients" in '
            '"tools/autograd/derivatives.yaml"')


def _test_undefined_backward_mode(func: Callable, outputs: tuple, inputs: tuple) -> None:
    """The backward must cope with undefined output gradients: all of them at once, then (with
    several outputs) one at a time, and give undefined or zero input gradients."""
    diff_inputs = _differentiable_inputs(inputs)
    all_undefined = _differentiable_outputs(func(*inputs))
    _check_undefined_grad_support(all_undefined, diff_inputs, [True] * len(all_undefined))
    if len(all_undefined) > 1:
        for undefined_idx in range(len(outputs)):
            to_check = _differentiable_outputs(func(*inputs))
            _check_undefined_grad_support(to_check, diff_inputs,
                                          [i == undefined_idx for i in range(len(to_check))])


# --- public API ----------------------------------------------------------------------------


def gradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the engine's gradients of ``func`` at ``inputs`` against finite differences.

    torch.autograd.gradcheck: returns True, or raises :class:`GradcheckError` describing the
    first mismatch (``raise_exception=False``: returns False instead). Use float64 inputs.
    Supported: backward-mode checks in slow and fast mode for real functions;
    ``check_forward_ad``, ``check_batched_grad`` and ``check_batched_forward_grad`` raise
    NotImplementedError (see the module docstring).

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([0.5, -1.0], dtype=jaxgrad.float64, requires_grad=True)
    >>> jaxgrad.autograd.gradcheck(lambda t: (t * t.exp()).sum(), (x,))
    True
    >>> jaxgrad.autograd.gradcheck(lambda t: t * t.detach(), (x,), raise_exception=False)
    False
    """
    _check_options(check_forward_ad, check_backward_ad, check_batched_grad,
                   check_batched_forward_grad)
    try:
        return _run_gradcheck(func, inputs, eps=eps, atol=atol, rtol=rtol,
                              nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                              check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode,
                              masked=masked)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _run_gradcheck(func: Callable, inputs: Any, *, eps: float, atol: float, rtol: float,
                   nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool,
                   fast_mode: bool, masked: bool | None) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    _check_outputs(outputs)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
          nondet_tol)
    _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _random_grad_outputs(outputs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """torch.testing.make_tensor(low=-1, high=1, requires_grad=True) for each output."""
    return tuple(
        (rand(tuple(o.shape), dtype=o.dtype if _is_float_tensor(o) else float64) * 2 - 1)
        .requires_grad_(True)
        for o in outputs)


def gradgradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, grad_outputs) -> autograd.grad(
    func(inputs), inputs, grad_outputs, create_graph=True)``.

    torch.autograd.gradgradcheck. Without ``grad_outputs``, random float64 ones in [-1, 1)
    are drawn from jaxgrad's generator (``gen_non_contig_grad_outputs`` changes nothing:
    jaxgrad tensors have no memory layout). ``check_fwd_over_rev`` raises NotImplementedError.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([0.5, -1.0], dtype=jaxgrad.float64, requires_grad=True)
    >>> jaxgrad.autograd.gradgradcheck(lambda t: t.sin() * t, (x,))
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        tupled_grad_outputs = _random_grad_outputs(
            _differentiable_outputs(func(*tupled_inputs)))
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    first_grad_output = len(tupled_inputs)
    diff_input_indices = {i for i, x in enumerate(tupled_inputs)
                          if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs)
                                if x.requires_grad}

    def first_derivatives(*args: Any) -> tuple[Tensor, ...]:
        input_args = tuple(x.requires_grad_() if i in diff_input_indices else x
                           for i, x in enumerate(args[:first_grad_output]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                          for i, x in enumerate(args[first_grad_output:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_indices)
        grad_inputs = grad(outputs, diff_input_args, grad_outs, create_graph=True,
                           allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(
        first_derivatives, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad, fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev,
        masked=masked)
