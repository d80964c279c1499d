"""jaxgrad inside JAX programs: arrays in and out (``Tensor.jax``, ``from_jax``, DLPack), jaxgrad
dtypes where JAX takes a dtype, tensors as pytrees (jit, vmap, scan, tree_map, optax, chex) and
operators mixing tensors with JAX arrays. Differential against torch wherever torch has the same
program; see functorch_notes/pytrees.md for the rules tested here.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxgrad
from differential import normalise, ok, raises, same, torch


def const(T, values, dtype="float32"):
    """A constant operand: a torch tensor for torch, a JAX array for jaxgrad."""
    array = np.asarray(values, dtype=dtype)
    if T is torch:
        return torch.from_numpy(array)
    return jnp.asarray(array, dtype=array.dtype)


# --- operators mixing a tensor and a JAX array ------------------------------------------------

OPERATORS = {
    "mul": lambda x, c: x * c, "rmul": lambda x, c: c * x,
    "add": lambda x, c: x + c, "radd": lambda x, c: c + x,
    "sub": lambda x, c: x - c, "rsub": lambda x, c: c - x,
    "div": lambda x, c: x / c, "rdiv": lambda x, c: c / x,
    "pow": lambda x, c: x ** c, "rpow": lambda x, c: c ** x,
    "matmul": lambda x, c: x @ c, "rmatmul": lambda x, c: c @ x,
    "eq": lambda x, c: x == c, "req": lambda x, c: c == x,
    "ne": lambda x, c: x != c, "rne": lambda x, c: c != x,
    "lt": lambda x, c: x < c, "rlt": lambda x, c: c < x,
    "ge": lambda x, c: x >= c, "rge": lambda x, c: c >= x,
    "iadd": lambda x, c: _iadd(x * 1, c),
}


def _iadd(y, c):
    y += c
    return y


@pytest.mark.parametrize("name", OPERATORS)
def test_operator_with_a_jax_array_keeps_history(name):
    def program(T):
        x = T.tensor([1.5, 2.0, 3.0], requires_grad=True)
        out = OPERATORS[name](x, const(T, [2.0, 2.0, 4.0]))
        if out.requires_grad:
            out.sum().backward()
        return out, x.grad

    ok(program)


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float32", "int32"),
                                    ("int64", "float32"), ("float64", "float16")])
@pytest.mark.parametrize("zero_dim", [False, True])
def test_a_jax_array_promotes_as_a_tensor_of_its_dtype(dtypes, zero_dim):
    tensor_dtype, array_dtype = dtypes

    def program(T):
        x = T.tensor([1.0, 2.0], dtype=getattr(T, tensor_dtype))
        c = const(T, 3 if zero_dim else [3, 4], array_dtype)
        return x * c, c + x

    with jax.enable_x64(True):  # a float64 JAX array in the user's code: the user's x64 on
        ok(program)


def test_a_jax_array_that_does_not_broadcast_raises_torchs_error():
    raises(lambda T: T.ones(2, requires_grad=True) * const(T, [1.0, 2.0, 3.0]))


def test_jnp_functions_refuse_a_tensor_instead_of_dropping_its_graph():
    with pytest.raises(TypeError, match=r"jaxgrad\.Tensor"):
        jnp.sin(jaxgrad.ones(2, requires_grad=True))


# --- Tensor.jax, from_jax, from_numpy -----------------------------------------------------------

def test_from_jax_wraps_without_a_copy_and_jax_gives_it_back():
    a = jnp.arange(4, dtype=jnp.float32)
    t = jaxgrad.from_jax(a, requires_grad=True)
    assert t.jax() is a and t.is_leaf and t.requires_grad and t.dtype is jaxgrad.float32
    assert jaxgrad.from_jax(a).requires_grad is False


def test_from_jax_keeps_device_sharding_and_committedness():
    committed = jax.device_put(jnp.ones(2, dtype=jnp.float32), jax.devices()[0])
    loose = jnp.ones(2, dtype=jnp.float32)
    for a in (committed, loose):
        b = jaxgrad.from_jax(a).jax()
        assert (b.committed, b.sharding, b.devices()) == (a.committed, a.sharding, a.devices())


def test_jax_of_a_view_materialises_it():
    def program(T):
        base = T.arange(6.0).reshape(2, 3)
        view = base[:, 1]
        return view, base.t()

    _, (view, transposed) = ok(program)
    np.testing.assert_array_equal(np.asarray(view.jax()), np.asarray(view.detach()))
    assert isinstance(transposed.jax(), jax.Array) and transposed.jax().shape == (3, 2)


def test_from_jax_errors():
    with pytest.raises(TypeError, match=r"from_jax\(\): expected jax\.Array \(got numpy\.ndarray\)"):
        jaxgrad.from_jax(np.ones(2))
    with pytest.raises(TypeError, match=r"can't convert jax\.Array of type numpy\.uint32"):
        jaxgrad.from_jax(jnp.ones(2, dtype=jnp.uint32))
    ta, _ = raises(lambda T: T.tensor([1, 2], requires_grad=True))
    with pytest.raises(RuntimeError) as info:
        jaxgrad.from_jax(jnp.ones(2, dtype=jnp.int32), requires_grad=True)
    assert normalise(str(info.value)) == ta.message


def test_from_numpy_refuses_a_jax_array_as_torch_does():
    raises(lambda T: T.from_numpy(jnp.ones(2, dtype=jnp.float32)))


@pytest.mark.parametrize("dtype", ["float64", "int64", "float32", "bool"])
def test_from_numpy_keeps_the_dtype(dtype):
    ok(lambda T: T.from_numpy(np.arange(3).astype(dtype)))


# --- DLPack ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_dlpack_round_trips(dtype):
    t = jaxgrad.arange(6, dtype=getattr(jaxgrad, dtype)).reshape(2, 3)
    expected = torch.arange(6, dtype=getattr(torch, dtype)).reshape(2, 3)
    for got in (np.from_dlpack(t), torch.from_dlpack(t).numpy()):
        assert got.dtype == expected.numpy().dtype
        np.testing.assert_array_equal(got, expected.numpy())
    via_jax = jax.dlpack.from_dlpack(t)  # JAX imports as it imports torch's own tensor
    reference = jax.dlpack.from_dlpack(expected)
    assert via_jax.dtype == reference.dtype
    np.testing.assert_array_equal(np.asarray(via_jax), np.asarray(reference))
    assert [int(v) for v in t.__dlpack_device__()] == [
        int(v) for v in expected.__dlpack_device__()]


def test_dlpack_refuses_a_tensor_requiring_grad_as_torch_does():
    raises(lambda T: np.from_dlpack(T.ones(2, requires_grad=True)))
    ok(lambda T: T.from_numpy(np.from_dlpack(T.ones(2, requires_grad=True).detach()).copy()))


# --- dtypes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float64", "int64", "int8", "bfloat16", "bool",
                                  "complex64"])
def test_jaxgrad_dtypes_are_jax_dtypes(name):
    d = getattr(jaxgrad, name)
    with jax.enable_x64(True):  # (64-bit JAX arrays in the user's code need x64 on)
        assert jnp.zeros(2, dtype=d).dtype == d.np
    assert jax.ShapeDtypeStruct((2, 3), d).dtype == d.np
    t = jaxgrad.zeros(2, dtype=d)
    chex.assert_type(t, d)
    assert jax.ShapeDtypeStruct(t.shape, t.dtype) == jax.ShapeDtypeStruct((2,), d.np)


def test_dtypes_still_print_and_compare_as_torchs():
    ok(lambda T: (repr(T.float32), str(T.int64), T.float32 == T.float64, T.float32 == T.float32,
                  T.float32 == np.float32, T.float32 != T.float64))


def test_chex_assertions_on_tensors():
    t = jaxgrad.ones(2, 3)
    chex.assert_shape(t, (2, 3))
    with pytest.raises(AssertionError, match="expected float64"):
        chex.assert_type(t, jaxgrad.float64)
    chex.assert_trees_all_close({"a": t}, {"a": jaxgrad.ones(2, 3)})


# --- tensors as pytrees ------------------------------------------------------------------------

def test_a_tensor_flattens_to_its_array():
    x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    leaves, treedef = jax.tree_util.tree_flatten({"x": x, "n": 3})
    assert leaves[1] is x.jax() and leaves[0] == 3
    back = jax.tree_util.tree_unflatten(treedef, leaves)["x"]
    assert type(back) is jaxgrad.Tensor and back.requires_grad and back.jax() is x.jax()


def test_crossing_a_transformation_gives_fresh_leaves_keeping_requires_grad():
    seen = []

    def f(t):
        seen.append((t.is_leaf, t.requires_grad, t.grad_fn, t._version))
        return t * 2

    x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3  # a non-leaf with a hook and retain_grad: none of it crosses
    calls = []
    y.register_hook(lambda g: calls.append(g))
    y.retain_grad()
    out = jax.jit(f)(y)
    assert seen == [(True, True, None, 0)]
    assert (out.is_leaf, out.requires_grad, out.grad_fn) == (True, True, None)
    out.sum().backward()
    assert x.grad is None and calls == [] and y.grad is None
    np.testing.assert_array_equal(np.asarray(out.grad), np.ones(2, np.float32))
    plain = jax.jit(f)(x.detach())
    assert (plain.is_leaf, plain.requires_grad) == (True, False)


def test_requires_grad_is_dropped_for_a_dtype_that_cannot_have_it():
    p = jaxgrad.nn.Parameter(jaxgrad.ones(2))
    as_int = jax.tree_util.tree_map(lambda a: a.astype(jnp.int32), p)
    assert type(as_int) is jaxgrad.nn.Parameter and as_int.requires_grad is False
    halved = jax.tree_util.tree_map(lambda a: a.astype(jnp.bfloat16), p)
    assert halved.requires_grad and halved.dtype is jaxgrad.bfloat16


def test_parameters_and_subclasses_unflatten_as_themselves():
    class Scaled(jaxgrad.nn.Parameter):
        pass

    model = jaxgrad.nn.Linear(3, 2)
    params = dict(model.named_parameters())
    params["extra"] = Scaled(jaxgrad.ones(2))
    doubled = jax.tree_util.tree_map(lambda a: a * 2, params)
    assert {k: type(v) for k, v in doubled.items()} == {k: type(v) for k, v in params.items()}
    for k, v in doubled.items():
        assert v.requires_grad and v.is_leaf
        np.testing.assert_allclose(np.asarray(v.detach()), 2 * np.asarray(params[k].detach()))


def test_tree_map_over_a_state_dict_matches_torch():
    def program(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4))
        state = model.state_dict()
        if T is torch:
            return {k: v * 2 for k, v in state.items()}
        return dict(jax.tree_util.tree_map(lambda a: a * 2, state))

    ta, jb = same(lambda T: sorted(program(T)))
    assert ta == jb
    mapped = program(jaxgrad)
    assert all(isinstance(v, jaxgrad.Tensor) and not v.requires_grad for v in mapped.values())


def _program_value(T):
    x = T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    w = T.tensor([1.0, 2.0, 3.0])
    return x, w


def test_jit_of_a_jaxgrad_function_matches_torch():
    def program(T):
        x, w = _program_value(T)

        def f(x, w):
            return (x.sin() * w).sum(1) + x.mean()

        return jax.jit(f)(x, w) if T is jaxgrad else f(x, w)

    ok(program)


def test_vmap_matches_torch_func_vmap():
    def program(T):
        x, w = _program_value(T)
        vmap = jax.vmap if T is jaxgrad else torch.func.vmap
        return vmap(lambda row: (row.exp() * w).sum())(x)

    ok(program)


def test_lax_scan_over_tensors_matches_torch_cumsum():
    def program(T):
        x, w = _program_value(T)
        if T is torch:
            return x.cumsum(0) * w, x.sum(0)
        carry, ys = jax.lax.scan(lambda c, row: (c + row, (c + row) * w), T.zeros(3), x)
        return ys, carry

    ok(program)


def test_device_put_of_a_tensor_gives_a_tensor():
    x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    put = jax.device_put(x, jax.devices()[0])
    assert type(put) is jaxgrad.Tensor and put.requires_grad and put.is_leaf
    assert put.jax().committed


# --- backward inside jax.jit ---------------------------------------------------------------

def _loss(T, x):
    return (x.sin() * x).sum() + (x * x).mean()


def test_backward_inside_jit_gives_the_eager_grads():
    values = np.array([0.3, -1.2, 2.0], dtype=np.float32)

    def step(a):
        x = jaxgrad.from_jax(a, requires_grad=True)
        loss = _loss(jaxgrad, x)
        loss.backward()
        return x.grad.jax(), loss.detach().jax()

    a = jnp.asarray(values, dtype=jnp.float32)
    jit_grad, jit_loss = jax.jit(step)(a)
    eager_grad, eager_loss = step(a)
    tx = torch.tensor(values, requires_grad=True)
    tl = _loss(torch, tx)
    tl.backward()
    np.testing.assert_allclose(np.asarray(jit_grad), np.asarray(eager_grad), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jit_grad), tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(float(jit_loss), tl.item(), rtol=1e-6)
    np.testing.assert_allclose(float(eager_loss), tl.item(), rtol=1e-6)


def test_a_tensor_times_a_tracer_inside_jit_keeps_history():
    w = jaxgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def f(a):
        y = (a * w).sum() + (w * a).sum()
        y.backward()
        return w.grad.jax()

    got = jax.jit(f)(jnp.asarray([4.0, 5.0, 6.0], dtype=jnp.float32))
    tw = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = torch.tensor([4.0, 5.0, 6.0])
    ((a * tw).sum() + (tw * a).sum()).backward()
    np.testing.assert_allclose(np.asarray(got), tw.grad.numpy())


# --- optax on jaxgrad models ---------------------------------------------------------------

def test_optax_adam_on_a_jaxgrad_model_matches_torch_adam():
    rng = np.random.default_rng(0)
    weights = {"weight": rng.normal(size=(2, 3)).astype(np.float32),
               "bias": rng.normal(size=(2,)).astype(np.float32)}
    data = rng.normal(size=(5, 3)).astype(np.float32)

    tmodel = torch.nn.Linear(3, 2)
    tmodel.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    topt = torch.optim.Adam(tmodel.parameters(), lr=1e-2)
    model = jaxgrad.nn.Linear(3, 2)
    model.load_state_dict({k: jaxgrad.from_numpy(v) for k, v in weights.items()})
    opt = optax.adam(1e-2)
    state = opt.init(dict(model.named_parameters()))
    assert all(type(m) is jaxgrad.nn.Parameter for m in state[0].mu.values())
    # pytree node types are Python types: optax's trees must be alike, so params and grads are
    # both dicts of plain tensors (the detached parameters share their storage)
    params = {k: p.detach() for k, p in model.named_parameters()}
    state = opt.init(params)
    for _ in range(3):
        topt.zero_grad()
        (tmodel(torch.from_numpy(data)) ** 2).mean().backward()
        topt.step()
        model.zero_grad()
        (model(jaxgrad.from_numpy(data)) ** 2).mean().backward()
        grads = {k: p.grad for k, p in model.named_parameters()}
        updates, state = opt.update(grads, state, params)
        new = optax.apply_updates(params, updates)
        with jaxgrad.no_grad():
            for k, p in model.named_parameters():
                p.copy_(new[k])
    for k, p in tmodel.named_parameters():
        np.testing.assert_allclose(np.asarray(params[k].detach()), p.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)


# -- ops whose eager path reads index values on the host run on traced indices -----------------

def _traced(fn, *arrays):
    """``fn`` of fresh tensors over ``arrays``, eagerly and under ``jax.jit``: both results."""
    def run(*a):
        return jax.tree.map(lambda t: t.jax(), fn(*[jaxgrad.from_jax(x) for x in a]),
                            is_leaf=lambda t: isinstance(t, jaxgrad.Tensor))
    with jax.enable_x64(True):  # the user's 64-bit arrays and jit: the user's x64 on
        arrays = [jnp.asarray(a, dtype=a.dtype) for a in arrays]
        return run(*arrays), jax.jit(run)(*arrays)


def test_indexing_embedding_and_one_hot_with_traced_indices_match_torch():
    def program(T, x, idx, ids):
        x = x.clone().requires_grad_()
        emb = T.nn.functional.embedding(ids, x.reshape(3, 4))
        hot = T.nn.functional.one_hot(ids, num_classes=5)
        y = x[idx] * 2 + x.reshape(3, 4)[idx.abs() % 3, 1].sum()
        (y.sum() + emb.sum()).backward()
        return y.detach(), emb.detach(), hot, x.grad

    x, idx, ids = np.arange(12.0, dtype=np.float32), np.array([0, -1, 5, 5]), np.array([2, 0, 2])
    want = program(torch, *(torch.tensor(a) for a in (x, idx, ids)))
    for got in _traced(lambda *t: program(jaxgrad, *t), x, idx, ids):
        for w, g in zip(want, got):
            np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-6)


def test_traced_boolean_masks_and_class_counts_raise_clear_errors():
    with pytest.raises(IndexError, match="boolean mask"):
        _traced(lambda x, m: x[m], np.arange(3.0), np.array([True, False, True]))
    with pytest.raises(RuntimeError, match="pass num_classes"):
        _traced(lambda i: jaxgrad.nn.functional.one_hot(i), np.array([0, 2]))


# --- max pooling's backward inside the user's own jax.jit / jax.grad ----------------------------

POOLS = {
    "max_pool1d": lambda F, t: F.max_pool1d(t.flatten(2), 3, stride=2),
    "max_pool2d": lambda F, t: F.max_pool2d(t, 2),
    "max_pool2d_ties": lambda F, t: F.max_pool2d(t.round(), 2),
    "adaptive_max_pool2d": lambda F, t: F.adaptive_max_pool2d(t, (2, 1)),
    "max_pool2d_padded": lambda F, t: F.max_pool2d(t, 3, stride=1, padding=1),
}


def _pool_input(dtype):
    return (np.sin(np.arange(2 * 2 * 4 * 4) * 1.7) * 3).reshape(2, 2, 4, 4).astype(dtype)


def _torch_pool_grad(name, values):
    x = torch.tensor(values, requires_grad=True)
    POOLS[name](torch.nn.functional, x).pow(2).sum().backward()
    return x.grad.numpy()


def _pool_loss(name):
    return lambda a: POOLS[name](jaxgrad.nn.functional, jaxgrad.from_jax(a)).pow(2).sum().jax()


@pytest.mark.parametrize("name", POOLS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pooling_backward_under_the_users_jit_and_grad(name, dtype):
    """JAX's own grad of jaxgrad pooling (plain and jitted), and jaxgrad's backward inside the
    user's jit, give torch's gradient; float64 with the user's x64 on, as JAX requires."""
    values = _pool_input(dtype)
    expected = _torch_pool_grad(name, values)

    def backward_inside(a):
        t = jaxgrad.from_jax(a, requires_grad=True)
        POOLS[name](jaxgrad.nn.functional, t).pow(2).sum().backward()
        return t.grad.jax()

    with jax.enable_x64(dtype == "float64"):
        array = jnp.asarray(values)
        results = [jax.grad(_pool_loss(name))(array), jax.jit(jax.grad(_pool_loss(name)))(array),
                   jax.jit(backward_inside)(array)]
    for got in results:
        assert got.dtype == values.dtype
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


# --- trees unflattened over leaves that are not arrays ------------------------------------------

def test_a_tree_of_shapes_or_shape_structs_prints_and_round_trips():
    model = jaxgrad.nn.Linear(3, 2)
    params = dict(model.named_parameters())
    shapes = jax.tree.map(lambda a: a.shape, params)
    assert repr(shapes) == "{'bias': Parameter(leaf=(2,)), 'weight': Parameter(leaf=(2, 3))}"
    structs = jax.eval_shape(lambda p: {k: v * 2 for k, v in p.items()}, params)
    assert repr(structs["weight"]) == \
        "Tensor(leaf=ShapeDtypeStruct(shape=(2, 3), dtype=float32))"
    assert repr(jax.tree.map(lambda a: None, jaxgrad.ones(2))) == "Tensor(leaf=None)"
    zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), structs)
    assert type(zeros["weight"]) is jaxgrad.Tensor
    assert zeros["weight"].shape == (2, 3) and zeros["weight"].sum().item() == 0


# --- a custom autograd.Function under the user's own jax.grad: differentiated by its backward --

def scaled_functions(T):
    """A Function whose backward is deliberately not its forward's derivative, old-style and
    with setup_context."""

    class Cube(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * ctx.k * x * x, None

    class CubeSplit(T.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * ctx.k * x * x, None

    return {"old_style": Cube, "setup_context": CubeSplit}


ROUTES = {
    "grad": lambda f: jax.grad(f),
    "jit_of_grad": lambda f: jax.jit(jax.grad(f)),
    "grad_of_jit": lambda f: jax.grad(jax.jit(f)),
    "vmap_of_grad": lambda f: lambda x: jax.vmap(jax.grad(f))(x[None])[0],
    "second_order": lambda f: jax.grad(lambda x: jax.grad(f)(x).sum()),
}


@pytest.mark.parametrize("style", ["old_style", "setup_context"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_custom_function_under_the_users_jax_grad_uses_its_backward(style, route):
    x = np.array([0.5, -1.0, 2.0])
    t = torch.tensor(x, requires_grad=True)
    fn = scaled_functions(torch)[style]
    (first,) = torch.autograd.grad(fn.apply(t, 7.0).sum(), t, create_graph=True)
    expect = torch.autograd.grad(first.sum(), t)[0] if route == "second_order" else first
    fn = scaled_functions(jaxgrad)[style]
    with jax.enable_x64(True):
        got = ROUTES[route](lambda a: fn.apply(jaxgrad.from_jax(a), 7.0).jax().sum())(
            jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), expect.detach().numpy(), rtol=1e-12)
