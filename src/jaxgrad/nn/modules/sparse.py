"""``Embedding``: a lookup table of learnable rows; ``EmbeddingBag``: reductions of bags of
them."""

from __future__ import annotations

from typing import Any

from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._functions.creation import empty
from .. import functional, init
from ..parameter import Parameter
from .module import Module


def _resolve_padding_idx(padding_idx: int | None, num_embeddings: int) -> int | None:
    """A negative ``padding_idx`` counted from the end, checked to name a row."""
    if padding_idx is None:
        return None
    if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


class Embedding(Module):
    """Rows of ``weight`` (num_embeddings x embedding_dim, drawn from N(0, 1)) picked by integer
    indices; the ``padding_idx`` row starts at zero and gets no gradient, and ``max_norm``
    renormalises the looked-up rows in place.

    >>> import jaxgrad
    >>> emb = jaxgrad.nn.Embedding(4, 3, padding_idx=-1)
    >>> emb
    Embedding(4, 3, padding_idx=3)
    >>> emb(jaxgrad.tensor([[3, 3]]))
    tensor([[[0., 0., 0.],
             [0., 0., 0.]]], grad_fn=<EmbeddingBackward0>)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _resolve_padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), device=device,
                                          dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        """Redraw the weight from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:
        """The rows of ``weight`` at the indices ``input`` (``functional.embedding``).

        >>> import jaxgrad
        >>> emb = jaxgrad.nn.Embedding.from_pretrained(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> emb(jaxgrad.tensor([1, 0, 1]))
        tensor([[3., 4.],
                [1., 2.],
                [3., 4.]])
        """
        return functional.embedding(input, self.weight, self.padding_idx, self.max_norm,
                                    self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        """The sizes and the non-default options, as shown in the repr."""
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An ``Embedding`` whose weight is the 2-D ``embeddings`` (frozen unless
        ``freeze=False``).

        >>> import jaxgrad
        >>> emb = jaxgrad.nn.Embedding.from_pretrained(jaxgrad.eye(2))
        >>> emb(jaxgrad.tensor([1])), emb.weight.requires_grad
        (tensor([[0., 1.]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of learnable rows (``functional.embedding_bag``); the
    ``padding_idx`` row starts at zero and is left out of every bag.

    >>> import jaxgrad
    >>> bag = jaxgrad.nn.EmbeddingBag(4, 2, mode="sum")
    >>> bag
    EmbeddingBag(4, 2, mode='sum')
    >>> bag(jaxgrad.tensor([[0, 1], [2, 3]])).shape
    jaxgrad.Size([2, 2])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), device=device,
                                          dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Rows drawn from N(0, 1); the padding row zeroed."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        """``functional.embedding_bag`` of ``input`` with this layer's weight and arguments."""
        return functional.embedding_bag(input, self.weight, offsets, self.max_norm,
                                        self.norm_type, self.scale_grad_by_freq, self.mode,
                                        self.sparse, per_sample_weights,
                                        self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        """The sizes, mode and the arguments not at their defaults, as shown in the repr."""
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """A bag layer whose rows are ``embeddings`` (frozen unless ``freeze=False``).

        >>> import jaxgrad
        >>> bag = jaxgrad.nn.EmbeddingBag.from_pretrained(jaxgrad.eye(2), mode="max")
        >>> bag(jaxgrad.tensor([[0, 1]])), bag.weight.requires_grad
        (tensor([[1., 1.]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode,
                  sparse=sparse, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
