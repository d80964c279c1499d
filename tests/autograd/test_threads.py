"""Several Python threads running backward on graphs that share leaves, against torch.

torch guarantees that accumulation into a leaf's ``.grad`` is safe across threads (a mutex per
AccumulateGrad node) and that grad mode is thread-local. The threads run while the others
compute (XLA releases the GIL), so a lost update shows as a ``.grad`` below the exact sum.
"""

from __future__ import annotations

import threading

import pytest

from differential import ok

N_THREADS = 8
REPS = 12


def _in_threads(work, n=N_THREADS):
    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("graph", ["plain", "hooked", "retained"])
def test_backward_in_threads_shares_a_leaf(graph):
    """The cached compiled backward (plain), the eager engine (a hook makes the graph
    ineligible) and retained intermediate grads all add every thread's gradient."""
    def program(T):
        x = T.ones(6, 5, dtype=T.float64, requires_grad=True)
        w = T.linspace(0.1, 1.0, 5, dtype=T.float64, requires_grad=True)

        def work(i):
            for _ in range(REPS):
                h = x * w
                if graph == "hooked":
                    h.register_hook(lambda g: g * 2)
                y = (h.sin() * x).sum() + w.exp().sum()
                y.backward()

        _in_threads(work)
        return x.grad, w.grad

    ok(program, rtol=1e-9)


def test_retain_grad_shared_graph_in_threads():
    """Leaf accumulation is locked in torch and here, so ``x.grad`` is compared with torch's.
    torch does not lock a retained non-leaf grad (its value races across threads: one CI run
    saw 258 where the exact sum is 576, another crashed torch with a segmentation fault), so
    torch makes the same backward calls one thread after the other, and jaxgrad's ``h.grad``
    is checked against the exact sum."""
    retained = {}

    def program(T):
        x = T.ones(4, dtype=T.float64, requires_grad=True)
        h = x * 3
        h.retain_grad()
        y = (h * h).sum()

        def work(i):
            for _ in range(REPS):
                y.backward(retain_graph=True)

        if T.__name__ == "torch":
            for i in range(N_THREADS):
                work(i)
        else:
            _in_threads(work)
        retained[T.__name__] = h.grad
        return x.grad

    ok(program, rtol=1e-9)
    assert retained["jaxgrad"].tolist() == [2 * 3.0 * N_THREADS * REPS] * 4


def test_autograd_grad_in_threads_leaves_grad_untouched():
    def program(T):
        x = T.arange(5, dtype=T.float64).requires_grad_()
        results = [None] * N_THREADS

        def work(i):
            y = (x * (i + 1)).pow(2).sum()
            results[i] = T.autograd.grad(y, x)[0]

        _in_threads(work)
        return results, x.grad

    ok(program)


def test_grad_mode_is_thread_local():
    def program(T):
        seen = {}
        entered, release = threading.Event(), threading.Event()

        def no_grad_thread():
            with T.no_grad():
                entered.set()
                release.wait(10)
                seen["inner"] = T.is_grad_enabled()

        other = threading.Thread(target=no_grad_thread)
        other.start()
        entered.wait(10)
        x = T.ones(2, requires_grad=True)
        seen["main"] = T.is_grad_enabled()
        y = x * 2
        release.set()
        other.join()

        def child():  # a new thread starts with grad mode on, whatever its parent has
            seen["child"] = T.is_grad_enabled()

        with T.no_grad():
            t = threading.Thread(target=child)
            t.start()
            t.join()
        return seen["main"], seen["inner"], seen["child"], y.requires_grad

    ok(program)
