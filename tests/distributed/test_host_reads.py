"""Host reads of tensors spanning processes, on 2 processes of one JAX runtime (127.0.0.1, one
CPU device each, a mesh over both): ``.to(global sharding)`` from a tensor of this process; a
replicated tensor reads on every process (its own replica); a sharded one refuses every host
read at once, on every process (never a program the other process would have to join), while
ops on it (cross_entropy, integer indexing, ``.to('cpu')``) run."""

from __future__ import annotations

from multiprocess import run_ranks

BOUND = 60  # seconds before a hung run is killed (each program takes ~4 s on an idle machine)

PRELUDE = """
import contextlib, io, json, time
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxgrad
import jaxgrad.nn.functional as F
rank = jax.process_index()
mesh = Mesh(np.array(jax.devices()), ("x",))
sharded, replicated = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
checks = {}
"""

TO_GLOBAL = PRELUDE + """
local = jaxgrad.from_jax(jax.device_put(np.arange(8, dtype=np.float32), jax.local_devices()[0]))
local.requires_grad_()
checks["committed_here"] = local.jax().committed and local.jax().is_fully_addressable
t = local.to(sharded)  # each process gives the whole value; its device keeps its half
checks["to_sharded"] = (t.jax().sharding == sharded and not t.jax().is_fully_addressable
                        and t.grad_fn.name() == "ToCopyBackward0")
checks["my_shard"] = [np.asarray(s.data).tolist() for s in t.jax().addressable_shards] == [
    list(range(4 * rank, 4 * rank + 4))]
checks["sum_replicated"] = (t * 2).sum().item() == 56.0  # a replicated scalar, on every rank
checks["order"] = (t * jaxgrad.arange(8.0)).sum().item() == 140.0
r = local.to(replicated)
checks["to_replicated"] = r.jax().is_fully_replicated and not r.jax().is_fully_addressable
loss = (t * t).sum() + (3 * r).sum()
checks["loss"] = loss.item() == 140.0 + 84.0
loss.backward()  # both moves send the whole gradient back to this process's tensor
checks["grad"] = local.grad.tolist() == [2.0 * i + 3.0 for i in range(8)]
checks["grad_here"] = local.grad.jax().is_fully_addressable

x = r.detach()  # replicated: every process reads its own replica
out = io.StringIO()
with contextlib.redirect_stdout(out):
    print(x)
checks["print"] = out.getvalue() == "tensor([0., 1., 2., 3., 4., 5., 6., 7.])\\n"
checks["repr"] = repr(x.reshape(2, 4)[1]) == "tensor([4., 5., 6., 7.])"
checks["tolist"] = x.tolist() == [float(i) for i in range(8)]
checks["numpy"] = np.array_equal(x.numpy(), np.arange(8, dtype=np.float32))
checks["item"] = x.sum().item() == 28.0 and float(x[3]) == 3.0 and bool(x[1])
checks["mask"] = x[x > 5].tolist() == [6.0, 7.0]
checks["nonzero"] = x.nonzero().flatten().tolist() == list(range(1, 8))
buf = io.BytesIO()
jaxgrad.save({"x": x}, buf)
checks["save"] = jaxgrad.load(io.BytesIO(buf.getvalue()))["x"].tolist() == x.tolist()
print("RESULT " + json.dumps(checks))
"""


def test_to_a_global_sharding_and_replicated_reads():
    ranks = run_ranks(TO_GLOBAL, world=2, timeout=BOUND)
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        (checks,) = rank.results
        assert checks and all(checks.values()), checks


SHARDED = PRELUDE + """
def data(r):  # rank r's rows of the global arrays (every rank knows every rank's)
    return (np.arange(6, dtype=np.float32).reshape(2, 3) * (r + 1) - r,
            np.array([r, 2 - 2 * r], np.int64))
def global_array(part, shape):
    return jaxgrad.from_jax(jax.make_array_from_process_local_data(sharded, part, shape))
mine = data(rank)
x = global_array(np.arange(4, dtype=np.float32) + 4 * rank - 3, (8,))  # -3 .. 4, sharded

def refused(fn, *words):
    start = time.monotonic()
    try:
        fn()
    except RuntimeError as e:
        return time.monotonic() - start < 5 and all(w in str(e) for w in words)
    return False

SPANS = ("spans several processes", "not replicated", "t.to('cpu')")
checks["tolist"] = refused(x.tolist, "tolist()", *SPANS)
checks["numpy"] = refused(x.numpy, "numpy()", *SPANS)
checks["print"] = refused(lambda: print(x), "Printing it", *SPANS)
checks["repr"] = refused(lambda: repr(x), *SPANS)
checks["str_format"] = refused(lambda: f"{x}", *SPANS)
checks["item"] = refused(x.item, "a Tensor with 8 elements cannot be converted to Scalar")
checks["mask"] = refused(lambda: x[x > 0], "boolean mask", *SPANS)
checks["nonzero"] = refused(x.nonzero, "nonzero", *SPANS)
checks["unique"] = refused(x.unique, "unique", *SPANS)
checks["masked_select"] = refused(lambda: x.masked_select(x > 0), "masked_select", *SPANS)
checks["save"] = refused(lambda: jaxgrad.save({"x": x}, io.BytesIO()), "jaxgrad.save", *SPANS)
lin = jaxgrad.nn.Linear(3, 2).to(sharded)
checks["save_state_dict"] = refused(lambda: jaxgrad.save(lin.state_dict(), io.BytesIO()),
                                    "jaxgrad.save", *SPANS)

# ops on it run; their replicated results read anywhere
checks["int_index"] = x[jaxgrad.tensor([0, 7])].tolist() == [-3.0, 4.0]
checks["gathered"] = x.to("cpu").tolist() == list(range(-3, 5))
checks["sum"] = x.sum().item() == 4.0
logits, target = (global_array(p, (4,) + p.shape[1:]) for p in mine)
target = target.long()  # (JAX made it int32: x64 is off)
every = [data(r) for r in range(2)]
z = np.concatenate([d[0] for d in every]).astype(np.float64)
labels = np.concatenate([d[1] for d in every])
nll = np.log(np.exp(z).sum(1)) - z[np.arange(4), labels]
checks["cross_entropy"] = bool(abs(F.cross_entropy(logits, target).item() - nll.mean()) < 1e-5)
weight = jaxgrad.ones(3, 2)
checks["embedding"] = F.embedding(target, weight).sum().item() == 8.0
checks["one_hot"] = F.one_hot(target, 3).sum().item() == 4
print("RESULT " + json.dumps(checks))
"""


def test_host_reads_of_a_sharded_tensor_refuse_at_once():
    ranks = run_ranks(SHARDED, world=2, timeout=BOUND)
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        (checks,) = rank.results
        assert checks and all(checks.values()), checks
