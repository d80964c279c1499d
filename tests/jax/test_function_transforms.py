"""A custom ``autograd.Function`` inside ``jaxgrad.func`` transforms and ``jaxgrad.compile(model)``:
its own ``backward`` (``jvp``) gives the derivatives, as in torch.func, instead of JAX
differentiating the ops of its ``forward`` (Note [Function under a transform] in _function.py);
torch.func's requirements (setup_context, a vmap rule, a jvp) raise torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

from differential import attempt, ok, raises, same


def functions(T):
    """Functions whose backward/jvp differ from the derivative of their forward: only the user's
    rule can give torch's numbers."""

    class Straight(T.autograd.Function):  # round, straight-through backward
        @staticmethod
        def forward(x):
            return x.round()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    class Scaled(T.autograd.Function):  # x^2 * k; backward 100 x^2 k g, jvp 10 x t
        generate_vmap_rule = True

        @staticmethod
        def forward(x, k):
            return x ** 2 * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 100 * x ** 2 * ctx.k * g, None

        @staticmethod
        def jvp(ctx, t, _):
            x, = ctx.saved_tensors
            return 10 * x * t

    class Pair(T.autograd.Function):  # two outputs, one non-differentiable; a tensor on ctx
        generate_vmap_rule = True

        @staticmethod
        def forward(x, y):
            return x * y, (x > 0).to(x.dtype)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])
            ctx.y = inputs[1]
            ctx.out = output[0]

        @staticmethod
        def backward(ctx, g, g_mask):
            return g * ctx.y * 3, g * ctx.out

    class Old(T.autograd.Function):  # no setup_context
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return Straight, Scaled, Pair, Old


def test_straight_through_function_under_grad():
    def program(T):
        Straight, *_ = functions(T)
        return T.func.grad(lambda x: Straight.apply(x).sum())(T.tensor([0.2, 1.7]))

    ok(program)


@pytest.mark.parametrize("transform", ["grad", "grad_argnums", "grad_and_value", "vjp",
                                       "jacrev", "jacrev_pair", "grad_of_grad", "outer_backward",
                                       "inside_vmap", "over_vmap"])
def test_reverse_mode_calls_backward(transform):
    def program(T):
        Straight, Scaled, Pair, _ = functions(T)
        F = T.func
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64)
        y = T.tensor([2.0, 3.0, -1.0], dtype=T.float64)
        f = lambda x: Scaled.apply(x, 3.0).sum()
        if transform == "grad":
            return F.grad(f)(x)
        if transform == "grad_argnums":
            return F.grad(lambda x, y: Pair.apply(x, y)[0].sum(), argnums=(0, 1))(x, y)
        if transform == "grad_and_value":
            return F.grad_and_value(lambda x: Pair.apply(x, y)[0].sum() + Straight.apply(x).sum()
                                    )(x)
        if transform == "vjp":
            out, fn = F.vjp(lambda x: Scaled.apply(x, 2.0), x)
            return out, fn(T.ones(3, dtype=T.float64))
        if transform == "jacrev":
            return F.jacrev(lambda x: Scaled.apply(x, 2.0))(x)
        if transform == "jacrev_pair":
            return F.jacrev(lambda x: Pair.apply(x, y), argnums=0)(x)
        if transform == "grad_of_grad":  # the backward's own ops are differentiated
            return F.grad(lambda x: F.grad(f)(x).sum())(x)
        if transform == "outer_backward":  # a transform's result reaching the outer graph
            x = x.clone().requires_grad_()
            g, value = F.grad_and_value(lambda x: Scaled.apply(x, 2.0).sum())(x)
            value.backward()  # (grad_fn names differ: jaxgrad's is one GradBackward node)
            return g.detach(), value.detach(), x.grad
        if transform == "inside_vmap":
            return F.vmap(F.grad(lambda x: Scaled.apply(x, 2.0).sum()))(x.reshape(3, 1))
        x = x.clone().requires_grad_()  # over_vmap: vmap's result differentiated outside
        out = F.vmap(lambda x: Scaled.apply(x, 2.0))(x)
        out.sum().backward()
        return out.detach(), x.grad  # (grad_fn: torch's VmappedScaledBackward, VmapBackward)

    ok(program)


@pytest.mark.parametrize("transform", ["jvp", "jacfwd", "jvp_straight", "hessian"])
def test_forward_mode_calls_jvp(transform):
    def program(T):
        Straight, Scaled, _, _ = functions(T)
        F = T.func
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64)
        t = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
        if transform == "jvp":
            return F.jvp(lambda x: Scaled.apply(x, 3.0), (x,), (t,))
        if transform == "jacfwd":
            return F.jacfwd(lambda x: Scaled.apply(x, 3.0))(x)
        if transform == "jvp_straight":
            return F.jvp(Straight.apply, (x,), (t,))
        return F.hessian(lambda x: Scaled.apply(x, 3.0).sum())(x)

    ok(program)


@pytest.mark.parametrize("case", ["old_style_grad", "old_style_vmap", "old_style_jvp",
                                  "no_vmap_rule", "no_vmap_rule_jacfwd", "no_vmap_rule_hessian",
                                  "no_jvp"])
def test_torch_func_requirements_raise_torch_errors(case):
    def program(T):
        Straight, _, Pair, Old = functions(T)
        F = T.func
        x = T.tensor([0.5, -1.5, 2.0])

        if case == "old_style_grad":
            return F.grad(lambda x: Old.apply(x).sum())(x)
        if case == "old_style_vmap":
            return F.vmap(Old.apply)(x)
        if case == "old_style_jvp":
            return F.jvp(Old.apply, (x,), (x,))
        if case == "no_vmap_rule":
            return F.vmap(Straight.apply)(x)
        if case == "no_vmap_rule_jacfwd":
            return F.jacfwd(Straight.apply)(x)
        if case == "no_vmap_rule_hessian":
            return F.hessian(lambda x: Straight.apply(x).sum())(x)
        return F.jvp(lambda x: Pair.apply(x, x)[0], (x,), (x,))

    raises(program)


def test_old_style_function_is_fine_eagerly_and_with_a_vmap_rule():
    def program(T):
        *_, Old = functions(T)

        class Mapped(functions(T)[0]):
            generate_vmap_rule = True

        x = T.tensor([0.5, -1.5, 2.0], requires_grad=True)
        Old.apply(x).sum().backward()
        return x.grad, T.func.vmap(Mapped.apply)(x.detach())

    ok(program)


def test_compiled_module_results_use_backward():
    """``compile(model)`` with the backward outside: CompiledFunctionBackward's VJP calls the
    Function's backward (compared with eager torch: torch.compile needs a C++ toolchain)."""

    def program(T):
        Straight, Scaled, Pair, Old = functions(T)

        class Model(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = T.nn.Parameter(T.tensor([1.0, 2.0, -0.5]))

            def forward(self, x):
                a = Scaled.apply(x * self.w, 2.0)
                b, mask = Pair.apply(x, self.w)
                return (a + b + Old.apply(Straight.apply(x))).sum() + mask.sum()

        model = Model()
        compiled = T.compile(model) if T.__name__ == "jaxgrad" else model
        x = T.tensor([0.3, -1.2, 0.8], requires_grad=True)
        out = compiled(x)
        out.backward()
        # (not compared: grad_fn, CompiledFunctionBackward; the version of x.grad, which eager
        # torch's engine bumps summing the gradients of x's three uses in place)
        return out.item(), x.grad.tolist(), model.w.grad.tolist()

    ok(program)


def test_compiled_training_step_uses_backward():
    """A whole compiled step: its backward, traced through jaxgrad's engine, calls the
    Function's backward."""

    def program(T):
        Straight, Scaled, *_ = functions(T)
        w = T.tensor([1.0, 2.0], requires_grad=True)
        opt = T.optim.SGD([w], lr=0.01)

        def step(x):
            opt.zero_grad()
            loss = (Scaled.apply(w * x, 2.0) + Straight.apply(w)).sum()
            loss.backward()
            opt.step()
            return loss

        step = T.compile(step) if T.__name__ == "jaxgrad" else step
        losses = [step(T.tensor([1.0, 0.5])).item() for _ in range(3)]
        return losses, w, w.grad

    ok(program)


def more_functions(T):
    class Ident(T.autograd.Function):  # an input returned as-is (a view of it)
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 5

        @staticmethod
        def jvp(ctx, t):
            return t * 5

    class Double_(T.autograd.Function):  # in place
        @staticmethod
        def forward(x):
            return x.mul_(2)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_dirty(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return g * 7

    class Once(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x * 3

    class WithVmap(T.autograd.Function):  # its own vmap rule
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, in_dims[0]

    class CubeOut(T.autograd.Function):  # saves its output for backward, its input for jvp
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * 3 * y

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return t * 3 * x ** 2

    return Ident, Double_, Once, WithVmap, CubeOut


@pytest.mark.parametrize("case", ["view_grad", "view_jvp", "view_vmap_grad", "dirty_grad",
                                  "once_grad", "once_grad_of_grad", "vmap_rule",
                                  "vmap_rule_grad", "saved_output_hessian",
                                  "saved_output_grad_of_grad", "saved_output_jacrev_of_jvp",
                                  "integer_tensor_beside"])
def test_more_functions_under_transforms(case):
    def program(T):
        Ident, Double_, Once, WithVmap, CubeOut = more_functions(T)
        F = T.func
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64)
        cube = lambda x: CubeOut.apply(x).sum()
        return {
            "view_grad": lambda: F.grad(lambda x: Ident.apply(x).sum())(x),
            "view_jvp": lambda: F.jvp(Ident.apply, (x,), (x,)),
            "view_vmap_grad": lambda: F.vmap(F.grad(lambda x: (Ident.apply(x) * x).sum()))(
                x[:, None]),
            "dirty_grad": lambda: F.grad(lambda x: Double_.apply(x.clone()).sum())(x),
            "once_grad": lambda: F.grad(lambda x: Once.apply(x).sum())(x),
            # torch runs a once_differentiable backward under no_grad: the outer grad is zero
            "once_grad_of_grad": lambda: F.grad(
                lambda x: F.grad(lambda x: Once.apply(x).sum())(x).sum())(x),
            "vmap_rule": lambda: F.vmap(WithVmap.apply)(x),
            "vmap_rule_grad": lambda: F.vmap(F.grad(lambda x: WithVmap.apply(x).sum()))(
                x[:, None]),
            "saved_output_hessian": lambda: F.hessian(cube)(x),
            "saved_output_grad_of_grad": lambda: F.grad(lambda x: F.grad(cube)(x).sum())(x),
            "saved_output_jacrev_of_jvp": lambda: F.jacrev(
                lambda x: F.jvp(CubeOut.apply, (x,), (T.ones(3, dtype=T.float64),))[1])(x),
            "integer_tensor_beside": lambda: F.grad(
                lambda x, n: CubeOut.apply(x * n).sum())(x, T.arange(3)),
        }[case]()

    ok(program)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads_under_grad(materialize):
    def program(T):
        seen = []

        class Two(T.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2, x * 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.set_materialize_grads(materialize)

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None))
                return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

        g = T.func.grad(lambda x: Two.apply(x)[0].sum())(T.tensor([1.0, 2.0]))
        return g, seen

    ok(program)


def _vmap_rule_function(T, calls):
    class Sq(T.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * x * k, x + 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g, g2):
            (x,) = ctx.saved_tensors
            return 2 * x * g + g2, None

        @staticmethod
        def vmap(info, in_dims, x, k):
            calls.append((info.batch_size, info.randomness, in_dims))
            return Sq.apply(x, k), (in_dims[0], in_dims[0])

    return Sq


def test_vmap_staticmethod_is_called_under_vmap():
    def program(T):
        calls = []
        Sq = _vmap_rule_function(T, calls)
        x = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        out = T.func.vmap(lambda x: Sq.apply(x, 3.0))(x)
        nested = T.func.vmap(T.func.vmap(lambda x: Sq.apply(x, 2.0)[0]))(x)
        return out, nested, calls

    ok(program)


def test_numpy_forward_under_grad():
    def program(T):
        class NumpyExp(T.autograd.Function):
            @staticmethod
            def forward(x):
                return T.tensor(np.exp(x.cpu().numpy()))

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(output)

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y

        x = T.tensor([0.5, 1.0], dtype=T.float64)
        return T.func.grad(lambda x: NumpyExp.apply(x).sum())(x)

    ok(program)


def _once_differentiable_cube(T):
    class Cube(T.autograd.Function):
        @staticmethod
        def forward(input):
            return input ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    return Cube


def test_once_differentiable_under_vjp_as_torch():
    """Backward through a vjp_fn's result refuses to differentiate the once_differentiable
    backward (torch's engine raises); torch.func's grad of it sees zeros (no_grad)."""
    def engine(T):
        x, gy = T.tensor(1.5, requires_grad=True), T.tensor(0.7, requires_grad=True)
        _, vjp_fn = T.func.vjp(_once_differentiable_cube(T).apply, x)
        (gx,) = vjp_fn(gy)
        return gx.detach(), gx.requires_grad, attempt(gx.backward)

    def grad_of_vjp(T):
        def h(x, gy):
            _, vjp_fn = T.func.vjp(_once_differentiable_cube(T).apply, x)
            return vjp_fn(gy)[0]

        return T.func.grad(h, argnums=(0, 1))(T.tensor(1.5), T.tensor(0.7))

    same(engine)
    same(grad_of_vjp)
