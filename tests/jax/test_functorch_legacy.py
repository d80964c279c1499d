"""jaxgrad.functorch against torch 2.13's functorch package: make_functional,
make_functional_with_buffers and combine_state_for_ensemble (the functorch-era tutorials:
per-sample gradients, ensembling, MAML), their errors, and the deprecation warnings."""

import functorch
import functorch.experimental
import pytest

import jaxgrad
import jaxgrad.functorch
from differential import captured_warnings, ok, raises, torch, val


def legacy(T):
    return functorch if T is torch else jaxgrad.functorch


def data(T, shape, scale=1.0):
    return T.linspace(-scale, scale, int(torch.tensor(shape).prod())).reshape(shape).sin()


def seeded(T, make, seed=0):
    """A module from ``make(T)`` with deterministic parameters and buffers."""
    m = make(T)
    with T.no_grad():
        for i, t in enumerate(list(m.parameters()) + list(m.buffers())):
            if t.is_floating_point():
                t.copy_(data(T, tuple(t.shape), scale=0.3 + 0.1 * (i + seed)))
    return m


def mlp(T):
    return T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2))


def bn_net(T):
    return T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Linear(4, 2))


class Tied:
    """functorch's parameter-tying test model: one Linear reached by two names, plus tied
    buffers."""

    def __new__(cls, T):
        class Foo(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = T.nn.Linear(3, 3)
                self.weight = self.linear.weight
                self.bias = self.linear.bias
                self.buffer = T.nn.Buffer(T.ones(3))
                self.buffer_tied = self.buffer

            def forward(self, x):
                x = self.linear(x)
                x = T.nn.functional.linear(x, self.weight, self.bias)
                return x + self.buffer + self.buffer_tied

        return Foo()


def make_functional_call(T):
    fmodel, params = legacy(T).make_functional(seeded(T, mlp))
    out = fmodel(params, data(T, (5, 3)))
    return out, params, [p.is_leaf for p in params]


def params_from_another_model(T):
    fmodel, _ = legacy(T).make_functional(seeded(T, mlp, seed=1))
    _, params = legacy(T).make_functional(seeded(T, mlp, seed=2))
    return fmodel(params, data(T, (2, 3)))


def backward_through_params(T):
    fmodel, params = legacy(T).make_functional(seeded(T, mlp))
    fmodel(params, data(T, (5, 3))).pow(2).sum().backward()
    return [p.grad for p in params]


def disabled_tracking(T):
    fmodel, params, buffers = legacy(T).make_functional_with_buffers(
        seeded(T, bn_net), disable_autograd_tracking=True)
    return [p.requires_grad for p in params], fmodel(params, buffers, data(T, (5, 3)))


def with_buffers_updates_given_buffers(T):
    fmodel, params, buffers = legacy(T).make_functional_with_buffers(seeded(T, bn_net))
    out = fmodel(params, buffers, data(T, (5, 3)))
    return out, buffers


def per_sample_grads(T):
    """functorch's per-sample-gradient tutorial as written with make_functional."""
    fmodel, params = legacy(T).make_functional(seeded(T, mlp))

    def loss(params, x, t):
        return T.nn.functional.mse_loss(fmodel(params, x.unsqueeze(0)), t.unsqueeze(0))

    # the parameters require grad, so the results connect to them; torch's grad_fn is the last
    # op inside, jaxgrad's one node for the transform (compared: values)
    return [(g.detach(), g.requires_grad) for g in T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))(
        params, data(T, (4, 3)), data(T, (4, 2), scale=2.0))]


def tied_parameters_grad(T):
    fmodel, params, buffers = legacy(T).make_functional_with_buffers(seeded(T, Tied))
    grads = T.func.grad(lambda p, b, x: fmodel(p, b, x).sum())(params, buffers, data(T, (2, 3)))
    return len(params), len(buffers), [(g.detach(), g.requires_grad) for g in grads]


def ensemble(T):
    models = [seeded(T, bn_net, seed) for seed in range(3)]
    fmodel, params, buffers = legacy(T).combine_state_for_ensemble(models)
    same_x = T.func.vmap(fmodel, (0, 0, None))(params, buffers, data(T, (4, 3)))
    per_model = T.func.vmap(fmodel)(params, buffers, data(T, (3, 4, 3), scale=2.0))
    return val(same_x), val(per_model), params, buffers


def maml_inner_step(T):
    """MAML with make_functional: an inner SGD step inside grad, differentiated by backward."""
    fmodel, params = legacy(T).make_functional(seeded(T, mlp))
    x, y = data(T, (4, 3)), data(T, (4, 2), scale=2.0)

    def inner_loss(params):
        return T.nn.functional.mse_loss(fmodel(params, x), y)

    grads = T.autograd.grad(inner_loss(params), params, create_graph=True)
    adapted = [p - 0.1 * g for p, g in zip(params, grads)]
    T.nn.functional.mse_loss(fmodel(adapted, x * 2), y).backward()
    return [p.grad for p in params]


PROGRAMS = {f.__name__: f for f in [
    make_functional_call, params_from_another_model, backward_through_params, disabled_tracking,
    with_buffers_updates_given_buffers, per_sample_grads, tied_parameters_grad, ensemble,
    maml_inner_step]}


@pytest.mark.parametrize("name", PROGRAMS)
def test_like_functorch(name):
    ok(PROGRAMS[name])


ERRORS = {
    "buffers_to_make_functional": lambda T: legacy(T).make_functional(T.nn.BatchNorm1d(2)),
    "ensemble_of_none": lambda T: legacy(T).combine_state_for_ensemble([]),
    "ensemble_modes": lambda T: legacy(T).combine_state_for_ensemble(
        [T.nn.Linear(2, 2), T.nn.Linear(2, 2).eval()]),
    "ensemble_classes": lambda T: legacy(T).combine_state_for_ensemble(
        [T.nn.Linear(2, 2), T.nn.Tanh()]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_like_functorch(name):
    raises(ERRORS[name])


DEPRECATED = {
    "vmap": lambda T: legacy(T).vmap(T.sin),
    "grad": lambda T: legacy(T).grad(T.sin),
    "grad_and_value": lambda T: legacy(T).grad_and_value(T.sin),
    "jacrev": lambda T: legacy(T).jacrev(T.sin),
    "jacfwd": lambda T: legacy(T).jacfwd(T.sin),
    "hessian": lambda T: legacy(T).hessian(T.sin),
    "functionalize": lambda T: legacy(T).functionalize(T.sin),
    "vjp": lambda T: legacy(T).vjp(T.sin, T.ones(2)),
    "jvp": lambda T: legacy(T).jvp(T.sin, (T.ones(2),), (T.ones(2),)),
    "make_functional": lambda T: legacy(T).make_functional(T.nn.Linear(2, 2)),
    "make_functional_with_buffers":
        lambda T: legacy(T).make_functional_with_buffers(T.nn.Linear(2, 2)),
    "combine_state_for_ensemble":
        lambda T: legacy(T).combine_state_for_ensemble([T.nn.Linear(2, 2)]),
}


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecation_warnings_like_functorch(name):
    def functorch_warnings(lib):  # torch's jvp also warns about its own internals
        return [w for w in captured_warnings(DEPRECATED[name], lib) if w[0] == "FutureWarning"]

    assert len(functorch_warnings(torch)) == 1
    assert functorch_warnings(jaxgrad) == functorch_warnings(torch)


@pytest.mark.parametrize("name", ["hessian", "jacfwd", "jvp", "functionalize",
                                  "replace_all_batch_norm_modules_"])
def test_experimental_exports_the_func_transforms(name):
    from jaxgrad.functorch import experimental

    assert getattr(experimental, name) is getattr(jaxgrad.func, name)
    assert hasattr(functorch.experimental, name)
