"""jaxgrad.viz.draw_graph: the graph's structure (nodes, edges, labels) against the graph torch
builds for the same program (walked through ``grad_fn``/``next_functions``), not pixels."""

from __future__ import annotations

import re

import pytest
import torch

import jaxgrad
from jaxgrad.viz import Graph, draw_graph


def _program(T):
    """A small MLP step with a hook, a retained grad and a view."""
    T.manual_seed(0)
    x = T.ones(4, 3)
    w1 = T.ones(3, 5, requires_grad=True)
    w2 = T.ones(5, 2, requires_grad=True)
    h = (x @ w1).tanh()
    h.retain_grad()
    h.register_hook(lambda g: g * 2)
    out = (h @ w2).t().sigmoid()
    return out.sum(), {"w1": w1, "w2": w2}


def _torch_edges(root):
    """(from, to) labels of torch's graph, from the output to the leaves, and each node's
    saved tensors (names of the ``_saved_*`` attributes holding tensors)."""
    edges, saved, seen, stack = set(), [], set(), [root.grad_fn]
    edges.add(("output", root.grad_fn.name()))

    def label(fn):
        if fn.name() == "torch::autograd::AccumulateGrad":
            return "leaf" + str(tuple(fn.variable.shape))
        return fn.name()

    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        if not label(fn).startswith("leaf"):
            saved.append((label(fn), tuple(sorted(
                a[len("_saved_"):] for a in dir(fn)
                if a.startswith("_saved_") and isinstance(getattr(fn, a), torch.Tensor)))))
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                edges.add((label(fn), label(nxt)))
                stack.append(nxt)
    return edges, sorted(saved)


def _jaxgrad_edges(graph: Graph, params):
    shapes = {name: tuple(t.shape) for name, t in params.items()}

    def label(key):
        kind, text = graph.nodes[key]
        head = text.split("\n")[0]
        if kind == "leaf":
            return "leaf" + str(shapes[head])
        return "output" if kind == "output" else head

    edges = {(label(a), label(b)) for a, b, kind in graph.edges if kind == "grad"}
    saved: dict[str, list[str]] = {k: [] for k, (kind, _) in graph.nodes.items()
                                   if kind == "node"}
    for a, b, kind in graph.edges:
        if kind == "saved":
            saved[b].append(graph.nodes[a][1].split("\n")[0])
    return edges, sorted((label(k), tuple(sorted(v))) for k, v in saved.items())


def test_nodes_edges_and_saved_tensors_are_torchs():
    t_loss, _ = _program(torch)
    j_loss, params = _program(jaxgrad)
    graph = draw_graph(j_loss, params=params)
    assert _jaxgrad_edges(graph, params) == _torch_edges(t_loss)


def test_labels_mark_hooks_retained_grads_and_leaves():
    loss, params = _program(jaxgrad)
    params["w1"].register_hook(lambda g: g)
    labels = {text for _, text in draw_graph(loss, params=params, show_saved=False).nodes.values()}
    assert "TanhBackward0\n[1 hook, retain_grad]" in labels
    assert {"w1\n(3, 5)\n[1 hook]", "w2\n(5, 2)", "output\n()"} <= labels
    assert not any(kind == "saved" for kind, _ in
                   draw_graph(loss, params=params, show_saved=False).nodes.values())


def test_several_outputs_and_a_tensor_without_history():
    a = jaxgrad.ones(2, requires_grad=True)
    graph = draw_graph(a * 2, a.exp(), jaxgrad.ones(1))
    outputs = sorted(text for kind, text in graph.nodes.values() if kind == "output")
    assert outputs == ["output 0\n(2)", "output 1\n(2)", "output 2\n(1)"]
    leaves = [text for kind, text in graph.nodes.values() if kind == "leaf"]
    assert leaves == ["(2)"]  # one leaf, shared by both outputs, unnamed


def test_dot_source_declares_every_node_it_links():
    loss, params = _program(jaxgrad)
    source = draw_graph(loss, params=params).source
    assert source.startswith("digraph {") and source.endswith("}")
    declared = set(re.findall(r"^\s+(n\d+) \[label=", source, re.M))
    linked = set(re.findall(r"(n\d+) -> (n\d+)", source))
    assert declared and all(a in declared and b in declared for a, b in linked)


def test_freed_saved_tensors_are_left_out():
    loss, params = _program(jaxgrad)
    loss.backward()
    graph = draw_graph(loss, params=params)
    assert not any(kind == "saved" for kind, _ in graph.nodes.values())


def test_notebook_picture_or_text():
    graph = draw_graph(jaxgrad.ones(2, requires_grad=True).exp())
    svg = graph._repr_svg_()
    assert svg is None or "<svg" in svg
    assert repr(graph) == graph.source


def test_inputs_must_be_tensors():
    with pytest.raises(AttributeError):
        draw_graph(3.0)


# --- GradientFlow: per-layer gradient norms collected with hooks, on torch and jaxgrad ---------

def _deep_tanh_net(T):
    """A 4-layer tanh MLP whose weights are the same numbers on torch and jaxgrad."""
    layers = []
    for i, (n_in, n_out) in enumerate([(6, 8), (8, 8), (8, 8), (8, 1)]):
        lin = T.nn.Linear(n_in, n_out)
        with T.no_grad():
            lin.weight.copy_(T.linspace(-0.6, 0.6 + i / 10, n_in * n_out).reshape(n_out, n_in))
            lin.bias.copy_(T.linspace(-0.1, 0.1, n_out))
        layers += [lin, T.nn.Tanh()]
    return T.nn.Sequential(*layers[:-1])


@pytest.mark.parametrize("source", ["outputs", "parameters"])
def test_gradient_flow_records_torchs_norms_over_training_steps(source):
    from jaxgrad.viz import GradientFlow

    def program(T):
        model = _deep_tanh_net(T)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        x = T.linspace(-1, 1, 30).reshape(5, 6)
        with GradientFlow(model, source=source) as flow:
            for _ in range(3):
                opt.zero_grad()
                model(x).pow(2).mean().backward()
                opt.step()
        model(x).sum().backward()  # after the with block: nothing more recorded
        return flow.norms

    torch_norms, jaxgrad_norms = program(torch), program(jaxgrad)
    assert list(jaxgrad_norms) == list(torch_norms)
    assert all(len(v) == 3 for v in jaxgrad_norms.values())
    for name in torch_norms:
        assert jaxgrad_norms[name] == pytest.approx(torch_norms[name], rel=1e-5)


def test_gradient_flow_plot_draws_one_line_per_layer():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from jaxgrad.viz import GradientFlow
    model = _deep_tanh_net(jaxgrad)
    with GradientFlow(model, layers=["0", "6"]) as flow:
        model(jaxgrad.ones(2, 6)).sum().backward()
    ax = flow.plot()
    assert [line.get_label() for line in ax.get_lines()] == ["0", "6"]
    assert ax.get_yscale() == "log"
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="source must be"):
        GradientFlow(model, source="weights")
