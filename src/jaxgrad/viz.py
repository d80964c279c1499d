"""Pictures of autograd: the graph behind tensors as Graphviz DOT, and gradient flow.

``draw_graph(loss)`` walks ``grad_fn``/``next_functions`` as torch's engine would and returns a
:class:`Graph`: its ``source`` is DOT text, and in a notebook it renders as SVG when the
``graphviz`` Python package and its ``dot`` binary are installed (the ``viz`` extra), showing
the DOT text otherwise. Nodes carry torch's names (``MulBackward0``,
``torch::autograd::AccumulateGrad`` is drawn as its leaf), leaves their shapes, saved tensors
their names and shapes, and tensors with hooks or ``retain_grad`` say so.

``GradientFlow(model)`` collects per-layer gradient norms with hooks over training steps and plots
them with matplotlib (the ``viz`` extra). It only calls the module and tensor hook API, so the
same recorder also watches a ``torch.nn.Module``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._core.graph import AccumulateGrad, Node
from ._core.tensor import Tensor

__all__ = ["GradientFlow", "Graph", "draw_graph"]

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
    hooks = len(leaf._grad_hooks or ()) + len(leaf._post_acc_hooks or ())
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


class GradientFlow:
    """Per-layer gradient norms over training steps, collected with hooks.

    ``source="outputs"`` (default) hooks each layer's output tensor as the forward makes it (a
    forward hook registering a tensor hook) and records the L2 norm of the gradient flowing into
    it: the intermediate gradient that vanishes or explodes. ``source="parameters"`` puts a
    post-accumulate-grad hook on each parameter and records the norm of its ``.grad`` after
    accumulation. ``layers`` names the
    modules (or parameters) to watch; by default every module that owns parameters (or every
    parameter). Each backward appends one value per name to ``norms``; ``plot()`` draws them.
    Works on jaxgrad and torch modules alike; ``remove()`` (or leaving a ``with`` block) removes
    the hooks.

    >>> import jaxgrad
    >>> from jaxgrad.viz import GradientFlow
    >>> model = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(3, 4), jaxgrad.nn.Tanh(),
    ...                               jaxgrad.nn.Linear(4, 1))
    >>> with GradientFlow(model) as flow:
    ...     for _ in range(2):
    ...         model(jaxgrad.ones(5, 3)).sum().backward()
    >>> {name: len(values) for name, values in flow.norms.items()}
    {'0': 2, '2': 2}
    """

    def __init__(self, model: Any, layers: Iterable[str] | None = None,
                 source: str = "outputs") -> None:
        if source not in ("outputs", "parameters"):
            raise ValueError(f"source must be 'outputs' or 'parameters', got {source!r}")
        self.source = source
        if source == "outputs":
            watched = dict(model.named_modules())
            default = [n for n, m in watched.items() if next(m.parameters(recurse=False), None)
                       is not None]
        else:
            watched = dict(model.named_parameters())
            default = list(watched)
        names = list(default if layers is None else layers)
        self.norms: dict[str, list[float]] = {name: [] for name in names}
        self._handles = [self._watch(name, watched[name]) for name in names]

    def _watch(self, name: str, target: Any) -> Any:
        record = self.norms[name]
        if self.source == "outputs":
            def hook_output(module: Any, args: Any, output: Any) -> None:
                if getattr(output, "requires_grad", False):
                    output.register_hook(lambda grad: record.append(_norm(grad)))
            return target.register_forward_hook(hook_output)
        return target.register_post_accumulate_grad_hook(
            lambda param: record.append(_norm(param.grad)))

    def remove(self) -> None:
        """Remove the hooks; the norms collected so far stay."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self) -> GradientFlow:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()

    def plot(self, ax: Any = None, log: bool = True) -> Any:
        """One line per watched name over the backward calls (log scale unless ``log=False``);
        needs matplotlib. Returns the matplotlib ``Axes``."""
        if ax is None:
            import matplotlib.pyplot as plt
            ax = plt.subplots(figsize=(7, 3.5))[1]
        for name, values in self.norms.items():
            ax.plot(range(1, len(values) + 1), values, marker=".", label=name or "(model)")
        if log:
            ax.set_yscale("log")
        what = "layer output" if self.source == "outputs" else "parameter"
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("backward call")
        ax.set_ylabel(f"{what} gradient norm")
        ax.set_title("gradient flow")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside
        ax.figure.tight_layout()
        return ax


def _norm(grad: Any) -> float:
    return float("nan") if grad is None else float(grad.detach().norm())
