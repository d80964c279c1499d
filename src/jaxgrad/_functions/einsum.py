"""``einsum``, with torch's algorithm: align the operands, then contract pairs with bmm.
"""

from __future__ import annotations

import builtins
from typing import Any

from .._core.tensor import Tensor, _wrap_dim
from .arguments import require_tensors
from .linalg import bmm
from .opgen import declare
from .pointwise import mul
from .reductions import sum
from .shapes import diagonal, permute, reshape, unsqueeze, view

_ELLIPSIS = 52  # subscripts 0-25 are A-Z, 26-51 a-z


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + 26


def _label(subscript: int) -> str:
    return chr(subscript + ord("A")) if subscript < 26 else chr(subscript - 26 + ord("a"))


def _is_label(c: str) -> bool:
    return c.isascii() and c.isalpha()


def _parse_operand_labels(lhs: str, num_ops: int) -> list[list[int]]:
    labels: list[list[int]] = [[] for _ in range(num_ops)]
    ellipsis, current, i = False, 0, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an "
                                   "ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part "
                                   "of any ellipsis")
            i += 2
            labels[current].append(_ELLIPSIS)
            ellipsis = True
        elif c == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                                   "equation")
            ellipsis = False
        elif c != " ":
            if not _is_label(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            labels[current].append(_subscript(c))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


def _einsum(equation: str, operands: list) -> Tensor:
    """torch's native einsum (no contraction path: pairs are contracted left to right)."""
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_operand_labels(lhs, num_ops)
    label_count, ell_num_dim = [0] * 52, 0
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        n, has_ellipsis = len(labels), _ELLIPSIS in labels
        for s in labels:
            if s == _ELLIPSIS:
                n -= 1
                ell_num_dim = builtins.max(ell_num_dim, t.ndim - n)
            else:
                label_count[s] += 1
        if not (n <= t.ndim if has_ellipsis else n == t.ndim):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n}) "
                f"{'is more than' if has_ellipsis else 'does not match'} the number of dimensions "
                f"({t.ndim}) for operand {i}{'' if has_ellipsis else ' and no ellipsis was given'}")
    # where each label goes: output dims first, then the dims to sum out
    perm, perm_index, ell_index, ell_in_output = [-1] * 52, 0, 0, False
    if arrow < 0:
        perm_index, ell_in_output = ell_num_dim, True
        for s in range(52):
            if label_count[s] == 1:
                perm[s], perm_index = perm_index, perm_index + 1
    else:
        rhs, i = equation[arrow + 2:], 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                       "already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis (...)")
                i += 2
                ell_index, perm_index, ell_in_output = perm_index, perm_index + ell_num_dim, True
            elif c != " ":
                if not _is_label(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index "
                                       f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                       "must be in [a-zA-Z]")
                s = _subscript(c)
                if not (label_count[s] > 0 and perm[s] == -1):
                    why = ("appears more than once in the output" if perm[s] > -1
                           else "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {c} {why}")
                perm[s], perm_index = perm_index, perm_index + 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index, perm_index = perm_index, perm_index + ell_num_dim
    for s in range(52):
        if label_count[s] > 0 and perm[s] == -1:
            perm[s], perm_index = perm_index, perm_index + 1
    ops, dim_counts = _align_operands(operands, op_labels, perm, perm_index, ell_index,
                                      ell_num_dim)
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sums, b_sums = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sums.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sums.append(d)
                    dim_counts[d] = 0
        if a_sums:
            a = sum(a, a_sums, True)
        if b_sums:
            b = sum(b, b_sums, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    if perm_index > out_num_dim:
        if num_ops > 1:  # the summed dims have size 1 by now
            return view(ops[0], tuple(ops[0].shape)[:out_num_dim])
        return sum(ops[0], list(range(out_num_dim, perm_index)))
    return ops[0]


def _align_operands(operands: list, op_labels: list, perm: list, perm_index: int,
                    ell_index: int, ell_num_dim: int) -> tuple[list, list]:
    """Each operand with repeated labels reduced to diagonals, missing dims unsqueezed and its
    dims permuted to ``perm``'s order; and per dim, how many operands have it larger than 1."""
    label_size, ell_sizes, dim_counts, ops = [1] * 52, [1] * ell_num_dim, [0] * perm_index, []
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        op, permutation, dim = t, [-1] * perm_index, 0
        for s in labels:
            if s == _ELLIPSIS:
                covered = t.ndim - (len(labels) - 1)
                for j in range(ell_num_dim - covered, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                                f"size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm[s]] += 1
                permutation[perm[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, where the label first appeared
                prev = permutation[perm[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = _movedim(diagonal(op, 0, prev, dim), -1, prev)
        for k in range(perm_index):
            if permutation[k] == -1:
                op = unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(permute(op, permutation))
    return ops, dim_counts


def _movedim(input: Tensor, source: int, destination: int) -> Tensor:
    """torch's movedim of one dim: a permute."""
    source, destination = _wrap_dim(source, input.ndim), _wrap_dim(destination, input.ndim)
    order = [d for d in range(input.ndim) if d != source]
    order.insert(destination, source)
    return permute(input, order)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """torch's sumproduct_pair (keepdim): multiply two aligned operands and sum ``sum_dims``,
    as one bmm between permuted reshapes."""
    if not sum_dims:
        return mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = sum(left, i, True)
            elif sr:
                right = sum(right, i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    order = lro + lo + sum_dims + ro
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    left = reshape(permute(left, order), (lro_size, lo_size, sum_size))
    right = reshape(permute(right, lro + sum_dims + ro + lo), (lro_size, sum_size, ro_size))
    return permute(view(bmm(left, right), tuple(out_size)), inverse)


@declare('einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor',
         variants='function', python_level=True)
def einsum(*args: Any) -> Tensor:
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``. Operands come as
    arguments or as one list; ``...`` stands for broadcast dims; without ``->`` the output has
    the labels seen once, in alphabetical order. Composed of views, ``sum``, ``mul`` and ``bmm``
    as torch composes it.

    >>> import jaxgrad
    >>> a, b = jaxgrad.ones(2, 3), jaxgrad.ones(3, 4)
    >>> jaxgrad.einsum("ij,jk->ik", a, b).shape, jaxgrad.einsum("ii", jaxgrad.eye(3))
    (jaxgrad.Size([2, 4]), tensor(3.))
    """
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    equation, operands = args[0], list(args[1:])
    if isinstance(equation, Tensor):
        raise NotImplementedError("jaxgrad.einsum: the sublist format (operand, subscripts, "
                                  "...) is not supported; pass an equation string")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    require_tensors(*operands)
    return _einsum(equation, operands)
