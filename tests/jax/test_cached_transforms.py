"""jaxgrad.func transforms called eagerly run as one cached XLA program per signature from their
third call on (jaxgrad/_compile/cached_transforms.py). Each program below calls the same
transformed function several times, changing what a cache could get wrong between calls, and
compares every call with torch.func."""

from __future__ import annotations

import numpy as np
import pytest

from differential import attempt, ok

CALLS = 5  # more than the eager calls before compiling


def data(T, shape, seed=0):
    return T.tensor(np.random.RandomState(seed).randn(*shape).astype(np.float32))


def per_sample_grads(T):
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Linear(8, 3))
    with T.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(data(T, tuple(p.shape), seed=i))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(params, x, y):
        out = T.func.functional_call(model, params, (x.unsqueeze(0),))
        return T.nn.functional.cross_entropy(out, y.unsqueeze(0))

    grads = T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))
    return model, params, grads


def test_per_sample_gradients_on_every_call():
    def prog(T):
        _, params, grads = per_sample_grads(T)
        y = T.tensor([0, 1, 2, 1, 0, 2])
        out = [grads(params, data(T, (6, 4), seed=10 + i), y) for i in range(CALLS)]
        inline = [T.func.vmap(T.func.grad(lambda p, x: (x @ p).sum()))(data(T, (3, 2)),
                                                                        data(T, (3, 2), 1))
                  for _ in range(CALLS)]
        return out, inline
    ok(prog)


def test_the_cached_program_is_used():
    """Also once a ``__torch_dispatch__`` subclass exists in the process (any library may
    define one): only such a tensor among the arguments keeps a call eager."""
    import jaxgrad
    from jaxgrad._compile import cached_transforms

    class Logged(jaxgrad.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    assert Logged._python_dispatch
    _, params, grads = per_sample_grads(jaxgrad)
    x, y = jaxgrad.randn(6, 4), jaxgrad.tensor([0, 1, 2, 1, 0, 2])
    for _ in range(CALLS):
        grads(params, x, y)
    entry = cached_transforms._recipe_entry(grads._recipe)
    assert entry.compiled is not None and not entry.eager_only
    assert len(entry.compiled._cache) == 1  # one signature, traced once


def test_what_the_function_reads_is_read_on_every_call():
    def prog(T):
        w = data(T, (3,))
        scale = 2.0

        def f(x):
            return (x * w * scale).sum()

        g = T.func.grad(f)
        out = []
        for i in range(CALLS):
            out.append(g(data(T, (3,), seed=i)))
            if i == 2:
                w.mul_(3)  # in place
            if i == 3:
                w = data(T, (3,), seed=7)  # rebound
                scale = 5.0
        return out
    ok(prog)


def test_modules_flags_and_shapes_are_part_of_the_signature():
    def prog(T):
        class Scale(T.nn.Module):
            def forward(self, x):
                return x * (2.0 if self.training else 3.0)

        _, params, grads = per_sample_grads(T)
        scale = Scale()
        run = T.func.vmap(lambda x: T.func.functional_call(scale, {}, (x,)).sum())
        out = []
        for i in range(CALLS):
            if i == 3:
                scale.eval()
            out.append(run(data(T, (5, 4), seed=i)))
        y = T.tensor([0, 1])
        out += [grads(params, data(T, (2, 4), seed=i), y) for i in range(3)]  # a new shape
        return out
    ok(prog)


def test_results_with_history_keep_it_on_every_call():
    def prog(T):
        T.manual_seed(0)
        lin = T.nn.Linear(3, 2)
        with T.no_grad():
            lin.weight.copy_(data(T, (2, 3)))
            lin.bias.zero_()
        f = T.func.vmap(lambda x: lin(x).sum())
        out = []
        for i in range(CALLS):
            r = f(data(T, (4, 3), seed=i))
            r.sum().backward()  # (the node's name is the transform's: see func.md)
            out.append((r.detach(), r.requires_grad, lin.weight.grad.clone()))
        with T.no_grad():
            out.append(f(data(T, (4, 3))))
        return out
    ok(prog)


def test_python_that_runs_per_call_runs_on_every_call():
    def prog(T):
        seen = []
        lin = T.nn.Linear(3, 3)
        lin.register_forward_hook(lambda m, i, o: seen.append("hook"))
        f = T.func.vmap(lambda x: lin(x).relu())
        printed = T.func.grad(lambda x: (seen.append(repr(x)) or x).sin().sum())
        with T.no_grad():
            for i in range(CALLS):
                f(data(T, (2, 3), seed=i))
                printed(data(T, (3,), seed=i))
        return len(seen), seen[-1].split("(")[0]
    ok(prog)


def test_inputs_written_in_place_and_errors_on_every_call():
    def prog(T):
        x = T.zeros(2, 3)
        f = T.func.vmap(lambda r: r.add_(1).sum())
        sums = [f(x) for _ in range(CALLS)]
        bad = T.func.grad(lambda r: r * 2)
        return sums, x, x._version, [attempt(lambda: bad(x)) for _ in range(CALLS)]
    ok(prog)


@pytest.mark.parametrize("randomness", ["error", "different", "same"])
def test_randomness_on_every_call(randomness):
    def prog(T):
        f = T.func.vmap(lambda x: T.nn.functional.dropout(x, 0.5).ne(0).sum(),
                        randomness=randomness)
        x = T.ones(4, 200)
        runs = [attempt(lambda: f(x)) for _ in range(CALLS)]
        if randomness == "error":
            return runs
        counts = [r.tolist() for r in runs]
        plausible = [all(40 < c < 160 for c in row) for row in counts]
        same_in_a_call = [len(set(row)) == 1 for row in counts]  # 'same': one mask per call
        return plausible, all(same_in_a_call), len({tuple(c) for c in counts}) > 1
    ok(prog)


def test_a_function_appending_to_a_list_it_reaches_appends_on_every_call():
    def prog(T):
        calls = []

        def f(x):
            calls.append(len(calls))
            return x.sin().sum()

        g = T.func.grad(f)
        out = [g(data(T, (3,), seed=i)) for i in range(3 * CALLS)]
        return out, calls
    ok(prog)
