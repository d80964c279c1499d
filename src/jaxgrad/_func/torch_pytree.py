"""torch's pytrees (``torch.utils._pytree``), as far as ``jaxgrad.func`` needs them.

``jaxgrad.func`` flattens arguments, outputs and ``in_dims``/``out_dims`` the way torch.func does,
so that structures, broadcasting of ``in_dims`` and the error texts that print a ``TreeSpec``
are torch's. Containers are tuples (and namedtuples), lists and dicts; everything else, None
included, is a leaf (JAX's pytrees differ: None is an empty node and dict keys are sorted).
"""

from __future__ import annotations

from typing import Any


class Spec:
    """A tree's structure: ``type``, ``context`` (dict keys) and child specs; None for a leaf."""

    __slots__ = ("children", "context", "num_leaves", "type")

    def __init__(self, typ: type | None, context: Any = None, children: tuple = ()) -> None:
        self.type, self.context, self.children = typ, context, children
        self.num_leaves = 1 if typ is None else sum(c.num_leaves for c in children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and (self.type, self.context, self.children) == (
            other.type, other.context, other.children)

    def __hash__(self) -> int:
        return hash((self.type, self.children))

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        inner = ""
        if self.children:
            indent += 2
            inner = self.children[0].__repr__(indent) + ("," if len(self.children) > 1 else "")
            inner += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return f"TreeSpec({self.type.__name__}, {self.context}, [{inner}])"


LEAF = Spec(None)


def _children(tree: Any) -> tuple[type, Any, list] | None:
    if isinstance(tree, dict):
        return type(tree), list(tree), list(tree.values())
    if isinstance(tree, (tuple, list)):
        return type(tree), None, list(tree)
    return None


def flatten(tree: Any) -> tuple[list, Spec]:
    """The leaves of ``tree`` (depth first) and its structure."""
    node = _children(tree)
    if node is None:
        return [tree], LEAF
    typ, context, kids = node
    leaves, specs = [], []
    for kid in kids:
        sub, spec = flatten(kid)
        leaves += sub
        specs.append(spec)
    return leaves, Spec(typ, context, tuple(specs))


def unflatten(leaves: Any, spec: Spec) -> Any:
    """The tree of structure ``spec`` holding ``leaves``."""
    it = iter(leaves)
    return _build(it, spec)


def _build(it: Any, spec: Spec) -> Any:
    if spec.type is None:
        return next(it)
    kids = [_build(it, c) for c in spec.children]
    if issubclass(spec.type, dict):
        return spec.type(zip(spec.context, kids))
    if spec.type is not tuple and issubclass(spec.type, tuple):  # a namedtuple
        return spec.type(*kids)
    return spec.type(kids)


def broadcast_to_and_flatten(prefix: Any, spec: Spec) -> list | None:
    """``prefix`` (a tree whose leaves stand for whole subtrees of ``spec``) spread out to one
    value per leaf of ``spec``; None when the structures do not match."""
    out: list = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix: Any, spec: Spec, out: list) -> bool:
    node = _children(prefix)
    if node is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    typ, context, kids = node
    if spec.type is not typ or context != spec.context or len(kids) != len(spec.children):
        return False
    return all(_broadcast(k, c, out) for k, c in zip(kids, spec.children))


def pprint(spec: Spec) -> str:
    """``treespec_pprint``: the tree with ``*`` for each leaf (``(*, *)``)."""
    return repr(unflatten([_Star()] * spec.num_leaves, spec))


class _Star:
    def __repr__(self) -> str:
        return "*"
