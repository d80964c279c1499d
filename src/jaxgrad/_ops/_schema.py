"""torch's operator schemas (``native_functions.yaml``'s ``func:`` lines), parsed.

``exp(Tensor self) -> Tensor`` or ``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)
-> Tensor``: a name, an optional overload name, typed parameters (after ``*`` keyword-only)
and return types. An op row carries its schema; the public function, the ``Tensor`` method and
the in-place variant are generated from it, and the *type* of each parameter decides how its
value reaches XLA (see :attr:`Param.kind`):

- ``Tensor`` (``Tensor?``, ``Tensor(a!)``...): an operand of the jitted kernel;
- ``Scalar`` (``Scalar?``): a *traced* operand too, so a new value never compiles a new kernel;
- everything else (``int``, ``int[]``, ``bool``, ``str``, ``ScalarType``, ``float``...): static,
  part of the kernel's cache key. ``Any`` stands for a parameter of one of torch's Python-level
  functions that takes several types (``norm``'s ``p``: a number or ``"fro"``).

Note [Argument kinds]
What an argument becomes is decided by its parameter's type here, and carried out in two steps:
the public function (``_functions/opgen.py``, generated from the schema) normalises the value
(``_functions/arguments.py``: ``scalar`` takes a number or a 0-d tensor without grad, as torch's
parser does; ``number_or_tensor`` a number where torch takes it as a Tensor), and the dispatcher
passes it to the jitted kernel (``_engine/dispatch.py``: ``_as_array``; a Python number becomes a
device scalar of the op's compute dtype, never a constant of the kernel). Static arguments go
into the kernel's cache key (``_ops/_table.py``: ``static_key``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

_ALIAS = r"\([a-z](?: -> \*)?!?\)"  # torch's alias annotations: (a), (a!), (a -> *)
_PARAM = re.compile(rf"^(?P<type>[A-Za-z]+(?:{_ALIAS})?\??(?:\[\d*\])?\??)\s+(?P<name>\w+)"
                    r"(?:=(?P<default>.+))?$")
_NO_DEFAULT = object()


@dataclass(frozen=True)
class Param:
    """One parameter: torch's type string, its name, its default (if any), keyword-only?"""

    type: str
    name: str
    default: Any = _NO_DEFAULT
    kwarg_only: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def base_type(self) -> str:
        """The type without alias annotation and ``?``: ``Tensor(a!)?`` -> ``Tensor``,
        ``int[1]`` -> ``int[]``."""
        t = re.sub(_ALIAS, "", self.type).rstrip("?")
        return re.sub(r"\[\d+\]", "[]", t)

    @property
    def optional(self) -> bool:
        return self.type.endswith("?")

    @property
    def kind(self) -> str:
        """``"tensor"``, ``"tensors"`` (``Tensor[]``), ``"scalar"`` (traced) or ``"static"``."""
        base = self.base_type
        if base == "Tensor":
            return "tensor"
        if base in ("Tensor[]", "Tensor?[]"):
            return "tensors"
        if base == "Scalar":
            return "scalar"
        return "static"

    @property
    def python_name(self) -> str:
        """The name Python callers use: torch's binding calls ``self`` ``input``."""
        return "input" if self.name == "self" else self.name


@dataclass(frozen=True)
class Schema:
    """A parsed schema: ``name``, ``overload`` (may be empty), ``params``, ``returns``."""

    name: str
    overload: str
    params: tuple[Param, ...]
    returns: str
    text: str

    def __str__(self) -> str:
        return self.text

    def of_kind(self, kind: str) -> tuple[str, ...]:
        """Names of the parameters of one :attr:`Param.kind`, in order."""
        return tuple(p.name for p in self.params if p.kind == kind)

    @property
    def inplace(self) -> bool:
        """Whether this is an in-place schema (``exp_``)."""
        return self.name.endswith("_") and not self.name.endswith("__")


def parse_schema(text: str) -> Schema:
    """Parse one schema line.

    >>> from jaxgrad._ops._schema import parse_schema
    >>> s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    >>> s.name, s.overload
    ('add', 'Tensor')
    >>> [(p.name, p.kind, p.kwarg_only) for p in s.params]
    [('self', 'tensor', False), ('other', 'tensor', False), ('alpha', 'scalar', True)]
    """
    m = re.fullmatch(r"\s*([\w.]+)\((.*)\)\s*->\s*(.+?)\s*", text)
    if m is None:
        raise ValueError(f"not a schema: {text!r}")
    full, args, returns = m.groups()
    name, _, overload = full.partition(".")
    params: list[Param] = []
    kwarg_only = False
    for part in _split_args(args):
        if part == "*":
            kwarg_only = True
            continue
        pm = _PARAM.match(part)
        if pm is None:
            raise ValueError(f"{text!r}: cannot parse parameter {part!r}")
        default = pm["default"]
        params.append(Param(pm["type"], pm["name"],
                            _NO_DEFAULT if default is None else _literal(default), kwarg_only))
    return Schema(name, overload, tuple(params), returns, text.strip())


def _split_args(args: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in args:
        depth += (ch in "([") - (ch in ")]")
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _literal(text: str) -> Any:
    """A schema default as a Python value (``None``, ``True``, ``1``, ``[]``, ``"fro"``)."""
    return ast.literal_eval(text)
