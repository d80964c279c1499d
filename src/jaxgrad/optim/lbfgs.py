"""``LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search, as torch's.

The optimizer works on one flat vector made of every parameter (complex parameters as their
real views), keeps its global state under the first parameter's entry in ``state`` (so state
dicts cast it like any parameter's state), and follows torch's algorithm step for step: the
same tensor ops, the same Python scalars and 0-d tensors in the state, the same in-place ops on
the parameters (one ``add_`` per parameter per move, one ``copy_`` per parameter when the line
search restores a trial point), so values, state dicts and ``_version`` counters match torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._core.epoch import changed as structure_changed
from .._core.grad_mode import enable_grad, no_grad
from .._core.memory_format import contiguous_format
from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._functions.joins import cat
from .optimizer import Optimizer, to_scalar

__all__ = ["LBFGS"]

Scalar = Any  # a Python number or a 0-d tensor (torch mixes both in its line search)


def _cubic_interpolate(x1: Scalar, f1: Scalar, g1: Scalar, x2: Scalar, f2: Scalar, g2: Scalar,
                       bounds: tuple[Scalar, Scalar] | None = None) -> Scalar:
    """Minimiser of the cubic through (x1, f1, slope g1) and (x2, f2, slope g2), clamped to
    ``bounds`` (default: the interval between x1 and x2); the midpoint when the cubic has no
    real stationary point (minFunc's polyinterp for two points)."""
    if bounds is None:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    else:
        lo, hi = bounds
    # d1 = g1 + g2 - 3 (f1 - f2) / (x1 - x2); d2 = sqrt(d1^2 - g1 g2); the minimiser measured
    # from the point farther along
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1**2 - g1 * g2
    if not disc >= 0:
        return (lo + hi) / 2.0
    d2 = disc.sqrt()
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, lo), hi)


def _strong_wolfe(obj_func: Callable[[list[Tensor], Scalar, Tensor], tuple[float, Tensor]],
                  x: list[Tensor], t: Scalar, d: Tensor, f: float, g: Tensor, gtd: Tensor,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Tensor, Scalar, int]:
    """A step length along ``d`` meeting the strong Wolfe conditions (minFunc's lswolfe):
    first bracket an interval holding one, then shrink it by cubic interpolation ("zoom").

    Returns ``(loss, flat gradient, step, evaluations)`` at the chosen step."""
    d_norm = d.abs().max()
    g = g.clone(memory_format=contiguous_format)
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)

    # -- bracketing ------------------------------------------------------------------------
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    steps: list[Scalar]
    losses: list[Scalar]
    grads: list[Tensor]
    slopes: list[Scalar] = []
    while ls_iter < max_ls:
        armijo_fails = f_new > (f + c1 * t * gtd)
        if armijo_fails or (ls_iter > 1 and f_new >= f_prev):
            steps, losses = [t_prev, t], [f_prev, f_new]
            grads = [g_prev, g_new.clone(memory_format=contiguous_format)]
            slopes = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:  # curvature condition holds too: t is the answer
            steps, losses, grads = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:  # the slope turned: a minimiser lies between t_prev and t
            steps, losses = [t_prev, t], [f_prev, f_new]
            grads = [g_prev, g_new.clone(memory_format=contiguous_format)]
            slopes = [gtd_prev, gtd_new]
            break
        # still descending: extrapolate to a longer step
        lowest, highest = t + 0.01 * (t - t_prev), t * 10
        previous = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(lowest, highest))
        t_prev, f_prev = previous, f_new
        g_prev = g_new.clone(memory_format=contiguous_format)
        gtd_prev = gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:  # out of evaluations: bracket from the start to the last step
        steps, losses, grads = [0, t], [f, f_new], [g, g_new]

    # -- zoom ------------------------------------------------------------------------------
    insufficient = False
    low, high = (0, 1) if losses[0] <= losses[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(steps[1] - steps[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(steps[0], losses[0], slopes[0], steps[1], losses[1], slopes[1])

        # a trial too close to an end of the bracket makes little progress: when that happens
        # twice in a row (or the trial is outside), move it a tenth of the bracket inside
        top, bottom = max(steps), min(steps)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if insufficient or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False

        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= losses[low]:
            # not a sufficient decrease, or no better than the low end: t is the new high end
            steps[high], losses[high] = t, f_new
            grads[high] = g_new.clone(memory_format=contiguous_format)
            slopes[high] = gtd_new
            low, high = (0, 1) if losses[0] <= losses[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (steps[high] - steps[low]) >= 0:
                # the minimiser lies on the other side of t: the old low end becomes the high
                steps[high], losses[high] = steps[low], losses[low]
                grads[high], slopes[high] = grads[low], slopes[low]
            steps[low], losses[low] = t, f_new
            grads[low] = g_new.clone(memory_format=contiguous_format)
            slopes[low] = gtd_new

    return losses[low], grads[low], steps[low], evals


def _number(x: Scalar) -> float | int:
    """A ``Scalar`` argument as the Python number torch's argument parser makes of it (a 0-d
    tensor's ``item()``): passing it so skips add_'s ``alpha == 1`` test on a tensor."""
    return x.item() if isinstance(x, Tensor) else x


class LBFGS(Optimizer):
    """The L-BFGS algorithm (after minFunc), as ``torch.optim.LBFGS``.

    Every ``step(closure)`` runs up to ``max_iter`` quasi-Newton iterations (at most
    ``max_eval`` closure calls) on the parameters flattened into one vector, keeping the last
    ``history_size`` curvature pairs. Without a line search each iteration moves by ``lr``
    times the L-BFGS direction (the first one scaled down to at most ``lr`` in L1 norm);
    ``line_search_fn="strong_wolfe"`` picks each step length by a strong-Wolfe line search.
    It stops early when the gradient's largest entry is at most ``tolerance_grad`` or the
    loss or the step changes by less than ``tolerance_change``. Only one param group is
    supported; complex parameters are optimised as their real views.

    >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.5, -0.5], requires_grad=True)
    >>> opt = jaxgrad.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():  # (a detached loss: float() of one that requires grad warns, as in torch)
    ...     opt.zero_grad()
    ...     loss = ((w - jaxgrad.tensor([3.0, 2.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss.detach()
    >>> opt.step(closure)
    tensor(8.5000)
    >>> w
    tensor([3., 2.], requires_grad=True)
    >>> opt.state[w]["func_evals"], opt.state[w]["n_iter"]
    (3, 2)
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    # -- the parameters as one flat vector ---------------------------------------------------
    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() * (2 if p.is_complex() else 1)
                                    for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        """Every parameter's gradient (zeros where there is none) as one flat real vector."""
        pieces = []
        for p in self._params:
            grad = p.grad
            if grad is None:
                piece = p.new(p.numel()).zero_()
            elif getattr(grad, "is_sparse", False):
                piece = grad.to_dense().view(-1)
            else:
                piece = grad.view(-1)
            if piece.is_complex():
                piece = view_as_real(piece).view(-1)
            pieces.append(piece)
        return cat(pieces, 0)

    def _add_grad(self, step_size: Scalar, update: Tensor) -> None:
        """``p += step_size * update[slice of p]`` for each parameter, in place."""
        start = 0
        for p in self._params:
            target = view_as_real(p) if p.is_complex() else p
            size = target.numel()
            target.add_(update[start:start + size].view_as(target), alpha=_number(step_size))
            start += size
        if start != self._numel():
            raise AssertionError(f"Expected offset {start} to equal {self._numel()}")

    def _clone_param(self) -> list[Tensor]:
        return [p.clone(memory_format=contiguous_format) for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, saved in zip(self._params, params_data, strict=True):
            p.copy_(saved)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Tensor], t: Scalar,
                              d: Tensor) -> tuple[float, Tensor]:
        """Loss and flat gradient at ``x + t * d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # -- the step ----------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the first closure call's loss.

        ``closure`` must zero the gradients, compute the loss, call ``backward()`` and return
        the loss (a tensor or a number); it runs with grad mode on, the step itself without.
        The step takes ``float()`` of each loss: a loss that requires grad warns once, as in
        torch.

        >>> import jaxgrad
                >>> x = jaxgrad.tensor([-1.0, 1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.LBFGS([x], lr=0.5, max_iter=3)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (x ** 2).sum()
        ...     loss.backward()
        ...     return loss.item()
        >>> [round(opt.step(closure), 4) for _ in range(2)]
        [2.0, 0.2812]
        >>> sorted(opt.state[x])[:4], x._version
        (['H_diag', 'al', 'd', 'func_evals'], 4)
        """
        with no_grad():
            return self._lbfgs_step(closure)

    def _lbfgs_step(self, closure: Callable[[], Any]) -> Any:
        if len(self.param_groups) != 1:
            raise AssertionError(
                f"Expected exactly one param_group, but got {len(self.param_groups)}")
        structure_changed()  # the step adds and replaces state entries
        closure = enable_grad()(closure)

        group = self.param_groups[0]
        lr = to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # all of LBFGS's state is global; it lives under the first parameter (so that
        # load_state_dict casts its tensors to the parameters' dtype and device)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        first_loss = closure()
        loss = float(first_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:  # already optimal
            return first_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        iteration = 0
        while iteration < max_iter:
            iteration += 1
            state["n_iter"] += 1

            # -- direction ---------------------------------------------------------------
            if state["n_iter"] == 1:  # steepest descent; the history starts empty
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)  # gradient change
                s = d.mul(t)  # parameter change
                ys = y.dot(s)
                if ys > 1e-10:  # curvature is positive: remember the pair
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)  # scale of the initial inverse Hessian

                # two-loop recursion: d = -H g with H the L-BFGS inverse Hessian estimate,
                # computed in place in one buffer
                count = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in reversed(range(count)):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=_number(-al[i]))
                d = r = q.mul(H_diag)
                for i in range(count):
                    beta = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=_number(al[i] - beta))

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone(memory_format=contiguous_format)
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # -- step length -------------------------------------------------------------
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)  # slope along d
            if gtd > -tolerance_change:  # not a descent direction (any more)
                break

            used = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                start = self._clone_param()

                def along(x: list[Tensor], step: Scalar, direction: Tensor) -> tuple[
                        float, Tensor]:
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, used = _strong_wolfe(along, start, t, d, loss, flat_grad,
                                                         gtd, max_ls=max_eval - evals)
                self._add_grad(t, d)
                optimal = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                optimal = False
                if iteration != max_iter:
                    # the loss at the new point (not after the last iteration: with
                    # stochastic closures it would be wasted)
                    with enable_grad():
                        loss = closure()
                    loss = float(loss)
                    flat_grad = self._gather_flat_grad()
                    optimal = flat_grad.abs().max() <= tolerance_grad
                    used = 1
            evals += used
            state["func_evals"] += used

            # -- stopping ----------------------------------------------------------------
            if iteration == max_iter or evals >= max_eval or optimal:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # the step barely moves
                break
            if abs(loss - prev_loss) < tolerance_change:  # the loss barely changes
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return first_loss
