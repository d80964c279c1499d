"""torch's pytrees (``torch.utils._pytree``): the one tree flattening ``jaxgrad.func``, custom
Functions' vmap rules and user code (``jaxgrad.utils._pytree``) share.

``jaxgrad.func`` flattens arguments, outputs and ``in_dims``/``out_dims`` the way torch.func does,
so that structures, broadcasting of ``in_dims`` and the error texts that print a ``TreeSpec``
are torch's. Nodes are tuples, lists, dicts, namedtuples, the ``return_types`` tuples, OrderedDicts,
defaultdicts, deques and the types registered with ``register_pytree_node``; everything else,
None and tensors included, is a leaf. JAX's pytrees differ: None is an empty node, dict keys are
sorted, and a jaxgrad tensor is a node holding its array.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from .._core import return_types

PyTree = Any
Context = Any
FlattenFn = Callable[[PyTree], "tuple[list, Context]"]
UnflattenFn = Callable[["Iterable", Context], PyTree]

namedtuple = collections.namedtuple  # a namedtuple node's ``type`` (its class is the context)


# --- key paths -----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The key of a sequence child: ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a mapping child: ``[key]``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The key of an attribute child: ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


KeyEntry = Any
KeyPath = tuple


def keystr(kp: KeyPath) -> str:
    """A key path as source text: ``keystr((SequenceKey(0), MappingKey('a'))) == "[0]['a']"``."""
    return "".join(str(k) for k in kp)


def key_get(obj: Any, kp: KeyPath) -> Any:
    """The subtree of ``obj`` at key path ``kp``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# --- the node registry ---------------------------------------------------------------------------

class NodeDef(NamedTuple):
    """How a node type flattens: to (children, context), from (children, context), and to
    (keyed children, context) for paths."""

    type: Any
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict[Any, NodeDef] = {}


def register_pytree_node(cls: type, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: str | None = None,
                         to_dumpable_context: Callable | None = None,
                         from_dumpable_context: Callable | None = None,
                         flatten_with_keys_fn: Callable | None = None) -> None:
    """Make ``cls`` a pytree node: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node`` (torch.utils._pytree.register_pytree_node).

    >>> from jaxgrad.utils import _pytree as pytree
    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
    >>> pytree.tree_leaves(Pair(1, [2, 3]))
    [1, 2, 3]
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _keyed(flatten: FlattenFn, key: Callable) -> Callable:
    def with_keys(node: Any) -> tuple[list, Context]:
        children, context = flatten(node)
        return [(key(i, context), c) for i, c in enumerate(children)], context
    return with_keys


def _builtin(typ: Any, flatten: FlattenFn, unflatten: UnflattenFn, key: Callable) -> None:
    SUPPORTED_NODES[typ] = NodeDef(typ, flatten, unflatten, _keyed(flatten, key))


def _dict_keys(context: Any) -> list:
    return context[1] if isinstance(context, list) and len(context) == 2 \
        and isinstance(context[1], list) and callable(context[0]) else context


_seq_key = lambda i, _: SequenceKey(i)
_map_key = lambda i, ctx: MappingKey(_dict_keys(ctx)[i])
_builtin(tuple, lambda t: (list(t), None), lambda c, _: tuple(c), _seq_key)
_builtin(list, lambda t: (list(t), None), lambda c, _: list(c), _seq_key)
_builtin(dict, lambda d: (list(d.values()), list(d)), lambda c, k: dict(zip(k, c)), _map_key)
_builtin(collections.OrderedDict, lambda d: (list(d.values()), list(d)),
         lambda c, k: collections.OrderedDict(zip(k, c)), _map_key)
_builtin(collections.defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
         lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)),
         lambda i, ctx: MappingKey(ctx[1][i]))
_builtin(collections.deque, lambda d: (list(d), d.maxlen),
         lambda c, maxlen: collections.deque(c, maxlen=maxlen), _seq_key)
_builtin(namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c),
         lambda i, cls: GetAttrKey(cls._fields[i]))
for _cls in vars(return_types).values():  # torch registers each return type as its own node
    if isinstance(_cls, type) and issubclass(_cls, tuple) \
            and _cls.__module__ == return_types._PUBLIC:
        _builtin(_cls, lambda t: (list(t), None), lambda c, _, cls=_cls: cls(*c), _seq_key)

BUILTIN_TYPES = frozenset(SUPPORTED_NODES)
_DICT_TYPES = (dict, collections.OrderedDict, collections.defaultdict)


def is_namedtuple_class(cls: type) -> bool:
    """Whether ``cls`` is a namedtuple class (a tuple subclass with ``_fields``)."""
    return isinstance(cls, type) and issubclass(cls, tuple) \
        and isinstance(getattr(cls, "_fields", None), tuple) and hasattr(cls, "_make")


def is_namedtuple(obj: Any) -> bool:
    """Whether ``obj`` is a namedtuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj: Any) -> bool:
    """Whether ``obj`` is a namedtuple instance."""
    return is_namedtuple_class(type(obj))


def is_structseq_class(cls: type) -> bool:
    """Whether ``cls`` is one of ``return_types``' tuples (torch's structseq)."""
    return isinstance(cls, type) and issubclass(cls, tuple) \
        and getattr(cls, "__module__", "").endswith("return_types") and cls is not tuple


def is_structseq(obj: Any) -> bool:
    """Whether ``obj`` is a structseq class or instance."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj: Any) -> bool:
    """Whether ``obj`` is a structseq instance."""
    return is_structseq_class(type(obj))


def _node_type(tree: Any) -> Any:
    if is_namedtuple_instance(tree):
        return namedtuple
    return type(tree)


def tree_is_leaf(tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Whether ``tree`` is a leaf: not a registered node, or ``is_leaf(tree)``."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# --- tree specs ----------------------------------------------------------------------------------

class TreeSpec:
    """A tree's structure: its node ``type``, ``context`` and ``children_specs``."""

    def __init__(self, type: Any, context: Context, children_specs: list) -> None:
        self.type, self._context, self._children = type, context, list(children_specs)
        self.num_children = len(self._children)
        self.num_leaves = sum(c.num_leaves for c in self._children)
        self.num_nodes = 1 + sum(c.num_nodes for c in self._children)

    @property
    def context(self) -> Context:
        return self._context

    @property
    def children_specs(self) -> list:
        return self._children

    def is_leaf(self) -> bool:
        """Whether this spec is a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list:
        """The child specs."""
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        """The ``index``-th child spec."""
        return self._children[index]

    def unflatten(self, leaves: Iterable) -> PyTree:
        """The tree of this structure holding ``leaves``."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return _build(iter(leaves), self)

    def flatten_up_to(self, tree: PyTree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` has at least its nodes)."""
        out: list = []
        _up_to(self, tree, out)
        return out

    def __eq__(self, other: object) -> bool:
        return self is other or (other.__class__ is self.__class__
                                 and str(self.type) == str(other.type)
                                 and self._context == other._context
                                 and self._children == other._children)

    def __hash__(self) -> int:
        return hash((str(self.type), self.num_leaves, self.num_nodes))

    def __repr__(self, indent: int = 0) -> str:
        inner = ""
        if self._children:
            indent += 2
            inner = self._children[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            inner += ",".join("\n" + " " * indent + c.__repr__(indent)
                              for c in self._children[1:])
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"


class LeafSpec(TreeSpec):
    """The spec of a single leaf (printed ``*``)."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_nodes = self.num_leaves = 1

    def __repr__(self, indent: int = 0) -> str:
        return "*"


LEAF = LeafSpec()
Spec = TreeSpec


def _build(it: Iterator, spec: TreeSpec) -> Any:
    if spec.is_leaf():
        return next(it)
    kids = [_build(it, c) for c in spec._children]
    return SUPPORTED_NODES[spec.type].unflatten_fn(kids, spec._context)


def _up_to(spec: TreeSpec, node: Any, out: list) -> None:
    if spec.is_leaf():
        out.append(node)
        return
    typ = _node_type(node)
    both_dicts = spec.type in _DICT_TYPES and typ in _DICT_TYPES
    if not both_dicts and typ != spec.type:
        kind = "Node type" if spec.type in BUILTIN_TYPES else "Type"
        raise ValueError(f"{kind} mismatch; expected {spec.type!r}, but got {typ!r}.")
    if both_dicts:
        children = _dict_children(spec, node)
    else:
        children, context = SUPPORTED_NODES[typ].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, "
                             f"but got {len(children)}.")
        if typ is not collections.deque and context != spec._context:
            raise ValueError(_context_mismatch(spec, context))
    for child_spec, child in zip(spec._children, children):
        _up_to(child_spec, child, out)


def _dict_children(spec: TreeSpec, node: dict) -> list:
    if len(node) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(node)}.")
    keys = spec._context[1] if spec.type is collections.defaultdict else spec._context
    if set(node) != set(keys):
        missing, extra = set(keys) - set(node), set(node) - set(keys)
        message = (f"; missing key(s): {missing}" if missing else "") + \
                  (f"; extra key(s): {extra}" if extra else "")
        raise ValueError(f"Node keys mismatch{message}.")
    return [node[k] for k in keys]


def _context_mismatch(spec: TreeSpec, context: Any) -> str:
    if spec.type in BUILTIN_TYPES:
        return (f"Node context mismatch for node type {spec.type!r}; "
                f"expected {spec._context!r}, but got {context!r}.")
    return f"Node context mismatch for custom node type {spec.type!r}."


# --- flatten and friends -------------------------------------------------------------------------

def tree_flatten(tree: PyTree, is_leaf: Callable | None = None) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` (depth first) and its structure.

    >>> from jaxgrad.utils import _pytree as pytree
    >>> pytree.tree_flatten((1, [2, {"a": 3}]))[0]
    [1, 2, 3]
    """
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(tree: Any, is_leaf: Callable | None, leaves: list) -> TreeSpec:
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return LEAF
    typ = _node_type(tree)
    children, context = SUPPORTED_NODES[typ].flatten_fn(tree)
    return TreeSpec(typ, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_unflatten(leaves: Iterable, treespec: TreeSpec) -> PyTree:
    """The tree of structure ``treespec`` holding ``leaves``.

    >>> from jaxgrad.utils import _pytree as pytree
    >>> leaves, spec = pytree.tree_flatten({"a": 1, "b": (2, 3)})
    >>> pytree.tree_unflatten([x * 10 for x in leaves], spec)
    {'a': 10, 'b': (20, 30)}
    """
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of "
                        f"type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree: PyTree, is_leaf: Callable | None = None) -> list:
    """The leaves of ``tree``."""
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree: PyTree, is_leaf: Callable | None = None) -> Iterator:
    """An iterator over the leaves of ``tree``."""
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable | None = None) -> TreeSpec:
    """The structure of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable, tree: PyTree, *rests: PyTree,
             is_leaf: Callable | None = None) -> PyTree:
    """``tree`` with ``func`` applied to each leaf (with the matching subtrees of ``rests``).

    >>> from jaxgrad.utils import _pytree as pytree
    >>> pytree.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func: Callable, tree: PyTree, *rests: PyTree,
              is_leaf: Callable | None = None) -> PyTree:
    """Call ``func`` on each leaf for its effect; returns ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for args in zip(*flat):
        func(*args)
    return tree


def _only(type_or_types: Any, func: Callable) -> Callable:
    if isinstance(type_or_types, tuple) and len(type_or_types) == 1:
        type_or_types = type_or_types[0]
    return lambda x: func(x) if isinstance(x, type_or_types) else x


def tree_map_only(type_or_types: Any, func: Callable, tree: PyTree,
                  is_leaf: Callable | None = None) -> PyTree:
    """``tree`` with ``func`` applied to the leaves that are instances of ``type_or_types``.

    >>> from jaxgrad.utils import _pytree as pytree
    >>> pytree.tree_map_only(int, lambda x: -x, [1, "a", 2.5])
    [-1, 'a', 2.5]
    """
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types: Any, func: Callable, tree: PyTree,
                   is_leaf: Callable | None = None) -> PyTree:
    """``tree_map_`` restricted to leaves that are instances of ``type_or_types``."""
    return tree_map_(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable, tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable, tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types: Any, pred: Callable, tree: PyTree,
                  is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for every leaf that is an instance of ``type_or_types``."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types: Any, pred: Callable, tree: PyTree,
                  is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for some leaf that is an instance of ``type_or_types``."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """The ``(key path, leaf)`` pairs of ``tree`` and its structure.

    >>> from jaxgrad.utils import _pytree as pytree
    >>> [(pytree.keystr(k), v) for k, v in pytree.tree_flatten_with_path({"a": [1, 2]})[0]]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    pairs: list = []
    _paths(tree, is_leaf, (), pairs)
    return pairs, tree_structure(tree, is_leaf)


def _paths(tree: Any, is_leaf: Callable | None, path: tuple, pairs: list) -> None:
    if tree_is_leaf(tree, is_leaf):
        pairs.append((path, tree))
        return
    typ = _node_type(tree)
    with_keys = SUPPORTED_NODES[typ].flatten_with_keys_fn
    if with_keys is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {typ}. Please pass a "
                         "flatten_with_keys_fn argument to register_pytree_node.")
    for key, child in with_keys(tree)[0]:
        _paths(child, is_leaf, (*path, key), pairs)


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable | None = None) -> list:
    """The ``(key path, leaf)`` pairs of ``tree``."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func: Callable, tree: PyTree, *rests: PyTree,
                       is_leaf: Callable | None = None) -> PyTree:
    """``tree`` with ``func(key_path, leaf, *matching)`` applied to each leaf."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    flat = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(kp, leaf, *xs) for (kp, leaf), *xs in zip(pairs, *flat))


def treespec_pprint(treespec: TreeSpec) -> str:
    """The tree with ``*`` for each leaf: ``(*, [*, *])``."""
    return repr(treespec.unflatten([_Star()] * treespec.num_leaves))


class _Star:
    def __repr__(self) -> str:
        return "*"


# --- what jaxgrad.func uses ----------------------------------------------------------------------

flatten = tree_flatten
unflatten = tree_unflatten
pprint = treespec_pprint


def broadcast_to_and_flatten(prefix: Any, spec: TreeSpec) -> list | None:
    """``prefix`` (a tree whose leaves stand for whole subtrees of ``spec``) spread out to one
    value per leaf of ``spec``; None when the structures do not match."""
    out: list = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix: Any, spec: TreeSpec, out: list) -> bool:
    if tree_is_leaf(prefix):
        out.extend([prefix] * spec.num_leaves)
        return True
    typ = _node_type(prefix)
    kids, context = SUPPORTED_NODES[typ].flatten_fn(prefix)
    if spec.type is not typ or context != spec._context or len(kids) != spec.num_children:
        return False
    return all(_broadcast(k, c, out) for k, c in zip(kids, spec._children))
