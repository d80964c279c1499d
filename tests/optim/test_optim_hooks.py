"""Optimizer hooks against torch: step pre/post hooks (global and per-instance), their order,
arguments and return rules; state_dict / load_state_dict hooks; handles; profiler ranges;
add_param_group errors."""

from __future__ import annotations

import copy
import importlib
import re

import pytest

import jaxgrad
from differential import Raised, attempt, ok, raises, torch


def params(T):
    a = T.tensor([1.0, -2.0], requires_grad=True)
    b = T.tensor([0.5], requires_grad=True)
    a.grad, b.grad = T.tensor([0.5, 0.25]), T.tensor([-1.0])
    return a, b


def optimizer_module(T):
    """``T.optim.optimizer`` (torch's ``optim/__init__`` deletes the attribute: import it)."""
    return importlib.import_module(T.__name__ + ".optim.optimizer")


def describe_args(opt, args, kwargs):
    return (len(args), args[0] is opt, [type(a).__name__ for a in args[1:]], sorted(kwargs))


@pytest.mark.parametrize("family", ["SGD", "Adam", "AdamW"])
def test_step_hook_order_and_arguments(family):
    def program(T):
        log = []
        opt = getattr(T.optim, family)(params(T), lr=0.1)
        mod = optimizer_module(T)

        def hook(name):
            return lambda o, args, kwargs: log.append((name, describe_args(o, args, kwargs)))

        handles = [
            opt.register_step_post_hook(hook("post1")),
            mod.register_optimizer_step_post_hook(hook("global_post")),
            opt.register_step_pre_hook(hook("pre1")),
            mod.register_optimizer_step_pre_hook(hook("global_pre")),
            opt.register_step_pre_hook(hook("pre2")),
            opt.register_step_post_hook(hook("post2")),
        ]
        try:
            opt.step()
            log.append("---")
            opt.step(lambda: 3.0)
            log.append("---")
            loss = opt.step(closure=lambda: 4.0)
            for h in handles[::2]:
                h.remove()
            log.append("---")
            opt.step()
        finally:
            for h in handles:
                h.remove()
        return log, loss

    ok(program)


def test_pre_hook_can_replace_the_arguments_and_post_hooks_see_them():
    def program(T):
        log = []
        opt = T.optim.SGD(params(T), lr=0.1)
        opt.register_step_pre_hook(lambda o, args, kwargs: ((o,), {"closure": lambda: 7.0}))
        opt.register_step_pre_hook(lambda o, args, kwargs: log.append(
            ("pre", describe_args(o, args, kwargs))))
        opt.register_step_post_hook(lambda o, args, kwargs: log.append(
            ("post", describe_args(o, args, kwargs))))
        return opt.step(), opt.step(lambda: 1.0), log

    ok(program)


@pytest.mark.parametrize("result", ["list", "triple", "number"])
def test_pre_hook_returning_anything_else_raises(result):
    value = {"list": lambda o: [(o,), {}], "triple": lambda o: ((o,), {}, None),
             "number": lambda o: 1}[result]

    def program(T):
        opt = T.optim.Adam(params(T), lr=0.1)
        opt.register_step_pre_hook(lambda o, args, kwargs: value(o))
        return attempt(opt.step)

    ta, jb = (program(lib) for lib in (torch, jaxgrad))
    assert isinstance(ta, Raised) and isinstance(jb, Raised)

    def strip(message):  # "<function Adam.step at 0x...>" and the optimizer's own repr
        return re.sub(r" at 0x[0-9a-f]+>", ">", message.split(", but got")[0])

    assert (ta.cls, strip(ta.message)) == (jb.cls, strip(jb.message))
    assert ta.message.endswith(".") and "must return None or a tuple" in ta.message


def test_hooks_of_one_optimizer_do_not_fire_for_another():
    def program(T):
        log = []
        first, second = T.optim.SGD(params(T)), T.optim.SGD(params(T))
        first.register_step_pre_hook(lambda *a: log.append("first"))
        second.step()
        first.step()
        return log

    ok(program)


def test_removable_handle_as_context_manager_and_double_remove():
    def program(T):
        log = []
        opt = T.optim.SGD(params(T))
        with opt.register_step_post_hook(lambda *a: log.append("in")) as handle:
            opt.step()
        opt.step()
        handle.remove()
        with optimizer_module(T).register_optimizer_step_pre_hook(lambda *a: log.append("g")):
            opt.step()
        opt.step()
        return log

    ok(program)


def test_hook_raising_stops_the_step():
    def program(T):
        a, b = params(T)
        opt = T.optim.SGD([a, b], lr=0.5)

        def hook(o, args, kwargs):
            raise ValueError("no step today")

        opt.register_step_pre_hook(hook)
        return attempt(opt.step), a, b

    ok(program)


def test_subclass_with_its_own_step_gets_hooks_and_profiler_range():
    def program(T):
        log = []

        class Halve(T.optim.Optimizer):
            def __init__(self, ps):
                super().__init__(ps, {"lr": 0.5})

            def step(self, closure=None):
                log.append("step")
                with T.no_grad():
                    for g in self.param_groups:
                        for p in g["params"]:
                            p.mul_(g["lr"])
                return "done"

        a, b = params(T)
        opt = Halve([a, b])
        opt.register_step_pre_hook(lambda *args: log.append("pre"))
        opt.register_step_post_hook(lambda *args: log.append("post"))
        with T.autograd.profiler.profile() as prof:
            out = opt.step()
        names = [e.name for e in prof.function_events if e.name.startswith("Optimizer.")]
        return out, log, a, names, repr(opt)

    ok(program)


@pytest.mark.parametrize("family", ["SGD", "Adam", "AdamW"])
def test_profiler_ranges_around_step_and_zero_grad(family):
    def program(T):
        opt = getattr(T.optim, family)(params(T), lr=0.1)
        with T.autograd.profiler.profile() as prof:
            opt.step()
            opt.zero_grad()
        return [e.name for e in prof.function_events if e.name.startswith("Optimizer.")]

    ok(program)


def test_deepcopy_drops_hooks():
    def program(T):
        log = []
        opt = T.optim.SGD(params(T), momentum=0.9)
        opt.register_step_pre_hook(lambda *a: log.append("pre"))
        opt.register_state_dict_pre_hook(lambda o: log.append("sd"))
        clone = copy.deepcopy(opt)
        clone.step()
        clone.state_dict()
        opt.step()
        return log

    ok(program)


# --- state_dict / load_state_dict hooks -------------------------------------------------------


def test_state_dict_hooks_order_prepend_and_replacement():
    def program(T):
        log = []
        a, b = params(T)
        opt = T.optim.SGD([a, b], momentum=0.9)
        opt.step()
        opt.register_state_dict_pre_hook(lambda o: log.append(("pre1", o is opt)))
        opt.register_state_dict_pre_hook(lambda o: log.append("pre0"), prepend=True)

        def edit(o, sd):
            log.append(("post_edit", sorted(sd)))
            sd["extra"] = 1

        def replace(o, sd):
            log.append(("post_replace", sorted(sd)))
            return {"only": sd["extra"], "state": sd["state"]}

        opt.register_state_dict_post_hook(replace)
        opt.register_state_dict_post_hook(edit, prepend=True)
        opt.register_state_dict_post_hook(lambda o, sd: log.append(("post_none", sorted(sd))))
        return opt.state_dict(), log

    ok(program)


def test_load_state_dict_hooks():
    def program(T):
        log = []
        a, b = params(T)
        opt = T.optim.Adam([a, b], lr=0.1)
        opt.step()
        saved = opt.state_dict()
        other = T.optim.Adam([x.detach().clone().requires_grad_() for x in (a, b)], lr=0.5)

        def shallow(o, sd):
            log.append(("pre_copy", sd is saved, sd["state"] is saved["state"]))
            sd["param_groups"] = [dict(g, lr=0.25) for g in sd["param_groups"]]

        def replace(o, sd):
            log.append(("pre_replace", sd["param_groups"][0]["lr"]))
            new = dict(sd)
            new["param_groups"] = [dict(g, eps=1e-3) for g in sd["param_groups"]]
            return new

        other.register_load_state_dict_pre_hook(replace)
        other.register_load_state_dict_pre_hook(shallow, prepend=True)
        other.register_load_state_dict_post_hook(
            lambda o: log.append(("post", o.param_groups[0]["lr"])))
        other.register_load_state_dict_post_hook(lambda o: log.append("post0"), prepend=True)
        other.load_state_dict(saved)
        return log, other.state_dict(), saved["param_groups"][0]["lr"]

    ok(program)


def test_load_state_dict_pre_hook_can_fix_a_mismatched_dict():
    # the use torch documents: adapt a dict saved with other groups before it is validated
    def program(T):
        a, b = params(T)
        opt = T.optim.SGD([a, b], momentum=0.5)
        opt.step()
        target = T.optim.SGD([{"params": [a]}, {"params": [b]}], momentum=0.5)

        def split(o, sd):
            group = sd["param_groups"][0]
            sd["param_groups"] = [dict(group, params=[0]), dict(group, params=[1])]

        failed = attempt(lambda: target.load_state_dict(opt.state_dict()))
        target.register_load_state_dict_pre_hook(split)
        target.load_state_dict(opt.state_dict())
        return failed, target.state_dict()

    ok(program)


# --- add_param_group --------------------------------------------------------------------------


ADD_GROUP_ERRORS = {
    "names_missing": lambda T, a, b: T.optim.SGD([("a", a), b]),
    "named_group_into_unnamed": lambda T, a, b: T.optim.SGD([a]).add_param_group(
        {"params": [("b", b)]}),
    "unnamed_group_into_named": lambda T, a, b: T.optim.SGD([("a", a)]).add_param_group(
        {"params": [b]}),
    "missing_params_key": lambda T, a, b: T.optim.SGD([a]).add_param_group({"lr": 0.1}),
    "tuple_of_groups_not_dict": lambda T, a, b: T.optim.SGD([a]).add_param_group([b]),
    "required_default": lambda T, a, b: T.optim.Optimizer(
        [a], {"lr": optimizer_module(T).required}),
    "same_param_again": lambda T, a, b: T.optim.SGD([a]).add_param_group({"params": a}),
}


@pytest.mark.parametrize("case", ADD_GROUP_ERRORS)
def test_add_param_group_errors(case):
    raises(lambda T: ADD_GROUP_ERRORS[case](T, *params(T)))


def test_add_param_group_with_names_and_required_given():
    def program(T):
        a, b = params(T)
        opt = T.optim.SGD([("a", a)], lr=0.1, momentum=0.3)
        opt.add_param_group({"params": [("b", b)], "lr": 0.2})
        base = T.optim.Optimizer([{"params": [a], "lr": 1.0}], {"lr": optimizer_module(T).required,
                                                                   "x": 2})
        return (opt.state_dict()["param_groups"], repr(opt), base.param_groups[0]["x"],
                repr(optimizer_module(T).required))

    ok(program)


def test_base_optimizer_step_is_not_implemented():
    raises(lambda T: T.optim.Optimizer(list(params(T)), {}).step())
