"""The op overloads a ``TorchDispatchMode`` and a selective-checkpoint policy receive as
``func``, differential against torch: torch's overload names (``add.Tensor``,
``sum.dim_IntList``, ``_softmax.default``), the very objects ``ops.aten.<op>.<overload>`` are
(``is``), ``name()``/``str``/``overloadpacket``, the tensors they get; a policy selecting by
``func in {...}`` saves and recomputes what torch's does."""

from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest

from differential import bug, ok, same, set_weights

torch = pytest.importorskip("torch")


def _logging_mode(T):
    """A mode logging each op it sees: its name, whether it is ``ops.aten``'s object, its
    qualified name, its packet and the shapes of its tensor arguments (lists flattened)."""

    def shapes(args):
        for a in args:
            if isinstance(a, T.Tensor):
                yield tuple(a.shape)
            elif isinstance(a, (list, tuple)):
                yield from shapes(a)

    class Log(importlib.import_module(f"{T.__name__}.utils._python_dispatch").TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            packet = func.overloadpacket
            if func is not T.ops.aten.detach.default:  # (torch's autograd detaches, not jaxgrad's)
                self.log.append(
                    (
                        str(func),
                        func.name(),
                        func.__name__,
                        repr(packet),
                        func is getattr(getattr(T.ops.aten, packet.__name__), func._overloadname),
                        func in {T.ops.aten.mm.default, T.ops.aten.add.Tensor},
                        list(shapes((*args, *(kwargs or {}).values()))),
                    )
                )
            return func(*args, **(kwargs or {}))

    return Log()


def _x(T, *shape):
    rs = np.random.RandomState(0)
    return T.tensor(rs.randn(*shape), dtype=T.float64, requires_grad=True)


def _mlp(T):
    return set_weights(
        T,
        T.nn.Sequential(T.nn.Linear(6, 8), T.nn.GELU(), T.nn.Linear(8, 4), T.nn.LogSoftmax(dim=-1)),
    )


class _Attention:
    """A pre-norm self-attention block: layer norm, one qkv projection split in three, softmax
    attention, an output projection and the residual."""

    def __init__(self, T):
        self.T = T
        self.norm = set_weights(T, T.nn.LayerNorm(4), seed=1)
        self.qkv = set_weights(T, T.nn.Linear(4, 12), seed=2)
        self.proj = set_weights(T, T.nn.Linear(4, 4), seed=3)

    def __call__(self, x):
        q, k, v = self.qkv(self.norm(x)).split(4, dim=-1)
        att = ((q @ k.transpose(-2, -1)) * 0.5).softmax(dim=-1)
        return self.proj(att @ v) + x

    def parameters(self):
        return [*self.norm.parameters(), *self.qkv.parameters(), *self.proj.parameters()]


def test_mlp_forward_logs_torchs_overloads():
    def program(T):
        mlp, x = _mlp(T), _x(T, 5, 6)
        mode = _logging_mode(T)
        with mode:
            out = mlp(x).sum()
        return mode.log, out

    ok(program)


def test_attention_block_forward_logs_torchs_overloads():
    def program(T):
        block, x = _Attention(T), _x(T, 2, 3, 4)
        mode = _logging_mode(T)
        with mode:
            out = block(x).pow(2).mean()
        return mode.log, out

    ok(program)


OPS = {
    "add_sub_tensor_scalar": lambda T, x: [x + x, x + 2, x.add(x, alpha=2), x - x, x - 1.5],
    "mul_div": lambda T, x: [x * x, x * 2, x / x, x / 3],
    "unary": lambda T, x: [
        x.sin(),
        x.cos(),
        x.exp(),
        x.abs().log(),
        -x,
        x.abs().rsqrt(),
        x.relu(),
        T.nn.functional.gelu(x),
    ],
    "pow": lambda T, x: [x**2, x.abs() ** x, 2**x],
    "reductions": lambda T, x: [
        x.sum(),
        x.sum(0),
        x.sum(dim=1, keepdim=True),
        x.mean(),
        x.mean(-1),
        *T.var_mean(x, -1),
    ],
    "softmaxes": lambda T, x: [x.softmax(-1), x.log_softmax(0)],
    "views": lambda T, x: [
        x.view(6, 4),
        x.t(),
        x.transpose(0, 1),
        x.permute(1, 0),
        x[:1].expand(3, 6),
        x.clone(),
    ],
    "matmuls": lambda T, x: [x @ x.t(), T.addmm(x[0, :4], x, x.t()), T.bmm(x[None], x.t()[None])],
    "cat_split": lambda T, x: [T.cat([x, x]), *x.split(2)],
    "layer_norm_to": lambda T, x: [T.nn.functional.layer_norm(x, (6,)), x.detach().long()],
}


@pytest.mark.parametrize("name", list(OPS))
def test_common_ops_dispatch_as_torchs_overloads(name):
    def program(T):
        x = _x(T, 4, 6)
        mode = _logging_mode(T)
        with mode:
            out = OPS[name](T, x)
        return mode.log, out

    ok(program)


@bug(
    "jaxgrad's embedding row takes its indices as a traced operand, not an argument: a "
    "dispatch sees embedding(weight) with no indices tensor where torch's sees both"
)
def test_embedding_dispatches_weight_and_indices():
    def program(T):
        x = _x(T, 4, 6)
        indices = T.tensor([[0, 3], [1, 1]])
        mode = _logging_mode(T)
        with mode:
            out = T.nn.functional.embedding(indices, x)
        return mode.log, out

    ok(program)


def test_overload_objects_are_torchs_singletons():
    def program(T):
        aten = T.ops.aten
        return [
            aten.mm.default is aten.mm.default,
            aten.add.Tensor == aten.add.Tensor,
            aten.add.Tensor is aten.add.Scalar,
            hash(aten.sum.dim_IntList) == hash(aten.sum.dim_IntList),
            aten.add.Tensor.overloadpacket is aten.add,
            str(aten._softmax.default),
            aten.sum.dim_IntList.name(),
            aten.sum.default.name(),
            repr(aten.var_mean),
        ]

    ok(program)


def _sac_run(T, save):
    """An MLP checkpointed with a policy saving the ops in ``save`` (torch's overload objects)
    and recomputing the rest: the ops the policy saw, those the backward ran again, output and
    gradients."""
    ck = T.utils.checkpoint
    mlp, x = _mlp(T), _x(T, 5, 6)
    saved = {getattr(getattr(T.ops.aten, op), overload) for op, overload in save}
    seen = []

    def policy_fn(ctx, func, *args, **kwargs):
        seen.append((str(func), ctx.is_recompute, func in saved))
        return (
            ck.CheckpointPolicy.MUST_SAVE if func in saved else ck.CheckpointPolicy.PREFER_RECOMPUTE
        )

    context_fn = functools.partial(ck.create_selective_checkpoint_contexts, policy_fn)
    out = ck.checkpoint(mlp, x, use_reentrant=False, context_fn=context_fn)
    mode = _logging_mode(T)
    with mode:
        out.sum().backward()
    recomputed = [entry[0] for entry in mode.log if entry[0] in FORWARD_ONLY]
    return seen, recomputed, out, x.grad, [p.grad for p in mlp.parameters()]


# (the MLP's ops no backward formula runs: seen in backward, they are recomputed)
FORWARD_ONLY = ("aten.addmm.default", "aten.gelu.default", "aten._log_softmax.default")
SAVES = {
    "matmuls": [("addmm", "default"), ("mm", "default")],
    "softmax_and_gelu": [("_log_softmax", "default"), ("gelu", "default")],
    "nothing": [],
}


@pytest.mark.parametrize("name", list(SAVES))
def test_sac_policy_selecting_by_overload_recomputes_as_torch(name):
    same(lambda T: _sac_run(T, SAVES[name]))
