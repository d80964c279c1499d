"""Devices under JAX's multi-controller runtime are numbered per process, as torch numbers
them: on every rank ``device('cpu')`` is that process's own device, factories and modules
allocate there, and a tensor reports it. ``import jaxgrad`` before joining the runtime starts
no JAX computation, so joining afterwards works (torch's ``import torch`` then
``init_process_group()``)."""

from __future__ import annotations

from multiprocess import JOIN, run_ranks

PROGRAM = """
import json, jax, numpy as np, jaxgrad
from jax.sharding import Mesh, NamedSharding, PartitionSpec
layer = jaxgrad.nn.Linear(4, 8)
x = jaxgrad.ones(2, 4, device="cpu")
layer(x).sum().backward()
mesh = Mesh(np.array(jax.devices()), ("p",))
spread = jax.make_array_from_process_local_data(NamedSharding(mesh, PartitionSpec("p")),
                                                np.ones((1, 3), np.float32))
print("RESULT " + json.dumps({
    "maps_to_own": jaxgrad.device("cpu").jax == jax.local_devices()[0],
    "devices": [str(t.device) for t in (x, layer.weight, layer.weight.grad,
                                        jaxgrad.from_jax(spread))],
    "default": str(jaxgrad.get_default_device()),
    "processes": jax.process_count(),
}))
"""


def _check(ranks) -> None:
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        assert rank.results == [{"maps_to_own": True, "devices": ["cpu"] * 4, "default": "cpu",
                                 "processes": 2}]


def test_each_process_numbers_its_own_devices():
    _check(run_ranks(PROGRAM, world=2))


def test_joining_after_import_jaxgrad():
    _check(run_ranks("import jaxgrad\njaxgrad.manual_seed(0)\n" + JOIN + PROGRAM, world=2,
                     join=False))
