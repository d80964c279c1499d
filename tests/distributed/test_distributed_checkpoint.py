"""``jaxgrad.distributed.checkpoint`` (torch's DCP): a state dict round trip in one process
against torch (values, versions, identities, warnings and errors), and on 2 processes of one JAX
runtime (127.0.0.1) tensors sharded over a mesh of both processes' devices: each rank writes
only its shards, and loading into other shardings and into plain local tensors gives every rank
the saved values (checked against the full value, computed locally)."""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import jaxgrad
import jaxgrad.distributed.checkpoint as dcp
from differential import captured_warnings, ok, same, set_weights, torch
from multiprocess import run_ranks

torch_dcp = pytest.importorskip("torch.distributed.checkpoint")


def _dcp(T):
    return torch_dcp if T is torch else dcp


def _trained(T, seed):
    """A small model after one Adam step (so its optimizer has state)."""
    model = set_weights(T, T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Linear(4, 2)), seed=seed,
                        dtype="float32")
    opt = T.optim.Adam(model.parameters(), lr=0.1)
    model(T.ones(5, 3) * seed).pow(2).sum().backward()
    opt.step()
    return model, opt


def _quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's single-process warning (compared below)
        return fn(*args, **kwargs)


def test_round_trip_matches_torch():
    """Model, optimizer, nested non-tensors, dtypes and an empty tensor saved, then loaded into
    a fresh model and optimizer: the loaded values, the versions and the objects kept."""

    def program(T):
        with tempfile.TemporaryDirectory() as d:
            model, opt = _trained(T, 1)
            state = {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3,
                     "extra": [T.arange(3.0), "tag"], "pair": (1, 2),
                     "f64": T.tensor([1 / 3, 2.0], dtype=T.float64),
                     "i": T.tensor([[1, -2]]), "flag": T.tensor(True), "empty": T.zeros(0, 3),
                     "half": T.tensor([0.5, 1.5], dtype=T.bfloat16)}
            metadata = _quietly(_dcp(T).save, state, checkpoint_id=d)
            fresh, fresh_opt = _trained(T, 2)
            target = {"model": fresh.state_dict(), "optim": fresh_opt.state_dict(), "epoch": 0,
                      "extra": [T.zeros(3), "x"], "pair": None,
                      "f64": T.zeros(2),  # (a float32 tensor takes the float64 values, cast)
                      "i": T.zeros(1, 2, dtype=T.int64), "flag": T.tensor(False),
                      "empty": T.ones(0, 3), "half": T.zeros(2, dtype=T.bfloat16)}
            before = [target["model"]["0.weight"], target["optim"]["state"][0]["exp_avg"],
                      target["extra"][0]]
            result = _quietly(_dcp(T).load, target, checkpoint_id=d)
            after = [target["model"]["0.weight"], target["optim"]["state"][0]["exp_avg"],
                     target["extra"][0]]
            kept = [a is b for a, b in zip(before, after)]
            return (result, target, kept, list(fresh.parameters()),
                    fresh_opt.state_dict()["state"], list(metadata.state_dict_metadata))

    _, ours = ok(program)
    assert all(ours[2])
    # the fresh model now computes what the saved one did
    model, _ = _trained(jaxgrad, 1)
    for mine, saved in zip(ours[3], model.parameters()):
        assert np.array_equal(mine.detach().numpy(), saved.detach().numpy())


def test_stateful_objects_and_training_resumes():
    """A module and an optimizer at the top level are saved as their state dicts and loaded
    through ``load_state_dict``: training resumed from the checkpoint matches torch's."""

    def program(T):
        with tempfile.TemporaryDirectory() as d:
            model, opt = _trained(T, 1)
            _quietly(_dcp(T).save, {"model": model, "optim": opt}, checkpoint_id=d)
            fresh, fresh_opt = _trained(T, 2)
            _quietly(_dcp(T).load, {"model": fresh, "optim": fresh_opt}, checkpoint_id=d)
            fresh(T.ones(5, 3)).pow(2).sum().backward()
            fresh_opt.step()
            return list(fresh.parameters()), fresh_opt.state_dict()["state"]

    ok(program)


def test_warnings_and_errors_match_torch(tmp_path):
    def program(T):
        d = tmp_path / "ckpt"
        shutil.rmtree(d, ignore_errors=True)
        out = []
        m = _dcp(T)
        m.save({"a": T.ones(2), "n": 1}, checkpoint_id=d)
        m.save({"a": T.ones(2), "n": 1}, checkpoint_id=d)  # (torch warns: overwriting)
        for call in (lambda: m.load({"a": T.zeros(2), "nope": T.zeros(1)}, checkpoint_id=d),
                     lambda: m.load({"a": T.zeros(3)}, checkpoint_id=d),
                     lambda: m.save({"a": T.ones(2)},
                                    storage_writer=m.FileSystemWriter(d, overwrite=False)),
                     lambda: m.save({"a": T.ones(2)})):
            try:
                call()
                out.append(None)
            except m.CheckpointException as e:
                (error, _), = e.failures.values()
                out.append(("CheckpointException", list(e.failures), type(error).__name__,
                            str(error)))
            except RuntimeError as e:
                out.append((type(e).__name__, str(e)))
        partial = {"a": T.zeros(2), "nope": T.zeros(1), "n": 0}
        m.load(partial, checkpoint_id=d, planner=m.DefaultLoadPlanner(allow_partial_load=True))
        out.append(partial)
        return out

    same(program)
    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)


def test_metadata_and_files():
    with tempfile.TemporaryDirectory() as d:
        state = {"w": jaxgrad.arange(6.0).reshape(2, 3), "s": {"step": 5}}
        with pytest.warns(UserWarning, match="assuming the intent is to save in a single"):
            metadata = dcp.save(state, checkpoint_id=d, storage_writer=dcp.FileSystemWriter("x"))
        read = dcp.FileSystemReader(d).read_metadata()
        assert sorted(p.name for p in Path(d).iterdir()) == [".metadata", "__0_0.distcp"]
    assert metadata == read
    w = read.state_dict_metadata["w"]
    assert (w.size, w.properties.dtype, w.chunks) == (
        jaxgrad.Size([2, 3]), jaxgrad.float32,
        [dcp.ChunkStorageMetadata(jaxgrad.Size([0, 0]), jaxgrad.Size([2, 3]))])
    assert read.state_dict_metadata["s.step"] == dcp.BytesStorageMetadata()
    info = read.storage_data[dcp.MetadataIndex("w", (0, 0))]
    assert (info.relative_path, info.length) == ("__0_0.distcp", 24)


# --- 2 processes -------------------------------------------------------------------------------

PROGRAM = """
import json, os
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxgrad
import jaxgrad.distributed as dist
import jaxgrad.distributed.checkpoint as dcp

if os.environ["WITH_GROUP"] == "1":
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["JAX_COORDINATOR_PORT"])
    dist.init_process_group("gloo")
rank = jax.process_index()
path = os.environ["CKPT"]
devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
mesh = Mesh(np.array(devices).reshape(2, 2), ("p", "l"))  # 2 processes x 2 local devices

def placed(full, spec):
    sharding = NamedSharding(mesh, spec)
    return jaxgrad.from_jax(jax.make_array_from_callback(full.shape, sharding,
                                                         lambda i: full[i]))

W = np.arange(48, dtype=np.float32).reshape(8, 6)  # rows split by process, replicated within
V = np.arange(12, dtype=np.int32) * 3 - 7          # split over all 4 devices
B = (np.arange(6, dtype=np.float32) / 7).astype(jax.numpy.bfloat16)  # replicated everywhere
L = np.arange(4, dtype=np.float32) + 0.5           # each process's own copy (DDP)
saved = {"model": {"w": jaxgrad.nn.Parameter(placed(W, P("p"))), "v": placed(V, P(("p", "l"))),
                   "b": placed(B, P())},
         "local": jaxgrad.tensor(L), "step": 7, "names": ["a", "b"]}
metadata = dcp.save(saved, checkpoint_id=path)
checks = {}
# each rank wrote only its own shards, one replica each: the chunks the metadata puts in its
# file are the shards of replica 0 on its devices, and the files hold nothing else
in_file = {}
for fqn, entry in metadata.state_dict_metadata.items():
    for chunk in getattr(entry, "chunks", [None]):
        key = dcp.MetadataIndex(fqn, None if chunk is None else chunk.offsets)
        info = metadata.storage_data[key]
        in_file.setdefault(info.relative_path, []).append((fqn, key.offset, info.length))
glob = {"model.w": saved["model"]["w"], "model.v": saved["model"]["v"],
        "model.b": saved["model"]["b"]}
first = sorted((fqn, tuple(sl.indices(n)[0] for sl, n in zip(s.index, t.shape)), s.data.nbytes)
               for fqn, t in glob.items() for s in t._value.addressable_shards
               if s.replica_id == 0)
checks["own_shards"] = first == sorted((f, tuple(o), n) for f, o, n in
                                       in_file[f"__{rank}_0.distcp"] if f in glob)
checks["file_sizes"] = all(os.path.getsize(os.path.join(path, name)) == sum(c[2] for c in items)
                           for name, items in in_file.items())
checks["rank1_file"] = sorted((f, tuple(o)) for f, o, _ in in_file["__1_0.distcp"]) == [
    ("model.v", (6,)), ("model.v", (9,)), ("model.w", (4, 0))]
checks["rank1_size"] = in_file["__1_0.distcp"] and os.path.getsize(
    os.path.join(path, "__1_0.distcp")) == 4 * 6 * 4 + 2 * 3 * 4
checks["files"] = sorted(os.listdir(path)) == [".metadata", "__0_0.distcp", "__1_0.distcp"]

def matches(t, full, spec=None):
    array = t._value
    if spec is not None and not array.sharding.is_equivalent_to(NamedSharding(mesh, spec),
                                                                full.ndim):
        return False
    return str(array.dtype) == str(full.dtype) and all(
        np.array_equal(np.asarray(s.data), full[s.index]) for s in array.addressable_shards)

# resharded: columns instead of rows, replicated instead of split, split instead of replicated
target = {"model": {"w": jaxgrad.nn.Parameter(placed(np.zeros_like(W), P(None, "p"))),
                    "v": placed(np.zeros_like(V), P()),
                    "b": placed(np.zeros_like(B), P("l"))},
          "local": jaxgrad.zeros(4), "step": 0, "names": None}
w = target["model"]["w"]
dcp.load(target, checkpoint_id=path)
checks["w_resharded"] = matches(target["model"]["w"], W, P(None, "p"))
checks["v_replicated"] = matches(target["model"]["v"], V, P())
checks["b_split"] = matches(target["model"]["b"], B, P("l"))
checks["local"] = np.array_equal(target["local"].numpy(), L)
checks["values"] = (target["step"], target["names"]) == (7, ["a", "b"])
checks["in_place"] = target["model"]["w"] is w and w._version == 1 and w.requires_grad
# into plain local tensors, on each rank
plain = {"model": {"w": jaxgrad.zeros(8, 6), "v": jaxgrad.zeros(12, dtype=jaxgrad.int32),
                   "b": jaxgrad.zeros(6, dtype=jaxgrad.bfloat16)}}
dcp.load(plain, checkpoint_id=path, planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
checks["plain"] = all(matches(plain["model"][k], full) for k, full in
                      (("w", W), ("v", V), ("b", B)))
checks["plain_local"] = all(plain["model"][k]._value.is_fully_addressable for k in "wvb")
print("RESULT " + json.dumps(checks))
if os.environ["WITH_GROUP"] == "1":
    dist.destroy_process_group()
"""


@pytest.mark.parametrize("with_group", [True, False], ids=["process_group", "jax_runtime"])
def test_two_processes_save_their_shards_and_load_resharded(tmp_path, with_group):
    """With a process group (``init_process_group``), or JAX's runtime alone joined."""
    env = {"CKPT": str(tmp_path / "ckpt"), "WITH_GROUP": str(int(with_group)),
           "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    ranks = run_ranks(PROGRAM, world=2, join=not with_group, env=env, timeout=60)
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        (checks,) = rank.results
        assert checks and all(checks.values()), checks


FAILING = """
import json, os, time
import jaxgrad
import jaxgrad.distributed as dist
import jaxgrad.distributed.checkpoint as dcp

if os.environ["WITH_GROUP"] == "1":
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["JAX_COORDINATOR_PORT"])
    dist.init_process_group("gloo")
path = os.environ["CKPT"]
start = time.monotonic()
try:  # only rank 0 pickles the non-tensor values: the lambda fails there alone
    dcp.save({"w": jaxgrad.ones(2), "f": lambda: 0}, checkpoint_id=path)
    out = None
except dcp.CheckpointException as e:
    out = {"type": type(e).__name__, "ranks": sorted(e.failures),
           "errors": sorted(type(error).__name__ for error, _ in e.failures.values()),
           "text": str(e).startswith("CheckpointException ranks:dict_keys([0])")
           and "(RANK 0)" in str(e)}
elapsed = time.monotonic() - start
print("RESULT " + json.dumps({"out": out, "fast": elapsed < 20, "elapsed": elapsed,
                              "metadata": os.path.exists(os.path.join(path, ".metadata"))}))
if os.environ["WITH_GROUP"] == "1":
    dist.destroy_process_group()
"""


@pytest.mark.parametrize("with_group", [True, False], ids=["process_group", "jax_runtime"])
def test_two_processes_failure_on_one_rank_raises_on_every_rank(tmp_path, with_group):
    """A save failing on rank 0 alone raises torch's ``CheckpointException`` (naming rank 0)
    on both ranks, promptly, and writes no ``.metadata`` (the other rank does not hang)."""
    env = {"CKPT": str(tmp_path / "ckpt"), "WITH_GROUP": str(int(with_group))}
    ranks = run_ranks(FAILING, world=2, join=not with_group, env=env, timeout=60)
    outs = []
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        (result,) = rank.results
        assert result["fast"] and not result["metadata"], result
        outs.append(result["out"])
    assert outs[0] == outs[1], outs
    assert outs[0]["type"] == "CheckpointException" and outs[0]["ranks"] == [0], outs
    assert len(outs[0]["errors"]) == 1 and outs[0]["text"], outs
