"""``torch.autograd.functional``: Jacobians, Hessians and their products, over the engine.

Everything follows ``torch/autograd/functional.py`` (PyTorch 2.13): inputs are re-wrapped
(``view_as`` under ``create_graph``, else ``detach().requires_grad_()``), gradients come from
``autograd.grad``, forward-mode products use the double-backward trick, and results are
detached unless ``create_graph=True``. Return structures, ``strict`` errors and argument
errors are torch's.

``vectorize=True`` gives torch's vectorized results (values, structure, which results require
grad) but computes their rows one by one: jaxgrad has no batched gradients.
``strategy="forward-mode"`` (``jacobian``, and ``hessian``'s ``outer_jacobian_strategy``) runs
on JAX's forward mode through ``jaxgrad.func.jacfwd``; the combinations torch rejects raise
torch's errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .._core.tensor import Tensor
from .._core.transform_stack import (
    in_forward_mode,
    refuses_requires_grad,
    unsupported_inside_transform,
)
from .._engine.engine import grad
from .._engine.forward_ad import refuse_batched_duals
from .._func.transforms import jacfwd
from .._functions.creation import tensor, zeros_like
from .._functions.joins import stack

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

Tensors = Tensor | tuple[Tensor, ...]

# --- argument handling -------------------------------------------------------------------


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    """Whether ``inp`` was a tuple, and ``inp`` as a tuple of Tensors (torch's TypeErrors)."""
    is_tuple = isinstance(inp, tuple)
    tupled = inp if is_tuple else (inp,)
    for i, el in enumerate(tupled):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(el)}.")
    return is_tuple, tupled


def _outputs_as_tuple(outputs: Any, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    return _as_tuple(outputs, "outputs of the user-provided function", fn_name)


def _tuple_postprocess(res: Any, to_unpack: bool | tuple[bool, bool]) -> Any:
    """Undo ``_as_tuple``: unwrap the levels (outer, inner) whose input was not a tuple."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool,
                     need_graph: bool) -> tuple[Tensor, ...]:
    """Fresh Tensor objects for the inputs: a differentiable ``view_as`` when the graph must
    reach the caller's tensors, else a detached alias requiring grad iff ``need_graph``."""
    if refuses_requires_grad():
        raise unsupported_inside_transform("requires_grad_")
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else _fresh_leaf(inp, need_graph) for inp in inputs)


def _fresh_leaf(inp: Tensor, need_graph: bool) -> Tensor:
    """``inp.detach().requires_grad_(need_graph)``; under forward mode (the outer ``jacfwd`` of a
    forward-over-reverse Hessian) a leaf over the same traced value, which keeps its tangent
    (``detach`` would drop it)."""
    if in_forward_mode():
        return Tensor._make(inp._value, requires_grad=need_graph)
    return inp.detach().requires_grad_(need_graph)


def _grad_postprocess(results: tuple, create_graph: bool) -> tuple:
    """Detach results (also nested tuples of them) unless ``create_graph``."""
    if isinstance(results[0], Tensor):
        return results if create_graph else tuple(r.detach() for r in results)
    return tuple(_grad_postprocess(r, create_graph) for r in results)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got "
                f"{el_v.size()}.")


def _prepare_v(v: Any, fn_name: str, create_graph: bool, other: tuple[Tensor, ...],
               is_other_tuple: bool, none_message: str) -> tuple[Tensor, ...] | None:
    """``v`` as a tuple matching ``other``; None is only allowed for a single element."""
    if v is None:
        if len(other) != 1 or other[0].nelement() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, other, is_other_tuple)
    return v


_V_NONE_FOR_INPUT = ("The vector v can only be None if the input to the user-provided "
                     "function is a single Tensor with a single element.")

_STRICT_MESSAGES = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."),
}


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """In strict mode, every tensor of ``tensors`` (outputs, gradients...) must require grad."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[kind].format(i=i))


def _one_hot(like: Tensor, flat_index: int, dtype: Any = None) -> Tensor:
    """1 at ``flat_index`` (row-major) of a tensor shaped like ``like``, 0 elsewhere, of
    ``like``'s dtype unless given. Built on the host: an in-place write at a Python index
    would compile once per index."""
    values = np.eye(1, like.numel(), flat_index).reshape(tuple(like.shape))
    return tensor(values, dtype=dtype or like.dtype)


# --- gradients -----------------------------------------------------------------------------


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """``autograd.grad`` over the outputs that require grad (all None when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


_ZERO_FILL_STRICT_MESSAGES = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple[Tensor, ...]:
    """Replace None gradients by zeros shaped like ``refs`` (strict mode: raise instead)."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_FILL_STRICT_MESSAGES[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _single_element_output(outputs: Any, fn_name: str, strict: bool) -> tuple[Tensor, ...]:
    """The checks hessian/vhp/hvp make on ``func``'s result: one Tensor with one element."""
    is_tuple, tupled = _outputs_as_tuple(outputs, fn_name)
    _check_requires_grad(tupled, "outputs", strict=strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if tupled[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return tupled


def _results(outputs: tuple, is_outputs_tuple: bool, products: tuple, is_products_tuple: bool,
             create_graph: bool) -> tuple[Any, Any]:
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(products, create_graph), is_products_tuple))


# --- public API ----------------------------------------------------------------------------


def vjp(func: Callable[..., Tensors], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Tensors, Tensors]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product (torch.autograd.functional.vjp).

    >>> import jaxgrad
    >>> from jaxgrad.autograd.functional import vjp
    >>> vjp(lambda x: 2 * x, jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 3.0]))
    (tensor([2., 4.]), tensor([2., 6.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_as_tuple(func(*inputs), "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, "vjp", create_graph, outputs, is_outputs_tuple,
                       "The vector v can only be None if the user-provided function returns a "
                       "single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        products = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return _results(outputs, is_outputs_tuple, products, is_inputs_tuple, create_graph)


def jvp(func: Callable[..., Tensors], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Tensors, Tensors]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick
    (torch.autograd.functional.jvp).

    >>> import jaxgrad
    >>> from jaxgrad.autograd.functional import jvp
    >>> jvp(lambda x: x * x, jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 1.0]))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, "jvp", create_graph, inputs, is_inputs_tuple, _V_NONE_FOR_INPUT)
        is_outputs_tuple, outputs = _outputs_as_tuple(func(*inputs), "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # the backward is linear in grad_outputs: their (finite) values do not matter
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        products = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return _results(outputs, is_outputs_tuple, products, is_outputs_tuple, create_graph)


def _jacobian_rows(out: Tensor, i: int, inputs: tuple[Tensor, ...], create_graph: bool,
                   strict: bool) -> tuple[Tensor, ...]:
    """``d out / d inputs[k]`` for every k, shaped ``out.shape + inputs[k].shape``: one
    ``autograd.grad`` call per element of ``out``."""
    rows: tuple[list[Tensor], ...] = tuple([] for _ in inputs)
    for j in range(out.nelement()):
        vj = _autograd_grad((out,), inputs, (_one_hot(out, j),), retain_graph=True,
                            create_graph=create_graph)
        for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input {k}."
                        " This is not allowed in strict mode.")
                g = zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(
                    f"The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode when create_graph=True.")
            row.append(g)
    return tuple(stack(row, dim=0).view(out.size() + inp.size())
                 for row, inp in zip(rows, inputs))


def _construct_standard_basis_for(tensors: tuple[Tensor, ...],
                                  tensor_numels: tuple[int, ...]) -> tuple[Tensor, ...]:
    """The ``N = sum(tensor_numels)`` identity matrix split by columns into one ``(N, numel)``
    chunk per tensor, each in its tensor's dtype and device (torch's private helper, which
    tests and vectorized Jacobians call).

    >>> import jaxgrad
    >>> from jaxgrad.autograd.functional import _construct_standard_basis_for
    >>> a, b = _construct_standard_basis_for((jaxgrad.zeros(1), jaxgrad.zeros(2)), (1, 2))
    >>> a.tolist(), b.tolist()
    ([[1.0], [0.0], [0.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    """
    if len(tensors) != len(tensor_numels):
        raise AssertionError("Expected tensors and tensor_numels to have the same length, but "
                             f"got {len(tensors)} and {len(tensor_numels)}")
    if not tensors:
        raise AssertionError("Expected at least one tensor")
    total, start = sum(tensor_numels), 0
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, tensor_numels))
    for chunk, n in zip(chunks, tensor_numels):
        chunk.diagonal(start).fill_(1)  # in place, as torch's: each chunk is at version 1
        start -= n
    return chunks


def _unit_grad_outputs(outputs: tuple[Tensor, ...], k: int) -> tuple[Tensor, ...]:
    """Row ``k`` of the identity over all outputs' elements, split into one flat grad_output
    per output (torch's _construct_standard_basis_for, one row at a time)."""
    grads = []
    for out in outputs:
        flat = out.reshape(-1)
        grads.append(_one_hot(flat, k) if 0 <= k < out.numel() else zeros_like(flat))
        k -= out.numel()
    return tuple(grads)


def _vectorized_jacobian(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...],
                         create_graph: bool) -> tuple[tuple[Tensor, ...], ...]:
    """torch's ``vectorize=True`` layout: per input, one ``(total output numel, *input.shape)``
    Jacobian from ``autograd.grad`` over all (flattened) outputs at once, split by output.
    torch batches the rows with vmap; jaxgrad computes them one by one."""
    numels = [out.numel() for out in outputs]
    flat_outputs = tuple(out.reshape(-1) for out in outputs)
    rows = [_autograd_grad(flat_outputs, inputs, _unit_grad_outputs(outputs, k),
                           retain_graph=True, create_graph=create_graph)
            for k in range(sum(numels))]
    per_input = []
    for i, inp in enumerate(inputs):
        grads = [row[i] for row in rows]
        if rows and grads[0] is not None:
            jac = stack(grads, dim=0)
        else:
            jac = zeros_like(inp).expand((sum(numels), *inp.shape))
        starts = [sum(numels[:k]) for k in range(len(numels))]
        per_input.append([jac[start:start + n].view(out.shape + inp.shape)
                          for start, n, out in zip(starts, numels, outputs)])
    return tuple(zip(*per_input))


def _forward_mode_jacobian(func: Callable, inputs: Any, create_graph: bool, strict: bool,
                           vectorize: bool) -> Any:
    """torch's checks for ``strategy="forward-mode"``, in torch's order, then the Jacobian by
    JAX's forward mode (``jaxgrad.func.jacfwd``: ``jax.jvp`` of the function over the input
    basis), laid out as torch's ``_jacfwd`` lays it out. As torch's, the result is not detached:
it is connected to inputs that require grad (through one node, not torch's view chain)."""
    if create_graph:
        raise NotImplementedError(
            "jaxgrad.autograd.functional.jacobian: `create_graph=True` "
            'and `strategy="forward-mode"` are not supported together (yet). '
            "Please either set `create_graph=False` or "
            '`strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError(
            "jaxgrad.autograd.functional.jacobian: `strict=True` "
            'and `strategy="forward-mode"` are not supported together (yet). '
            "Please either set `strict=False` or "
            '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`.")
    # torch makes dual tensors of the inputs, which torch.func's vmap cannot batch
    refuse_batched_duals("_make_dual", *[i for i in inputs if isinstance(i, Tensor)])
    outputs_are_tuple = []

    def flat_func(*inp: Tensor) -> tuple[Tensor, ...]:
        is_tuple, outputs = _outputs_as_tuple(func(*inp), "jacobian")
        outputs_are_tuple.append(is_tuple)
        return outputs

    jac = jacfwd(flat_func, argnums=tuple(range(len(inputs))))(*inputs)
    return _tuple_postprocess(jac, (outputs_are_tuple[0], is_inputs_tuple))


def jacobian(func: Callable[..., Tensors], inputs: Tensors, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Tensors | tuple[Tensors, ...]:
    """The Jacobian of ``func`` at ``inputs`` (torch.autograd.functional.jacobian).

    ``J[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``; the tuple levels exist only
    where ``func``'s outputs / ``inputs`` were tuples.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, jaxgrad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        return _forward_mode_jacobian(func, inputs, create_graph, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_as_tuple(func(*inputs), "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError(
                "jaxgrad.autograd.functional.jacobian: `strict=True` "
                "and `vectorized=True` are not supported together. "
                "Please either set `strict=False` or "
                "`vectorize=False`.")
        if vectorize:
            jac = _vectorized_jacobian(outputs, inputs, create_graph)
        else:
            jac = tuple(_jacobian_rows(out, i, inputs, create_graph, strict)
                        for i, out in enumerate(outputs))
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable[..., Tensor], inputs: Tensors, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Tensor | tuple[tuple[Tensor, ...],
                                                                              ...]:
    """The Hessian of a scalar ``func`` at ``inputs`` (torch.autograd.functional.hessian):
    the Jacobian of its Jacobian; ``H[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), jaxgrad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output_func(*inp: Tensor) -> Tensor:
        (out,) = _single_element_output(func(*inp), "hessian", strict)
        return out.squeeze()

    def jac_func(*inp: Tensor) -> Tensors:
        jac = jacobian(single_output_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _first_derivatives(func: Callable, inputs: Tensors, v: Any, create_graph: bool,
                       strict: bool, fn_name: str) -> tuple:
    """What vhp and hvp share: prepared inputs and v, ``func``'s output, and its gradient
    with ``create_graph=True``."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _prepare_v(v, fn_name, create_graph, inputs, is_inputs_tuple, _V_NONE_FOR_INPUT)
    outputs = _single_element_output(func(*inputs), fn_name, strict)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func: Callable[..., Tensor], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Tensor, Tensors]:
    """``(func(inputs), v^T H)`` for a scalar ``func`` (torch.autograd.functional.vhp).

    >>> import jaxgrad
    >>> from jaxgrad.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 1.0]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _first_derivatives(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        products = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return _results(outputs, False, products, is_inputs_tuple, create_graph)


def hvp(func: Callable[..., Tensor], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Tensor, Tensors]:
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-backward trick
    (torch.autograd.functional.hvp).

    >>> import jaxgrad
    >>> from jaxgrad.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 1.0]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _first_derivatives(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        products = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return _results(outputs, False, products, is_inputs_tuple, create_graph)
