"""Whole programs in the style real PyTorch users write, run on torch and on jaxgrad.

Each program is written once against a library module ``T`` (``torch`` or ``jaxgrad``), as a
user's script would be with its imports changed, and returns what the script would print or
keep: losses, parameters, gradients, flags. Weights come from a fixed numpy generator so both
libraries start from the same numbers; everything else is left to the library.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from differential import ok, same


def _init(T, module, seed=0):
    """Fill every parameter of ``module`` from a numpy generator (same numbers on both)."""
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for _, p in sorted(module.named_parameters()):
            p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)) * 0.3, dtype=p.dtype))
    return module


def _data(T, *shape, seed=1, dtype=None):
    return T.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype or T.float32)


def test_tutorial_training_loop():
    """The beginner tutorial's loop: Sequential model, CrossEntropyLoss, SGD with momentum,
    ``zero_grad``/``backward``/``step``, ``eval`` and ``no_grad`` for the test pass."""

    def program(T):
        nn = T.nn
        model = _init(T, nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(),
                                       nn.Dropout(0.0), nn.Linear(16, 3)))
        x = _data(T, 8, 3, 4)
        y = T.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        loss_fn = nn.CrossEntropyLoss()
        opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        losses = []
        model.train()
        for _ in range(5):
            pred = model(x)
            loss = loss_fn(pred, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        model.eval()
        with T.no_grad():
            pred = model(x)
            correct = (pred.argmax(1) == y).type(T.float).sum().item()
        return losses, correct, [p.detach() for p in model.parameters()], pred

    ok(program, rtol=1e-5)


def test_custom_function_with_double_backward():
    """The extending-autograd docs' pattern: a Function whose backward is itself
    differentiable (it uses only differentiable ops on saved inputs), used for a Hessian-vector
    product and checked by gradcheck/gradgradcheck."""

    def program(T):
        class Cube(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                return grad_output * 3 * x ** 2

        x = _data(T, 4, dtype=T.float64).requires_grad_()
        y = Cube.apply(x).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        v = T.ones_like(x)
        (hv,) = T.autograd.grad(g, x, grad_outputs=v)
        checks = (T.autograd.gradcheck(Cube.apply, (x,)),
                  T.autograd.gradgradcheck(Cube.apply, (x,)))
        return y, g, hv, checks, type(g.grad_fn).__name__

    ok(program)


def test_wgan_gp_gradient_penalty():
    """A WGAN-GP critic step: penalty on the gradient norm at interpolates, taken with
    ``autograd.grad(create_graph=True)`` and backpropagated into the critic."""

    def program(T):
        nn = T.nn
        critic = _init(T, nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)))
        opt = T.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
        real, fake = _data(T, 6, 5, seed=2), _data(T, 6, 5, seed=3)
        alpha = T.tensor(np.random.default_rng(4).random((6, 1)), dtype=T.float32)
        history = []
        for _ in range(3):
            opt.zero_grad()
            interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
            out = critic(interp)
            grads = T.autograd.grad(outputs=out, inputs=interp,
                                    grad_outputs=T.ones_like(out), create_graph=True,
                                    retain_graph=True)[0]
            penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
            loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
            loss.backward()
            opt.step()
            history.append((loss.item(), penalty.item()))
        return history, [p.grad for p in critic.parameters()], interp.grad

    ok(program, rtol=1e-5)


def test_maml_second_order():
    """Second-order MAML: an inner SGD step through ``autograd.grad(create_graph=True)`` and an
    outer loss whose gradient flows through the inner update into the meta-parameters."""

    def program(T):
        w = _data(T, 3, 1, seed=5).requires_grad_()
        b = T.zeros(1, requires_grad=True)
        meta = T.optim.SGD([w, b], lr=0.01)
        xs, ys = _data(T, 4, 3, seed=6), _data(T, 4, 1, seed=7)
        xq, yq = _data(T, 4, 3, seed=8), _data(T, 4, 1, seed=9)
        outer = []
        for _ in range(2):
            inner = ((xs @ w + b - ys) ** 2).mean()
            gw, gb = T.autograd.grad(inner, (w, b), create_graph=True)
            w2, b2 = w - 0.1 * gw, b - 0.1 * gb
            loss = ((xq @ w2 + b2 - yq) ** 2).mean()
            meta.zero_grad()
            loss.backward()
            meta.step()
            outer.append(loss.item())
        return outer, w, b, w.grad, b.grad, type(w2.grad_fn).__name__

    ok(program)


def test_manual_backprop_matches_autograd():
    """makemore's exercise: keep every intermediate's gradient with ``retain_grad`` and compare
    a hand-written backward against it."""

    def program(T):
        rng = np.random.default_rng(10)
        emb = T.tensor(rng.standard_normal((6, 4)), requires_grad=True)
        w1 = T.tensor(rng.standard_normal((4, 5)) * 0.5, requires_grad=True)
        idx = T.tensor([0, 3, 5, 1])
        y = T.tensor([1, 0, 4, 2])
        x = emb[idx]
        h_pre = x @ w1
        h = T.tanh(h_pre)
        logprobs = h.log_softmax(1)
        loss = -logprobs[range(4), y].mean()
        for t in (x, h_pre, h, logprobs):
            t.retain_grad()
        loss.backward()
        dlogprobs = T.zeros_like(logprobs)
        dlogprobs[range(4), y] = -1.0 / 4
        dh = dlogprobs - T.softmax(h, 1) * dlogprobs.sum(1, keepdim=True)
        dh_pre = (1 - h ** 2) * dh
        dw1 = x.T @ dh_pre
        close = [T.allclose(a, b) for a, b in ((dlogprobs, logprobs.grad), (dh, h.grad),
                                               (dh_pre, h_pre.grad), (dw1, w1.grad))]
        return loss, close, emb.grad, x.grad, x.is_leaf

    ok(program)


def test_hooks_for_introspection():
    """Tensor hooks that log and rescale gradients, module forward/backward hooks recording
    shapes, in the order PyTorch calls them."""

    def program(T):
        nn = T.nn
        log = []
        model = _init(T, nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)))
        for name, m in model.named_children():
            m.register_forward_hook(
                lambda mod, inp, out, name=name: log.append(("fwd", name, tuple(out.shape))))
            m.register_full_backward_hook(
                lambda mod, gin, gout, name=name: log.append(
                    ("bwd", name, [None if g is None else tuple(g.shape) for g in gin])))
        x = _data(T, 2, 3, seed=11).requires_grad_()
        h = model[0](x)
        h.register_hook(lambda g: log.append(("h", g.sum().item())) or g * 2)
        out = model[2](model[1](h))
        out.sum().backward()
        return log, x.grad, [p.grad for p in model.parameters()]

    ok(program)


def test_gpt_block_training_step():
    """A nanoGPT-style block: LayerNorm, causal self-attention through
    ``F.scaled_dot_product_attention(is_causal=True)``, a GELU MLP, residuals, weight-tied
    embeddings, AdamW with decayed and non-decayed groups, gradient clipping."""

    def program(T):
        nn, F = T.nn, T.nn.functional

        class Block(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.heads = heads
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.attn = nn.Linear(d, 3 * d)
                self.proj = nn.Linear(d, d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

            def forward(self, x):
                B, L, C = x.size()
                q, k, v = self.attn(self.ln1(x)).split(C, dim=2)
                q, k, v = (t.view(B, L, self.heads, C // self.heads).transpose(1, 2)
                           for t in (q, k, v))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + self.proj(y.transpose(1, 2).contiguous().view(B, L, C))
                return x + self.mlp(self.ln2(x))

        class GPT(nn.Module):
            def __init__(self, vocab=11, d=8, heads=2, block=6):
                super().__init__()
                self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block, d)
                self.block, self.ln_f = Block(d, heads), nn.LayerNorm(d)
                self.lm_head = nn.Linear(d, vocab, bias=False)
                self.wte.weight = self.lm_head.weight

            def forward(self, idx, targets):
                pos = T.arange(0, idx.size(1), dtype=T.long)
                x = self.block(self.wte(idx) + self.wpe(pos))
                logits = self.lm_head(self.ln_f(x))
                return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)

        model = _init(T, GPT())
        params = {n: p for n, p in model.named_parameters() if p.requires_grad}
        groups = [{"params": [p for p in params.values() if p.dim() >= 2], "weight_decay": 0.1},
                  {"params": [p for p in params.values() if p.dim() < 2], "weight_decay": 0.0}]
        opt = T.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.95))
        idx = T.tensor(np.random.default_rng(12).integers(0, 11, (2, 6)))
        targets = T.tensor(np.random.default_rng(13).integers(0, 11, (2, 6)))
        losses, norms = [], []
        for _ in range(3):
            loss = model(idx, targets)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norms.append(T.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            opt.step()
            losses.append(loss.item())
        return losses, norms, sorted(params), [p.detach() for p in model.parameters()]

    ok(program, rtol=1e-4)  # float32 attention + AdamW: a few ulps grow over three steps


def test_checkpoint_resume_matches_uninterrupted_training():
    """Train, ``save`` model and optimizer state dicts, ``load`` them into fresh objects and
    continue: the result equals training without the interruption (on both libraries)."""

    def program(T):
        nn = T.nn

        def fresh():
            model = _init(T, nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.BatchNorm1d(4),
                                           nn.Linear(4, 1)))
            return model, T.optim.Adam(model.parameters(), lr=0.01)

        x, y = _data(T, 8, 3, seed=14), _data(T, 8, 1, seed=15)

        def train(model, opt, steps):
            for _ in range(steps):
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()

        model, opt = fresh()
        train(model, opt, 4)
        straight = [t.detach().clone() for t in model.state_dict().values()]

        model, opt = fresh()
        train(model, opt, 2)
        buffer = io.BytesIO()
        T.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": 2}, buffer)
        buffer.seek(0)
        checkpoint = T.load(buffer)
        model, opt = fresh()
        model.load_state_dict(checkpoint["model"])
        opt.load_state_dict(checkpoint["opt"])
        train(model, opt, 2)
        resumed = list(model.state_dict().values())
        return checkpoint["step"], [T.equal(a, b) for a, b in zip(straight, resumed)], resumed

    ok(program)


@pytest.mark.parametrize("writer", ["torch", "jaxgrad"])
def test_checkpoint_crosses_libraries(writer):
    """A state dict written by one library loads in the other and gives the same outputs."""
    import jaxgrad
    from differential import torch

    libs = {"torch": torch, "jaxgrad": jaxgrad}
    W, R = libs[writer], libs["jaxgrad" if writer == "torch" else "torch"]

    def build(T):
        return _init(T, T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4),
                                        T.nn.Linear(4, 2)), seed=16)

    source = build(W)
    source(_data(W, 5, 3, seed=17))  # moves the BatchNorm running stats
    buffer = io.BytesIO()
    W.save(source.state_dict(), buffer)
    buffer.seek(0)
    target = R.nn.Sequential(R.nn.Linear(3, 4), R.nn.BatchNorm1d(4), R.nn.Linear(4, 2))
    target.load_state_dict(R.load(buffer))
    source.eval(), target.eval()
    x = np.random.default_rng(18).standard_normal((4, 3))
    want = source(W.tensor(x, dtype=W.float32)).detach().numpy()
    got = target(R.tensor(x, dtype=R.float32)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_gpt_style_sampling_step():
    """nanoGPT's ``generate`` step: the last position's logits over a temperature, top-k masking
    with ``v[:, [-1]]`` and boolean-mask assignment of ``-inf``, softmax, ``multinomial``, then
    ``cat`` onto the context. The draw itself comes from each library's own generator, so what is
    compared is everything up to it and the shapes, dtypes and range of what it returns."""

    def program(T):
        F = T.nn.functional
        logits = _data(T, 2, 5, 11, seed=19)
        idx = T.tensor(np.random.default_rng(20).integers(0, 11, (2, 5)))
        with T.no_grad():
            step = logits[:, -1, :] / 0.8
            v, _ = T.topk(step, min(3, step.size(-1)))
            step[step < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(step, dim=-1)
            idx_next = T.multinomial(probs, num_samples=1)
            chosen = probs.gather(1, idx_next)
            idx = T.cat((idx, idx_next), dim=1)
        return (probs, (probs > 0).sum(1), idx_next.shape, idx_next.dtype, bool((chosen > 0).all()),
                idx.shape, idx.dtype)

    ok(program)


def gpt(T, vocab=11, block=6, embd=8, heads=2, layers=2, dropout=0.0):
    """nanoGPT's model.py, condensed: the same modules, calls and weight tying."""
    nn, F = T.nn, T.nn.functional

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(T.ones(ndim))
            self.bias = nn.Parameter(T.zeros(ndim)) if bias else None

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(embd, 3 * embd)
            self.c_proj = nn.Linear(embd, embd)
            self.attn_dropout = nn.Dropout(dropout)
            self.resid_dropout = nn.Dropout(dropout)

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(x).split(embd, dim=2)
            k = k.view(b, t, heads, c // heads).transpose(1, 2)
            q = q.view(b, t, heads, c // heads).transpose(1, 2)
            v = v.view(b, t, heads, c // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=dropout if self.training else 0,
                                               is_causal=True)
            y = y.transpose(1, 2).contiguous().view(b, t, c)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(embd, 4 * embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * embd, embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = LayerNorm(embd, True)
            self.attn = CausalSelfAttention()
            self.ln_2 = LayerNorm(embd, True)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.block_size = block
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, embd), wpe=nn.Embedding(block, embd),
                drop=nn.Dropout(dropout), h=nn.ModuleList([Block() for _ in range(layers)]),
                ln_f=LayerNorm(embd, True)))
            self.lm_head = nn.Linear(embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None):
            _, t = idx.size()
            pos = T.arange(0, t, dtype=T.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for blk in self.transformer.h:
                x = blk(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
            return logits, loss

        def crop_block_size(self, block_size):
            self.block_size = block_size
            self.transformer.wpe.weight = nn.Parameter(
                self.transformer.wpe.weight[:block_size])

        def configure_optimizers(self, weight_decay, learning_rate, betas):
            param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
            decay = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
            groups = [{"params": decay, "weight_decay": weight_decay},
                      {"params": nodecay, "weight_decay": 0.0}]
            return T.optim.AdamW(groups, lr=learning_rate, betas=betas)

    return GPT()


def test_nanogpt_style_training():
    rs = np.random.RandomState(7)
    idx = rs.randint(0, 11, (2, 6))
    targets = rs.randint(0, 11, (2, 6))
    targets[0, 0] = -1

    def program(T):
        T.manual_seed(0)
        model = gpt(T)
        rs_w = np.random.RandomState(8)
        with T.no_grad():
            for _, p in model.named_parameters():
                p.copy_(T.tensor(rs_w.randn(*p.shape) * 0.2, dtype=T.float32))
        optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95))
        losses = []
        for _ in range(3):
            _, loss = model(T.tensor(idx), T.tensor(targets))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            norm = T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append((loss.detach(), norm))
        model.crop_block_size(4)
        logits, loss = model(T.tensor(idx[:, :4]), T.tensor(targets[:, :4]))
        probs = F_softmax(T, logits[:, -1, :])
        return (losses, probs, loss, [n for n, _ in model.named_parameters()],
                model.transformer.wte.weight is model.lm_head.weight,
                tuple(model.transformer.wpe.weight.shape))

    same(program, rtol=2e-5)


def F_softmax(T, logits):
    return T.nn.functional.softmax(logits / 0.8, dim=-1)
