"""Run by test_devices_sharding.py in a child process with 8 simulated CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=8``): data parallelism on a Mesh, moves
between devices, and the mixed-device error. Prints one line per finished check."""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxgrad

devices = jax.devices()
assert len(devices) == 8, devices
mesh = Mesh(np.array(devices), ("data",))
BATCH = NamedSharding(mesh, P("data"))  # rows of the batch split over the 8 devices
REPLICATED = NamedSharding(mesh, P())
ROWS = NamedSharding(mesh, P("data"))  # the option of sharding parameters by their first dim


def placed_as(t: jaxgrad.Tensor, sharding) -> bool:
    if isinstance(sharding, jax.Device):
        return t._value.devices() == {sharding}
    return t._value.sharding.is_equivalent_to(sharding, t.ndim)


def train(optimizer: str, params=None, data=None, set_to_none: bool = True,
          compiled: bool = False):
    """Losses, per-step gradients and final parameters of a small MLP (eager or compiled)."""
    jaxgrad.manual_seed(0)
    model = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(4, 16), jaxgrad.nn.Tanh(),
                                  jaxgrad.nn.Linear(16, 8))
    if callable(params):  # a placement of its own per parameter
        params(model)
    elif params is not None:
        model.to(params)
    weights = list(model.parameters())
    opt = (jaxgrad.optim.SGD(weights, lr=0.1, momentum=0.9) if optimizer == "sgd"
           else jaxgrad.optim.Adam(weights, lr=0.01))
    rng = np.random.default_rng(0)
    x = jaxgrad.tensor(rng.standard_normal((32, 4)).astype(np.float32))
    y = jaxgrad.tensor(rng.standard_normal((32, 8)).astype(np.float32))
    if data is not None:
        x, y = x.to(data), y.to(data)

    def step():
        opt.zero_grad(set_to_none=set_to_none)
        out = model(x)
        loss = ((out - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss, out

    if compiled:
        step = jaxgrad.compile(step)
    losses, grads = [], []
    for _ in range(3):
        loss, out = step()
        if data is not None:
            assert placed_as(out, data), out._value.sharding
        if params is not None and not callable(params):
            for p in weights:
                assert placed_as(p.grad, params), (p.shape, p.grad._value.sharding)
                assert placed_as(p, params), (p.shape, p._value.sharding)
                for value in opt.state[p].values():
                    if isinstance(value, jaxgrad.Tensor) and value.shape == p.shape:
                        assert placed_as(value, params), (p.shape, value._value.sharding)
        losses.append(loss.item())
        grads.append([np.asarray(p.grad._value) for p in weights])
    return losses, grads, [np.asarray(p._value) for p in weights]


def check_same(a, b) -> None:
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5)
    for step_a, step_b in zip(a[1], b[1]):
        for g, h in zip(step_a, step_b):
            np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-6)
    for p, q in zip(a[2], b[2]):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)


for optimizer in ("sgd", "adam"):
    single = train(optimizer)
    check_same(train(optimizer, REPLICATED, BATCH), single)
    check_same(train(optimizer, ROWS, BATCH), single)
    print("data parallel", optimizer)
check_same(train("sgd", REPLICATED, BATCH, set_to_none=False), train("sgd", set_to_none=False))
print("data parallel, .grad accumulated in place")

# .device, .to(jax.Device) and gradients going back across devices
d1, d2, d5, d6 = devices[1], devices[2], devices[5], devices[6]
assert repr(jaxgrad.ones(1).to(d5).device) == "device(type='cpu', index=5)"
assert jaxgrad.device(d5) == jaxgrad.device("cpu:5") and jaxgrad.device("cpu:5").jax == d5
assert jaxgrad.ones(1).to("cpu:5")._value.devices() == {d5}
p = jaxgrad.nn.Parameter(jaxgrad.ones(3).to(d5))
(p * 2).sum().backward()
assert p.grad._value.devices() == {d5}
p.grad = None
moved = (p * p).to(d6)
assert moved.grad_fn.name() == "ToCopyBackward0" and moved._value.devices() == {d6}
(moved * jaxgrad.ones(3).to(d6)).sum().backward()
assert p.grad._value.devices() == {d5} and np.allclose(p.grad._value, 2.0)
(g,) = jaxgrad.autograd.grad((p * p).to(d6).sum(), p, create_graph=True)
assert g._value.devices() == {d5} and g.grad_fn is not None
g.sum().backward()
assert p.grad._value.devices() == {d5}
module = jaxgrad.nn.Linear(2, 2).to(d2)
assert all(q._value.devices() == {d2} for q in module.parameters())
print("moves between devices")

# mixing devices: torch's error (torch would print e.g. 'cuda:0 and cpu')
for mixed in (lambda: jaxgrad.ones(2).to(d1) + jaxgrad.ones(2).to(d2),
              lambda: jaxgrad.ones(2).to(d1).add_(jaxgrad.ones(2).to(d2)),
              lambda: jaxgrad.ones(8).to(BATCH) * jaxgrad.ones(8).to(d1)):
    try:
        mixed()
    except RuntimeError as error:
        message = str(error)
    else:
        raise AssertionError("no error for tensors on two devices")
    assert message.startswith("Expected all tensors to be on the same device, but found at least "
                              "two devices, "), message
    print(message)

# mixed placements: weights sharded by rows, biases left where they were made (uncommitted); and
# each layer committed to a device of its own (model parallel: the input moves between them)
def weights_by_rows(model):
    with jaxgrad.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("weight"):
                p.data = p.data.to(ROWS)


def layer_per_device(model):
    model[0].to(d1)
    model[2].to(d2)
    model.insert(2, MoveTo(d2))
    model.append(MoveTo(d1))  # the output back where the targets are


class MoveTo(jaxgrad.nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = device

    def forward(self, x):
        return x.to(self.device)


for optimizer in ("sgd", "adam"):
    single = train(optimizer)
    check_same(train(optimizer, weights_by_rows, BATCH), single)
    check_same(train(optimizer, layer_per_device, d1), single)
    print("mixed placements", optimizer)
model = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(4, 16), jaxgrad.nn.Tanh(), jaxgrad.nn.Linear(16, 8))
layer_per_device(model)
opt = jaxgrad.optim.Adam(model.parameters(), lr=0.01)
model(jaxgrad.ones(2, 4).to(d1)).sum().backward()
opt.step()
assert [q._value.devices() for q in model.parameters()] == [{d1}, {d1}, {d2}, {d2}]
assert all(v._value.devices() == q._value.devices() for q in model.parameters()
           for v in opt.state[q].values() if v.ndim)

# jaxgrad.compile: the whole step as one XLA program over the mesh gives the same numbers
for optimizer in ("sgd", "adam"):
    single = train(optimizer)
    check_same(train(optimizer, REPLICATED, BATCH, compiled=True), single)
    check_same(train(optimizer, ROWS, BATCH, compiled=True), single)
    print("compiled data parallel", optimizer)
