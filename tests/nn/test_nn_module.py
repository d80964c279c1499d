"""jaxgrad.nn.Module against torch.nn.Module: registration, iteration order, state dicts,
reprs, Parameter, containers and layers (hooks are in test_nn_hooks.py)."""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest

from differential import captured_warnings, ok, raises, same

W1 = np.array([[1.0, 2.0, 3.0], [-4.0, -5.0, -6.0], [7.0, 8.0, 9.0], [-10.0, -11.0, -12.0]])
B1 = np.array([1.0, 2.0, 3.0, 4.0])
W2 = np.array([[1.0, 2.0, 3.0, 4.0]])
B2 = np.array([1.0])


def set_linear(T, lin, weight, bias):
    with T.no_grad():
        lin.weight.copy_(T.tensor(weight))
        lin.bias.copy_(T.tensor(bias))
    return lin


def seed_model(T):
    """The model of seed 002: Linear(3, 4) -> ReLU -> Linear(4, 1) with fixed weights."""

    class Model(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = set_linear(T, T.nn.Linear(3, 4), W1, B1)
            self.relu1 = T.nn.ReLU()
            self.fc2 = set_linear(T, T.nn.Linear(4, 1), W2, B2)

        def forward(self, x):
            return self.fc2(self.relu1(self.fc1(x)))

    return Model()


def nested(T):
    class Block(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(2, 2)
            self.register_buffer("running", T.zeros(2))
            self.register_buffer("scratch", T.ones(1), persistent=False)

    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = T.nn.Parameter(T.tensor(2.0))
            self.block = Block()
            self.shared = self.block  # the same module twice
            self.body = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.Tanh())
            self.heads = T.nn.ModuleDict({"a": T.nn.Identity(), "b": T.nn.Flatten()})
            self.empty = None

    return Net()


# -- registration and iteration ------------------------------------------------------------


@pytest.mark.parametrize("listing", [
    lambda m: [n for n, _ in m.named_parameters()],
    lambda m: [n for n, _ in m.named_parameters(remove_duplicate=False)],
    lambda m: [n for n, _ in m.named_parameters(prefix="net", recurse=False)],
    lambda m: [n for n, _ in m.named_buffers()],
    lambda m: [n for n, _ in m.named_buffers(prefix="p", remove_duplicate=False)],
    lambda m: [n for n, _ in m.named_children()],
    lambda m: [n for n, _ in m.named_modules()],
    lambda m: [n for n, _ in m.named_modules(prefix="root", remove_duplicate=False)],
    lambda m: [type(c).__name__ for c in m.children()],
    lambda m: [type(c).__name__ for c in m.modules()],
    lambda m: [tuple(p.shape) for p in m.parameters()],
    lambda m: [tuple(b.shape) for b in m.buffers(recurse=False)],
    lambda m: list(m.state_dict()),
    lambda m: list(m.state_dict(prefix="x.", keep_vars=True)),
    lambda m: list(m.state_dict()._metadata),
    lambda m: [k for k in dir(m) if k not in dir(type(m))],
])
def test_iteration_order(listing):
    ok(lambda T: listing(nested(T)))


def test_parameter_values_and_flags():
    def program(T):
        net = seed_model(T)
        sd = net.state_dict()
        sd_vars = net.state_dict(keep_vars=True)
        return ([p for p in net.parameters()], list(sd.values()), list(sd_vars.values()),
                net.get_parameter("fc1.bias"), type(net.get_submodule("relu1")).__name__)

    ok(program)


@pytest.mark.parametrize("action", [
    lambda T, m: setattr(m, "w", T.tensor([1.0])) or m.w,
    lambda T, m: setattr(m, "w", None) or m.w,
    lambda T, m: setattr(m, "sub", 3),
    lambda T, m: setattr(m, "sub", None) or m.sub,
    lambda T, m: setattr(m, "buf", 3),
    lambda T, m: setattr(m, "buf", T.ones(2)) or (m.buf, m.state_dict()["buf"]),
    lambda T, m: setattr(m, "sub", T.nn.Parameter(T.ones(1))) or list(m._modules),
    lambda T, m: setattr(m, "w", T.nn.ReLU()) or list(m._parameters),
    lambda T, m: m.register_parameter("w", T.tensor([1.0])),
    lambda T, m: m.register_parameter("a.b", None),
    lambda T, m: m.register_parameter("", None),
    lambda T, m: m.register_parameter(3, None),
    lambda T, m: m.register_parameter("plain", None),
    lambda T, m: m.register_parameter("x", T.nn.Parameter(T.ones(1)) * 2),
    lambda T, m: m.register_buffer("buf2", 3),
    lambda T, m: m.register_buffer("w", T.ones(1)),
    lambda T, m: m.register_buffer("a.b", T.ones(1)),
    lambda T, m: m.add_module("x", 3),
    lambda T, m: m.add_module(1, T.nn.ReLU()),
    lambda T, m: m.add_module("a.b", T.nn.ReLU()),
    lambda T, m: m.add_module("", T.nn.ReLU()),
    lambda T, m: m.add_module("plain", T.nn.ReLU()),
    lambda T, m: m.missing,
    lambda T, m: m.get_submodule("sub.nothing"),
    lambda T, m: m.get_submodule("w"),
    lambda T, m: m.get_parameter("sub.weight"),
    lambda T, m: m.get_parameter("buf"),
    lambda T, m: (delattr(m, "w"), delattr(m, "buf"), delattr(m, "sub"), delattr(m, "plain"),
                  sorted(m.__dict__.keys() & {"plain"}), list(m.state_dict())),
    lambda T, m: m.train("yes"),
    lambda T, m: (m.eval().training, m.sub.training, m.train().sub.training),
    lambda T, m: m.to(T.int64),
    lambda T, m: [p.requires_grad for p in m.requires_grad_(False).parameters()],
])
def test_attribute_rules_and_errors(action):
    def program(T):
        m = T.nn.Module()
        m.w = T.nn.Parameter(T.ones(2))
        m.sub = T.nn.Identity()
        m.register_buffer("buf", T.zeros(2))
        m.plain = 5
        return action(T, m)

    same(program)


@pytest.mark.parametrize("action", [
    lambda T, m: setattr(m, "w", T.nn.Parameter(T.ones(1))),
    lambda T, m: setattr(m, "sub", T.nn.ReLU()),
    lambda T, m: m.register_buffer("b", T.ones(1)),
    lambda T, m: m.register_parameter("w", None),
])
def test_assignment_before_init(action):
    def program(T):
        class Early(T.nn.Module):
            def __init__(self):
                action(T, self)
                super().__init__()

        return Early()

    raises(program)


def test_init_arguments_errors():
    raises(lambda T: T.nn.Module(3))
    raises(lambda T: T.nn.Module(foo=1))


def test_forward_unimplemented():
    raises(lambda T: T.nn.Module()(T.ones(1)))


# -- state_dict --------------------------------------------------------------------------


def test_state_dict_round_trip():
    def program(T):
        src, dst = seed_model(T), T.nn.Sequential()
        dst = seed_model(T)
        with T.no_grad():
            for p in dst.parameters():
                p.zero_()
        result = dst.load_state_dict(src.state_dict())
        return (repr(result), result.missing_keys, list(dst.parameters()),
                [p._version for p in dst.parameters()])

    ok(program)


@pytest.mark.parametrize("edit", [
    lambda T, sd: sd.pop("fc1.bias"),
    lambda T, sd: sd.update(extra=T.ones(1), **{"fc1.extra": T.ones(1), "nope.x": T.ones(1)}),
    lambda T, sd: sd.update({"fc1.weight": T.ones(2, 2)}),
    lambda T, sd: sd.update({"fc1.weight": [1.0]}),
    lambda T, sd: (sd.pop("fc2.weight"), sd.update({"fc2.zzz": T.ones(1)})),
])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_errors(edit, strict):
    def program(T):
        model = seed_model(T)
        sd = model.state_dict()
        edit(T, sd)
        result = model.load_state_dict(sd, strict=strict)
        return repr(result), result.missing_keys, result.unexpected_keys, list(result)

    same(program)


def test_load_state_dict_scalar_and_buffers():
    def program(T):
        m = T.nn.Module()
        m.s = T.nn.Parameter(T.tensor(1.0))
        m.register_buffer("b", T.zeros(2))
        m.register_buffer("np", T.zeros(1), persistent=False)
        out = m.load_state_dict({"s": T.tensor([5.0]), "b": T.tensor([1.0, 2.0])})
        return repr(out), m.s, m.b, m.np, m.s._version

    ok(program)


def test_load_state_dict_not_mapping():
    raises(lambda T: T.nn.Linear(1, 1).load_state_dict([1, 2]))


# -- Parameter ---------------------------------------------------------------------------


@pytest.mark.parametrize("program", [
    lambda T: repr(T.nn.Parameter(T.tensor([1.0, 2.0]))),
    lambda T: repr(T.nn.Parameter(T.tensor([[1.5, 2.0], [3.0, 4.0]], dtype=T.float64))),
    lambda T: repr(T.nn.Parameter(T.tensor([1, 2]), requires_grad=False)),
    lambda T: repr(T.nn.Parameter()),
    lambda T: [type(f(T.nn.Parameter(T.ones(2)))).__name__ for f in (
        lambda p: p * 2, lambda p: p.detach(), lambda p: p.data, lambda p: p[0],
        lambda p: p.clone(), lambda p: p.view(2))],
    lambda T: [T.nn.Parameter(T.ones(2) * T.ones(1, requires_grad=True))],
    lambda T: isinstance(T.nn.Parameter(T.ones(1)), T.Tensor),
])
def test_parameter(program):
    ok(program)


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_parameter_of_integer_data_raises(dtype):
    raises(lambda T: T.nn.Parameter(T.zeros(2, dtype=getattr(T, dtype))))


def test_parameter_shares_storage_and_version():
    def program(T):
        t = T.tensor([1.0, 2.0])
        p = T.nn.Parameter(t)
        t.add_(1)
        with T.no_grad():
            p.mul_(2)
        return t, p, t._version, p._version, p.is_leaf

    ok(program)


def test_parameter_deepcopy_and_module_deepcopy():
    def program(T):
        p = T.nn.Parameter(T.tensor([1.0, 2.0]))
        q = copy.deepcopy(p)
        with T.no_grad():
            q.add_(1)
        net = seed_model(T)
        net2 = copy.deepcopy(net)
        with T.no_grad():
            net2.fc1.weight.zero_()
        return (p, q, type(q).__name__, q is p, net.fc1.weight, net2.fc1.weight,
                repr(net2), [type(x).__name__ for x in net2.parameters()])

    ok(program)


# -- reprs, containers, conversion ----------------------------------------------------------


@pytest.mark.parametrize("build", [
    lambda T: seed_model(T),
    lambda T: nested(T),
    lambda T: T.nn.Linear(3, 2, bias=False),
    lambda T: T.nn.Sequential(OrderedDict(a=T.nn.ReLU(), b=T.nn.Sigmoid())),
    lambda T: T.nn.Sequential(T.nn.Linear(1, 2), T.nn.Sequential(T.nn.Softmax(dim=1),
                                                                 T.nn.LogSoftmax(0))),
    lambda T: T.nn.ModuleList([T.nn.ReLU(), T.nn.ReLU(), T.nn.Tanh(), T.nn.ReLU(),
                               T.nn.Sequential(T.nn.ReLU()), T.nn.Sequential(T.nn.ReLU())]),
    lambda T: T.nn.ModuleList(),
    lambda T: T.nn.ModuleDict([("x", T.nn.Flatten(0, 2)), ("y", T.nn.ReLU(inplace=True))]),
    lambda T: T.nn.Softmax(),
    lambda T: T.nn.Identity(3, foo=4),
])
def test_repr(build):
    ok(lambda T: repr(build(T)))


@pytest.mark.parametrize("action", [
    lambda T, s: [type(m).__name__ for m in s],
    lambda T, s: (len(s), type(s[-1]).__name__, type(s[0]).__name__),
    lambda T, s: s[3],
    lambda T, s: s[-4],
    lambda T, s: repr(s[1:]),
    lambda T, s: repr(s[::-1]),
    lambda T, s: repr(s.append(T.nn.Tanh())),
    lambda T, s: (s.__delitem__(0), repr(s))[1],
    lambda T, s: (s.__delitem__(slice(0, 2)), repr(s))[1],
    lambda T, s: (s.__setitem__(-1, T.nn.Tanh()), repr(s))[1],
    lambda T, s: (s.insert(1, T.nn.Tanh()), repr(s))[1],
    lambda T, s: s.insert(5, T.nn.Tanh()),
    lambda T, s: repr(s.pop(1)),
    lambda T, s: repr(s + s),
    lambda T, s: repr(s * 2),
    lambda T, s: s + 1,
    lambda T, s: s * 0,
    lambda T, s: s * 1.5,
    lambda T, s: repr(s.extend([T.nn.Tanh()])),
    lambda T, s: [k for k in dir(s) if k[0].isdigit()],
])
def test_sequential(action):
    def program(T):
        s = T.nn.Sequential(T.nn.Identity(), T.nn.ReLU(), T.nn.Sigmoid())
        return action(T, s)

    same(program)


@pytest.mark.parametrize("action", [
    lambda T, m: [type(x).__name__ for x in m],
    lambda T, m: (len(m), repr(m[-1]), repr(m[1:])),
    lambda T, m: m[3],
    lambda T, m: repr(m + [T.nn.Tanh()]),
    lambda T, m: (m.__delitem__(0), repr(m))[1],
    lambda T, m: (m.__delitem__(slice(None, None, 2)), repr(m))[1],
    lambda T, m: (m.insert(0, T.nn.Tanh()), repr(m))[1],
    lambda T, m: (m.__setitem__(0, T.nn.Tanh()), repr(m))[1],
    lambda T, m: m.extend(3),
    lambda T, m: repr(m.pop(-1)),
    lambda T, m: [n for n, _ in m.named_parameters()],
])
def test_module_list(action):
    def program(T):
        m = T.nn.ModuleList([T.nn.ReLU(), T.nn.ReLU(), T.nn.Linear(1, 1)])
        return action(T, m)

    same(program)


@pytest.mark.parametrize("action", [
    lambda T, d: (list(d), list(d.keys()), [type(v).__name__ for v in d.values()],
                  "a" in d, "z" in d, len(d)),
    lambda T, d: d["z"],
    lambda T, d: (d.__setitem__("c", T.nn.Tanh()), repr(d))[1],
    lambda T, d: (repr(d.pop("a")), repr(d)),
    lambda T, d: (d.clear(), repr(d))[1],
    lambda T, d: d.update(3),
    lambda T, d: d.update([3]),
    lambda T, d: d.update([("x",)]),
    lambda T, d: (d.update([("x", T.nn.Tanh())]), list(d))[1],
    lambda T, d: d.__setitem__("a.b", T.nn.Tanh()),
])
def test_module_dict(action):
    def program(T):
        d = T.nn.ModuleDict(OrderedDict(b=T.nn.ReLU(), a=T.nn.Sigmoid()))
        return action(T, d)

    same(program)


def test_parameter_list():
    def program(T):
        params = T.nn.ParameterList([T.nn.Parameter(T.zeros(2)), T.ones(1, 3)])
        params.append(T.ones(2, 2, dtype=T.float64))
        params.extend([T.zeros(4), "not a tensor"])
        params[0] = T.full((3,), 2.0)
        model = T.nn.Module()
        model.params = params
        return (repr(params), len(params), [n for n, _ in model.named_parameters()],
                list(model.state_dict()), [type(p).__name__ for p in params], params[-2],
                repr(params[1:3]), params[4], isinstance(params[1], T.nn.Parameter))

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.ParameterList([T.ones(1)])[3],
    lambda T: T.nn.ParameterList().extend(T.ones(2)),
    lambda T: T.nn.ParameterList([T.ones(1)])(T.ones(1)),
])
def test_parameter_list_errors(call):
    raises(call)


def test_parameter_dict():
    def program(T):
        params = T.nn.ParameterDict({"b": T.zeros(2), "a": T.nn.Parameter(T.ones(3))})
        params.update(OrderedDict([("z", T.ones(1)), ("c", T.zeros(1, 2))]))
        params.update([("y", T.ones(2, dtype=T.float64))])
        params["x"] = "object"
        popped = params.pop("c")
        model = T.nn.Module()
        model.pd = params
        merged = params | T.nn.ParameterDict({"w": T.ones(1)})
        return (repr(params), list(params), list(params.keys()), len(params), "a" in params,
                [n for n, _ in model.named_parameters()], list(model.state_dict()), popped,
                params.get("missing"), list(merged), params.setdefault("v", T.ones(2)),
                list(reversed(params)), params.popitem()[0], type(params["a"]).__name__)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.ParameterDict({"a": T.ones(1)})[0],
    lambda T: T.nn.ParameterDict(3),
    lambda T: T.nn.ParameterDict([("a", T.ones(1), 3)]),
    lambda T: T.nn.ParameterDict([3]),
    lambda T: T.nn.ParameterDict()["missing"],
])
def test_parameter_dict_errors(call):
    raises(call)


def test_to_and_casts():
    def program(T):
        lin = set_linear(T, T.nn.Linear(3, 4), W1, B1)
        lin.register_buffer("steps", T.tensor([1, 2]))
        lin(T.ones(1, 3)).sum().backward()
        weight = lin.weight
        lin.double()
        out = [weight is lin.weight, lin.weight, lin.weight.grad, lin.steps, lin.bias]
        lin.float()
        out += [lin.weight.dtype, lin.weight.grad.dtype]
        lin.to(T.float64)
        out += [lin.weight.dtype, lin.steps.dtype]
        lin.to(T.zeros(1, dtype=T.float32))
        out += [lin.weight.dtype, lin.weight.is_leaf, lin.weight.requires_grad]
        return out

    ok(program)


def test_zero_grad():
    def program(T):
        lin = set_linear(T, T.nn.Linear(3, 4), W1, B1)
        lin(T.ones(2, 3)).sum().backward()
        grad = lin.weight.grad
        lin.zero_grad(set_to_none=False)
        kept = (lin.weight.grad is grad, lin.weight.grad)
        lin.zero_grad()
        return kept, lin.weight.grad, lin.bias.grad

    ok(program)


def test_apply_order():
    def program(T):
        seen = []
        nested(T).apply(lambda m: seen.append(type(m).__name__))
        return seen

    ok(program)


@pytest.mark.parametrize("layer", [
    lambda T: T.nn.ReLU(), lambda T: T.nn.Sigmoid(), lambda T: T.nn.Tanh(),
    lambda T: T.nn.Softmax(dim=1), lambda T: T.nn.LogSoftmax(dim=0), lambda T: T.nn.Identity(),
    lambda T: T.nn.Flatten(), lambda T: T.nn.Flatten(0, 1),
])
def test_layers_forward_backward(layer):
    def program(T):
        x = T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], dtype=T.float64,
                     requires_grad=True)
        y = layer(T)(x)
        (y * T.arange(y.numel(), dtype=T.float64).reshape(y.shape)).sum().backward()
        return y, x.grad

    ok(program)


def test_relu_inplace():
    def program(T):
        x = T.tensor([0.5, -1.0], requires_grad=True)
        h = x * 1
        y = T.nn.ReLU(inplace=True)(h)
        y.sum().backward()
        return y is h, y, x.grad

    ok(program)


def test_linear_values_and_gradients():
    def program(T):
        net = seed_model(T)
        x = T.tensor([[1.0, 1.0, 1.0]], requires_grad=True)
        out = net(x)
        out.backward()
        return (out.detach(), x.grad, net.fc1.weight.grad, net.fc1.bias.grad,
                net.fc2.weight.grad)

    ok(program)


def test_linear_initialisation_range():
    import jaxgrad

    jaxgrad.manual_seed(0)
    lin = jaxgrad.nn.Linear(16, 8)
    weight = np.asarray(lin.weight.detach()._value)
    bound = 1 / np.sqrt(16)
    assert weight.shape == (8, 16) and lin.weight.dtype == jaxgrad.float32
    assert np.all(np.abs(weight) <= bound) and weight.std() > bound / 4
    assert len(np.unique(weight)) == weight.size
    assert np.all(np.abs(np.asarray(lin.bias.detach()._value)) <= bound)
    assert lin.weight.requires_grad and lin.weight.is_leaf


def test_to_complex_warns_like_torch():
    import torch

    import jaxgrad

    def program(T):
        T.nn.Linear(1, 1).to(T.complex64)

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
