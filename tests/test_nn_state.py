"""jaxgrad.nn.Module state and introspection against torch.nn.Module: ``nn.Buffer``,
state-dict hooks (save and load, their call order, arguments and return rules),
``load_state_dict(assign=True)``, extra state, ``_metadata``, submodule/parameter/buffer
lookup, dtype casts, ``__dir__`` and pickling."""

from __future__ import annotations

import copy
import pickle

import pytest

from differential import ok, raises, same
from test_nn_module import nested, seed_model

# -- what already matched torch before this file: lookups, listings, reprs -------------------


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
