"""jaxgrad.nn.Module state and introspection against torch.nn.Module: ``nn.Buffer``,
state-dict hooks (save and load, their call order, arguments and return rules),
``load_state_dict(assign=True)``, extra state, ``_metadata``, submodule/parameter/buffer
lookup, dtype casts, ``__dir__`` and pickling."""

from __future__ import annotations

import copy
import pickle

import pytest

from differential import Raised, attempt, captured_warnings, ok, raises, same
from test_nn_module import nested, seed_model

# -- lookups, listings, reprs ---------------------------------------------------------------


@pytest.mark.parametrize("action", [
    lambda T, m: m.register_module("x", 3),
    lambda T, m: m.register_module(1, T.nn.ReLU()),
    lambda T, m: m.register_module("a.b", T.nn.ReLU()),
    lambda T, m: m.register_module("", T.nn.ReLU()),
    lambda T, m: m.register_module("scale", T.nn.ReLU()),
    lambda T, m: (m.register_module("extra", None), list(m._modules), repr(m))[1:],
    lambda T, m: (m.register_module("body", T.nn.Tanh()), repr(m.body))[1],
    lambda T, m: type(m.get_submodule("")).__name__,
    lambda T, m: type(m.get_submodule("body.1")).__name__,
    lambda T, m: m.get_submodule("body.5"),
    lambda T, m: m.get_submodule("block.running"),
    lambda T, m: m.get_submodule("heads.a.b"),
    lambda T, m: m.get_parameter("block.lin.weight").shape,
    lambda T, m: m.get_parameter("scale"),
    lambda T, m: m.get_parameter("block.running"),
    lambda T, m: m.get_parameter("block.nothing"),
    lambda T, m: m.get_parameter("nothing.weight"),
    lambda T, m: m.get_parameter(""),
])
def test_lookups_and_register_module(action):
    same(lambda T: action(T, nested(T)))


def tied(T):
    """One Parameter under two names, and one module under two names."""
    m = T.nn.Module()
    m.a = T.nn.Linear(2, 2)
    m.b = T.nn.Linear(2, 2)
    m.b.weight = m.a.weight
    m.c = m.a
    m.register_buffer("x", T.zeros(1))
    m.y = m.x
    return m


@pytest.mark.parametrize("listing", [
    lambda m: [n for n, _ in m.named_parameters()],
    lambda m: [n for n, _ in m.named_parameters(remove_duplicate=False)],
    lambda m: [n for n, _ in m.named_parameters(prefix="p", remove_duplicate=False)],
    lambda m: [n for n, _ in m.named_buffers(remove_duplicate=False)],
    lambda m: [n for n, _ in m.named_modules(remove_duplicate=False)],
    lambda m: list(m.state_dict()),
    lambda m: len(list(m.parameters())),
])
def test_tied_parameters(listing):
    ok(lambda T: listing(tied(T)))


def custom_repr(T, extra, children):
    class Custom(T.nn.Module):
        def __init__(self):
            super().__init__()
            if children:
                self.act = T.nn.ReLU()
                self.seq = T.nn.Sequential(T.nn.Tanh())

        def extra_repr(self):
            return extra

    return repr(Custom())


@pytest.mark.parametrize("extra", ["", "k=1", "a=1\nb=2"])
@pytest.mark.parametrize("children", [False, True])
def test_extra_repr(extra, children):
    ok(lambda T: custom_repr(T, extra, children))


def test_dir():
    def program(T):
        m = nested(T)
        m.register_buffer("0buf", T.ones(1))
        listing = dir(m)
        return ([k for k in listing if k not in dir(type(m))], listing == sorted(listing),
                "forward" in listing, "_parameters" in listing)

    ok(program)


def test_pickle_round_trip():
    def program(T):
        net = T.nn.Sequential(seed_model(T).fc1, T.nn.ReLU())  # library classes pickle
        net.register_buffer("steps", T.tensor([3]))
        net.tag = "kept"
        copy_ = pickle.loads(pickle.dumps(net))
        return (repr(copy_), list(copy_.state_dict().items()), copy_.tag,
                [type(p).__name__ for p in copy_.parameters()],
                copy_(T.ones(1, 3)).detach(), copy_[0].weight.requires_grad)

    ok(program)


def test_pickled_tensor_and_parameter():
    def program(T):
        t = T.tensor([1.0, 2.0])
        t.note = "kept"
        p = T.nn.Parameter(T.tensor([3.0]), requires_grad=False)
        p.note = 7
        t2, p2 = pickle.loads(pickle.dumps((t, p)))
        return t2, t2.note, t2._version, p2, p2.note, p2._version, type(p2).__name__

    ok(program)


# -- nn.Buffer -------------------------------------------------------------------------------


@pytest.mark.parametrize("program", [
    lambda T: T.nn.Buffer(),
    lambda T: T.nn.Buffer(T.ones(2, requires_grad=True) * 2),
    lambda T: T.nn.Buffer(T.tensor([1, 2]), persistent=False).__dict__,
    lambda T: T.nn.Buffer(T.ones(1), False),
    lambda T: type(T.nn.Buffer(T.nn.Parameter(T.ones(1)))).__name__,
    lambda T: [isinstance(T.nn.Buffer(T.ones(1)), T.nn.Buffer),
               isinstance(T.ones(1), T.nn.Buffer), issubclass(T.nn.Buffer, T.Tensor),
               isinstance(T.nn.Buffer(T.ones(1)), T.Tensor)],
    lambda T: [t.__dict__ for t in (T.nn.Buffer(T.ones(1)) * 2,
                                    T.nn.Buffer(T.ones(1)).detach(),
                                    T.nn.Parameter(T.nn.Buffer(T.ones(1))))],
    lambda T: repr(T.nn.Buffer(T.ones(1))),
])
def test_buffer_construction(program):
    same(program)


def buffer_host(T):
    m = T.nn.Module()
    m.w = T.nn.Parameter(T.ones(1))
    m.sub = T.nn.Identity()
    m.plain = 1
    m.b = T.nn.Buffer(T.zeros(2))
    m.nb = T.nn.Buffer(T.ones(1), persistent=False)
    return m


@pytest.mark.parametrize("action", [
    lambda T, m: (list(m.state_dict()), [n for n, _ in m.named_buffers()], m.b, m.nb),
    lambda T, m: (type(m.b).__name__, isinstance(m.b, T.nn.Buffer), m.b.persistent),
    lambda T, m: (setattr(m, "b", T.ones(2)), list(m.state_dict()), m.b)[1:],
    lambda T, m: (setattr(m, "nb", T.ones(3)), list(m.state_dict()), m.nb)[1:],
    lambda T, m: (setattr(m, "b", T.nn.Buffer(T.ones(2), persistent=False)),
                  list(m.state_dict()))[1],
    lambda T, m: (setattr(m, "nb", T.nn.Buffer(T.ones(2))), list(m.state_dict()))[1],
    lambda T, m: (setattr(m, "b", None), list(m.state_dict()), list(m._buffers))[1:],
    lambda T, m: setattr(m, "b", 3),
    lambda T, m: setattr(m, "w", T.nn.Buffer(T.ones(1))),
    lambda T, m: setattr(m, "sub", T.nn.Buffer(T.ones(1))),
    lambda T, m: setattr(m, "plain", T.nn.Buffer(T.ones(1))),
    lambda T, m: setattr(m, "a.b", T.nn.Buffer(T.ones(1))),
    lambda T, m: (setattr(m, "b", T.nn.Parameter(T.ones(1))), list(m._buffers),
                  list(m._parameters))[1:],
    lambda T, m: (m.double(), isinstance(m.b, T.nn.Buffer), m.b.dtype)[1:],
    lambda T, m: (m.float(), isinstance(m.b, T.nn.Buffer))[1:],
    lambda T, m: (isinstance(copy.deepcopy(m).b, T.nn.Buffer),
                  list(copy.deepcopy(m).state_dict())),
    lambda T, m: sorted(pickle.loads(pickle.dumps(m)).b.__dict__.items()),
])
def test_buffer_assignment(action):
    same(lambda T: action(T, buffer_host(T)))


def test_buffer_before_init_and_legacy_register_buffer():
    def early(T):
        class Early(T.nn.Module):
            def __init__(self):
                self.b = T.nn.Buffer(T.ones(1))
                super().__init__()

        return Early()

    def legacy(T, persistent):
        class Legacy(T.nn.Module):
            def register_buffer(self, name, tensor):
                super().register_buffer(name, tensor)

        m = Legacy()
        m.b = T.nn.Buffer(T.ones(1), persistent=persistent)
        return list(m.state_dict())

    raises(early)
    ok(lambda T: legacy(T, True))
    raises(lambda T: legacy(T, False))


# -- state_dict hooks ------------------------------------------------------------------------


def fixed(T, module):
    """``module`` with deterministic parameter values (torch and jaxgrad draw differently)."""
    with T.no_grad():
        for i, param in enumerate(module.parameters()):
            param.copy_(T.arange(param.numel(), dtype=param.dtype).reshape(param.shape) + i)
    return module


def two_level(T):
    """root(Module) -> (lin: Linear, inner: Sequential(Linear)) with a buffer on the root."""
    root = T.nn.Module()
    root.lin = T.nn.Linear(1, 1)
    root.inner = T.nn.Sequential(T.nn.Linear(1, 2))
    root.register_buffer("steps", T.tensor(0))
    return fixed(T, root)


def save_hooks(T, events):
    root = two_level(T)
    for name, module in (("root", root), ("inner", root.inner), ("inner0", root.inner[0])):
        module.register_state_dict_pre_hook(
            lambda m, prefix, keep, name=name: events.append(("pre", name, prefix, keep)))
        module.register_state_dict_post_hook(
            lambda m, sd, prefix, meta, name=name: events.append(
                ("post", name, list(sd), prefix, dict(meta), type(m).__name__)))
    return root


@pytest.mark.parametrize("call", [
    lambda T, m: list(m.state_dict()),
    lambda T, m: list(m.state_dict(prefix="top.", keep_vars=True)),
    lambda T, m: sorted(m.state_dict(destination={"x": 1}, prefix="p.")),
    lambda T, m: list(m.inner.state_dict()),
])
def test_state_dict_hook_order_and_arguments(call):
    def program(T):
        events = []
        result = call(T, save_hooks(T, events))
        return result, events

    ok(program)


def test_state_dict_post_hook_sees_the_returned_dict():
    def program(T):
        seen = []
        m = two_level(T)
        m.inner.register_state_dict_post_hook(lambda mod, sd, prefix, meta: seen.append(sd))
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop("lin.bias"))
        try:
            m.state_dict()
        except RuntimeError as exc:
            first = str(exc)
        return first, len(seen)

    ok(program)


@pytest.mark.parametrize("where", ["root", "child"])
def test_legacy_state_dict_hook_return_replaces_only_at_root(where):
    def program(T):
        m = two_level(T)
        target = m if where == "root" else m.inner
        target._register_state_dict_hook(lambda mod, sd, prefix, meta: {"new": prefix})
        target._register_state_dict_hook(lambda mod, sd, prefix, meta: None)
        sd = m.state_dict()
        return dict(sd) if where == "root" else list(sd)

    ok(program)


def test_state_dict_hook_registration_rules():
    def program(T):
        m = T.nn.Linear(1, 1)
        events = []

        def hook(mod, sd, prefix, meta):
            events.append(prefix)

        handle = m.register_state_dict_post_hook(hook)
        m.state_dict()
        handle.remove()
        m.state_dict()
        pre = m.register_state_dict_pre_hook(lambda mod, prefix, keep: events.append("pre"))
        m.state_dict()
        pre.remove()
        m.state_dict()
        return events, hook._from_public_api, attempt(lambda: m._register_state_dict_hook(hook))

    ok(program)


def test_state_dict_post_hook_on_bound_method():
    def program(T):
        class Holder:
            def hook(self, mod, sd, prefix, meta):
                return None

        return T.nn.Linear(1, 1).register_state_dict_post_hook(Holder().hook)

    raises(program)


def test_state_dict_positional_arguments_warn():
    import torch

    import jaxgrad

    def program(T):
        dest = {}
        out = T.nn.Linear(1, 1).state_dict(dest, "a.", True)
        return out is dest, list(dest), [t.requires_grad for t in dest.values()]

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


# -- load_state_dict hooks -----------------------------------------------------------------


def load_hooks(T, events, post_edit=None):
    root = two_level(T)
    for name, module in (("root", root), ("inner", root.inner), ("inner0", root.inner[0])):
        def pre(m, sd, prefix, meta, strict, missing, unexpected, errors, name=name):
            events.append(("pre", name, type(m).__name__, sorted(sd), hasattr(sd, "_metadata"),
                           prefix, dict(meta), strict, list(missing), list(unexpected),
                           list(errors)))

        def post(m, keys, name=name):
            events.append(("post", name, type(m).__name__, type(keys).__name__,
                           list(keys.missing_keys), list(keys.unexpected_keys)))
            if post_edit is not None:
                post_edit(name, keys)

        module.register_load_state_dict_pre_hook(pre)
        module.register_load_state_dict_post_hook(post)
    root.lin._register_load_state_dict_pre_hook(
        lambda *args: events.append(("private", len(args), args[1])))
    root.lin._register_load_state_dict_pre_hook(
        lambda *args: events.append(("private-with-module", type(args[0]).__name__, args[2])),
        with_module=True)
    return root


@pytest.mark.parametrize("edit", [
    lambda T, sd: None,
    lambda T, sd: sd.pop("inner.0.bias"),
    lambda T, sd: sd.update({"inner.0.extra": T.ones(1), "ghost.x": T.ones(1)}),
    lambda T, sd: sd.update({"lin.weight": T.ones(3)}),
    lambda T, sd: delattr(sd, "_metadata"),
])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_hook_order_and_arguments(edit, strict):
    def program(T):
        sd = two_level(T).state_dict()
        edit(T, sd)
        events = []
        result = attempt(lambda: repr(load_hooks(T, events).load_state_dict(sd, strict=strict)))
        return result, events

    same(program)


@pytest.mark.parametrize("post_edit", [
    lambda name, keys: keys.missing_keys.clear() if name == "root" else None,
    lambda name, keys: keys.unexpected_keys.append(f"from-{name}") if name == "inner" else None,
    lambda name, keys: keys.missing_keys.append("late") if name == "root" else None,
])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_post_hook_edits_incompatible_keys(post_edit, strict):
    def program(T):
        sd = two_level(T).state_dict()
        sd.pop("steps")
        events = []
        model = load_hooks(T, events, post_edit)
        result = attempt(lambda: model.load_state_dict(sd, strict=strict))
        if not isinstance(result, Raised):
            result = (repr(result), result.missing_keys, result.unexpected_keys)
        return result, events

    same(program)


def test_load_state_dict_post_hook_must_return_none():
    def program(T):
        m = two_level(T)
        m.inner.register_load_state_dict_post_hook(lambda mod, keys: keys)
        return m.load_state_dict(m.state_dict())

    raises(program)


def test_load_state_dict_pre_hook_can_rewrite_and_report():
    def program(T):
        m = two_level(T)

        def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            for key in [k for k in sd if k.startswith(prefix + "old_")]:
                sd[key.replace("old_", "")] = sd.pop(key)

        def complain(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            errors.append(f"custom error at {prefix!r}")

        m.lin.register_load_state_dict_pre_hook(rename)
        sd = {k.replace("lin.", "lin.old_"): v.clone() + 1 for k, v in m.state_dict().items()}
        first = m.load_state_dict(sd)
        m.inner.register_load_state_dict_pre_hook(complain)
        return repr(first), m.lin.weight, attempt(lambda: m.load_state_dict(sd, strict=False))

    same(program)


def test_load_state_dict_hooks_follow_deepcopy():
    def program(T):
        m = T.nn.Linear(1, 1)
        seen = []
        m.register_load_state_dict_pre_hook(lambda mod, *rest: seen.append(mod))
        m.register_load_state_dict_post_hook(lambda mod, keys: seen.append(mod))
        clone = copy.deepcopy(m)
        clone.load_state_dict(m.state_dict())
        handle = m.register_load_state_dict_pre_hook(lambda mod, *rest: seen.append("x"))
        handle.remove()
        m.load_state_dict(m.state_dict())
        return [s is clone for s in seen[:2]], [s is m for s in seen[2:]]

    ok(program)


# -- extra state, metadata, assign ---------------------------------------------------------


def with_extra_state(T, has_get=True, has_set=True):
    class Counter(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.count = 1
            self.lin = fixed(T, T.nn.Linear(1, 1))

    if has_get:
        Counter.get_extra_state = lambda self: {"count": self.count}
    if has_set:
        Counter.set_extra_state = lambda self, state: setattr(self, "count", state["count"])
    root = T.nn.Sequential(Counter())
    return root


@pytest.mark.parametrize("action", [
    lambda T: list(with_extra_state(T).state_dict().items())[-1],
    lambda T: list(with_extra_state(T, has_set=False).state_dict()),
    lambda T: list(with_extra_state(T, has_get=False).state_dict()),
    lambda T: (lambda m: (repr(m.load_state_dict({**m.state_dict(), "0._extra_state":
                                                  {"count": 9}})), m[0].count))(
        with_extra_state(T)),
    lambda T: with_extra_state(T).load_state_dict(with_extra_state(T, has_get=False)
                                                  .state_dict()),
    lambda T: with_extra_state(T, has_set=False).load_state_dict(with_extra_state(T)
                                                                 .state_dict()),
    lambda T: repr(with_extra_state(T, has_set=False).load_state_dict(
        with_extra_state(T).state_dict(), strict=False)),
    lambda T: T.nn.Module().get_extra_state(),
    lambda T: T.nn.Module().set_extra_state(1),
])
def test_extra_state(action):
    same(action)


def test_metadata_versions():
    def program(T):
        net = T.nn.Sequential(T.nn.Linear(1, 1), T.nn.BatchNorm1d(2), T.nn.LayerNorm(2),
                              T.nn.Conv2d(1, 1, 1), T.nn.Embedding(2, 2), T.nn.BatchNorm2d(1),
                              T.nn.Sequential(T.nn.ReLU()))
        sd = net.state_dict(prefix="m.")
        return [(k, dict(v)) for k, v in sd._metadata.items()], type(sd._metadata).__name__

    ok(program)


@pytest.mark.parametrize("keep_vars", [False, True])
def test_load_state_dict_assign(keep_vars):
    def program(T):
        src, dst = two_level(T), two_level(T)
        dst.lin.weight.requires_grad_(False)
        with T.no_grad():
            src.lin.weight.fill_(2.0)
        sd = src.state_dict(keep_vars=keep_vars)
        sd["inner.0.bias"] = sd["inner.0.bias"].double()
        old_weight = dst.lin.weight
        result = dst.load_state_dict(sd, assign=True)
        with T.no_grad():
            src.lin.weight.add_(1.0)  # shared with dst.lin.weight after assign
        return (repr(result), dst.lin.weight, dst.lin.weight is old_weight,
                dst.lin.weight is src.lin.weight, src.lin.weight.requires_grad,
                type(dst.lin.weight).__name__, dst.inner[0].bias, dst.steps is sd["steps"],
                [(k, dict(v)) for k, v in sd._metadata.items()], dst.lin.weight._version)

    ok(program)


@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize("value", [
    lambda T: T.tensor([[3]]),
    lambda T: T.ones(2, 1),
    lambda T: T.ones(1),
    lambda T: "text",
])
def test_load_state_dict_entry_errors(assign, value):
    def program(T):
        m = fixed(T, T.nn.Linear(1, 1))
        m.scale = T.nn.Parameter(T.tensor(1.0))
        sd = m.state_dict()
        sd["weight"] = value(T)
        sd["scale"] = T.tensor([5.0])
        result = attempt(lambda: m.load_state_dict(sd, strict=False, assign=assign))
        return result if isinstance(result, Raised) else repr(result), m.weight, m.scale

    same(program)


# -- lookups that were missing: get_buffer, set_submodule --------------------------------------


@pytest.mark.parametrize("action", [
    lambda T, m: m.get_buffer("block.running"),
    lambda T, m: m.get_buffer("block.scratch"),
    lambda T, m: m.get_buffer("block.lin.weight"),
    lambda T, m: m.get_buffer("block.training"),
    lambda T, m: m.get_buffer("block.nothing"),
    lambda T, m: m.get_buffer("nothing.running"),
    lambda T, m: m.get_buffer(""),
    lambda T, m: (m.set_submodule("body.0", T.nn.ReLU()), repr(m.body))[1],
    lambda T, m: (m.set_submodule("body.new", T.nn.ReLU()), repr(m.body))[1],
    lambda T, m: (m.set_submodule("top", T.nn.ReLU()), list(m._modules))[1],
    lambda T, m: (m.set_submodule("empty", T.nn.ReLU()), repr(m.empty))[1],
    lambda T, m: m.set_submodule("body.new", T.nn.ReLU(), strict=True),
    lambda T, m: (m.set_submodule("body.1", T.nn.ReLU(), strict=True), repr(m.body))[1],
    lambda T, m: m.set_submodule("", T.nn.ReLU()),
    lambda T, m: m.set_submodule("body.0", 3),
    lambda T, m: m.set_submodule("scale", T.nn.ReLU()),
    lambda T, m: m.set_submodule("block.running", T.nn.ReLU()),
    lambda T, m: m.set_submodule("nothing.x", T.nn.ReLU()),
    lambda T, m: m.set_submodule("block.running.x", T.nn.ReLU()),
])
def test_get_buffer_and_set_submodule(action):
    same(lambda T: action(T, nested(T)))


# -- dtype casts ---------------------------------------------------------------------------


@pytest.mark.parametrize("cast", ["half", "bfloat16", "float", "double"])
def test_dtype_casts(cast):
    def program(T):
        lin = fixed(T, T.nn.Linear(2, 2))
        lin.register_buffer("steps", T.tensor([1, 2]))
        lin.register_buffer("scale", T.tensor([0.5]))
        lin(T.ones(1, 2)).sum().backward()
        weight = lin.weight
        assert getattr(lin, cast)() is lin
        return (weight is lin.weight, lin.weight.dtype, lin.weight.grad.dtype, lin.steps.dtype,
                lin.scale.dtype, lin.weight.float(), lin.weight.requires_grad,
                lin.weight.is_leaf, lin.scale.float())

    ok(program)


# -- __getstate__ / __setstate__ ---------------------------------------------------------------


def test_setstate_fills_registries_missing_from_old_checkpoints():
    def program(T):
        lin = fixed(T, T.nn.Linear(1, 1))
        state = lin.__getstate__()
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_non_persistent_buffers_set",
                     "_is_full_backward_hook", "_backward_pre_hooks"):
            del state[name]
        old = T.nn.Linear.__new__(T.nn.Linear)
        old.__setstate__(state)
        events = []
        old.register_forward_pre_hook(lambda m, args: events.append("pre"))
        old.register_state_dict_pre_hook(lambda m, prefix, keep: events.append("sd"))
        old.register_full_backward_pre_hook(lambda m, go: events.append("bw"))
        old(T.ones(1, 1, requires_grad=True)).sum().backward()
        return (events, list(old.state_dict()), old._is_full_backward_hook,
                type(old._non_persistent_buffers_set).__name__, state is lin.__dict__)

    ok(program)


PICKLED_HOOK_CALLS: list = []


def module_level_load_pre_hook(*args):
    """Picklable (by reference) load_state_dict pre-hook for the pickling test."""
    PICKLED_HOOK_CALLS.append((type(args[0]).__name__, args[2]))


@pytest.mark.parametrize("with_module", [False, True])
def test_pickled_module_keeps_load_state_dict_pre_hooks(with_module):
    def program(T):
        PICKLED_HOOK_CALLS.clear()
        lin = fixed(T, T.nn.Linear(1, 1))
        lin._register_load_state_dict_pre_hook(module_level_load_pre_hook, with_module)
        revived = pickle.loads(pickle.dumps(lin))
        revived.load_state_dict(lin.state_dict())
        wrapped = next(iter(revived._load_state_dict_pre_hooks.values()))
        return (list(PICKLED_HOOK_CALLS), wrapped.with_module, hasattr(wrapped, "__name__"),
                with_module and wrapped.module() is revived)

    ok(program)
