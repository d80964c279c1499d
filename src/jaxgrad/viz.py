"""Pictures of autograd: the graph behind tensors as Graphviz DOT.

``draw_graph(loss)`` walks ``grad_fn``/``next_functions`` as torch's engine would and returns a
:class:`Graph`: its ``source`` is DOT text, and in a notebook it renders as SVG when the
``graphviz`` Python package and its ``dot`` binary are installed (the ``viz`` extra), showing
the DOT text otherwise. Nodes carry torch's names (``MulBackward0``,
``torch::autograd::AccumulateGrad`` is drawn as its leaf), leaves their shapes, saved tensors
their names and shapes, and tensors with hooks or ``retain_grad`` say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._graph import AccumulateGrad, Node
from ._tensor import Tensor

__all__ = ["Graph", "draw_graph"]

_STYLE = {"output": 'shape=box, style=filled, fillcolor="darkolivegreen1"',
          "leaf": 'shape=box, style=filled, fillcolor="lightblue"',
          "saved": 'shape=box, style=filled, fillcolor="orange"',
          "node": "shape=box"}


class Graph:
    """An autograd graph as DOT: ``nodes`` maps a DOT id to ``(kind, label)`` (kind: "output",
    "node", "leaf" or "saved"), ``edges`` lists ``(from, to, kind)`` (kind: "grad" for the way
    gradients flow backwards, "saved" for a saved tensor); ``source`` is the DOT text.

    >>> import jaxgrad
    >>> from jaxgrad.viz import draw_graph
    >>> x = jaxgrad.ones(2, requires_grad=True)
    >>> g = draw_graph((x * 2).sum(), params={"x": x})
    >>> sorted(label for kind, label in g.nodes.values() if kind != "saved")
    ['MulBackward0', 'SumBackward0', 'output\\n()', 'x\\n(2)']
    """

    def __init__(self, nodes: dict[str, tuple[str, str]],
                 edges: list[tuple[str, str, str]]) -> None:
        self.nodes = nodes
        self.edges = edges

    @property
    def source(self) -> str:
        lines = ["digraph {", '    graph [size="12,12"]', '    node [fontname="monospace"]']
        for key, (kind, label) in self.nodes.items():
            text = label.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            lines.append(f'    {key} [label="{text}", {_STYLE[kind]}]')
        for src, dst, kind in self.edges:
            lines.append(f"    {src} -> {dst}" + (" [style=dashed]" if kind == "saved" else ""))
        lines.append("}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return self.source

    def _repr_svg_(self) -> str | None:
        """The picture, when the graphviz package and its ``dot`` binary are there."""
        try:
            import graphviz
            return graphviz.Source(self.source).pipe(format="svg").decode()
        except Exception:  # no package or no binary: the notebook shows the DOT text
            return None


def _shape(t: Tensor) -> str:
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def _marks(hooks: int, retains: bool) -> str:
    parts = ([f"{hooks} hook" + ("s" if hooks > 1 else "")] if hooks else []) + (
        ["retain_grad"] if retains else [])
    return "\n[" + ", ".join(parts) + "]" if parts else ""


def _tensor_marks(fn: Node) -> str:
    hooks = sum(len(d) for _, d in (fn._tensor_hooks or ()))
    retains = any(ref() is not None for ref in (fn._retains or {}).values())
    return _marks(hooks, retains)


def _leaf_label(leaf: Tensor, names: Mapping[int, str]) -> str:
    hooks = len(leaf._backward_hooks or ()) + len(leaf._post_acc_hooks or ())
    return f"{names.get(id(leaf), '')}\n{_shape(leaf)}".lstrip("\n") + _marks(hooks, False)


def _saved_tensors(fn: Node) -> list[tuple[str, Tensor]]:
    saved = getattr(fn, "saved", None)
    if not isinstance(saved, dict):
        return []
    found = []
    for name in saved:
        try:
            value = getattr(fn, f"_saved_{name}")
        except (AttributeError, RuntimeError):  # freed, or not a tensor torch exposes
            continue
        if isinstance(value, Tensor):
            found.append((name, value))
    return found


def draw_graph(*tensors: Tensor, params: Mapping[str, Tensor] | None = None,
               show_saved: bool = True) -> Graph:
    """The autograd graph behind ``tensors`` (torchviz's ``make_dot``): a box per node, named as
    torch names it, gradients flowing from the outputs to the leaves; leaves labelled with their
    name in ``params`` (``dict(model.named_parameters())``) and shape; saved tensors (dashed,
    when ``show_saved``) with their names; ``[2 hooks, retain_grad]`` on what has them.

    >>> import jaxgrad
    >>> from jaxgrad.viz import draw_graph
    >>> w = jaxgrad.ones(3, requires_grad=True)
    >>> y = (w.exp() * 2).sum()
    >>> print(draw_graph(y, params={"w": w}, show_saved=False).source)  # doctest: +ELLIPSIS
    digraph {
    ...
    }
    """
    names = {id(t): name for name, t in (params or {}).items()}
    nodes: dict[str, tuple[str, str]] = {}
    edges: list[tuple[str, str, str]] = []
    ids: dict[Any, str] = {}  # keyed by ids of objects the graph keeps alive while we walk

    def key(ident: Any, kind: str, label: str) -> str:
        if ident not in ids:
            ids[ident] = f"n{len(ids)}"
            nodes[ids[ident]] = (kind, label)
        return ids[ident]

    def node_key(fn: Node) -> str:
        if isinstance(fn, AccumulateGrad):
            return key(id(fn), "leaf", _leaf_label(fn.variable, names))
        return key(id(fn), "node", fn.name() + _tensor_marks(fn))

    seen: set[int] = set()
    stack: list[Node] = []
    for i, t in enumerate(tensors):
        label = (names.get(id(t)) or ("output" if len(tensors) == 1 else f"output {i}"))
        out = key(("output", i), "output", f"{label}\n{_shape(t)}")
        if t.grad_fn is not None:
            edges.append((out, node_key(t.grad_fn), "grad"))
            stack.append(t.grad_fn)
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        here = node_key(fn)
        if show_saved:
            for name, value in _saved_tensors(fn):
                saved = key((id(fn), name), "saved", f"{name}\n{_shape(value)}")
                edges.append((saved, here, "saved"))
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                edges.append((here, node_key(nxt), "grad"))
                stack.append(nxt)
    return Graph(nodes, edges)
