"""Writes into a tensor with internal overlap: torch 2.13's ``has_internal_overlap`` (a dim of
size > 1 with stride 0, an ``expand``).

torch refuses most in-place ops and ``out=`` writes into such a tensor ("unsupported operation:
more than one element of the written-to tensor refers to a single memory location"), after
autograd's in-place checks and before most of the kernel's own argument checks; ``fill_`` with
a number, ``zero_``, ``set_`` (and a few kernels without the check: ``baddbmm_``, ``bmm`` and
``mv`` with ``out=``) allow it; ``masked_fill_``, ``index_fill_`` and ``index_put_`` (so
advanced-index assignment) warn that it is deprecated. A refused write changes nothing: not
the values, not the version, not the random generator.

``sum``'s gradient is such a tensor too (``SumBackward0`` returns ``grad.expand(sizes)``): a
tensor hook sees stride 0, and an in-place op on it raises."""

from __future__ import annotations

import warnings

import pytest

from differential import Raised, attempt, bug, captured_warnings, ok, same

OVERLAP = "more than one element of the written-to tensor refers to a single memory location"


def expanded(T, dtype=None):
    return T.ones((), dtype=dtype or T.float32).expand(3)


def written(f, make=expanded, values=True):
    """A program writing into a fresh expanded tensor with ``f``: what it raised (or None), the
    tensor's version and (``values``) the tensor afterwards."""
    def program(T):
        t = make(T)
        result = attempt(lambda: f(T, t))
        return ((result if isinstance(result, Raised) else None), t._version) + (
            (t,) if values else ())
    return program


def refused(f, make=expanded):
    ta, _ = ok(written(f, make))
    assert isinstance(ta[0], Raised) and OVERLAP in ta[0].message, ta[0]


# --- refused: in-place ops, out=, basic-index assignment ----------------------------------------

REFUSED = {
    "mul_": lambda T, t: t.mul_(2),
    "add_": lambda T, t: t.add_(1),
    "add_ tensor alpha": lambda T, t: t.add_(T.ones(3), alpha=2),
    "add_ itself": lambda T, t: t.add_(t),
    "sub_": lambda T, t: t.sub_(T.ones(3)),
    "div_": lambda T, t: t.div_(2),
    "pow_": lambda T, t: t.pow_(2),
    "pow_ tensor": lambda T, t: t.pow_(T.ones(3)),
    "exp_": lambda T, t: t.exp_(),
    "sqrt_": lambda T, t: t.sqrt_(),
    "neg_": lambda T, t: t.neg_(),
    "abs_": lambda T, t: t.abs_(),
    "relu_": lambda T, t: t.relu_(),
    "sigmoid_": lambda T, t: t.sigmoid_(),
    "clamp_": lambda T, t: t.clamp_(0, 1),
    "clamp_ tensors": lambda T, t: t.clamp_(T.zeros(3), T.ones(3)),
    "clamp_min_": lambda T, t: t.clamp_min_(0),
    "lerp_": lambda T, t: t.lerp_(T.ones(3), 0.5),
    "lerp_ tensor weight": lambda T, t: t.lerp_(T.ones(3), T.ones(3)),
    "addcmul_": lambda T, t: t.addcmul_(T.ones(3), T.ones(3)),
    "addcdiv_": lambda T, t: t.addcdiv_(T.ones(3), T.ones(3)),
    "nan_to_num_": lambda T, t: t.nan_to_num_(),
    "eq_": lambda T, t: t.eq_(1),
    "fill_ 0-d tensor": lambda T, t: t.fill_(T.tensor(2.0)),
    "copy_": lambda T, t: t.copy_(T.ones(3)),
    "copy_ broadcast": lambda T, t: t.copy_(T.ones(())),
    "index_add_": lambda T, t: t.index_add_(0, T.tensor([0]), T.ones(1)),
    "index_copy_": lambda T, t: t.index_copy_(0, T.tensor([0]), T.ones(1)),
    "scatter_": lambda T, t: t.scatter_(0, T.tensor([0]), T.ones(1)),
    "scatter_ value": lambda T, t: t.scatter_(0, T.tensor([0]), 2.0),
    "scatter_add_": lambda T, t: t.scatter_add_(0, T.tensor([0]), T.ones(1)),
    "scatter_reduce_": lambda T, t: t.scatter_reduce_(0, T.tensor([0]), T.ones(1), "sum"),
    "index_reduce_": lambda T, t: t.index_reduce_(0, T.tensor([0]), T.ones(1), "prod"),
    "masked_scatter_": lambda T, t: t.masked_scatter_(T.tensor([True, False, False]), T.ones(3)),
    "uniform_": lambda T, t: t.uniform_(),
    "normal_": lambda T, t: t.normal_(),
    "bernoulli_": lambda T, t: t.bernoulli_(0.5),
    "bernoulli_ tensor p": lambda T, t: t.bernoulli_(T.tensor([0.2, 0.0, 0.0])),
    "random_": lambda T, t: t.random_(),
    "random_ to": lambda T, t: t.random_(5),
    "exponential_": lambda T, t: t.exponential_(),
    "geometric_": lambda T, t: t.geometric_(0.5),
    "log_normal_": lambda T, t: t.log_normal_(),
    "cauchy_": lambda T, t: t.cauchy_(),
    "exp out=": lambda T, t: T.exp(T.ones(3), out=t),
    "exp out= itself": lambda T, t: T.exp(t, out=t),
    "add out=": lambda T, t: T.add(T.ones(3), 1, out=t),
    "where out=": lambda T, t: T.where(T.tensor([True, False, True]), T.ones(3), T.zeros(3),
                                       out=t),
    "setitem slice tensor": lambda T, t: t.__setitem__(slice(0, 2), T.ones(2)),
    "setitem slice number": lambda T, t: t.__setitem__(slice(0, 2), 2.0),
    "setitem all": lambda T, t: t.__setitem__(slice(None), T.ones(3)),
    "setitem ellipsis": lambda T, t: t.__setitem__(Ellipsis, 2.0),
    "setitem None": lambda T, t: t.__setitem__(None, 2.0),
    "setitem True": lambda T, t: t.__setitem__(True, 2.0),
    "relu inplace": lambda T, t: T.nn.functional.relu(t, inplace=True),
    "ReLU module": lambda T, t: T.nn.ReLU(inplace=True)(t),
    "leaky_relu_": lambda T, t: T.nn.functional.leaky_relu_(t),
    "hardtanh_": lambda T, t: T.nn.functional.hardtanh_(t),
    "elu_": lambda T, t: T.nn.functional.elu_(t),
    "foreach mul_": lambda T, t: T._foreach_mul_([t], 2.0),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_write_into_an_expanded_tensor_is_refused(name):
    refused(REFUSED[name])


def _expand_2d(T):
    return T.ones(3, 1).expand(3, 4)


REFUSED_2D = {
    "mul_": lambda T, t: t.mul_(2),
    "transposed mul_": lambda T, t: t.t().mul_(2),
    "row of it": lambda T, t: t[0].mul_(2),
    "setitem row": lambda T, t: t.__setitem__(0, 2.0),
    "uniform_": lambda T, t: t.uniform_(),
    "zero_ then add_": lambda T, t: t.zero_().add_(1),
    "addmm_": lambda T, t: T.ones(1, 3).expand(3, 3).addmm_(T.ones(3, 2), T.ones(2, 3)),
    "addbmm_": lambda T, t: T.ones(1, 3).expand(3, 3).addbmm_(T.ones(2, 3, 2), T.ones(2, 2, 3)),
    "mm out=": lambda T, t: T.mm(T.ones(3, 2), T.ones(2, 3), out=T.ones(1, 3).expand(3, 3)),
    "matmul out=": lambda T, t: T.matmul(T.ones(3, 2), T.ones(2, 3),
                                         out=T.ones(1, 3).expand(3, 3)),
    "as_strided stride 0": lambda T, t: T.ones(3).as_strided((3,), (0,)).mul_(2),
}


@pytest.mark.parametrize("name", sorted(REFUSED_2D))
def test_write_into_a_2d_expand_is_refused(name):
    refused(REFUSED_2D[name], _expand_2d)


# --- allowed ------------------------------------------------------------------------------------

ALLOWED = {
    "fill_": lambda T, t: t.fill_(1),
    "zero_": lambda T, t: t.zero_(),
    "set_": lambda T, t: t.set_(T.ones(3)),
    "setitem int": lambda T, t: t.__setitem__(0, 5.0),
    "setitem 0-d tensor index": lambda T, t: t.__setitem__(T.tensor(1), 5.0),
    "copy_ itself": lambda T, t: t.copy_(t),
    "copy_ from it": lambda T, t: T.zeros(3).copy_(t),
    "unsqueeze_": lambda T, t: t.unsqueeze_(0),
    "requires_grad_": lambda T, t: t.requires_grad_(),
    "dropout p=0 inplace": lambda T, t: T.nn.functional.dropout(t, 0.0, inplace=True),
    "size-1 expand": lambda T, t: T.ones(1).expand(1).mul_(2),
    "empty expand": lambda T, t: T.ones(0, 1).expand(0, 4).mul_(2),
    "column of a 2-d expand": lambda T, t: _expand_2d(T)[:, :1].mul_(2),
    "setitem column of a 2-d expand": lambda T, t: _expand_2d(T).__setitem__(
        (slice(None), 0), 2.0),
    "baddbmm_": lambda T, t: T.ones(2, 1, 3).expand(2, 3, 3).baddbmm_(T.ones(2, 3, 2),
                                                                      T.ones(2, 2, 3)),
    "baddbmm_ batch": lambda T, t: T.ones(1, 3, 3).expand(2, 3, 3).baddbmm_(T.ones(2, 3, 2),
                                                                            T.ones(2, 2, 3)),
}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_allowed_writes(name):
    ta, _ = ok(written(ALLOWED[name]))
    assert ta[0] is None, ta[0]


# --- deprecated: a warning, then the write --------------------------------------------------------

WARNED = {
    "masked_fill_": lambda T, t: t.masked_fill_(T.tensor([True, False, False]), 1.0),
    "masked_fill_ tensor value": lambda T, t: t.masked_fill_(T.tensor([True, False, True]),
                                                             T.tensor(2.0)),
    "masked_fill_ mask of another shape": lambda T, t: t.masked_fill_(T.tensor([True, False]),
                                                                      1.0),
    "masked_fill_ long mask": lambda T, t: t.masked_fill_(T.tensor([1, 0, 1]), 1.0),
    "masked_fill_ 1-d value": lambda T, t: t.masked_fill_(T.tensor([True, False, True]),
                                                          T.ones(1)),
    "index_fill_": lambda T, t: t.index_fill_(0, T.tensor([0]), 1.0),
    "index_fill_ tensor value": lambda T, t: t.index_fill_(0, T.tensor([0]), T.tensor(1.0)),
    "index_fill_ index out of range": lambda T, t: t.index_fill_(0, T.tensor([5]), 1.0),
    "index_fill_ float index": lambda T, t: t.index_fill_(0, T.tensor([0.0]), 1.0),
    "index_fill_ 2-d index": lambda T, t: t.index_fill_(0, T.tensor([[0]]), 1.0),
    "index_fill_ bad dim": lambda T, t: t.index_fill_(3, T.tensor([0]), 1.0),
    "index_put_": lambda T, t: t.index_put_((T.tensor([0]),), T.ones(1)),
    "index_put_ accumulate": lambda T, t: t.index_put_((T.tensor([0]),), T.ones(1),
                                                       accumulate=True),
    "index_put_ mask, 0-d value": lambda T, t: t.index_put_((T.tensor([True, False, True]),),
                                                            T.tensor(1.0)),
    "index_put_ mask, 1 element": lambda T, t: t.index_put_((T.tensor([True, False, True]),),
                                                            T.ones(1)),
    "index_put_ mask accumulate": lambda T, t: t.index_put_(
        (T.tensor([True, False, True]),), T.tensor(1.0), accumulate=True),
    "index_put_ other dtype": lambda T, t: t.index_put_((T.tensor([0]),),
                                                        T.ones(1, dtype=T.float64)),
    "index_put_ too many indices": lambda T, t: t.index_put_((T.tensor([0]), T.tensor([0])),
                                                             T.ones(1)),
    "setitem mask": lambda T, t: t.__setitem__(T.tensor([True, False, True]), 2.0),
    "setitem mask, 0-d tensor": lambda T, t: t.__setitem__(T.tensor([True, False, True]),
                                                           T.tensor(2.0)),
    "setitem mask, 2 values": lambda T, t: t.__setitem__(T.tensor([True, False, True]),
                                                         T.tensor([1.0, 2.0])),
    "setitem list of bools": lambda T, t: t.__setitem__([True, False, True], 1.0),
    "setitem index tensor": lambda T, t: t.__setitem__(T.tensor([0, 2]), T.ones(2)),
    "setitem list": lambda T, t: t.__setitem__([0, 1], 2.0),
    "setitem 2-d slice and mask": lambda T, t: _expand_2d(T).__setitem__(
        (slice(None), T.tensor([True, False, True, False])), 1.0),
    "setitem 2-d two indices": lambda T, t: _expand_2d(T).__setitem__(
        (T.tensor([0]), T.tensor([1])), 1.0),
}


@pytest.mark.parametrize("name", sorted(WARNED))
def test_deprecated_writes_warn(name):
    """The warnings, the error and the version (the values: see the known differences)."""
    program = written(WARNED[name], values=False)
    ok(program)
    expected = captured_warnings(program, __import__("torch"))
    assert captured_warnings(program, __import__("jaxgrad")) == expected


# --- order: autograd's checks first, then (mostly) the overlap, then the kernel's ---------------

def _inference(T):
    with T.inference_mode():
        return expanded(T)


def _no_grad_leaf_view(T):
    x = T.ones((), requires_grad=True)
    with T.no_grad():
        return x.expand(3).mul_(2)


def _leaf_view_written_without_grad(T):
    v = T.ones((), requires_grad=True).expand(3)
    with T.no_grad():
        return v.mul_(2)


ORDER = {
    "view of a leaf that requires grad": lambda T, t: T.ones((), requires_grad=True)
    .expand(3).mul_(2),
    "view of a leaf that requires grad, uniform_": lambda T, t: T.ones((), requires_grad=True)
    .expand(3).uniform_(),
    "view of a leaf that requires grad, masked_fill_": lambda T, t: T.ones(
        (), requires_grad=True).expand(3).masked_fill_(T.tensor([True, False, True]), 1.0),
    "view of a non-leaf": lambda T, t: (T.ones((), requires_grad=True) * 1).expand(3).mul_(2),
    "other operand requires grad": lambda T, t: t.mul_(T.ones(3, requires_grad=True)),
    "leaf view made under no_grad": lambda T, t: _no_grad_leaf_view(T),
    "leaf view written under no_grad": lambda T, t: _leaf_view_written_without_grad(T),
    "detached": lambda T, t: t.detach().mul_(2),
    "inference tensor": lambda T, t: _inference(T).mul_(2),
    "inference tensor out=": lambda T, t: T.exp(T.ones(3), out=_inference(T)),
    "int tensor times a float": lambda T, t: expanded(T, T.long).mul_(1.5),
    "exp_ of an int tensor": lambda T, t: expanded(T, T.long).exp_(),
    "sqrt_ of a bool tensor": lambda T, t: expanded(T, T.bool).sqrt_(),
    "out= of another dtype": lambda T, t: T.exp(T.ones(3), out=expanded(T, T.long)),
    "out= of another shape": lambda T, t: T.exp(T.ones(2), out=t),
    "add_ of another shape": lambda T, t: t.add_(T.ones(2)),
    "sub_ of another shape": lambda T, t: t.sub_(T.ones(2)),
    "pow_ of another shape": lambda T, t: t.pow_(T.ones(2)),
    "lerp_ of another shape": lambda T, t: t.lerp_(T.ones(2), 0.5),
    "copy_ of another shape": lambda T, t: t.copy_(T.ones(2)),
    "clamp_ without bounds": lambda T, t: t.clamp_(),
    "clamp_ of an int tensor to a float": lambda T, t: expanded(T, T.long).clamp_(0.5),
    "scatter_ index out of range": lambda T, t: t.scatter_(0, T.tensor([7]), T.ones(1)),
    "scatter_ bad dim": lambda T, t: t.scatter_(3, T.tensor([0]), T.ones(1)),
    "scatter_ float index": lambda T, t: t.scatter_(0, T.tensor([0.0]), T.ones(1)),
    "index_add_ index out of range": lambda T, t: t.index_add_(0, T.tensor([7]), T.ones(1)),
    "index_add_ float index": lambda T, t: t.index_add_(0, T.tensor([0.0]), T.ones(1)),
    "index_add_ source of another size": lambda T, t: t.index_add_(0, T.tensor([0]), T.ones(2)),
    "masked_scatter_ long mask": lambda T, t: t.masked_scatter_(T.tensor([1, 0, 0]), T.ones(3)),
    "uniform_ from > to": lambda T, t: t.uniform_(1, 0),
    "uniform_ of an int tensor": lambda T, t: expanded(T, T.long).uniform_(),
    "normal_ std < 0": lambda T, t: t.normal_(0, -1),
    "normal_ of an int tensor": lambda T, t: expanded(T, T.long).normal_(),
    "bernoulli_ p > 1": lambda T, t: t.bernoulli_(2.0),
    "bernoulli_ tensor p > 1": lambda T, t: t.bernoulli_(T.tensor([2.0, 0.0, 0.0])),
    "bernoulli_ of an int tensor": lambda T, t: expanded(T, T.long).bernoulli_(0.5),
    "random_ from >= to": lambda T, t: t.random_(5, 2),
    "random_ to 0": lambda T, t: t.random_(0),
    "random_ int8 from out of bounds": lambda T, t: expanded(T, T.int8).random_(-1000, 5),
    "exponential_ lambda < 0": lambda T, t: t.exponential_(-1.0),
    "exponential_ of an int tensor": lambda T, t: expanded(T, T.long).exponential_(),
    "exponential_ of an int tensor, lambda < 0": lambda T, t: T.ones(3, dtype=T.long)
    .exponential_(-1.0),
    "geometric_ p > 1": lambda T, t: t.geometric_(2.0),
    "geometric_ of an int tensor": lambda T, t: expanded(T, T.long).geometric_(0.5),
    "log_normal_ std < 0": lambda T, t: t.log_normal_(0, -1),
    "log_normal_ of an int tensor": lambda T, t: expanded(T, T.long).log_normal_(),
    "log_normal_ of an int tensor, std < 0": lambda T, t: T.ones(3, dtype=T.long)
    .log_normal_(0, -1),
    "cauchy_ sigma < 0": lambda T, t: t.cauchy_(0, -1),
    "cauchy_ of an int tensor": lambda T, t: expanded(T, T.long).cauchy_(),
}


@pytest.mark.parametrize("name", sorted(ORDER))
def test_which_error_comes_first(name):
    ta, _ = ok(written(ORDER[name]))
    assert isinstance(ta[0], Raised), ta[0]


@pytest.mark.parametrize("sampler", ["uniform_", "normal_", "bernoulli_", "random_",
                                     "exponential_", "geometric_", "log_normal_", "cauchy_"])
def test_refused_sampler_leaves_the_generator_alone(sampler):
    def program(T):
        g = T.Generator().manual_seed(0)
        args = (0.5,) if sampler in ("bernoulli_", "geometric_") else ()
        raised = attempt(lambda: getattr(expanded(T), sampler)(*args, generator=g))
        fresh = T.Generator().manual_seed(0)
        return raised, bool((T.rand(3, generator=g) == T.rand(3, generator=fresh)).all())
    ta, _ = ok(program)
    assert isinstance(ta[0], Raised) and ta[1] is True


# --- sum's gradient is an expand ---------------------------------------------------------------

def _seen(g):
    return (tuple(g.stride()), g._is_view(), tuple(g._base.shape) if g._is_view() else None,
            g._version, g.requires_grad)


SUM_GRADIENTS = {
    "sum()": lambda T, z: z.sum().backward(),
    "sum() create_graph": lambda T, z: z.sum().backward(create_graph=True),
    "sum() of a gradient that requires grad": lambda T, z: z.sum().backward(
        T.tensor(2.0, requires_grad=True)),
    "sum(1)": lambda T, z: z.sum(1).backward(T.ones(2)),
    "sum(0, keepdim)": lambda T, z: z.sum(0, keepdim=True).backward(T.ones(1, 3)),
    "sum((0, 1))": lambda T, z: z.sum((0, 1)).backward(),
    "sum(dtype=float64)": lambda T, z: z.sum(dtype=T.float64).backward(),
    "sum(0) of a strided gradient": lambda T, z: z.sum(0).backward(
        T.ones(4, 3)[1:, :][:, 0].unsqueeze(1).expand(3, 3)[0]),
    "sum(1) over a dim of size 1": lambda T, z: z[:, :1].sum(1).backward(T.ones(2)),
}


@pytest.mark.parametrize("name", sorted(SUM_GRADIENTS))
def test_sum_gradient_is_an_expand(name):
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        z = x * 2
        seen = []
        z.register_hook(lambda g: seen.append(_seen(g)) or None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_graph's reference-cycle warning
            SUM_GRADIENTS[name](T, z)
        return seen, x.grad, tuple(x.grad.stride()), x.grad._version
    ok(program)


HOOKS = {
    "mul_ in a tensor hook": lambda g: g.mul_(2),
    "add_ in a tensor hook": lambda g: g.add_(1),
    "zero_ in a tensor hook": lambda g: g.zero_(),
    "out of place in a tensor hook": lambda g: g * 2,
    "clone then mul_": lambda g: g.clone().mul_(2),
}


@pytest.mark.parametrize("leaf", [False, True], ids=["non-leaf", "leaf"])
@pytest.mark.parametrize("name", sorted(HOOKS))
def test_in_place_on_the_sum_gradient_in_a_hook(name, leaf):
    def program(T):
        x = T.ones(3, requires_grad=True)
        z = x if leaf else x * 2
        z.register_hook(HOOKS[name])
        raised = attempt(lambda: z.sum().backward())
        return raised, x.grad
    ok(program)


def test_mul_in_a_hook_on_the_sum_gradient_raises_the_overlap_error():
    """The seed posts' example: a tensor hook doubling ``sum``'s gradient in place."""
    def program(T):
        x = T.ones(3, requires_grad=True)
        z = x * 2
        z.register_hook(lambda g: g.mul_(2))
        return attempt(lambda: z.sum().backward()), x.grad
    ta, _ = same(program)
    assert isinstance(ta[0], Raised) and OVERLAP in ta[0].message


# --- known differences -----------------------------------------------------------------------------

def _sgd_step(T):
    p = T.nn.Parameter(expanded(T))
    p.grad = T.ones(3)
    T.optim.SGD([p], lr=0.1).step()
    return p


def _accumulate_into_expanded_grad(T):
    x = T.ones(3, requires_grad=True)
    x.grad = expanded(T)
    x.sum().backward()
    return x.grad


KNOWN = {
    "values after a masked_fill_ into an expand": (
        lambda T: expanded(T).masked_fill_(T.tensor([True, False, False]), 2.0),
        "a write through a stride-0 layout keeps the out-of-place result, where torch's kernel "
        "writes the one shared element (every element reads 2.0)"),
    "values after index_put_ accumulate into an expand": (
        lambda T: expanded(T).index_put_((T.tensor([True, False, True]),), T.tensor(1.0),
                                         accumulate=True),
        "a write through a stride-0 layout keeps the out-of-place result, where torch adds "
        "into the one shared element twice (every element reads 3.0)"),
    "optimizer step on an expanded parameter": (
        _sgd_step, "jaxgrad's optimizers write parameters directly, without the check"),
    "backward accumulating into an expanded .grad": (
        _accumulate_into_expanded_grad,
        "the compiled backward adds into an existing .grad without the check"),
    "bmm out= into an expand": (
        lambda T: T.bmm(T.ones(2, 3, 2), T.ones(2, 2, 3), out=T.ones(1, 3, 3).expand(2, 3, 3)),
        "the out= path refuses every expanded out tensor; torch's bmm and mv kernels do not "
        "check"),
    "mv out= into an expand": (
        lambda T: T.matmul(T.ones(3, 2), T.ones(2), out=T.ones(()).expand(3)),
        "the out= path refuses every expanded out tensor; torch's bmm and mv kernels do not "
        "check"),
    "mul_ of another shape": (
        lambda T: expanded(T).mul_(T.ones(2)),
        "generated in-place forms check the broadcast shape before the overlap"),
    "setitem index out of range": (
        lambda T: expanded(T).__setitem__(T.tensor([5]), 1.0),
        "setitem checks advanced indices before index_put_'s deprecation warning"),
}


@pytest.mark.parametrize("name", [pytest.param(k, marks=bug(v[1])) for k, v in KNOWN.items()])
def test_known_differences(name):
    program = KNOWN[name][0]

    def both(T):
        return attempt(lambda: program(T)), captured_warnings(program, T)
    ok(both)
