"""jaxgrad.utils._pytree against torch.utils._pytree: flattening, specs and their text, maps over
several trees and their mismatch errors, key paths, registered node types."""

from __future__ import annotations

import collections

import pytest

import jaxgrad
from differential import Raised, attempt, torch
from jaxgrad.utils import _pytree as jp

tp = pytest.importorskip("torch.utils._pytree")

Point = collections.namedtuple("Point", "x y")


def trees(T):
    x = T.tensor([1.0, 2.0])
    return {
        "leaf": 3,
        "none": None,
        "tensor": x,
        "nested": (1, None, [2, {"b": 3, "a": 4}]),
        "namedtuple": Point(1, [2, 3]),
        "ordered": collections.OrderedDict(z=1, a=(2,)),
        "defaultdict": collections.defaultdict(int, {"k": 1}),
        "deque": collections.deque([1, 2], maxlen=4),
        "empty": ([], {}, ()),
        "return_types": x.max(0),
    }


def text(value, lib_name):
    """Reprs with the library's own names taken out."""
    return repr(value).replace(f"{lib_name}.return_types", "LIB.return_types")


def plain(tree):
    """Leaves as comparable values (tensors as lists)."""
    return [leaf.tolist() if hasattr(leaf, "tolist") and not isinstance(leaf, (int, float))
            else leaf for leaf in tree]


@pytest.mark.parametrize("name", list(trees(jaxgrad)))
def test_flatten_unflatten_and_paths(name):
    t_tree, j_tree = trees(torch)[name], trees(jaxgrad)[name]
    t_leaves, t_spec = tp.tree_flatten(t_tree)
    j_leaves, j_spec = jp.tree_flatten(j_tree)
    assert plain(j_leaves) == plain(t_leaves)
    assert text(j_spec, "jaxgrad") == text(t_spec, "torch")
    assert (j_spec.num_leaves, j_spec.num_nodes, j_spec.num_children, j_spec.is_leaf()) == (
        t_spec.num_leaves, t_spec.num_nodes, t_spec.num_children, t_spec.is_leaf())
    assert jp.treespec_pprint(j_spec).replace("jaxgrad.", "LIB.") == tp.treespec_pprint(
        t_spec).replace("torch.", "LIB.")
    rebuilt_t = tp.tree_unflatten(list(range(len(t_leaves))), t_spec)
    rebuilt_j = jp.tree_unflatten(list(range(len(j_leaves))), j_spec)
    assert text(rebuilt_j, "jaxgrad") == text(rebuilt_t, "torch")
    t_paths = [(tp.keystr(k), v) for k, v in tp.tree_leaves_with_path(t_tree)]
    j_paths = [(jp.keystr(k), v) for k, v in jp.tree_leaves_with_path(j_tree)]
    assert [k for k, _ in j_paths] == [k for k, _ in t_paths]
    assert jp.tree_structure(j_tree) == j_spec and jp.tree_is_leaf(j_tree) == tp.tree_is_leaf(
        t_tree)


MAPS = {
    "map": lambda P, T: P.tree_map(lambda a: a * 2, [1, (2, {"a": 3})]),
    "map_rests": lambda P, T: P.tree_map(lambda a, b: a + b, {"a": 1, "b": (2,)},
                                         {"b": (20,), "a": 10}),
    "map_rests_deeper": lambda P, T: P.tree_map(lambda a, b: (a, b), [1, 2], [[1, 2], {"x": 3}]),
    "map_only": lambda P, T: P.tree_map_only(int, lambda a: -a, [1, "s", 2.5, (3,)]),
    "map_only_tuple": lambda P, T: P.tree_map_only((int, float), lambda a: -a, [1, "s", 2.5]),
    "map_is_leaf": lambda P, T: P.tree_map(len, [[1, 2], (3,)], is_leaf=lambda t: isinstance(
        t, list) and len(t) == 2),
    "all_any": lambda P, T: (P.tree_all(lambda a: a > 0, [1, (2, 3)]),
                             P.tree_any(lambda a: a > 2, [1, (2, 3)]),
                             P.tree_all_only(int, lambda a: a > 0, [1, "s"]),
                             P.tree_any_only(str, lambda a: a == "t", [1, "s"])),
    "map_with_path": lambda P, T: P.tree_map_with_path(
        lambda kp, v: P.keystr(kp) + str(v), {"a": [1, 2], "b": Point(3, 4)}),
    "key_get": lambda P, T: P.key_get({"a": [1, Point(2, 3)]}, P.tree_leaves_with_path(
        {"a": [1, Point(2, 3)]})[2][0]),
    "arity": lambda P, T: P.tree_map(lambda a, b: a, [1, 2], [1, 2, 3]),
    "type": lambda P, T: P.tree_map(lambda a, b: a, [1, 2], (1, 2)),
    "keys": lambda P, T: P.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1, "c": 2}),
    "namedtuple_class": lambda P, T: P.tree_map(
        lambda a, b: a, Point(1, 2), collections.namedtuple("Other", "x y")(1, 2)),
    "unflatten_count": lambda P, T: P.tree_unflatten([1, 2, 3], P.tree_structure((1, 2))),
    "unflatten_type": lambda P, T: P.tree_unflatten([1], [1]),
    "dict_kinds_mix": lambda P, T: P.tree_map(lambda a, b: a + b, {"a": 1},
                                              collections.OrderedDict(a=2)),
}


@pytest.mark.parametrize("name", list(MAPS))
def test_maps_and_their_errors(name):
    expected = attempt(lambda: MAPS[name](tp, torch))
    got = attempt(lambda: MAPS[name](jp, jaxgrad))
    if isinstance(expected, Raised):
        assert isinstance(got, Raised) and (got.cls, got.message) == (
            expected.cls, expected.message.replace("torch.utils._pytree",
                                                   "jaxgrad._func.torch_pytree"))
    else:
        assert got == expected


def test_registered_node_type():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    for P in (tp, jp):
        P.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"), lambda c, ctx: Pair(*c))
    tree = [Pair(1, (2, 3)), 4]
    t_leaves, t_spec = tp.tree_flatten(tree)
    j_leaves, j_spec = jp.tree_flatten(tree)
    assert j_leaves == t_leaves == [1, 2, 3, 4]
    assert repr(j_spec) == repr(t_spec)
    doubled = jp.tree_map(lambda v: v * 2, tree)
    assert isinstance(doubled[0], Pair) and (doubled[0].a, doubled[0].b) == (2, (4, 6))
    for P in (tp, jp):
        with pytest.raises(ValueError, match="already registered as pytree node"):
            P.register_pytree_node(Pair, lambda p: ([], None), lambda c, ctx: Pair(1, 2))
        with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn"):
            P.tree_flatten_with_path(tree)


def test_func_uses_registered_nodes():
    """jaxgrad.func flattens arguments with the same pytrees: a registered container of
    tensors goes through grad and vmap as torch.func passes it."""
    class Box:
        def __init__(self, w):
            self.w = w

    results = []
    for T, P in ((torch, tp), (jaxgrad, jp)):
        class TBox(Box):
            pass
        P.register_pytree_node(TBox, lambda b: ([b.w], None), lambda c, _: TBox(c[0]))
        box = TBox(T.tensor([1.0, 2.0]))
        g = T.func.grad(lambda b: (b.w ** 2).sum())(box)
        v = T.func.vmap(lambda b: b.w * 3)(TBox(T.ones(2, 2)))
        results.append((g.w.tolist(), v.tolist()))
    assert results[0] == results[1]
