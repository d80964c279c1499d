"""Distributions through jaxgrad's autograd machinery: hooks, the recorded graph, higher-order
gradients (against torch), and a ``jaxgrad.compile``d step equal to the eager one."""

from __future__ import annotations

import warnings

import jaxgrad
from differential import next_functions, ok


def test_hooks_graph_and_double_backward():
    def program(T):
        D = T.distributions
        loc = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
        scale = T.tensor([1.5, 0.7], dtype=T.float64, requires_grad=True)
        seen = []
        loc.register_hook(lambda g: seen.append(g.clone()))
        lp = D.Normal(loc, scale).log_prob(T.tensor([0.0, 1.0], dtype=T.float64))
        kl = D.kl_divergence(D.Normal(loc, scale), D.Normal(0.0, 1.0))
        graph = next_functions((lp.sum() + kl.sum()).grad_fn)
        (g_loc, g_scale) = T.autograd.grad((lp + kl).sum(), (loc, scale), create_graph=True)
        (h,) = T.autograd.grad(g_scale.sum(), scale, retain_graph=True)
        (lp.sum() * 2).backward()
        return graph, g_loc, g_scale, h, seen, loc.grad
    ok(program)


def test_compiled_step_equals_eager():
    """A step with rsample, log_prob and kl_divergence under jaxgrad.compile: the same loss,
    draws and gradients as the eager step from the same seed, with no eager fallback."""
    D = jaxgrad.distributions
    loc = jaxgrad.tensor([0.5, -1.0], requires_grad=True)
    logit = jaxgrad.tensor([0.3, 2.0], requires_grad=True)
    x = jaxgrad.tensor([1.0, 0.0])

    def step():
        loc.grad = None
        logit.grad = None
        q = D.Normal(loc, 1.0, validate_args=False)
        z = q.rsample()
        lp = D.Bernoulli(logits=logit * z, validate_args=False).log_prob(x).sum()
        kl = D.kl_divergence(q, D.Normal(0.0, 1.0, validate_args=False)).sum()
        (kl - lp).backward()
        return (kl - lp).detach(), z.detach()

    jaxgrad.manual_seed(0)
    eager = (*step(), loc.grad.clone(), logit.grad.clone())
    compiled = jaxgrad.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (an eager fallback warns)
        jaxgrad.manual_seed(0)
        got = (*compiled(), loc.grad.clone(), logit.grad.clone())
    for a, b in zip(eager, got):
        assert jaxgrad.allclose(a, b, rtol=1e-6), (a, b)
