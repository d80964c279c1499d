"""``jaxgrad.nn.utils.prune``: pruning by masks (``torch.nn.utils.prune``).

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a ``<name>_mask``
buffer, and registers the pruning method as a forward pre-hook that recomputes
``<name> = <name>_mask * <name>_orig`` before every call. Pruning the same tensor again
combines the methods in a :class:`PruningContainer`.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any

from ..._core.memory_format import contiguous_format
from ..._core.tensor import Tensor
from ..._functions import creation, pointwise
from ..._functions.linalg import norm
from ..._functions.random import rand, rand_like
from ..._functions.reductions import kthvalue
from ..._functions.sorting import topk
from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


class BasePruningMethod(ABC):
    """The base of pruning methods: ``compute_mask`` says which entries to keep; ``apply``
    prunes a module's tensor, and the method itself is the forward pre-hook.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> class EveryOther(prune.BasePruningMethod):
    ...     PRUNING_TYPE = "unstructured"
    ...     def compute_mask(self, t, default_mask):
    ...         mask = default_mask.clone()
    ...         mask.view(-1)[::2] = 0
    ...         return mask
    >>> lin = jaxgrad.nn.Linear(2, 2)
    >>> _ = EveryOther.apply(lin, "bias")
    >>> lin.bias_mask
    tensor([0., 1.])
    """

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask to apply to ``t``, starting from ``default_mask``."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig`` of ``module``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        *args: Any,
        importance_scores: Tensor | None = None,
        **kwargs: Any,
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (combined with an earlier
        pruning of the same tensor), ranking entries by ``importance_scores`` if given."""
        method = _get_composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}"
                )
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = creation.ones_like(orig)
        else:
            default_mask = (
                getattr(module, name + "_mask").detach().clone(memory_format=contiguous_format)
            )
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(
        self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None
    ) -> Tensor:
        """``t`` times its mask (ranked by ``importance_scores`` if given), no module needed."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    "importance_scores should have the same shape as tensor "
                    f"t, got {importance_scores.shape} vs {t.shape}"
                )
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else creation.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes the parameter ``<name>_orig`` with the
        masked values, and the mask buffer goes."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _get_composite_method(
    cls: type, module: Module, name: str, *args: Any, **kwargs: Any
) -> BasePruningMethod:
    """The new method, or a container of the earlier one(s) and it (torch's)."""
    old_method = None
    found = 0
    hooks_to_remove = []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            hooks_to_remove.append(k)
            found += 1
    if found > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of "
            f"module {module}. Use a PruningContainer."
        )
    for k in hooks_to_remove:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        method = old_method
    elif isinstance(old_method, BasePruningMethod):
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied one after the other to one tensor; each new
    method only sees the entries (or channels) the earlier ones kept.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> lin = jaxgrad.nn.Linear(3, 2)
    >>> _ = prune.l1_unstructured(lin, "weight", amount=2)
    >>> _ = prune.l1_unstructured(lin, "weight", amount=2)
    >>> hook = next(iter(lin._forward_pre_hooks.values()))
    >>> type(hook).__name__, len(hook), int(lin.weight_mask.sum())
    ('PruningContainer', 2, 2)
    """

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (it must act on this container's tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found "
                f"'{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask computed on what ``default_mask`` kept of ``t``."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc: Any = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to '
                    "have the attribute `dim` defined."
                )
            n_dims = t.dim()
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
        elif method.PRUNING_TYPE == "global":
            slc = [slice(None)] * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        if isinstance(slc, list):
            slc = tuple(slc)
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: an all-ones mask.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> prune.identity(jaxgrad.nn.Linear(2, 1), "bias").bias_mask
    tensor([1.])
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``module.<name>`` with an all-ones mask."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` (a fraction, or a count) of the entries, chosen at random.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> lin = prune.random_unstructured(jaxgrad.nn.Linear(4, 2), "weight", amount=0.25)
    >>> int((lin.weight_mask == 0).sum())
    2
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone(memory_format=contiguous_format)
        if nparams_toprune != 0:
            prob = rand_like(t)
            chosen = topk(prob.view(-1), k=nparams_toprune)
            mask.view(-1)[chosen.indices] = 0
        return mask

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: float,  # type: ignore[override]
    ) -> BasePruningMethod:
        """Prune ``amount`` of ``module.<name>``'s entries at random."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes ``amount`` (a fraction, or a count) of the entries with the smallest magnitude.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> lin = jaxgrad.nn.Linear(2, 1)
    >>> with jaxgrad.no_grad():
    ...     _ = lin.weight.copy_(jaxgrad.tensor([[0.5, -2.0]]))
    >>> prune.l1_unstructured(lin, "weight", amount=1).weight
    tensor([[ 0., -2.]], grad_fn=<MulBackward0>)
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone(memory_format=contiguous_format)
        if nparams_toprune != 0:
            smallest = topk(pointwise.abs(t).view(-1), k=nparams_toprune, largest=False)
            mask.view(-1)[smallest.indices] = 0
        return mask

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: float,  # type: ignore[override]
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        """Prune the ``amount`` smallest entries of ``module.<name>`` (or of the scores)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` of the channels along ``dim``, chosen at random.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> lin = prune.random_structured(jaxgrad.nn.Linear(3, 4), "weight", amount=2, dim=0)
    >>> lin.weight_mask.sum(dim=1).tolist().count(0.0)
    2
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = rand(tensor_size)
        threshold = kthvalue(prob, k=nparams_toprune).values
        mask = creation.zeros_like(t)
        slc: list[Any] = [slice(None)] * len(t.shape)
        slc[self.dim] = prob > threshold
        mask[tuple(slc)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: float,  # type: ignore[override]
        dim: int = -1,
    ) -> BasePruningMethod:
        """Prune ``amount`` of ``module.<name>``'s channels along ``dim`` at random."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes ``amount`` of the channels along ``dim`` with the smallest ``n``-norm.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> lin = jaxgrad.nn.Linear(2, 2)
    >>> with jaxgrad.no_grad():
    ...     _ = lin.weight.copy_(jaxgrad.tensor([[1.0, 1.0], [3.0, 0.0]]))
    >>> prune.ln_structured(lin, "weight", amount=1, n=1, dim=0).weight_mask
    tensor([[0., 0.],
            [1., 1.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        norms = _compute_norm(t, self.n, self.dim)
        largest = topk(norms, k=nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = creation.zeros_like(t)
        slc: list[Any] = [slice(None)] * len(t.shape)
        slc[self.dim] = largest.indices
        mask[tuple(slc)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: float,
        n: Any,  # type: ignore[override]
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        """Prune the ``amount`` channels along ``dim`` of smallest ``n``-norm."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (times the current one).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> lin = prune.custom_from_mask(jaxgrad.nn.Linear(2, 2), "bias", jaxgrad.tensor([0, 1]))
    >>> lin.bias_mask
    tensor([0., 1.])
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match "
                f"self.mask shape {self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        mask: Tensor,  # type: ignore[override]
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``mask``."""
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Prune nothing of ``module.<name>`` (but add ``<name>_orig``/``<name>_mask``).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> list(prune.identity(jaxgrad.nn.Linear(2, 1), "weight").state_dict())
    ['bias', 'weight_orig', 'weight_mask']
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    """Prune ``amount`` (fraction or count) of ``module.<name>``'s entries at random.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> m = prune.random_unstructured(jaxgrad.nn.Linear(5, 2), "weight", amount=3)
    >>> int(m.weight_mask.sum())
    7
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: float, importance_scores: Tensor | None = None
) -> Module:
    """Prune ``amount`` (fraction or count) of ``module.<name>``'s smallest entries.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> m = prune.l1_unstructured(jaxgrad.nn.Linear(5, 2), "weight", amount=0.3)
    >>> int(m.weight_mask.sum())
    7
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    """Prune ``amount`` of ``module.<name>``'s channels along ``dim`` at random.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> m = prune.random_structured(jaxgrad.nn.Linear(5, 2), "weight", amount=2, dim=1)
    >>> int(m.weight_mask.sum())
    6
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module,
    name: str,
    amount: float,
    n: Any,
    dim: int,
    importance_scores: Tensor | None = None,
) -> Module:
    """Prune ``amount`` of ``module.<name>``'s channels along ``dim`` of smallest ``n``-norm.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> m = prune.ln_structured(jaxgrad.nn.Linear(5, 2), "weight", amount=1, n=2, dim=0)
    >>> int(m.weight_mask.sum())
    5
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable[tuple[Module, str]],
    pruning_method: type,
    importance_scores: dict | None = None,
    **kwargs: Any,
) -> None:
    """Prune the given ``(module, name)`` tensors together, as one vector, with an
    unstructured ``pruning_method``; each gets a :class:`CustomFromMask` of its share.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> a, b = jaxgrad.nn.Linear(2, 2), jaxgrad.nn.Linear(2, 2)
    >>> prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured,
    ...                           amount=3)
    >>> int(a.weight_mask.sum() + b.weight_mask.sum())
    5
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    relevant_importance_scores = parameters_to_vector(
        [
            importance_scores.get((module, name), getattr(module, name))
            for (module, name) in parameters
        ]
    )
    default_mask = parameters_to_vector(
        [
            getattr(module, name + "_mask", creation.ones_like(getattr(module, name)))
            for (module, name) in parameters
        ]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
            f"Found method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer : pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` with ``mask``.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> m = prune.custom_from_mask(jaxgrad.nn.Linear(2, 1), "weight", jaxgrad.tensor([[1, 0]]))
    >>> m.weight_mask
    tensor([[1., 0.]])
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (drop ``_orig``, ``_mask``, the hook).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> m = prune.remove(prune.identity(jaxgrad.nn.Linear(2, 1), "weight"), "weight")
    >>> list(m.state_dict())
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any submodule has a pruning hook.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import prune
    >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(2, 2))
    >>> before = prune.is_pruned(net)
    >>> _ = prune.identity(net[0], "bias")
    >>> before, prune.is_pruned(net)
    (False, True)
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a "
            "non-negative integer"
        )


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t: Tensor) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. "
            f"Found tensor of shape {shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return norm(t, p=n, dim=dims)
