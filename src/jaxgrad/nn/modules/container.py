"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList`` and
``ParameterDict``, with torch's indexing rules, errors and reprs."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any

from ..._core.tensor import Tensor
from ..._functions import pointwise
from ..parameter import Parameter
from .module import Module, _addindent


def _renumber(container: Module) -> None:
    """Keys 0..n-1 again after a deletion (Sequential and ModuleList)."""
    modules = list(container._modules.values())
    container._modules = OrderedDict((str(i), m) for i, m in enumerate(modules))


def _absolute_index(idx: Any, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


def _without_digit_keys(keys: list[str]) -> list[str]:
    return [key for key in keys if not key.isdigit()]


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    >>> import jaxgrad
    >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Identity(), jaxgrad.nn.ReLU())
    >>> net(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    >>> net[1:]
    Sequential(
      (1): ReLU()
    )
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return next(islice(self._modules.values(), _absolute_index(idx, len(self)), None))

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_absolute_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice)
                    else [keys[_absolute_index(idx, len(self))]]):
            delattr(self, key)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __dir__(self) -> list[str]:
        return _without_digit_keys(super().__dir__())

    def _check_sequential(self, other: Any) -> None:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")

    def __add__(self, other: Sequential) -> Sequential:
        self._check_sequential(other)
        return Sequential().extend(chain(self, other))

    def __iadd__(self, other: Sequential) -> Sequential:
        self._check_sequential(other)
        return self.extend(list(other))

    def _check_factor(self, other: Any) -> None:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other: int) -> Sequential:
        self._check_factor(other)
        return Sequential().extend(list(self) * other)

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        self._check_factor(other)
        return self.extend(list(self) * (other - 1))

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module(s) at ``key``."""
        value = self[key]
        del self[key]
        return value

    def forward(self, input: Any) -> Any:
        """Call each module in order on the previous one's output; returns the last output.

        >>> import jaxgrad
        >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Tanh(), jaxgrad.nn.Flatten(0))
        >>> net(jaxgrad.zeros(1, 2))
        tensor([0., 0.])
        """
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of ``sequential``."""
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """A list of modules, registered as children ``0``, ``1``, ...

    >>> import jaxgrad
    >>> layers = jaxgrad.nn.ModuleList([jaxgrad.nn.ReLU() for _ in range(3)])
    >>> layers.append(jaxgrad.nn.Tanh())
    ModuleList(
      (0-2): 3 x ReLU()
      (3): Tanh()
    )
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _key(self, idx: Any) -> str:
        return str(_absolute_index(idx, len(self)))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._key(idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList().extend(chain(self, other))

    def __dir__(self) -> list[str]:
        return _without_digit_keys(super().__dir__())

    def __repr__(self) -> str:
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        blocks: list[list] = []  # [first index, last index, repr] of runs of equal reprs
        for i, text in enumerate(reprs):
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, text])
        lines = [_addindent(f"({start}): {text}" if start == end
                            else f"({start}-{end}): {end - start + 1} x {text}", 2)
                 for start, end, text in blocks]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module(s) at ``key``."""
        value = self[key]
        del self[key]
        return value

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of ``modules``."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """A dict of modules, registered as children under their keys (insertion order).

    >>> import jaxgrad
    >>> acts = jaxgrad.nn.ModuleDict({"relu": jaxgrad.nn.ReLU(), "tanh": jaxgrad.nn.Tanh()})
    >>> list(acts), acts["tanh"]
    (['relu', 'tanh'], Tanh())
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key``."""
        value = self[key]
        del self[key]
        return value

    def keys(self) -> Any:
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self) -> Any:
        """(key, module) pairs, in insertion order."""
        return self._modules.items()

    def values(self) -> Any:
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules: Any) -> None:
        """Add modules from a mapping or an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j)
                                + " should be Iterable; is" + type(pair).__name__)
            if len(pair) != 2:
                raise ValueError("ModuleDict update sequence element #" + str(j)
                                 + " has length " + str(len(pair)) + "; 2 is required")
            self[pair[0]] = pair[1]


def _parameter_line(key: Any, value: Any, type_name: str) -> str:
    """One line of a parameter container's repr."""
    if isinstance(value, Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(n) for n in value.size())
        return f"  ({key}): {kind} containing: [{type_name} of size {size}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


def _as_parameter(value: Any) -> Any:
    """A plain Tensor becomes a Parameter; Parameters and other objects are kept."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters, registered as ``0``, ``1``, ... (a plain Tensor put in it becomes
    a Parameter; other objects are stored as they are).

    >>> import jaxgrad
    >>> params = jaxgrad.nn.ParameterList([jaxgrad.zeros(2), jaxgrad.ones(1, 3)])
    >>> params
    ParameterList(
        (0): Parameter containing: [jaxgrad.float32 of size 2]
        (1): Parameter containing: [jaxgrad.float32 of size 1x3]
    )
    >>> [name for name, _ in params.named_parameters()]
    ['0', '1']
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx: Any) -> str:
        return str(_absolute_index(idx, len(self)))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, self._key(idx), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return _without_digit_keys(super().__dir__())

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a Tensor becomes a Parameter)."""
        index = len(self)
        self._size += 1
        self[index] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value of ``values``."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """One line per element: its kind, dtype and size."""
        return "\n".join(_parameter_line(k, p, str(p.dtype) if isinstance(p, Tensor) else "")
                         for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters, registered under their (string) keys; a plain Tensor put
    in it becomes a Parameter. ``update`` with a plain dict adds its items in sorted key order,
    as torch does.

    >>> import jaxgrad
    >>> params = jaxgrad.nn.ParameterDict({"b": jaxgrad.zeros(2), "a": jaxgrad.ones(3)})
    >>> params
    ParameterDict(
        (a): Parameter containing: [jaxgrad.FloatTensor of size 3]
        (b): Parameter containing: [jaxgrad.FloatTensor of size 2]
    )
    >>> list(params.state_dict())
    ['a', 'b']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a "
                            f"string (type is '{type(key).__name__}'). Open an issue on github if "
                            "you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, self._key_to_attr(key), _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        """``self[key]``, first set to ``default`` if ``key`` is missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every parameter."""
        for key in self._keys.copy():
            del self[key]

    def pop(self, key: str) -> Any:
        """Remove and return the parameter under ``key``."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted (key, parameter) pair."""
        key, _ = self._keys.popitem()
        self._keys[key] = None
        value = self[key]
        del self[key]
        return key, value

    def get(self, key: str, default: Any | None = None) -> Any:
        """The parameter under ``key``, or ``default``."""
        return self[key] if key in self else default  # noqa: SIM401  (self.get is this)

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> ParameterDict:
        """A new ParameterDict with ``keys``, each set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """(key, parameter) pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The parameters, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add (or overwrite) parameters from a mapping or an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j)
                                    + " should be Iterable; is" + type(pair).__name__)
                if len(pair) != 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j)
                                     + " has length " + str(len(pair)) + "; 2 is required")
                self[pair[0]] = pair[1]

    def extra_repr(self) -> str:
        """One line per entry: its kind, tensor type and size."""
        return "\n".join(_parameter_line(k, p, pointwise.typename(p) if isinstance(p, Tensor)
                                         else "") for k, p in self.items())

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
