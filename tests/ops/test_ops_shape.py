"""Shape and view ops and random sampling. Every case runs on torch and on jaxgrad
(``differential.same``): values, grads, grad_fn graphs, versions, views, errors. Random values
come from jaxgrad's own generators, so sampling tests compare everything but the values, and check
the distributions and the reproducibility of seeded generators.
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import (
    attempt,
    captured_warnings,
    cases,
    distinct_leaf,
    next_functions,
    ok,
    raises,
    same,
    val,
)

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import jaxgrad  # noqa: E402

FAST = settings(max_examples=6, deadline=None, database=None)


def _grads(T, out, *leaves):
    """Backward with a non-uniform gradient; the leaves' grads (values, flags)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = 0
    for o in outs:
        weight = T.arange(float(o.numel())).reshape(o.shape).to(o.dtype) + 1
        total = total + (o * weight).sum()
    total.backward()
    return [val(leaf.grad) for leaf in leaves]


def meta(t):
    """What a sampled tensor shows besides its values."""
    fn = t.grad_fn
    return (tuple(t.shape), str(t.dtype), t.requires_grad, t.is_leaf,
            None if fn is None else type(fn).__name__, t._version,
            None if fn is None else next_functions(fn))


# --- sampling ------------------------------------------------------------------------------------

SAMPLERS = {
    "random_": lambda t: t.random_(),
    "random_to": lambda t: t.random_(5),
    "random_from_to": lambda t: t.random_(-2, 5),
    "random_kw": lambda t: t.random_(to=3),
    "random_from_kw": lambda t: t.random_(**{"from": 1, "to": 3}),
    "random_from_none": lambda t: t.random_(1, None),
    "exponential_": lambda t: t.exponential_(2.0),
    "geometric_": lambda t: t.geometric_(0.3),
    "cauchy_": lambda t: t.cauchy_(1.0, 2.0),
    "log_normal_": lambda t: t.log_normal_(),
    "normal_": lambda t: t.normal_(1.0, 2.0),
    "uniform_": lambda t: t.uniform_(-1, 1),
    "bernoulli_float": lambda t: t.bernoulli_(0.25),
    "bernoulli_tensor": lambda t: t.bernoulli_(t.detach().new_full((3,), 0.5)),
}


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
def test_inplace_samplers_meta(name, dtype):
    def program(T):
        t = T.ones(2, 3, dtype=getattr(T, dtype))
        return meta(SAMPLERS[name](t)), meta(t)

    same(program)


@pytest.mark.parametrize("name", SAMPLERS)
def test_inplace_samplers_record_zero_gradients(name):
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        y = x * 2
        out = SAMPLERS[name](y)
        return meta(out), _grads(T, out * 3, x)

    ok(program)


@pytest.mark.parametrize("name", SAMPLERS)
def test_inplace_samplers_refuse_leaves_and_count_versions_of_views(name):
    same(lambda T: SAMPLERS[name](T.ones(2, 3, requires_grad=True)))

    def view(T):
        base = T.zeros(2, 3, dtype=T.float64)
        v = base[0]
        SAMPLERS[name](v)
        return base._version, v._version, v._is_view(), bool((base[1] == 0).all())

    ok(view)


SAMPLER_ERRORS = {
    "random_order": lambda T: T.ones(3).random_(5, 2),
    "random_from_bounds": lambda T: T.ones(3, dtype=T.uint8).random_(-1, 3),
    "random_to_bounds": lambda T: T.ones(3, dtype=T.uint8).random_(0, 300),
    "exponential_rate": lambda T: T.ones(3).exponential_(-1),
    "exponential_zero": lambda T: T.ones(3).exponential_(0),
    "exponential_int": lambda T: T.ones(3, dtype=T.int64).exponential_(),
    "geometric_p": lambda T: T.ones(3).geometric_(1.5),
    "cauchy_sigma": lambda T: T.ones(3).cauchy_(0, -1),
    "cauchy_int": lambda T: T.ones(3, dtype=T.int64).cauchy_(),
    "log_normal_std": lambda T: T.ones(3).log_normal_(1, -1),
    "log_normal_int": lambda T: T.ones(3, dtype=T.int64).log_normal_(),
    "normal_std": lambda T: T.ones(3).normal_(0, -1.0),
    "uniform_order": lambda T: T.ones(3).uniform_(2, 1),
    "bernoulli_p": lambda T: T.ones(3).bernoulli_(1.5),
    "bernoulli_range": lambda T: T.bernoulli(T.tensor([1.5])),
    "bernoulli_long": lambda T: T.bernoulli(T.ones(3, dtype=T.int64)),
    "normal_tensor_std": lambda T: T.normal(T.ones(3), T.tensor([1.0, -1.0, 1.0])),
    "normal_float_std": lambda T: T.normal(T.ones(3), -1.0),
    "normal_long": lambda T: T.normal(T.ones(3, dtype=T.int64), 1.0),
    "multinomial_negative": lambda T: T.multinomial(T.tensor([-1.0, 1.0]), 1),
    "multinomial_inf": lambda T: T.multinomial(T.tensor([float("inf"), 2.0]), 1),
    "multinomial_nan": lambda T: T.multinomial(T.tensor([float("nan"), 2.0]), 1),
    "multinomial_zero_sum": lambda T: T.multinomial(T.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    "multinomial_3d": lambda T: T.multinomial(T.ones(2, 2, 2), 1),
    "multinomial_no_samples": lambda T: T.multinomial(T.ones(2), 0),
    "multinomial_long": lambda T: T.multinomial(T.tensor([1, 2]), 1),
    "multinomial_too_many": lambda T: T.multinomial(T.ones(3), 4),
    "multinomial_empty": lambda T: T.multinomial(T.ones(2, 0), 1),
}


@pytest.mark.parametrize("name", SAMPLER_ERRORS)
def test_sampler_errors(name):
    raises(SAMPLER_ERRORS[name])


FUNCTIONS = {
    "bernoulli": lambda T, p: T.bernoulli(p),
    "bernoulli_method": lambda T, p: p.bernoulli(),
    "bernoulli_p": lambda T, p: T.bernoulli(p, 0.3),
    "normal_tensor_tensor": lambda T, p: T.normal(p, p.detach().reshape(3, 1) + 1),
    "normal_tensor_float": lambda T, p: T.normal(p, 2.0),
    "normal_float_tensor": lambda T, p: T.normal(1.0, p),
    "normal_size": lambda T, p: T.normal(0.0, 1.0, (2, 3)),
    "normal_size_dtype": lambda T, p: T.normal(0.0, 1.0, size=(4,), dtype=T.float64),
    "normal_requires_grad": lambda T, p: T.normal(0.0, 1.0, (4,), requires_grad=True),
    "multinomial": lambda T, p: T.multinomial(p, 2),
    "multinomial_2d": lambda T, p: T.multinomial(p.detach().expand(4, 3), 3),
    "multinomial_replacement": lambda T, p: p.multinomial(10, replacement=True),
    "multinomial_2d_replacement": lambda T, p: T.multinomial(p.expand(2, 3), 5, True),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_sampling_functions_meta(name):
    def program(T):
        p = T.tensor([0.2, 0.5, 0.3], requires_grad=True)
        return meta(FUNCTIONS[name](T, p))

    ok(program)


@pytest.mark.parametrize("name", ["bernoulli", "normal_tensor_tensor", "normal_tensor_float",
                                  "normal_float_tensor"])
def test_sampling_functions_have_zero_gradients(name):
    def program(T):
        p = T.tensor([0.2, 0.5, 0.3], requires_grad=True)
        return _grads(T, FUNCTIONS[name](T, p) * 2, p)

    ok(program)


def test_bernoulli_with_p_has_no_derivative():
    def program(T):
        p = T.tensor([0.2, 0.5, 0.3], requires_grad=True)
        T.bernoulli(p, 0.5).sum().backward()

    raises(program)


SEEDED = {
    "multinomial": lambda g: jaxgrad.multinomial(jaxgrad.ones(2, 5), 3, generator=g),
    "multinomial_replacement": lambda g: jaxgrad.multinomial(jaxgrad.ones(5), 9, True,
                                                             generator=g),
    "bernoulli": lambda g: jaxgrad.bernoulli(jaxgrad.full((9,), 0.5), generator=g),
    "bernoulli_": lambda g: jaxgrad.zeros(9).bernoulli_(0.5, generator=g),
    "normal": lambda g: jaxgrad.normal(0.0, 1.0, (5,), generator=g),
    "normal_tensor": lambda g: jaxgrad.normal(jaxgrad.zeros(5), 1.0, generator=g),
    "random_": lambda g: jaxgrad.zeros(9).random_(100, generator=g),
    "exponential_": lambda g: jaxgrad.zeros(5).exponential_(generator=g),
    "geometric_": lambda g: jaxgrad.zeros(9).geometric_(0.2, generator=g),
    "cauchy_": lambda g: jaxgrad.zeros(5).cauchy_(generator=g),
    "log_normal_": lambda g: jaxgrad.zeros(5).log_normal_(generator=g),
}


@pytest.mark.parametrize("name", SEEDED)
def test_seeded_generators_reproduce_their_samples(name):
    first = SEEDED[name](jaxgrad.Generator().manual_seed(7)).tolist()
    assert SEEDED[name](jaxgrad.Generator().manual_seed(7)).tolist() == first
    g = jaxgrad.Generator().manual_seed(7)
    SEEDED[name](g)
    assert SEEDED[name](g).tolist() != first  # the generator moved on


def test_default_generator_follows_manual_seed():
    state = jaxgrad._functions.random.default_generator.get_state()
    try:
        jaxgrad.manual_seed(3)
        a = jaxgrad.multinomial(jaxgrad.ones(50), 20).tolist()
        jaxgrad.manual_seed(3)
        assert jaxgrad.multinomial(jaxgrad.ones(50), 20).tolist() == a
    finally:
        jaxgrad._functions.random.default_generator.set_state(state)


N = 40000


def _moments(values):
    return float(np.mean(values)), float(np.var(values))


@pytest.mark.parametrize("name,draw,mean,var", [
    ("exponential_", lambda t, g: t.exponential_(2.0, generator=g), 0.5, 0.25),
    ("geometric_", lambda t, g: t.geometric_(0.25, generator=g), 4.0, 12.0),
    ("log_normal_", lambda t, g: t.log_normal_(0.0, 0.5, generator=g),
     np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
    ("normal_", lambda t, g: t.normal_(1.0, 2.0, generator=g), 1.0, 4.0),
    ("uniform_", lambda t, g: t.uniform_(-1.0, 3.0, generator=g), 1.0, 16 / 12),
    ("random_", lambda t, g: t.random_(3, 7, generator=g), 4.5, 1.25),
    ("bernoulli_", lambda t, g: t.bernoulli_(0.3, generator=g), 0.3, 0.21),
])
def test_sampler_distributions(name, draw, mean, var):
    t = jaxgrad.zeros(N, dtype=jaxgrad.float64)
    m, v = _moments(np.asarray(draw(t, jaxgrad.Generator().manual_seed(1)).tolist()))
    assert abs(m - mean) < 5 * np.sqrt(var / N)
    assert abs(v - var) < 0.1 * var


def test_cauchy_quartiles():
    t = jaxgrad.zeros(N, dtype=jaxgrad.float64).cauchy_(1.0, 2.0,
                                                         generator=jaxgrad.Generator())
    q1, q2, q3 = np.quantile(np.asarray(t.tolist()), [0.25, 0.5, 0.75])
    assert abs(q2 - 1.0) < 0.1 and abs((q3 - q1) / 2 - 2.0) < 0.15


def test_multinomial_frequencies():
    g = jaxgrad.Generator().manual_seed(2)
    p = np.array([0.1, 0.6, 0.3, 0.0])
    with_replacement = np.asarray(jaxgrad.multinomial(jaxgrad.tensor(p * 5), N, True,
                                                      generator=g).tolist())
    np.testing.assert_allclose(np.bincount(with_replacement, minlength=4) / N, p, atol=0.015)
    # without replacement: the first pick follows p, later picks never repeat a category
    rows = jaxgrad.multinomial(jaxgrad.tensor(p).expand(N // 4, 4), 3, generator=g).tolist()
    first = np.bincount([r[0] for r in rows], minlength=4) / len(rows)
    np.testing.assert_allclose(first, p, atol=0.03)
    assert all(len(set(r)) == 3 and 3 not in r for r in rows)


def test_bernoulli_tensor_probabilities():
    probs = jaxgrad.tensor([0.0, 0.2, 0.9, 1.0], dtype=jaxgrad.float64).expand(N // 4, 4)
    draws = np.asarray(jaxgrad.bernoulli(probs, generator=jaxgrad.Generator()).tolist())
    np.testing.assert_allclose(draws.mean(0), [0.0, 0.2, 0.9, 1.0], atol=0.025)
    assert draws[:, 0].max() == 0 and draws[:, 3].min() == 1


# --- shape and view ops --------------------------------------------------------------------------

def _view_facts(T, out, base):
    return (out._is_view(), out._base is base, out.is_contiguous(), tuple(out.stride())
            if out._is_view() else None)


VIEWS = {
    "narrow": lambda T, x: x.narrow(1, 1, 2),
    "narrow_negative_start": lambda T, x: T.narrow(x, 1, -3, 2),
    "narrow_tensor_start": lambda T, x: x.narrow(2, T.tensor(1), 2),
    "narrow_empty": lambda T, x: x.narrow(2, 4, 0),
    "movedim": lambda T, x: x.movedim(0, -1),
    "movedim_lists": lambda T, x: T.movedim(x, (0, 2), (2, 0)),
    "movedim_one_of_three": lambda T, x: T.movedim(x, [1], [0]),
    "moveaxis": lambda T, x: T.moveaxis(x, 1, 2),
    "unflatten": lambda T, x: x.unflatten(2, (2, -1)),
    "unflatten_kw": lambda T, x: T.unflatten(x, dim=-1, sizes=(4, 1)),
    "unfold": lambda T, x: x.unfold(2, 2, 1),
    "unfold_step": lambda T, x: x.unfold(1, 2, 2),
    "unfold_whole": lambda T, x: x.unfold(0, 2, 5),
    "as_strided": lambda T, x: x.as_strided((3, 3), (2, 1)),
    "as_strided_offset": lambda T, x: T.as_strided(x, (2, 2), (4, 1), 3),
    "broadcast_to": lambda T, x: x[0, :, :1].broadcast_to((2, 3, 5)),
    "broadcast_to_fn": lambda T, x: T.broadcast_to(x[1], (4, 3, 4)),
    "view_as": lambda T, x: x.view_as(T.ones(6, 4)),
    "reshape_as": lambda T, x: x.transpose(0, 1).reshape_as(T.ones(24)),
    "expand_as": lambda T, x: x[:, :1].expand_as(x),
}


@pytest.mark.parametrize("name", VIEWS)
def test_views(name):
    def program(T):
        x = distinct_leaf(T, (2, 3, 4), T.float64)
        y = x * 1
        out = VIEWS[name](T, y)
        return out, _view_facts(T, out, y), out._version, _grads(T, out, x), next_functions(
            out.grad_fn)

    ok(program)


@pytest.mark.parametrize("name", VIEWS)
def test_views_share_storage_and_version(name):
    def program(T):
        base = distinct_leaf(T, (2, 3, 4)).detach()
        out = VIEWS[name](T, base)
        # (torch leaves writes through views whose elements overlap undefined)
        if name not in ("unfold", "as_strided") and 0 not in out.stride():
            out.mul_(2)
        return base, out, base._version, out._version, out._base is base

    same(program)


VIEW_ERRORS = {
    "narrow_0d": lambda T, x: T.tensor(1.0).narrow(0, 0, 1),
    "narrow_start": lambda T, x: x.narrow(2, 5, 1),
    "narrow_negative_start": lambda T, x: x.narrow(2, -5, 1),
    "narrow_length": lambda T, x: x.narrow(2, 2, 5),
    "narrow_negative_length": lambda T, x: x.narrow(2, 2, -1),
    "narrow_dim": lambda T, x: x.narrow(3, 0, 1),
    "movedim_dim": lambda T, x: x.movedim(0, 5),
    "movedim_lengths": lambda T, x: x.movedim((0, 1), (1,)),
    "movedim_repeated_source": lambda T, x: x.movedim((0, 0), (0, 1)),
    "movedim_repeated_destination": lambda T, x: x.movedim((0, 1), (1, 1)),
    "unflatten_sizes": lambda T, x: x.unflatten(2, (3, -1)),
    "unflatten_empty": lambda T, x: x.unflatten(1, ()),
    "unflatten_product": lambda T, x: x.unflatten(2, (2, 3)),
    "unfold_size": lambda T, x: x.unfold(2, 5, 1),
    "unfold_step": lambda T, x: x.unfold(2, 2, 0),
    "unfold_negative": lambda T, x: x.unfold(2, -1, 1),
    "as_strided_bounds": lambda T, x: x.as_strided((3, 3), (8, 8)),
    "as_strided_offset": lambda T, x: x.as_strided((3, 3), (1, 1), 20),
    "broadcast_to": lambda T, x: x.broadcast_to((2, 3, 5)),
    "t_3d": lambda T, x: x.t_(),
    "unsqueeze_dim": lambda T, x: x.unsqueeze_(5),
    "squeeze_dim": lambda T, x: x.squeeze_(5),
    "transpose_dim": lambda T, x: x.transpose_(0, 5),
}


@pytest.mark.parametrize("name", VIEW_ERRORS)
def test_view_errors(name):
    raises(lambda T: VIEW_ERRORS[name](T, distinct_leaf(T, (2, 3, 4)).detach()))


INPLACE_VIEWS = {
    "unsqueeze_": lambda t: t.unsqueeze_(1),
    "unsqueeze_last": lambda t: t.unsqueeze_(-1),
    "squeeze_": lambda t: t.squeeze_(),
    "squeeze_dim": lambda t: t.squeeze_(0),
    "squeeze_dim_kept": lambda t: t.squeeze_(1),
    "squeeze_dims": lambda t: t.squeeze_((0, 2)),
    "t_": lambda t: t[0].t_(),
    "transpose_": lambda t: t.transpose_(0, 2),
}


def _ones_dim(T, **kw):
    return T.tensor([[[1.0, 2.0, 3.0]]], **kw).transpose(1, 2).contiguous().transpose(0, 1)


@pytest.mark.parametrize("name", INPLACE_VIEWS)
def test_inplace_view_ops(name):
    def program(T):
        leaf = T.arange(3.0, requires_grad=True)
        x = (leaf * 2).reshape(1, 3, 1)
        alias = x.detach()
        out = INPLACE_VIEWS[name](x)
        facts = (out is x, tuple(x.shape), tuple(x.stride()), x._version, alias.shape,
                 alias._version, x._is_view())
        return facts, out, next_functions(out.grad_fn), _grads(T, out, leaf)

    ok(program)


@pytest.mark.parametrize("name", INPLACE_VIEWS)
def test_inplace_view_ops_on_views_and_leaves(name):
    def on_view(T):
        base = T.arange(6.0, requires_grad=True) * 1
        v = base[:3].view(1, 3, 1)
        out = INPLACE_VIEWS[name](v)
        facts = (out is v, tuple(v.shape), tuple(v.stride()), v._version, base._version,
                 v._is_view(), v._base is base, type(base.grad_fn).__name__)
        return facts, out, next_functions(out.grad_fn)

    ok(on_view)
    raises(lambda T: INPLACE_VIEWS[name](T.ones(1, 3, 1, requires_grad=True)))
    raises(lambda T: INPLACE_VIEWS[name](T.ones(2, 3, 1, requires_grad=True)[:1]))

    def plain(T):
        t = T.ones(1, 3, 1)
        out = INPLACE_VIEWS[name](t)
        return out, t._version, out.grad_fn

    ok(plain)

    def later_write(T):  # the new geometry is used by later writes and reads
        t = T.arange(3.0).reshape(1, 3, 1)
        out = INPLACE_VIEWS[name](t)
        out.add_(T.arange(float(out.numel())).reshape(out.shape))
        return out, out.sum(), t._version

    ok(later_write)


COPIES = {
    "flip": lambda T, x: x.flip(0, 2),
    "flip_tuple": lambda T, x: T.flip(x, (1,)),
    "flip_kw": lambda T, x: T.flip(x, dims=[-1]),
    "flip_none": lambda T, x: x.flip(()),
    "fliplr": lambda T, x: x.fliplr(),
    "flipud": lambda T, x: T.flipud(x),
    "roll": lambda T, x: x.roll(1),
    "roll_dims": lambda T, x: T.roll(x, (1, -2), (0, 2)),
    "roll_dim": lambda T, x: x.roll(5, 1),
    "rot90": lambda T, x: x.rot90(),
    "rot90_2": lambda T, x: T.rot90(x, 2, (1, 2)),
    "rot90_negative": lambda T, x: x.rot90(-1, [2, 0]),
    "rot90_0": lambda T, x: x.rot90(0),
    "rot90_5": lambda T, x: x.rot90(5, (1, 0)),
    "repeat": lambda T, x: x.repeat(2, 1, 3),
    "repeat_tuple": lambda T, x: x.repeat((1, 2, 1, 2)),
    "repeat_zero": lambda T, x: x.repeat(1, 0, 1),
    "tile": lambda T, x: x.tile(2),
    "tile_fn": lambda T, x: T.tile(x, (2, 1, 1, 1)),
    "tile_empty": lambda T, x: x.tile(()),
    "repeat_interleave": lambda T, x: x.repeat_interleave(2),
    "repeat_interleave_dim": lambda T, x: T.repeat_interleave(x, 3, dim=1),
    "repeat_interleave_tensor": lambda T, x: x.repeat_interleave(T.tensor([1, 0, 2]), dim=1),
    "repeat_interleave_tensor_flat": lambda T, x: T.repeat_interleave(x[0, 0], T.tensor(
        [1, 2, 0, 3])),
    "repeat_interleave_scalar_tensor": lambda T, x: x.repeat_interleave(T.tensor(2), dim=-1),
    "repeat_interleave_one_count": lambda T, x: x.repeat_interleave(T.tensor([2]), dim=0),
    "diag_embed": lambda T, x: T.diag_embed(x),
    "diag_embed_offset": lambda T, x: x.diag_embed(-1, 0, 2),
    "diag_vector": lambda T, x: T.diag(x[0, 0], 1),
    "diag_matrix": lambda T, x: x[0].diag(-1),
    "diagflat": lambda T, x: T.diagflat(x[0], 1),
    "diagflat_method": lambda T, x: x[0, 0].diagflat(-2),
    "diagflat_scalar": lambda T, x: T.diagflat(x[0, 0, 0]),
    "trace": lambda T, x: T.trace(x[1]),
    "kron": lambda T, x: T.kron(x[0], x[1, :2]),
    "kron_mixed": lambda T, x: x[0].kron(x[1, 0]),
    "tensordot": lambda T, x: T.tensordot(x, x[0].t(), 1) if False else T.tensordot(
        x, x.transpose(0, 2), 1),
    "tensordot_2": lambda T, x: T.tensordot(x, x[:, :, :3], ([1, 0], [1, 0])),
    "tensordot_full": lambda T, x: T.tensordot(x, x, 3),
    "tensordot_0": lambda T, x: T.tensordot(x[0, 0], x[1, 1], 0),
    "tensordot_lists": lambda T, x: T.tensordot(x, x[0], dims=[[2], [1]]),
    "tensordot_broadcast_dim": lambda T, x: T.tensordot(x[:, :1], x[:, :, :3], ([1], [2])),
    "inner": lambda T, x: T.inner(x, x[0]),
    "inner_vectors": lambda T, x: x[0, 0].inner(x[1, 1]),
    "inner_scalar": lambda T, x: T.inner(x[0], x[1, 1, 1]),
    "cross": lambda T, x: T.cross(x[:, :, :3], x[:, :, 1:], dim=2),
    "cross_method": lambda T, x: x[:, :, 1:].cross(x[:1, :, :3], dim=-1),
    "linalg_cross": lambda T, x: T.linalg.cross(x[:, :, :3], x[:, :, 1:]),
    "linalg_cross_dim": lambda T, x: T.linalg.cross(x[:, :, :3].transpose(1, 2), x[
        :, :, 1:].transpose(1, 2), dim=1),
    "diff": lambda T, x: T.diff(x),
    "diff_n": lambda T, x: x.diff(2, 1),
    "diff_prepend": lambda T, x: T.diff(x, dim=2, prepend=x[:, :, :1], append=x[:, :, 3:]),
    "diff_large_n": lambda T, x: T.diff(x, n=9),
    "diff_zero": lambda T, x: T.diff(x, n=0),
}


@pytest.mark.parametrize("name", COPIES)
def test_copies(name):
    def program(T):
        x = distinct_leaf(T, (2, 3, 4), T.float64)
        out = COPIES[name](T, x)
        return out, out._is_view(), next_functions(out.grad_fn), _grads(T, out, x)

    ok(program)


STACKS = {
    "vstack": lambda T, a, b, s: T.vstack([a, b]),
    "vstack_mixed": lambda T, a, b, s: T.vstack((a[None], b.expand(2, 4))),
    "vstack_scalars": lambda T, a, b, s: T.vstack([s, s]),
    "row_stack": lambda T, a, b, s: T.row_stack([a, b]),
    "hstack": lambda T, a, b, s: T.hstack([a, b]),
    "hstack_2d": lambda T, a, b, s: T.hstack([a[:, None], b[:, None]]),
    "hstack_scalars": lambda T, a, b, s: T.hstack([s, s]),
    "dstack": lambda T, a, b, s: T.dstack([a, b]),
    "dstack_2d": lambda T, a, b, s: T.dstack([a[None], b[None]]),
    "dstack_scalar": lambda T, a, b, s: T.dstack([s, s]),
    "column_stack": lambda T, a, b, s: T.column_stack([a, b]),
    "column_stack_2d": lambda T, a, b, s: T.column_stack([a, T.stack([a, b], 1), s.expand(4)]),
    "atleast_1d": lambda T, a, b, s: T.atleast_1d(s),
    "atleast_1d_several": lambda T, a, b, s: T.atleast_1d(s, a, b),
    "atleast_2d_list": lambda T, a, b, s: T.atleast_2d([s, a]),
    "atleast_3d_tuple_of_one": lambda T, a, b, s: T.atleast_3d((s,)),
    "atleast_2d": lambda T, a, b, s: (T.atleast_2d(s), T.atleast_2d(a)),
    "atleast_3d": lambda T, a, b, s: (T.atleast_3d(s), T.atleast_3d(a),
                                      T.atleast_3d(a[None])),
    "block_diag": lambda T, a, b, s: T.block_diag(a[None], b[:2, None], s),
    "block_diag_one": lambda T, a, b, s: T.block_diag(a),
    "cartesian_prod": lambda T, a, b, s: T.cartesian_prod(a, b[:2]),
    "cartesian_prod_3": lambda T, a, b, s: T.cartesian_prod(a[:2], b[:3], a[1:3]),
    "cartesian_prod_1": lambda T, a, b, s: T.cartesian_prod(a),
    "meshgrid_ij": lambda T, a, b, s: T.meshgrid(a, b[:2], indexing="ij"),
    "meshgrid_xy": lambda T, a, b, s: T.meshgrid([a, b[:2], s], indexing="xy"),
    "meshgrid_one": lambda T, a, b, s: T.meshgrid(a, indexing="xy"),
    "broadcast_tensors": lambda T, a, b, s: T.broadcast_tensors(a[:, None], b, s),
    "broadcast_tensors_same": lambda T, a, b, s: T.broadcast_tensors(a, b),
}


@pytest.mark.parametrize("name", STACKS)
def test_stacks_and_grids(name):
    def program(T):
        a, b = distinct_leaf(T, (4,)), T.tensor([1.5, -2.0, 0.5, 3.0], requires_grad=True)
        s = T.tensor(2.5, requires_grad=True)
        out = STACKS[name](T, a, b, s)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        facts = [(o._is_view(), o is a, o is b, next_functions(o.grad_fn)) for o in outs]
        return out, facts, _grads(T, out, a, b, s)

    ok(program)


def _warns_once(program, monkeypatch):
    """torch gives these warnings once per process (TORCH_WARN_ONCE): jaxgrad's first call
    gives torch's text, later calls nothing, as torch's after its first."""
    ok(program)
    torch_first = captured_warnings(program, torch)  # torch may have warned already
    monkeypatch.setattr(jaxgrad._core.warn_once._state, "given", set())
    first, again = captured_warnings(program, jaxgrad), captured_warnings(program, jaxgrad)
    assert len(first) == 1 and first[0][0] == "UserWarning" and again == []
    assert captured_warnings(program, torch) == again
    return first[0][1], torch_first


def test_meshgrid_warns_without_indexing(monkeypatch):
    message, _ = _warns_once(lambda T: T.meshgrid(T.arange(2), T.arange(3)), monkeypatch)
    assert message == ("jaxgrad.meshgrid: in an upcoming release, it will be required to pass "
                       "the indexing argument.")
    assert captured_warnings(lambda T: T.meshgrid(T.arange(2), indexing="ij"), jaxgrad) == []


def test_cross_warns_without_dim(monkeypatch):
    message, _ = _warns_once(lambda T: T.cross(T.ones(2, 3), T.arange(6.0).reshape(2, 3)),
                             monkeypatch)
    assert message.startswith("Using jaxgrad.cross without specifying the dim arg is deprecated.")
    assert captured_warnings(lambda T: T.cross(T.ones(3), T.ones(3), dim=0), jaxgrad) == []


INDICES = {
    "tril": lambda T: T.tril_indices(3, 4),
    "tril_offset": lambda T: T.tril_indices(4, 3, -1),
    "tril_offset_up": lambda T: T.tril_indices(3, 3, 1, dtype=T.int32),
    "triu": lambda T: T.triu_indices(3, 4),
    "triu_offset": lambda T: T.triu_indices(4, 3, 1),
    "triu_negative": lambda T: T.triu_indices(3, 3, -1),
    "empty": lambda T: T.triu_indices(0, 3),
    "tril_row": lambda T: T.tril_indices(-1, 3),
    "triu_col": lambda T: T.triu_indices(3, -2),
    "float": lambda T: T.tril_indices(3, 3, dtype=T.float32),
}


@pytest.mark.parametrize("name", INDICES)
def test_triangle_indices(name):
    same(INDICES[name])


COPY_ERRORS = {
    "flip_dim": lambda T, x: x.flip(5),
    "flip_repeated": lambda T, x: x.flip((0, 0)),
    "fliplr_1d": lambda T, x: x[0, 0].fliplr(),
    "flipud_0d": lambda T, x: x[0, 0, 0].flipud(),
    "roll_empty_shifts": lambda T, x: x.roll(()),
    "roll_align": lambda T, x: x.roll((1, 2), 0),
    "roll_align_dims": lambda T, x: x.roll((1,), (0, 1)),
    "roll_dim": lambda T, x: x.roll(1, 5),
    "rot90_same": lambda T, x: x.rot90(1, (0, 0)),
    "rot90_one_dim": lambda T, x: x.rot90(1, (0,)),
    "rot90_1d": lambda T, x: x[0, 0].rot90(),
    "rot90_dim": lambda T, x: x.rot90(1, (0, 5)),
    "repeat_short": lambda T, x: x.repeat(2),
    "repeat_none": lambda T, x: x.repeat(),
    "repeat_negative": lambda T, x: x.repeat(1, -1, 1),
    "repeat_interleave_negative": lambda T, x: x.repeat_interleave(-1),
    "repeat_interleave_sizes": lambda T, x: x.repeat_interleave(T.tensor([1, 2]), dim=1),
    "repeat_interleave_negative_counts": lambda T, x: T.repeat_interleave(T.tensor([1, -2])),
    "repeat_interleave_float_counts": lambda T, x: T.repeat_interleave(T.tensor([1.0])),
    "diag_3d": lambda T, x: T.diag(x),
    "diag_embed_dims": lambda T, x: T.diag_embed(x, 0, 1, 1),
    "trace_3d": lambda T, x: T.trace(x),
    "vstack_empty": lambda T, x: T.vstack([]),
    "hstack_empty": lambda T, x: T.hstack([]),
    "dstack_empty": lambda T, x: T.dstack([]),
    "column_stack_empty": lambda T, x: T.column_stack([]),
    "block_diag_3d": lambda T, x: T.block_diag(x[0], x),
    "cartesian_prod_2d": lambda T, x: T.cartesian_prod(x[0, 0], x[0]),
    "meshgrid_dtype": lambda T, x: T.meshgrid(x[0, 0], T.arange(2), indexing="ij"),
    "meshgrid_indexing": lambda T, x: T.meshgrid(x[0, 0], indexing="yx"),
    "tensordot_lengths": lambda T, x: T.tensordot(x, x, ([0, 1], [0])),
    "tensordot_negative": lambda T, x: T.tensordot(x, x, -1),
    "tensordot_sizes": lambda T, x: T.tensordot(x, x, ([0], [1])),
    "tensordot_dtype": lambda T, x: T.tensordot(x, x.double(), 1),
    "inner_sizes": lambda T, x: T.inner(x, x[0, :, :2]),
    "repeat_interleave_2d_counts": lambda T, x: x.repeat_interleave(T.tensor([[1, 2]]), dim=1),
    "repeat_interleave_counts_2d": lambda T, x: T.repeat_interleave(T.tensor([[1, 2]])),
    "repeat_interleave_short_counts": lambda T, x: T.repeat_interleave(T.tensor(
        [1], dtype=T.int16)),
    "cross_sizes": lambda T, x: T.cross(x, x, dim=2),
    "cross_no_3": lambda T, x: T.linalg.cross(x, x),
    "cross_ndim": lambda T, x: T.linalg.cross(x[0, :, :3], x[:, :, :3]),
    "diff_0d": lambda T, x: T.diff(x[0, 0, 0]),
    "diff_negative_n": lambda T, x: T.diff(x, n=-1),
}


@pytest.mark.parametrize("name", COPY_ERRORS)
def test_copy_errors(name):
    raises(lambda T: COPY_ERRORS[name](T, distinct_leaf(T, (2, 3, 4)).detach()))


@FAST
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_shape_ops_on_random_shapes(shape, data):
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    start = data.draw(st.integers(0, shape[dim] - 1))
    length = data.draw(st.integers(0, shape[dim] - start))
    size = data.draw(st.integers(0, shape[dim]))
    step = data.draw(st.integers(1, 3))
    shift = data.draw(st.integers(-5, 5))
    reps = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n + 1))

    def program(T):
        x = distinct_leaf(T, tuple(shape), T.float64)
        outs = [x.narrow(dim, start, length), x.unfold(dim, size, step), x.roll(shift, dim),
                x.flip(dim), x.repeat(*reps), x.movedim(dim, 0), x.repeat_interleave(2, dim),
                x.diff(dim=dim)]
        return outs, _grads(T, outs, x)

    ok(program)


HOOKED = {
    "hook_before": (True, False, False),
    "hook_after": (False, True, False),
    "hooks_both": (True, True, False),
    "retain_before": (False, False, True),
    "retain_and_hooks": (True, True, True),
}


@pytest.mark.parametrize("name", HOOKED)
@pytest.mark.parametrize("op,args", [("unsqueeze_", (0,)), ("t_", ()), ("squeeze_", ())])
def test_inplace_view_ops_keep_the_tensors_hooks(name, op, args):
    """torch keeps a tensor's hook list (and retain_grad) where it was when an in-place view op
    changes its grad_fn: hooks registered before and after see the old shape."""
    before, after, retain = HOOKED[name]

    def program(T):
        leaf = T.arange(6.0, requires_grad=True)
        x = (leaf * 1).view(1, 6)
        seen = []
        if retain:
            x.retain_grad()
        if before:
            x.register_hook(lambda g: seen.append(("before", tuple(g.shape))))
        getattr(x, op)(*args)
        if after:
            x.register_hook(lambda g: seen.append(("after", tuple(g.shape))))
        (x * T.arange(6.0).reshape(x.shape)).sum().backward()
        return leaf.grad, seen, x.grad if retain else None

    ok(program)


OUTS = {
    "vstack": lambda T: T.vstack([T.ones(2), T.arange(2.0)], out=T.zeros(2, 2)),
    "hstack": lambda T: T.hstack([T.ones(3)], out=T.zeros(3)),
    "dstack": lambda T: T.dstack([T.ones(3)], out=T.zeros(1, 3, 1)),
    "column_stack": lambda T: T.column_stack([T.ones(3)], out=T.zeros(3, 1)),
    "cross": lambda T: T.cross(T.ones(3), T.arange(3.0), dim=0, out=T.zeros(3)),
    "linalg_cross": lambda T: T.linalg.cross(T.ones(3), T.arange(3.0), out=T.zeros(3)),
    "diff": lambda T: T.diff(T.arange(3.0), out=T.zeros(2)),
    "inner": lambda T: T.inner(T.ones(3), T.arange(3.0), out=T.zeros(())),
    "diag": lambda T: T.diag(T.arange(3.0), out=T.zeros(3, 3)),
    "kron": lambda T: T.kron(T.ones(3), T.arange(3.0), out=T.zeros(9)),
}


@pytest.mark.parametrize("name", cases(OUTS, xfail={
    "kron": "torch's kron writes out= without bumping its version (jaxgrad's out= bumps it)"}))
def test_out_forms(name):
    def program(T):
        t = OUTS[name](T)
        return t, t._version

    ok(program)


@pytest.mark.parametrize("name", ["swapdims", "swapaxes_", "swapdims_"])
def test_swap_aliases(name):
    def program(T):
        x = T.arange(6.0, requires_grad=True) * 1
        y = x.view(2, 3)
        out = getattr(y, name)(0, 1)
        return out, out is y, x._version, next_functions(out.grad_fn)

    ok(program)


# --- split_with_sizes, unsafe splits, in-place geometry (as_strided_, resize_) ------------------

_SPLITS = {
    "split_with_sizes": lambda T, x: x.split_with_sizes([3, 7]),
    "split_with_sizes_fn": lambda T, x: T.split_with_sizes(x, [2, 8]),
    "unsafe_split": lambda T, x: x.unsafe_split(4),
    "unsafe_split_fn": lambda T, x: T.unsafe_split(x, 3),
    "unsafe_split_with_sizes": lambda T, x: x.unsafe_split_with_sizes([5, 5]),
    "unsafe_split_with_sizes_fn": lambda T, x: T.unsafe_split_with_sizes(x, [1, 9]),
    "unsafe_chunk": lambda T, x: x.unsafe_chunk(3),
}


@pytest.mark.parametrize("case", list(_SPLITS))
def test_split_variants(case):
    """Values, grad_fn names, view-ness and gradients of each piece."""
    def program(T):
        x = T.arange(10.0, dtype=T.float64).requires_grad_()
        pieces = _SPLITS[case](T, x)
        sum(((i + 1) * p).sum() for i, p in enumerate(pieces)).backward()
        return list(pieces), [p._is_view() for p in pieces], x.grad

    ok(program)


def test_unsafe_split_pieces_share_storage_not_versions():
    def program(T):
        x = T.arange(10.0).requires_grad_()
        y = x.clone()
        pieces = y.unsafe_split(5)
        pieces[0].mul_(2)
        refused = attempt(lambda: y.split(5)[0].mul_(2))
        versions = [p._version for p in pieces], y._version
        y.sum().backward()
        return val(y), versions, refused, x.grad, pieces[0]

    ok(program)


@pytest.mark.parametrize("case", [
    lambda T: T.tensor(1.0).split_with_sizes([1]),
    lambda T: T.tensor(1.0).unsafe_split(1),
    lambda T: T.arange(4.0).unsafe_split(-1),
    lambda T: T.arange(4.0).unsafe_split(0),
    lambda T: T.arange(4.0).unsafe_split_with_sizes([1, 2]),
    lambda T: T.arange(4.0).split_with_sizes([1, -1, 4]),
    lambda T: T.arange(4.0).unsafe_chunk(0),
    lambda T: T.zeros(0).unsafe_chunk(2),
    lambda T: T.zeros(0).unsafe_split(0),
])
def test_split_variants_edges(case):
    same(case)


def test_as_strided_inplace():
    def program(T):
        x = T.arange(6.0).requires_grad_()
        y = x.clone()
        out = y.as_strided_((2, 2), (1, 2), 1)
        (y * T.arange(4.0).reshape(2, 2)).sum().backward()
        return out is y, y, y.stride(), y.storage_offset(), x.grad

    ok(program)


def test_resize_():
    def program(T):
        x = T.arange(6.0)
        steps = [(x.resize_(2, 2).tolist(), x._version), (x.resize_(2, 2).tolist(), x._version),
                 (x.resize_(4).tolist(), x._version), (x.resize_(6).tolist(), x._version)]
        z = T.arange(6.0)
        v = z[1:4]
        v.resize_(2)
        v.mul_(10)
        w = z.view(2, 3).t()
        w.resize_(2, 2)
        a = T.zeros(2, 3)
        a.resize_as_(T.ones(3, 2))
        return (steps, v, v._is_view(), v.storage_offset(), z, w, w.stride(), a,
                T.resize_as_(T.ones(2), T.ones(1)))

    ok(program)


@pytest.mark.parametrize("case", [
    lambda T: T.arange(6.0).requires_grad_().resize_(2, 3),
    lambda T: T.arange(6.0).requires_grad_().clone().resize_(3),
    lambda T: T.ones(2).resize_(-2),
    lambda T: T.ones(2).resize_(),
])
def test_resize_errors(case):
    same(case)


def test_resize_bumps_a_saved_tensors_version():
    def program(T):
        g = T.ones(3, requires_grad=True)
        w = T.arange(3.0)
        out = g * w
        w.resize_(3)  # the same shape: no change
        w.resize_(2)
        return w._version, attempt(lambda: out.sum().backward())

    ok(program)
