"""View ops: results share their input's storage. Each row comes with its stride geometry
(torch's sizes/strides/offset rules), which says where the view's elements live in the base.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import jax_compat as compat
from .._core.caches import cache
from .._core.storage import Layout, _flat_index, view_strides
from ._table import Op, identity_grad


def _named(op: Op, node: str) -> Op:
    """The same row under another torch node name (e.g. SqueezeBackward1)."""
    return Op(op.name, node, op.forward, inputs=op.inputs, outputs=op.outputs, grads=op.grads,
              grad_layout=op.grad_layout, grad_version=op.grad_version,
              grad_nodes=op.grad_nodes)


# --- geometry: Layout -> Layout ---------------------------------------------------------------

def view_geometry(layout: Layout, shape: tuple[int, ...]) -> Layout:
    strides = view_strides(layout.shape, layout.strides, shape)
    assert strides is not None  # callers check viewability first
    return Layout(tuple(shape), strides, layout.offset)


def slice_geometry(layout: Layout, dim: int, start: int, stop: int, step: int) -> Layout:
    shape, strides = list(layout.shape), list(layout.strides)
    shape[dim] = len(range(start, stop, step))
    offset = layout.offset + (start * strides[dim] if shape[dim] else 0)
    strides[dim] *= step
    return Layout(tuple(shape), tuple(strides), offset)


def select_geometry(layout: Layout, dim: int, index: int) -> Layout:
    shape, strides = list(layout.shape), list(layout.strides)
    offset = layout.offset + index * strides[dim]
    del shape[dim], strides[dim]
    return Layout(tuple(shape), tuple(strides), offset)


def unsqueeze_geometry(layout: Layout, dim: int) -> Layout:
    shape, strides = list(layout.shape), list(layout.strides)
    stride = 1 if dim >= len(shape) else shape[dim] * strides[dim]
    shape.insert(dim, 1)
    strides.insert(dim, stride)
    return Layout(tuple(shape), tuple(strides), layout.offset)


def squeeze_geometry(layout: Layout, dims: tuple[int, ...]) -> Layout:
    keep = [i for i in range(len(layout.shape)) if not (i in dims and layout.shape[i] == 1)]
    return Layout(tuple(layout.shape[i] for i in keep), tuple(layout.strides[i] for i in keep),
                  layout.offset)


def permute_geometry(layout: Layout, dims: tuple[int, ...]) -> Layout:
    return Layout(tuple(layout.shape[d] for d in dims), tuple(layout.strides[d] for d in dims),
                  layout.offset)


def transpose_geometry(layout: Layout, dim0: int, dim1: int) -> Layout:
    dims = list(range(len(layout.shape)))
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return permute_geometry(layout, tuple(dims))


def t_geometry(layout: Layout) -> Layout:
    return permute_geometry(layout, tuple(reversed(range(len(layout.shape)))))


def expand_geometry(layout: Layout, shape: tuple[int, ...]) -> Layout:
    lead = len(shape) - len(layout.shape)
    strides = [0] * lead
    for i, (old, stride) in enumerate(zip(layout.shape, layout.strides)):
        strides.append(stride if old == shape[lead + i] else 0)
    return Layout(tuple(shape), tuple(strides), layout.offset)


def alias_geometry(layout: Layout) -> Layout:
    return layout


# --- forwards and gradients -----------------------------------------------------------------

def _slice_fwd(x, dim, start, stop, step):
    if stop <= start:
        shape = list(x.shape)
        shape[dim] = 0
        return jnp.zeros(shape, x.dtype)
    return lax.slice_in_dim(x, start, stop, step, axis=dim)


def _slice_grad(grad, self_shape, dim, start, stop, step):
    index = [slice(None)] * len(self_shape)
    index[dim] = slice(start, stop, step)
    return jnp.zeros(self_shape, grad.dtype).at[tuple(index)].set(grad)


def _select_grad(grad, self_shape, dim, index):
    where = [slice(None)] * len(self_shape)
    where[dim] = index
    return jnp.zeros(self_shape, grad.dtype).at[tuple(where)].set(grad)


def _inverse(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


def _gather_layout(x, layout_out):
    return x.reshape(-1)[_flat_index(layout_out)]


def _scatter_layout_grad(grad, self_shape, layout_out):
    idx = _flat_index(layout_out).reshape(-1)
    flat = jnp.zeros(math.prod(self_shape), grad.dtype).at[idx].add(grad.reshape(-1))
    return flat.reshape(self_shape)


VIEW = Op("view", "ViewBackward0", lambda x, shape: x.reshape(shape),
          grads={"self": lambda grad, self_shape: grad.reshape(self_shape)}, grad_layout="view",
          grad_nodes={"self": "ViewBackward0"})
RESHAPE_ALIAS = Op("_reshape_alias", "ReshapeAliasBackward0", VIEW.forward, grads=VIEW.grads,
                   grad_layout="view")
ALIAS = Op("alias", "AliasBackward0", lambda x: x, grads={"self": identity_grad})
# forward AD's unpacked primal: an alias whose node is torch's C++ Identity (no Python class of
# its own there: ``CppFunction``, named ``torch::autograd::Identity``)
UNPACKED_PRIMAL = Op("_unpack_dual", "torch::autograd::Identity", lambda x: x,
                     grads={"self": identity_grad})
SLICE = Op("slice", "SliceBackward0", _slice_fwd, grads={"self": _slice_grad},
           grad_nodes={"self": "SliceBackwardBackward0"})
SELECT = Op("select", "SelectBackward0",
            lambda x, dim, index: lax.index_in_dim(x, index, dim, keepdims=False),
            grads={"self": _select_grad}, grad_nodes={"self": "SelectBackwardBackward0"})
UNSQUEEZE = Op("unsqueeze", "UnsqueezeBackward0", lambda x, dim: jnp.expand_dims(x, dim),
               grads={"self": lambda grad, dim: jnp.squeeze(grad, dim)}, grad_layout="view",
               grad_nodes={"self": "SqueezeBackward1"})
SQUEEZE = Op("squeeze", "SqueezeBackward0",
             # (a 0-d tensor's squeeze(0) names dim 0, which it does not have)
             lambda x, dims: jnp.squeeze(x, tuple(d for d in dims if d < x.ndim
                                                  and x.shape[d] == 1)),
             grads={"self": lambda grad, self_shape: grad.reshape(self_shape)}, grad_layout="view",
             grad_nodes={"self": "UnsqueezeBackward0"})
SQUEEZE_DIM = _named(SQUEEZE, "SqueezeBackward1")
SQUEEZE_DIMS = _named(SQUEEZE, "SqueezeBackward2")
SQUEEZE_INPLACE = _named(SQUEEZE, "SqueezeBackward4")  # squeeze_(dim) of a non-view tensor
PERMUTE = Op("permute", "PermuteBackward0", lambda x, dims: jnp.transpose(x, dims),
             grads={"self": lambda grad, dims: jnp.transpose(grad, _inverse(dims))},
             grad_layout="view", grad_nodes={"self": "PermuteBackward0"})
TRANSPOSE = Op("transpose", "TransposeBackward0", lambda x, dim0, dim1: jnp.swapaxes(x, dim0, dim1),
               grads={"self": lambda grad, dim0, dim1: jnp.swapaxes(grad, dim0, dim1)},
               grad_layout="view", grad_nodes={"self": "TransposeBackward0"})
T = Op("t", "TBackward0", lambda x: x.T, grads={"self": lambda grad: grad.T}, grad_layout="view",
       grad_nodes={"self": "TBackward0"})
EXPAND = Op("expand", "ExpandBackward0", lambda x, shape: jnp.broadcast_to(x, shape),
            grads={"self": identity_grad}, grad_nodes={"self": "sum_to"})
AS_STRIDED = Op("as_strided", "AsStridedBackward0", _gather_layout,
                grads={"self": _scatter_layout_grad}, grad_version=1,  # (zeros, then a copy_)
                grad_nodes={"self": "AsStridedBackward0"})


def _strided_of_storage(x, storage, input_layout, layout_out):
    """as_strided reaching storage elements outside ``x`` (or ``x`` not contiguous): ``x``
    written into its storage, the view read out of that."""
    flat = storage.reshape(-1).at[_flat_index(input_layout).reshape(-1)].set(x.reshape(-1))
    return flat[_flat_index(layout_out)]


def _strided_of_storage_grad(grad, storage, input_layout, layout_out):
    """torch's as_strided_backward: the gradient summed into a zero storage at the view's
    positions, divided (where the input's elements overlap, an expanded input) by how many
    input elements share each storage element, read back at the input's positions."""
    flat = jnp.zeros(storage.size, grad.dtype).at[_flat_index(layout_out).reshape(-1)].add(
        grad.reshape(-1))
    inputs = _flat_index(input_layout)
    count = np.bincount(inputs.reshape(-1), minlength=storage.size)
    if count.max(initial=0) > 1:
        flat = flat / jnp.asarray(np.maximum(count, 1), grad.dtype)
    return flat[inputs]


AS_STRIDED_OF_STORAGE = Op("as_strided", "AsStridedBackward0", _strided_of_storage,
                           aux=("storage",), grads={"self": _strided_of_storage_grad},
                           grad_version=1,
                           grad_nodes={"self": "AsStridedBackward0"})


def _extent(*layouts):
    """How many storage elements reach the last element of any of ``layouts``."""
    return max((lay.offset + 1 + sum((n - 1) * st for n, st in zip(lay.shape, lay.strides))
                for lay in layouts if 0 not in lay.shape), default=0)


def _strided_within(x, input_layout, layout_out):
    """as_strided of ``x`` (at ``input_layout`` in its storage) at ``layout_out`` of the same
    storage, inside ``x``'s elements: torch's as_strided step of a view_fn (as
    ``_strided_of_storage``, over a storage holding only ``x``)."""
    storage = jnp.zeros(_extent(input_layout, layout_out), x.dtype)
    return _strided_of_storage(x, storage, input_layout, layout_out)


def _strided_within_grad(grad, input_layout, layout_out):
    storage = jnp.zeros(_extent(input_layout, layout_out), grad.dtype)
    return _strided_of_storage_grad(grad, storage, input_layout, layout_out)


AS_STRIDED_WITHIN = Op("as_strided", "AsStridedBackward0", _strided_within,
                       grads={"self": _strided_within_grad}, grad_version=1,
                       grad_nodes={"self": "AsStridedBackward0"})


# Non-view relatives: copies that torch records under these names.
UNSAFE_VIEW = Op("_unsafe_view", "UnsafeViewBackward0", lambda x, shape: x.reshape(shape),
                 grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                 grad_layout="view", grad_nodes={"self": "ViewBackward0"})
CLONE = Op("clone", "CloneBackward0", lambda x: x, grads={"self": identity_grad})
AS_STRIDED_SCATTER = Op(
    "as_strided_scatter", "AsStridedScatterBackward0",
    lambda x, src, layout_out: x.reshape(-1).at[_flat_index(layout_out).reshape(-1)].set(
        src.reshape(-1)).reshape(x.shape),
    inputs=("self", "src"),
    grads={
        "self": lambda grad, layout_out: grad.reshape(-1).at[
            _flat_index(layout_out).reshape(-1)].set(0).reshape(grad.shape),
        "src": lambda grad, layout_out: _gather_layout(grad, layout_out),
    })

# the public op: derivatives.yaml's as_strided_scatter_backward gives ``self`` the gradient *at*
# the scattered positions (zeros elsewhere), as torch computes it
AS_STRIDED_SCATTER_OP = Op(
    "as_strided_scatter", "AsStridedScatterBackward0", AS_STRIDED_SCATTER.forward,
    inputs=("self", "src"),
    grads={"self": lambda grad, layout_out: jnp.zeros_like(grad).reshape(-1).at[
        _flat_index(layout_out).reshape(-1)].set(_gather_layout(grad, layout_out).reshape(-1))
        .reshape(grad.shape),
        "src": AS_STRIDED_SCATTER.grads["src"]})


# --- diagonal: a view whose last dim walks the (dim1, dim2) diagonal ------------------------------

def _diagonal_extent(shape, offset, dim1, dim2):
    """(length, first row, first column) of the ``offset``-th diagonal of dims dim1/dim2."""
    row, col = max(-offset, 0), max(offset, 0)
    return max(min(shape[dim1] - row, shape[dim2] - col), 0), row, col


def diagonal_geometry(layout: Layout, offset: int, dim1: int, dim2: int) -> Layout:
    size, row, col = _diagonal_extent(layout.shape, offset, dim1, dim2)
    keep = [d for d in range(len(layout.shape)) if d not in (dim1, dim2)]
    start = layout.offset + (row * layout.strides[dim1] + col * layout.strides[dim2] if size
                             else 0)
    return Layout(tuple(layout.shape[d] for d in keep) + (size,),
                  tuple(layout.strides[d] for d in keep)
                  + (layout.strides[dim1] + layout.strides[dim2],), start)


def _diagonal_grad(grad, self_shape, offset, dim1, dim2):
    size, row, col = _diagonal_extent(self_shape, offset, dim1, dim2)
    zeros = jnp.moveaxis(jnp.zeros(self_shape, grad.dtype), (dim1, dim2), (-2, -1))
    steps = jnp.arange(size)
    return jnp.moveaxis(zeros.at[..., steps + row, steps + col].set(grad), (-2, -1),
                        (dim1, dim2))


DIAGONAL = Op("diagonal", "DiagonalBackward0",
              lambda x, offset, dim1, dim2: jnp.diagonal(x, offset, dim1, dim2),
              grads={"self": _diagonal_grad}, grad_nodes={"self": "DiagonalBackwardBackward0"})


# --- unfold, as_strided, in-place views, flips, rolls, repeats, diagonals and their copies --------

def unfold_geometry(layout: Layout, dimension: int, size: int, step: int) -> Layout:
    shape, strides = list(layout.shape), list(layout.strides)
    if shape:
        shape[dimension] = (shape[dimension] - size) // step + 1
        inner = strides[dimension]
        strides[dimension] *= step
    else:
        inner = 1
    return Layout(tuple(shape) + (size,), tuple(strides) + (inner,), layout.offset)


def _unfold_index(n: int, size: int, step: int):
    """Where each element of the windows (count, size) comes from along the unfolded dim."""
    count = (n - size) // step + 1
    return (jnp.arange(count)[:, None] * step + jnp.arange(size)[None, :])


def _unfold_fwd(x, dimension, size, step):
    if x.ndim == 0:
        return x.reshape(1)
    windows = jnp.take(x, _unfold_index(x.shape[dimension], size, step), axis=dimension)
    return jnp.moveaxis(windows, dimension + 1, -1)


def _unfold_grad(grad, self_shape, dimension, size, step):
    if not self_shape:
        return grad.reshape(())
    idx = _unfold_index(self_shape[dimension], size, step)
    g = jnp.moveaxis(grad, -1, dimension + 1)  # (..., count, size, ...)
    g = jnp.moveaxis(g, (dimension, dimension + 1), (0, 1))
    out = jnp.zeros((self_shape[dimension],) + g.shape[2:], grad.dtype).at[idx].add(g)
    return jnp.moveaxis(out, 0, dimension)


def _flip(x, dims):
    return jnp.flip(x, dims) if dims else x


def _roll(x, shifts, dims):
    if not dims:
        return compat.roll(x.reshape(-1), shifts[0], 0).reshape(x.shape)
    return compat.roll(x, shifts, dims)


def _repeat_fwd(x, repeats):
    return jnp.tile(x.reshape((1,) * (len(repeats) - x.ndim) + x.shape), repeats)


def _repeat_grad(grad, self_shape, repeats):
    lead = len(repeats) - len(self_shape)
    shape = (1,) * lead + tuple(self_shape)
    split = []
    for r, s in zip(repeats, shape):
        split += [r, s]
    return grad.reshape(split).sum(axis=tuple(range(0, 2 * len(shape), 2))).reshape(self_shape)


def _diag_embed_fwd(x, offset, dim1, dim2):
    n = x.shape[-1] + abs(offset)
    row, col = max(-offset, 0), max(offset, 0)
    steps = jnp.arange(x.shape[-1])
    out = jnp.zeros(x.shape[:-1] + (n, n), x.dtype).at[..., steps + row, steps + col].set(x)
    rest = list(range(out.ndim - 2))
    order = [0] * out.ndim
    order[dim1], order[dim2] = out.ndim - 2, out.ndim - 1
    for d in range(out.ndim):
        if d not in (dim1, dim2):
            order[d] = rest.pop(0)
    return jnp.transpose(out, order)


def _trace_grad(grad, self_shape):
    n = min(self_shape)
    return jnp.zeros(self_shape, grad.dtype).at[jnp.arange(n), jnp.arange(n)].set(grad)


def _cross(a, b, dim):
    return jnp.cross(a, b, axis=dim)


def _as_block(x):
    return x.reshape((1,) * (2 - x.ndim) + x.shape)


def _block_diag_fwd(*blocks):
    blocks = [_as_block(b) for b in blocks]
    rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    out = jnp.zeros((rows, cols), blocks[0].dtype if blocks else jnp.float32)
    r = c = 0
    for b in blocks:
        out = out.at[r:r + b.shape[0], c:c + b.shape[1]].set(b.astype(out.dtype))
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _block_diag_grads(grad, in_shapes):
    r, c, out = 0, 0, []
    for shape in in_shapes:
        rows, cols = ((1,) * (2 - len(shape)) + tuple(shape))
        out.append(grad[r:r + rows, c:c + cols].reshape(shape))
        r, c = r + rows, c + cols
    return tuple(out)


UNFOLD = Op("unfold", "UnfoldBackward0", _unfold_fwd, grads={"self": _unfold_grad},
            grad_nodes={"self": "UnfoldBackwardBackward0"})
# unfold's backward as an op of its own (torch's ``unfold_backward``: istft's overlap-add)
UNFOLD_BACKWARD = Op(
    "unfold_backward", "UnfoldBackwardBackward0",
    lambda grad_in, input_sizes, dim, size, step: _unfold_grad(grad_in, input_sizes, dim, size,
                                                               step),
    inputs=("grad_in",),
    grads={"grad_in": lambda grad, dim, size, step: _unfold_fwd(grad, dim, size, step)},
    grad_nodes={"grad_in": "UnfoldBackward0"})
UNSQUEEZE_INPLACE = _named(UNSQUEEZE, "UnsqueezeBackward1")
SQUEEZE_ALL_INPLACE = _named(SQUEEZE, "SqueezeBackward3")
SQUEEZE_DIMS_INPLACE = _named(SQUEEZE, "SqueezeBackward5")
T_INPLACE = _named(T, "TBackward1")
TRANSPOSE_INPLACE = _named(TRANSPOSE, "TransposeBackward1")
AS_STRIDED_INPLACE = _named(AS_STRIDED, "AsStridedBackward1")
FLIP = Op("flip", "FlipBackward0", _flip, grads={"self": lambda grad, dims: _flip(grad, dims)})
ROLL = Op("roll", "RollBackward0", _roll,
          grads={"self": lambda grad, shifts, dims: _roll(grad, tuple(-s for s in shifts), dims)},
          grad_nodes={"self": "RollBackward0"})
ROT90 = Op("rot90", "Rot90Backward0", lambda x, k, dims: jnp.rot90(x, k, dims),
           grads={"self": lambda grad, k, dims: jnp.rot90(grad, -k, dims)},
           grad_nodes={"self": "Rot90Backward0"})
REPEAT = Op("repeat", "RepeatBackward0", _repeat_fwd, grads={"self": _repeat_grad},
            grad_nodes={"self": "SumBackward1"})
DIAG_EMBED = Op("diag_embed", "DiagEmbedBackward0", _diag_embed_fwd,
                grads={"self": lambda grad, offset, dim1, dim2: jnp.diagonal(grad, offset, dim1,
                                                                             dim2)},
                grad_nodes={"self": "DiagonalBackward0"})
DIAGONAL_COPY = _named(DIAGONAL, "DiagonalBackward0_copy")
TRACE = Op("trace", "TraceBackward0", jnp.trace, grads={"self": _trace_grad})
LINALG_CROSS = Op("linalg_cross", "LinalgCrossBackward0", _cross, inputs=("self", "other"),
                  grads={"self": lambda grad, other, dim: _cross(other, grad, dim),
                         "other": lambda grad, self, dim: _cross(grad, self, dim)},
                  grad_nodes={"self": "LinalgCrossBackward0", "other": "LinalgCrossBackward0"})
BLOCK_DIAG = Op("block_diag", "BlockDiagBackward0", _block_diag_fwd, inputs=None,
                promote="common", variadic=_block_diag_grads)


# --- views reading their input's memory through a lens: conjugate/negative bits, dtype views ---

def as_real_geometry(layout: Layout) -> Layout:
    """view_as_real: each complex element becomes two floats (strides and offset double)."""
    return Layout(layout.shape + (2,), tuple(2 * s for s in layout.strides) + (1,),
                  2 * layout.offset)


def as_complex_geometry(layout: Layout) -> Layout:
    """view_as_complex: the trailing pair of floats becomes one complex element."""
    return Layout(layout.shape[:-1], tuple(s // 2 for s in layout.strides[:-1]),
                  layout.offset // 2)


def _as_real(x):
    return jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)


def _as_complex(x):
    return lax.complex(x[..., 0], x[..., 1])


# torch's formulas: ``grad.conj()``, ``grad.neg()``, ``at::view_as_complex(grad.contiguous())``,
# ``at::view_as_real(grad.contiguous().resolve_conj())``
CONJ = Op("_conj", "ConjBackward0", jnp.conj, grads={"self": lambda grad: jnp.conj(grad)},
          reinterprets="conj", grad_nodes={"self": "ConjBackward0"})
NEG_VIEW = Op("_neg_view", "NegViewBackward0", jnp.negative,
              grads={"self": lambda grad: -grad}, reinterprets="neg")
VIEW_AS_REAL = Op("view_as_real", "ViewAsRealBackward0", _as_real,
                  grads={"self": lambda grad: _as_complex(grad)}, reinterprets="as_real",
                  grad_nodes={"self": "ViewAsComplexBackward0"})
VIEW_AS_COMPLEX = Op("view_as_complex", "ViewAsComplexBackward0", _as_complex,
                     grads={"self": lambda grad: _as_real(grad)}, reinterprets="as_complex",
                     grad_nodes={"self": "ViewAsRealBackward0"})


# --- the scatters of views (slice_scatter, select_scatter, diagonal_scatter) and narrow_copy ----
# Each writes ``src`` (cast to ``self``'s dtype) where the view would read; derivatives.yaml:
# ``self`` gets ``grad`` with the view's part zeroed, ``src`` the view of ``grad``.

def _slice_index(ndim, dim, start, stop, step):
    index = [slice(None)] * ndim
    index[dim] = slice(start, stop, step)
    return tuple(index)


def _select_index(ndim, dim, index):
    where = [slice(None)] * ndim
    where[dim] = index
    return tuple(where)


def _diagonal_scatter(x, src, offset, dim1, dim2):
    size, row, col = _diagonal_extent(x.shape, offset, dim1, dim2)
    moved = jnp.moveaxis(x, (dim1, dim2), (-2, -1))
    steps = jnp.arange(size)
    out = moved.at[..., steps + row, steps + col].set(src.astype(x.dtype))
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


SLICE_SCATTER = Op(
    "slice_scatter", "SliceScatterBackward0",
    lambda x, src, dim, start, stop, step: x.at[_slice_index(x.ndim, dim, start, stop, step)].set(
        src.astype(x.dtype)),
    inputs=("self", "src"),
    grads={"self": lambda grad, dim, start, stop, step: grad.at[
               _slice_index(grad.ndim, dim, start, stop, step)].set(0),
           "src": lambda grad, dim, start, stop, step: grad[
               _slice_index(grad.ndim, dim, start, stop, step)]},
    grad_nodes={"self": "SliceScatterBackward0", "src": "SliceBackward0"})
SELECT_SCATTER = Op(
    "select_scatter", "SelectScatterBackward0",
    lambda x, src, dim, index: x.at[_select_index(x.ndim, dim, index)].set(src.astype(x.dtype)),
    inputs=("self", "src"),
    grads={"self": lambda grad, dim, index: grad.at[_select_index(grad.ndim, dim, index)].set(0),
           "src": lambda grad, dim, index: grad[_select_index(grad.ndim, dim, index)]},
    grad_nodes={"self": "SelectScatterBackward0", "src": "SelectBackward0"})
DIAGONAL_SCATTER = Op(
    "diagonal_scatter", "DiagonalScatterBackward0", _diagonal_scatter, inputs=("self", "src"),
    grads={"self": lambda grad, offset, dim1, dim2: _diagonal_scatter(
               grad, jnp.zeros((), grad.dtype), offset, dim1, dim2),
           "src": lambda grad, offset, dim1, dim2: jnp.diagonal(grad, offset, dim1, dim2)},
    grad_nodes={"self": "DiagonalScatterBackward0", "src": "DiagonalBackward0"})
NARROW_COPY = Op("narrow_copy", "NarrowCopyBackward0",
                 lambda x, dim, start, length: lax.slice_in_dim(x, start, start + length, 1, dim),
                 grads={"self": lambda grad, self_shape, dim, start, length: _slice_grad(
                     grad, self_shape, dim, start, start + length, 1)})


# --- the ``*_copy`` ops: a view's values as a fresh tensor, under the view's node + "_copy" -------
# One row per node name, for every view op: the view's elements are named by their flat indices
# in the input (``index``, a traced operand, read off the view op applied to an arange), so the
# forward gathers them and the backward scatter-adds the gradient back (an expanded or unfolded
# element collects each of its uses), which is every view op's derivative.

def _gather_pieces(x, index, shapes):
    flat = x.reshape(-1)[index]
    pieces, start = [], 0
    for shape in shapes:
        size = math.prod(shape)
        pieces.append(flat[start:start + size].reshape(shape))
        start += size
    return tuple(pieces)


def _scatter_pieces(grads, self_shape, index):
    flat = jnp.concatenate([g.reshape(-1) for g in grads]) if grads else jnp.zeros((0,))
    return jnp.zeros(math.prod(self_shape), flat.dtype).at[index].add(flat).reshape(self_shape)


def copy_row(node: str, pieces: bool) -> Op:
    """The row of a ``*_copy`` op whose view op records ``node`` (``TransposeBackward0`` ->
    ``TransposeBackward0_copy``); ``pieces``: several outputs (split_copy, unbind_copy).

    >>> from jaxgrad._ops.views import copy_row
    >>> copy_row("TBackward0", False).node
    'TBackward0_copy'
    """
    return _copy_rows(node, pieces)


@cache(maxsize=64)
def _copy_rows(node: str, pieces: bool) -> Op:
    if pieces:
        return Op(f"{node}_copy", f"{node}_copy", _gather_pieces, aux=("index",),
                  grads={"self": _scatter_pieces})
    return Op(f"{node}_copy", f"{node}_copy",
              lambda x, index, shapes: _gather_pieces(x, index, shapes)[0], aux=("index",),
              grads={"self": lambda grad, self_shape, index: _scatter_pieces(
                  (grad,), self_shape, index)})


def _no_derivative(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


# detach_copy: torch records a NotImplemented node (its backward raises)
DETACH_COPY = Op("detach_copy", "NotImplemented", lambda x: x,
                 grads={"self": _no_derivative("detach_copy")})
ALIAS_COPY = Op("alias_copy", "AliasBackward0_copy", lambda x: x, grads={"self": identity_grad})
VIEW_AS_REAL_COPY = Op("view_as_real_copy", "ViewAsRealBackward0_copy", VIEW_AS_REAL.forward,
                       grads=VIEW_AS_REAL.grads)
# Tensor.resize/resize_as (deprecated): torch's Python Function ``Resize``, a reshaping copy
RESIZE = Op("resize", "ResizeBackward", lambda x, shape: x.reshape(shape),
            grads={"self": lambda grad, self_shape: grad.reshape(self_shape)})
