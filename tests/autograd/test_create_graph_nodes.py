"""The grad_fn of a gradient made with ``create_graph``: torch builds its formulas from ops, so
each gradient's node is the last op of its input's formula (``MulBackward0`` for ``grad *
other``, ``ThresholdBackwardBackward0`` for relu's), after the engine's ``sum_to`` of a
broadcast gradient (``SumBackward1``, ``ViewBackward0``); differential against torch."""

from __future__ import annotations

import math

import pytest

from differential import bug, same

torch = pytest.importorskip("torch")


def _inputs(T, shapes):
    return [(T.arange(1, 1 + math.prod(s), dtype=T.float64).reshape(s) / 7 + 0.3)
            .requires_grad_() for s in shapes]


def _cases(T):
    F = T.nn.functional
    return {
        "mul": (lambda a, b: a * b, [(2, 3), (2, 3)]),
        "div": (lambda a, b: a / b, [(2, 3), (2, 3)]),
        "neg": (lambda a: -a, [(3,)]),
        "pow_scalar": (lambda a: a ** 3, [(3,)]),
        "pow_tensor": (lambda a, b: a ** b, [(3,), (3,)]),
        "pow_base": (lambda b: 2.0 ** b, [(3,)]),
        "abs": (lambda a: a.abs(), [(3,)]),
        "exp": (lambda a: a.exp(), [(3,)]),
        "log": (lambda a: a.log(), [(3,)]),
        "sqrt": (lambda a: a.sqrt(), [(3,)]),
        "sin": (lambda a: a.sin(), [(3,)]),
        "cos": (lambda a: a.cos(), [(3,)]),
        "tanh": (lambda a: a.tanh(), [(3,)]),
        "sigmoid": (lambda a: a.sigmoid(), [(3,)]),
        "relu": (lambda a: a.relu(), [(3,)]),
        "reciprocal": (lambda a: a.reciprocal(), [(3,)]),
        "mm": (lambda a, b: a.mm(b), [(2, 3), (3, 4)]),
        "mv": (lambda a, b: a.mv(b), [(2, 3), (3,)]),
        "dot": (lambda a, b: a.dot(b), [(3,), (3,)]),
        "view": (lambda a: a.view(6), [(2, 3)]),
        "unsqueeze": (lambda a: a.unsqueeze(0), [(2, 3)]),
        "transpose": (lambda a: a.transpose(0, 1), [(2, 3)]),
        "t": (lambda a: a.t(), [(2, 3)]),
        "expand": (lambda a: a.expand(4, 2, 3), [(2, 3)]),
        "expand1": (lambda a: a.expand(2, 3), [(2, 1)]),
        "sum": (lambda a: a.sum(), [(2, 3)]),
        "sum_dim": (lambda a: a.sum(1), [(2, 3)]),
        "mean": (lambda a: a.mean(), [(2, 3)]),
        "mean_dim": (lambda a: a.mean(1), [(2, 3)]),
        "softmax": (lambda a: F.softmax(a, 1), [(2, 3)]),
        "log_softmax": (lambda a: F.log_softmax(a, 1), [(2, 3)]),
        "mse": (lambda a, b: F.mse_loss(a, b), [(2, 3), (2, 3)]),
        "addmm": (lambda c, a, b: T.addmm(c, a, b), [(2, 4), (2, 3), (3, 4)]),
        "addmm_beta": (lambda c, a, b: T.addmm(c, a, b, beta=2.0, alpha=3.0),
                       [(2, 4), (2, 3), (3, 4)]),
        "sub": (lambda a, b: a - b, [(2, 3), (2, 3)]),
        "add": (lambda a, b: a + b, [(2, 3), (2, 3)]),
        "sub_bcast": (lambda a, b: a - b, [(2, 3), (3,)]),
        "mul_bcast": (lambda a, b: a * b, [(2, 3), ()]),
        "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
        "linear": (lambda x, w, b: F.linear(x, w, b), [(2, 3), (4, 3), (4,)]),
        "square": (lambda a: a.square(), [(3,)]),
        "log1p": (lambda a: a.log1p(), [(3,)]),
        "clone": (lambda a: a.clone(), [(3,)]),
        "max_dim": (lambda a: a.max(1)[0], [(2, 3)]),
        "permute": (lambda a: a.permute(1, 0), [(2, 3)]),
        "reshape": (lambda a: a.reshape(3, 2), [(2, 3)]),
        "squeeze": (lambda a: a.squeeze(0), [(1, 3)]),
        "select": (lambda a: a[1], [(2, 3)]),
        "slice": (lambda a: a[:, 1:], [(2, 3)]),
        "cat": (lambda a, b: T.cat([a, b]), [(2, 3), (1, 3)]),
        "stack": (lambda a, b: T.stack([a, b]), [(2, 3), (2, 3)]),
        "gelu": (lambda a: F.gelu(a), [(3,)]),
        "silu": (lambda a: F.silu(a), [(3,)]),
        "leaky_relu": (lambda a: F.leaky_relu(a, 0.1), [(3,)]),
        "elu": (lambda a: F.elu(a), [(3,)]),
        "softplus": (lambda a: F.softplus(a), [(3,)]),
        "rsqrt": (lambda a: a.rsqrt(), [(3,)]),
        "atan": (lambda a: a.atan(), [(3,)]),
        "clamp": (lambda a: a.clamp(0.5, 1.0), [(3,)]),
        "where": (lambda a, b: T.where(a > 0.6, a, b), [(3,), (3,)]),
        "bmm": (lambda a, b: a.bmm(b), [(2, 2, 3), (2, 3, 4)]),
        "cross_entropy": (lambda a: F.cross_entropy(a, T.tensor([1, 2])), [(2, 3)]),
        "nll": (lambda a: F.nll_loss(a, T.tensor([1, 2])), [(2, 3)]),
        "layer_norm": (lambda a, w, b: F.layer_norm(a, (3,), w, b), [(2, 3), (3,), (3,)]),
        "norm": (lambda a: a.norm(), [(2, 3)]),
        "var": (lambda a: a.var(), [(2, 3)]),
        "prod": (lambda a: a.prod(), [(2, 3)]),
        "cumsum": (lambda a: a.cumsum(1), [(2, 3)]),
        "index_select": (lambda a: a.index_select(1, T.tensor([0, 2])), [(2, 3)]),
        "gather": (lambda a: a.gather(1, T.tensor([[0], [2]])), [(2, 3)]),
        "masked_fill": (lambda a: a.masked_fill(T.tensor([True, False, True]), 0.0), [(3,)]),
        "bce_logits": (lambda a, t: F.binary_cross_entropy_with_logits(a, t.detach()),
                       [(3,), (3,)]),
        "embedding": (lambda w: F.embedding(T.tensor([0, 2]), w), [(3, 2)]),
        "conv1d": (lambda x, w: F.conv1d(x, w), [(1, 2, 5), (3, 2, 2)]),
        "max_pool": (lambda x: F.max_pool1d(x, 2), [(1, 2, 4)]),
        "dropout_eval": (lambda x: F.dropout(x, 0.5, training=False), [(3,)]),
        "erf": (lambda a: a.erf(), [(3,)]),
        "sinh": (lambda a: a.sinh(), [(3,)]),
        "atan2": (lambda a, b: T.atan2(a, b), [(3,), (3,)]),
        "minimum": (lambda a, b: T.minimum(a, b + 0.01), [(3,), (3,)]),
        "amax": (lambda a: a.amax(1), [(2, 3)]),
        "logsumexp": (lambda a: a.logsumexp(1), [(2, 3)]),
        "std": (lambda a: a.std(1), [(2, 3)]),
        "lerp": (lambda a, b: T.lerp(a, b, 0.3), [(3,), (3,)]),
        "addcmul": (lambda a, b, c: T.addcmul(a, b, c, value=0.5), [(3,), (3,), (3,)]),
        "hardtanh": (lambda a: F.hardtanh(a, 0.5, 1.0), [(3,)]),
        "sign_mul": (lambda a: a * a.sign(), [(3,)]),
    }


IDENTITY_IN_FORMULA = ("torch's formula hands the gradient itself on for addmm's self (beta=1); "
                       "jaxgrad's rows hand grad on per row, not per input and Scalar")
XFAIL = {"addmm": IDENTITY_IN_FORMULA}
NAMES = list(_cases(torch))


@pytest.mark.parametrize("case", [pytest.param(n, marks=[bug(XFAIL[n])] if n in XFAIL else [])
                                  for n in NAMES])
def test_create_graph_gradient_nodes_like_torch(case):
    def program(T):
        fn, shapes = _cases(T)[case]
        xs = _inputs(T, shapes)
        out = fn(*xs)
        upstream = (T.ones_like(out) * 1.5).requires_grad_()
        grads = T.autograd.grad(out, xs, upstream, create_graph=True, allow_unused=True)
        return [None if g is None else (type(g.grad_fn).__name__ if g.grad_fn else None,
                                        g.requires_grad) for g in grads]

    same(program)


def _well_conditioned(T, shapes):
    """Inputs with distinct values; square ones made diagonally dominant (invertible)."""
    out = []
    for s in shapes:
        a = T.arange(1, 1 + math.prod(s), dtype=T.float64).reshape(s).sin() * 1.3
        if len(s) == 2 and s[0] == s[1]:
            a = a + 3 * T.eye(s[0], dtype=T.float64)
        out.append(a.requires_grad_())
    return out


def _linalg_cases(T):
    L = T.linalg

    def spd(a):
        return a @ a.mT + T.eye(a.shape[-1], dtype=a.dtype)

    return {
        "det": (lambda a: L.det(a), [(3, 3)]),
        "inv": (lambda a: L.inv(a), [(3, 3)]),
        "slogdet": (lambda a: L.slogdet(a)[1], [(3, 3)]),
        "solve": (lambda a, b: L.solve(a, b), [(3, 3), (3, 2)]),
        "qr_square": (lambda a: L.qr(a).R, [(3, 3)]),
        # (of a wide A, torch's name also depends on which of Q and R have gradients: both here)
        "qr_wide": (lambda a: (lambda q, r: q * 2 + r[:, :2])(*L.qr(a)), [(2, 3)]),
        "svdvals": (lambda a: L.svdvals(a), [(3, 3)]),
        "svd_u": (lambda a: L.svd(a, full_matrices=False).U, [(2, 3)]),
        "pinv": (lambda a: L.pinv(a), [(2, 3)]),
        "eigh": (lambda a: L.eigh(spd(a)).eigenvalues, [(3, 3)]),
        "cholesky": (lambda a: L.cholesky(spd(a)), [(3, 3)]),
        "lu_factor": (lambda a: L.lu_factor(a).LU, [(3, 3)]),
        "lu_solve": (lambda a, b: L.lu_solve(*L.lu_factor(a.detach()), b), [(3, 3), (3, 2)]),
        "solve_triangular": (lambda a, b: L.solve_triangular(a, b, upper=False),
                             [(3, 3), (3, 2)]),
        "cholesky_solve": (lambda a, b: T.cholesky_solve(b, a.tril()), [(3, 3), (3, 2)]),
        "triu": (lambda a: a.triu(), [(3, 3)]),
        "addmv": (lambda a, m, v: T.addmv(a, m, v, alpha=2.0), [(2,), (2, 3), (3,)]),
        "addr": (lambda a, u, v: T.addr(a, u, v), [(2, 3), (2,), (3,)]),
        "renorm": (lambda a: T.renorm(a, 2, 0, 1.0), [(2, 3)]),
        "fmax": (lambda a, b: T.fmax(a, b), [(3,), (3,)]),
        "vdot": (lambda a, b: T.vdot(a, b), [(3,), (3,)]),
        "lstsq": (lambda a, b: L.lstsq(a, b).solution, [(3, 3), (3, 2)]),
        "lstsq_tall": (lambda a, b: L.lstsq(a, b).solution, [(4, 3), (4, 2)]),
        "lstsq_batched": (lambda a, b: L.lstsq(a, b).solution, [(2, 3, 3), (2, 3, 2)]),
        "lstsq_vector": (lambda a, b: L.lstsq(a, b).solution, [(3, 3), (3,)]),
        "householder_product": (lambda a, t: L.householder_product(a, t), [(3, 2), (2,)]),
        "matrix_exp": (lambda a: L.matrix_exp(a), [(2, 3, 3)]),
        "lu": (lambda a: L.lu(a).U, [(2, 3)]),
        "lu_batched": (lambda a: (lambda r: r.L + r.U)(L.lu(a)), [(2, 3, 3)]),
        "solve_vector": (lambda a, b: L.solve(a, b), [(3, 3), (3,)]),
        "tensorsolve": (lambda a, b: L.tensorsolve(a, b), [(3, 3), (3,)]),
        "cdist": (lambda a, b: T.cdist(a, b), [(2, 3), (4, 3)]),
        "cdist_p0": (lambda a, b: T.cdist(a, b, p=0), [(2, 3), (4, 3)]),
    }


@pytest.mark.parametrize("case", list(_linalg_cases(torch)))
def test_create_graph_linalg_gradient_nodes_like_torch(case):
    def program(T):
        fn, shapes = _linalg_cases(T)[case]
        xs = _well_conditioned(T, shapes)
        grads = T.autograd.grad(fn(*xs).sum(), xs, create_graph=True, allow_unused=True)
        return [None if g is None else (type(g.grad_fn).__name__ if g.grad_fn else None,
                                        g.requires_grad) for g in grads]

    same(program)


# second and third derivatives: a gradient of a create_graph gradient is made by torch's formula
# of the op of the first formula that reads the input (Note [Naming gradients of formulas])
_SECOND = {
    "pow_scalar": lambda a: a**3,
    "sin": lambda a: a.sin(),
    "cos": lambda a: a.cos(),
    "exp": lambda a: a.exp(),
    "square": lambda a: a.square(),
    "sqrt": lambda a: (a + 3).sqrt(),
    "reciprocal": lambda a: 1 / (a + 3),
    "neg_square": lambda a: -(a**2),
    "product_of_two": lambda a: a.sin() * a,
    "logsumexp": lambda a: a.logsumexp(0),
    "tanh": lambda a: a.tanh(),
}


@pytest.mark.parametrize("case", list(_SECOND))
def test_create_graph_second_and_third_gradient_nodes_like_torch(case):
    def program(T):
        (x,) = _inputs(T, [(3,)])
        grads = [_SECOND[case](x).sum()]
        # (a constant second derivative's gradient has no history in torch; here it has one)
        for _ in range(2 if "square" in case else 3):
            grads += T.autograd.grad(grads[-1].sum(), x, create_graph=True)
        return [(type(g.grad_fn).__name__ if g.grad_fn else None, g.requires_grad)
                for g in grads[1:]]

    same(program)


EDGE_ORDER = ["mul", "exp", "tanh", "sigmoid", "relu"]


@pytest.mark.parametrize("case", EDGE_ORDER)
def test_create_graph_gradient_edges_in_torch_order(case):
    """A formula node takes the incoming gradient first, as torch's backward ops do
    (``threshold_backward(grad, self, 0)``, ``grad * other``)."""
    def program(T):
        fn, shapes = _cases(T)[case]
        xs = _inputs(T, shapes)
        out = fn(*xs)
        upstream = (out * 1.5).sum()
        grads = T.autograd.grad(upstream * upstream, xs, create_graph=True)
        return [[None if n is None else type(n).__name__ for n, _ in g.grad_fn.next_functions]
                for g in grads]

    same(program)
