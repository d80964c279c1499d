"""What a compiled call writes back, in every form the generated replay (``_compile.codegen``)
emits: results of nested containers, new dicts and lists in the state, deleted entries and
attributes, a stored bound method, numbers copied between places. Each program runs compiled on
jaxgrad and eagerly on torch (torch.compile keeps eager's side effects), and is called several
times so that the steady-state program, not the first trace, produced what is compared. Also the
argument walk's shortcut for plain tensor arguments against its general form."""

from __future__ import annotations

import pytest

import jaxgrad
from differential import compiled_on_jaxgrad as _compile
from differential import ok
from differential import traces as _traces
from jaxgrad._compile import state as _state

CALLS = 4


def _inputs(T, i):
    return T.tensor([1.0 + i, -2.0, 0.5 * i]), T.tensor([0.25, 3.0 - i, 1.0])


def test_nested_results_come_back_as_the_step_built_them():
    def prog(T):
        w = T.tensor([2.0, -1.0, 0.5])

        def step(x, y):
            out = w * x
            return (out, {"sum": out.sum(), "pair": [y, (x + y, "tag")]}, None, 3)

        compiled = _compile(T, step)
        return [compiled(*_inputs(T, i)) for i in range(CALLS)], _traces(compiled) <= 1
    ok(prog)


def test_new_dicts_lists_and_tuples_stored_in_the_state_each_call():
    def prog(T):
        w = T.tensor([2.0, -1.0, 0.5])
        log = {"last": None, "pairs": []}

        def step(x, y):
            loss = (w * x - y).pow(2).sum()
            log["last"] = {"loss": loss, "parts": [x.sum(), (y.max(), "max")]}
            log["pairs"] = [(loss, loss * 2)]
            return loss

        compiled = _compile(T, step)
        losses = [compiled(*_inputs(T, i)) for i in range(CALLS)]
        return losses, log
    ok(prog)


def test_entries_and_attributes_the_step_deletes():
    """Set outside the step before each call, deleted by it: every call's program deletes."""
    def prog(T):
        w = T.tensor([1.0, 2.0, 3.0])

        class Holder:
            pass

        holder = Holder()
        cache = {}

        def step(x, y):
            out = (cache.pop("tmp") * w).sum() + holder.scratch
            del holder.scratch
            return out + y.sum()

        compiled = _compile(T, step)
        out = []
        for i in range(CALLS):
            cache["tmp"], holder.scratch = T.tensor([1.0, 0.0, float(i)]), 2.0
            out.append(compiled(*_inputs(T, i)))
        return out, sorted(cache), sorted(vars(holder))
    ok(prog)


def test_a_users_empty_list_and_dict_are_filled_in_place():
    """Containers the step finds empty and fills stay the same objects (another name for them
    sees the values), as in eager."""
    def prog(T):
        w = T.tensor([1.0, 2.0, 3.0])
        seen, totals = [], {}

        class Log:
            pass

        log = Log()
        log.seen, log.totals = seen, totals

        def step(x, y):
            out = (w * x).sum()
            seen.append(out * 2)
            totals["y"] = y.sum()
            return out

        compiled = _compile(T, step)
        out, kept = [], []
        for i in range(CALLS):
            seen.clear()
            totals.clear()
            out.append(compiled(*_inputs(T, i)))
            kept.append((list(log.seen), dict(log.totals)))
        assert log.seen is seen and log.totals is totals
        return out, kept
    ok(prog)


def test_a_bound_method_and_numbers_stored_in_a_new_list():
    def prog(T):
        model = T.nn.Linear(3, 1)
        with T.no_grad():
            model.weight.fill_(0.5)
            model.bias.fill_(0.1)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        record = {"fn": None, "lrs": []}

        def step(x, y):
            opt.zero_grad()
            loss = (model(x) - y.sum()).pow(2).sum()
            loss.backward()
            opt.step()
            sched.step()
            record["fn"] = model.forward
            record["lrs"] = [opt.param_groups[0]["lr"], sched.last_epoch]
            return loss.detach()

        compiled = _compile(T, step)
        losses = [compiled(*_inputs(T, i)) for i in range(CALLS)]
        assert record["fn"].__self__ is model
        # Python numbers, as eager leaves them; traced from the first trace on (one program)
        assert [type(v) for v in record["lrs"]] == [float, int] and _traces(compiled) <= 1
        return losses, record["lrs"], [p.detach() for p in model.parameters()]
    ok(prog)


def _general_walk(monkeypatch, roots, arg_roots):
    with monkeypatch.context() as patch:
        patch.setattr(_state.StateWalk, "_plain_tensor_arguments", lambda self, a, k: None)
        return _state.StateWalk(roots, arg_roots)


@pytest.mark.parametrize("case", ["one", "same twice", "a state tensor", "detached alias",
                                  "integer", "view", "with grad", "none"])
def test_the_plain_tensor_argument_walk_equals_the_general_one(monkeypatch, case):
    w = jaxgrad.ones(3, requires_grad=True)
    x = jaxgrad.ones(3)
    with_grad = jaxgrad.ones(2)
    with_grad.grad = jaxgrad.ones(2)
    args = {"one": (x,), "same twice": (x, x), "a state tensor": (w, x),
            "detached alias": (w.detach(), x), "integer": (jaxgrad.tensor([1, 2]),),
            "view": (w[:2],), "with grad": (with_grad,), "none": ()}[case]
    roots = ({"w": w},)
    arg_roots = (args, {})
    fast = _state.StateWalk(roots, arg_roots)
    general = _general_walk(monkeypatch, roots, arg_roots)
    assert fast.arg_codes == general.arg_codes
    assert fast.arg_key() == general.arg_key() and fast.state_key() == general.state_key()
    assert all(a is b for a, b in zip(fast.objects, general.objects))
    assert len(fast.objects) == len(general.objects) and fast.kinds == general.kinds
    assert [id(c) for c in fast.cells] == [id(c) for c in general.cells]
    assert [id(c) for c in fast.counters] == [id(c) for c in general.counters]
    assert fast.masks == general.masks and fast.metas == general.metas
    assert fast.entries == general.entries and len(fast.empties) == len(general.empties)
