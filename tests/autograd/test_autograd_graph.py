"""Differential tests of ``autograd.graph``: GradientEdge and get_gradient_edge,
increment_version, the Node type, register_multi_grad_hook and
allow_mutation_on_saved_tensors.

Programs return what a user observes (values, gradients, hook call logs, exception records),
compared with torch's.
"""

from __future__ import annotations

import threading
from functools import partial

import pytest

import jaxgrad
from differential import attempt, leaf, ok, val
from jaxgrad._engine.engine import GraphTask


def _engine_takes_gradient_edges() -> bool:
    x = jaxgrad.ones(1, requires_grad=True)
    try:
        jaxgrad.autograd.grad((x * 2).sum(), jaxgrad.autograd.graph.get_gradient_edge(x))
    except (RuntimeError, AssertionError, TypeError):
        return False
    return True


# register_multi_grad_hook asks the engine which backward call runs and which nodes it runs
needs_graph_tasks = pytest.mark.skipif(
    not hasattr(GraphTask, "will_execute"),
    reason="the engine does not report its graph tasks (GraphTask.will_execute, entered with "
           "_graph.graph_task_running)")
needs_edge_roots = pytest.mark.skipif(
    not _engine_takes_gradient_edges(),
    reason="the engine does not take GradientEdges as inputs/outputs of backward and grad")


# --- GradientEdge, get_gradient_edge ------------------------------------------------------------

def test_get_gradient_edge_of_leaves_and_outputs():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        var, mean = T.var_mean(x * 2)
        edges = [T.autograd.graph.get_gradient_edge(t) for t in (x, x * 3, var, mean)]
        return ([(e.node.name(), e.output_nr, e.ownership_token, len(e)) for e in edges],
                T.autograd.graph.GradientEdge._fields, isinstance(edges[0], tuple),
                edges[0].node is x.view_as(x).grad_fn.next_functions[0][0],
                edges[2].node is var.grad_fn,
                attempt(lambda: T.autograd.graph.get_gradient_edge(T.ones(2))),
                repr(T.autograd.graph.GradientEdge(None, 3)))

    ok(program)


@needs_edge_roots
def test_grad_to_an_edge_sees_the_tensor_before_later_inplace_changes():
    def program(T):
        x = leaf(T, [1.0, 2.0]).clone()
        edge = T.autograd.graph.get_gradient_edge(x)
        x *= 2
        g_old, g_new = T.autograd.grad(x.sum(), (edge, x))
        y = leaf(T, [3.0]).clone()
        out = x.clone()
        materialize = attempt(lambda: T.autograd.grad(
            out.sum(), (x, T.autograd.graph.get_gradient_edge(y)), allow_unused=True,
            materialize_grads=True))
        return g_old, g_new, materialize

    ok(program)


@needs_edge_roots
def test_gradient_edge_as_a_root():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        tmp = x.sin().cos().sum()
        out = tmp.exp().clone().sin().sum()
        edge = T.autograd.graph.get_gradient_edge(tmp)
        (tmp_grad,) = T.autograd.grad(out, (edge,), retain_graph=True)
        (x_grad,) = T.autograd.grad(edge, (x,), grad_outputs=(tmp_grad,), retain_graph=True)
        (x_ref,) = T.autograd.grad(out, (x,), retain_graph=True)
        wrong_shape = attempt(lambda: T.autograd.grad(edge, (x,), grad_outputs=T.ones(3)))
        T.autograd.backward(edge, retain_graph=True)
        return tmp_grad, x_grad, x_ref, wrong_shape, x.grad

    ok(program)


# --- increment_version --------------------------------------------------------------------------

def test_increment_version():
    def program(T):
        a = leaf(T, [1.0, 2.0])
        b = T.zeros(2, dtype=T.int32)
        versions = [a._version]
        T.autograd.graph.increment_version(a)
        T.autograd.graph.increment_version([a, b])
        T.autograd.graph.increment_version((b,))
        versions += [a._version, b._version]
        with T.inference_mode():
            c = T.ones(2, requires_grad=True)
            T.autograd.graph.increment_version(c)
        T.autograd.graph.increment_version(c)
        errors = [attempt(lambda x=x: T.autograd.graph.increment_version(x))
                  for x in (3, "a", [a, 1])]
        d = a.clone()
        y = d.exp()
        T.autograd.graph.increment_version(d)  # backward now sees the saved tensor as modified
        return versions, errors, attempt(lambda: y.sum().backward())

    ok(program)


# --- Node ------------------------------------------------------------------------------------------

def test_node_is_a_virtual_base_class():
    def program(T):
        Node = T.autograd.graph.Node
        a = leaf(T, [1.0, 2.0])
        b = a.exp()
        seen = []

        class Func(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(isinstance(ctx, Node))
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                seen.append(isinstance(ctx, Node))
                return g

        Func.apply(a).sum().backward()

        class Mine(Node):
            pass

        return (isinstance(b.grad_fn, Node), issubclass(type(b.grad_fn), Node),
                Node in type(b.grad_fn).mro(), isinstance(b.grad_fn.next_functions[0][0], Node),
                isinstance(None, Node), isinstance(1, Node), isinstance(Node, Node),
                issubclass(Node, Node), issubclass(int, Node), issubclass(Mine, Node),
                issubclass(T.autograd.function.BackwardCFunction, Node), seen,
                attempt(Mine), repr(Node))

    ok(program)


def test_node_metadata_and_input_metadata():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        meta = y.grad_fn.metadata
        meta["k"] = 1
        var, _mean = T.var_mean(T.ones(3, 2, requires_grad=True), dim=0)
        acc = y.grad_fn.next_functions[0][0]
        inputs = [(tuple(m.shape), m.dtype) for m in var.grad_fn._input_metadata]
        return (y.grad_fn.metadata is meta, dict(y.grad_fn.metadata), acc.metadata, inputs,
                [(tuple(m.shape), m.dtype) for m in acc._input_metadata],
                acc._sequence_nr(), y.grad_fn._sequence_nr() < (y * 1).grad_fn._sequence_nr())

    ok(program)


def test_calling_a_grad_fn_checks_its_arguments():
    def program(T):
        x = T.tensor([1.5], requires_grad=True)
        y = x ** 2
        acc = (x * 1).grad_fn.next_functions[0][0]
        with T.no_grad():
            right = y.grad_fn(T.ones(1))
        return (attempt(lambda: y.grad_fn(x.detach(), x.detach())),
                attempt(lambda: y.grad_fn()), attempt(lambda: y.grad_fn(3)),
                attempt(lambda: acc()), val(right), y.grad_fn(None))

    ok(program)


def test_accumulate_grad_is_named_as_torchs_cpp_class():
    """``name()`` of a leaf's AccumulateGrad is torch's C++ class name (hooks key on it)."""
    def program(T):
        x = T.ones(2, requires_grad=True)
        acc = (x * 2).grad_fn.next_functions[0][0]
        names = []
        acc.register_prehook(lambda g: names.append(f"pre_{acc.name()}"))
        acc.register_hook(lambda gi, go: names.append(f"post_{acc.name()}"))
        (x * 2).sum().backward()
        return acc.name(), type(acc).__name__, names

    ok(program)


# --- register_multi_grad_hook --------------------------------------------------------------------

def _flags(grads):
    return [g is not None for g in grads]


@needs_graph_tasks
def test_multi_grad_all_per_backward_call():
    def program(T):
        log = []
        a, b = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
        c, d = a * b, a * b
        handle = T.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: log.append(("all", _flags(grads), grads[2])))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c.sum() + d.sum()).backward(retain_graph=True)
        leaf_in_grad = attempt(lambda: T.autograd.grad(c.sum(), (a,), retain_graph=True))
        e = a.clone()
        f = e * 2
        h2 = T.autograd.graph.register_multi_grad_hook(
            (e, f), lambda grads: log.append(("grad", _flags(grads))))
        non_leaf = T.autograd.grad(f.sum(), (e,), retain_graph=True)
        handle.remove()
        h2.remove()
        c.sum().backward()
        return log, leaf_in_grad, non_leaf, a.grad.clone()

    ok(program)


@needs_graph_tasks
def test_multi_grad_all_errors_and_unfinished_calls():
    def program(T):
        log = []
        t1, t2, t3 = (leaf(T, [float(i), 1.0]) for i in range(3))
        t1 = t1.mul(2)

        class Fails(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("error message")

        handle = T.autograd.graph.register_multi_grad_hook(
            (t1, t2, t3), lambda grads: log.append(_flags(grads)))
        out = Fails.apply(t2) * t3
        failed = attempt(lambda: out.sum().backward(inputs=(t2, t3), retain_graph=True))
        ok_out = t2 * t3
        ok_out.sum().backward(inputs=(t2, t3))
        no_grad_tensor = attempt(lambda: T.autograd.graph.register_multi_grad_hook(
            (t1, T.ones(2)), lambda grads: None))
        modes = attempt(lambda: T.autograd.graph.register_multi_grad_hook(
            (t1,), lambda grads: None, mode="foo"))
        handle.remove()
        return log, failed, no_grad_tensor, modes

    ok(program)


@needs_graph_tasks
def test_multi_grad_hooks_order_with_tensor_hooks_and_retain_grad():
    def program(T):
        log = []
        a = leaf(T, [1.0, 2.0])
        b = a * 2
        c = b * 3
        b.register_hook(lambda g: log.append(("b first", g)) or g * 10)
        b.retain_grad()
        T.autograd.graph.register_multi_grad_hook(
            (b, c), lambda grads: log.append(("all", grads)))
        T.autograd.graph.register_multi_grad_hook(
            (c, b), lambda g: log.append(("any", g)), mode="any")
        b.register_hook(lambda g: log.append(("b last", g)))
        c.sum().backward()
        return log, b.grad, a.grad

    ok(program)


@needs_graph_tasks
def test_multi_grad_any_runs_once_per_call_before_later_hooks():
    def program(T):
        T.manual_seed(0)
        hook_order = []
        handles = []
        ids = [0]

        def hook(hook_id, *unused):
            hook_order.append(hook_id)

        class MultiOutput(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = T.nn.Linear(3, 3)

            def forward(self, x):
                z = self.lin(x)
                out = T.sin(z), T.cos(z)
                z.register_hook(partial(hook, ids[0]))
                ids[0] += 1
                handles.append(T.autograd.graph.register_multi_grad_hook(
                    out, partial(hook, ids[0]), mode="any"))
                ids[0] += 1
                return out

        class Model(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.mod1, self.mod2 = MultiOutput(), MultiOutput()

            def forward(self, x):
                y = self.mod1(x)
                return self.mod2(y[0] + y[1])

        model = Model()
        inp = T.randn(2, 3)
        out = model(inp)
        (out[0] + out[1]).sum().backward()
        first = list(hook_order)
        ids[0] = 0
        hook_order.clear()
        handles.clear()
        out = model(inp)
        for handle in handles:
            handle.remove()
        (out[0] + out[1]).sum().backward()
        return first, hook_order

    ok(program)


@needs_graph_tasks
def test_multi_grad_hooks_count_each_thread_s_backward_on_its_own():
    def program(T):
        calls = []
        lock = threading.Lock()
        t1, t2, t3 = (leaf(T, [1.0, 2.0]) for _ in range(3))

        def hook(grads):
            with lock:
                calls.append(_flags(grads))

        T.autograd.graph.register_multi_grad_hook((t1, t2, t3), hook)
        out = (t2 * t3).sum()
        threads = [threading.Thread(target=lambda: out.backward(inputs=(t2, t3),
                                                                retain_graph=True))
                   for _ in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return calls, t2.grad.clone()

    ok(program)


@needs_graph_tasks
def test_will_engine_execute_node_and_task_ids_outside_backward():
    # torch._C's functions behind the multi-grad hooks, outside a backward call
    from jaxgrad._core import graph as _graph

    a = jaxgrad.ones(2, requires_grad=True)
    b = a * 2
    with pytest.raises(RuntimeError, match="expects an grad_fn, but got Tensor"):
        _graph.will_engine_execute_node(b)
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        _graph.will_engine_execute_node(b.grad_fn)
    ids = []
    b.register_hook(lambda g: ids.append(_graph.current_graph_task_id()))
    b.sum().backward(retain_graph=True)
    b.sum().backward()
    assert ids[1] == ids[0] + 1 and _graph.current_graph_task_id() == -1


# --- saved-tensor hooks changed during backward --------------------------------------------------

@needs_graph_tasks
def test_saved_tensor_hooks_changed_by_an_unpack_hook_are_restored_after_backward():
    # torch's engine restores the thread-local state it captured with the backward call
    def program(T):
        log = []

        def unpack(x):
            inner.__exit__()
            return x

        inner = T.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
        outer = T.autograd.graph.saved_tensors_hooks(lambda x: ("outer", x), lambda p: p[1])
        for _ in range(3):
            with outer:
                inner.__enter__()
                x = leaf(T, [1.0, 2.0])
                x.sin().sum().backward()
        y = x.exp()  # three extra inner hooks are still on the stack
        log.append(type(y.grad_fn._raw_saved_result.data).__name__)
        for _ in range(3):
            inner.__exit__()
        z = x.exp()
        log.append(attempt(lambda: z.grad_fn._raw_saved_result.register_hooks(
            lambda t: t, lambda t: t)))
        return log

    ok(program)


# --- allow_mutation_on_saved_tensors -------------------------------------------------------------

def _mutation_program(body):
    def program(T):
        counts = []

        def record(ctx):
            counts.append((len(list(ctx.cloned.items())), len(list(ctx.tid_to_weakhandle.items()))))

        with T.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            out = body(T, ctx, record)
        record(ctx)
        return out, counts

    return program


def test_allow_mutation_basic_and_views():
    def body(T, ctx, record):
        a = leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        grads = []
        for modify in (lambda b: b.sin_(), lambda b: b.view_as(b).sin_(),
                       lambda b: b[:1].mul_(10), lambda b: b.mul_(2)):
            b = a.clone()
            out = (b[:] ** 2).sum()
            modify(b)
            record(ctx)
            out.backward()
            record(ctx)
            grads.append(a.grad.clone())
            a.grad = None
        return grads

    ok(_mutation_program(body))


def test_allow_mutation_clones_once_per_saved_version():
    def body(T, ctx, record):
        a = leaf(T, [1.0, 2.0]).clone()
        b = a ** 2
        c = a ** 2
        a.sin_()
        record(ctx)
        del b, c
        record(ctx)
        b = a ** 2
        a.sin_()
        c = a ** 2
        a.sin_()
        record(ctx)
        del b
        record(ctx)
        del c
        record(ctx)
        out = (a ** 2).sum()
        out.backward()
        a.sin_()
        record(ctx)
        return a

    ok(_mutation_program(body))


def test_allow_mutation_out_variant_and_double_backward():
    def body(T, ctx, record):
        a = leaf(T, [1.0])
        b, c = T.tensor([1.0]), T.tensor([2.0])
        out = a * b
        record(ctx)
        T.sin(c, out=b)
        record(ctx)
        out.backward()
        record(ctx)
        x = leaf(T, [1.0, 2.0])
        y = x.clone()
        s = (y ** 2).sum()
        y.sin_()
        (g,) = T.autograd.grad(s, x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return a.grad, g.detach(), gg  # (g's grad_fn name is the engine's business)

    ok(_mutation_program(body))


def test_allow_mutation_errors():
    def program(T):
        graph = T.autograd.graph
        with graph.allow_mutation_on_saved_tensors():
            a = leaf(T, [1.0, 2.0])
            out = (a ** 2).sum()
        outside = attempt(out.backward)
        with graph.allow_mutation_on_saved_tensors():
            b = leaf(T, [1.0, 2.0])
            out2 = (b ** 2).sum()
        with graph.allow_mutation_on_saved_tensors():
            other_block = attempt(out2.backward)

        def nested():
            with graph.allow_mutation_on_saved_tensors(), \
                    graph.allow_mutation_on_saved_tensors():
                pass

        def nested_then_backward():
            with graph.allow_mutation_on_saved_tensors():
                c = leaf(T, [1.0])
                out3 = (c ** 2).sum()
                record = attempt(nested)
                return record, attempt(out3.backward)

        def under_disabled_hooks():
            with graph.disable_saved_tensors_hooks("no hooks"), \
                    graph.allow_mutation_on_saved_tensors():
                pass

        return (outside, other_block, attempt(nested), nested_then_backward(),
                attempt(under_disabled_hooks), a.grad)

    ok(program)


def test_dir_of_a_node_lists_its_saved_attributes_as_torchs():
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        nodes = [(x * x).grad_fn, x.sigmoid().grad_fn, x.pow(2).grad_fn, (x * 2).grad_fn,
                 x.transpose(0, 1).grad_fn]
        return [sorted(d for d in dir(fn) if d.startswith(("_saved_", "_raw_saved_")))
                for fn in nodes]
    ok(program)
