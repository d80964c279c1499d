"""Every public class prints the path torch's twin prints (``torch`` spelled ``jaxgrad``).

``type(t)``, ``type(t.grad_fn)``, ``jaxgrad.no_grad``, ``jaxgrad.nn.Linear``: a user comparing
printouts side by side, or code that dispatches on ``type(x).__module__``, sees torch's answer.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

import jaxgrad
from differential import ok, torch

NAMESPACES = ["", ".nn", ".nn.functional", ".nn.init", ".nn.utils", ".optim", ".utils.data",
              ".accelerator", ".linalg", ".fft", ".optim.lr_scheduler", ".optim.swa_utils", ".autograd", ".autograd.graph", ".autograd.function",
              ".autograd.grad_mode", ".autograd.profiler", ".autograd.profiler_util",
              ".autograd.functional", ".cuda", ".serialization", ".return_types",
              ".func", ".backends.cudnn", ".backends.mkldnn", ".backends.cuda",
              ".utils.benchmark", ".nn.parallel"]
# torch's Generator is a C++ class (torch._C.Generator) and Variable a legacy metaclass shim;
# jaxgrad's are jaxgrad.Generator and jaxgrad.Tensor itself; torch's LinAlgError is the C++ class
# torch._C._LinAlgError, jaxgrad's jaxgrad.linalg._LinAlgError (the same class name in errors);
# torch's SavedTensor is torch._C._autograd.SavedTensor
DIFFERENT_BY_DESIGN = {("", "Generator"), (".autograd", "Variable"), (".linalg", "LinAlgError"),
                       (".autograd", "SavedTensor")}


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_public_classes_print_torchs_path(namespace):
    ours = importlib.import_module("jaxgrad" + namespace)
    theirs = importlib.import_module("torch" + namespace)
    checked, wrong = 0, []
    for name in dir(ours):
        mine, twin = getattr(ours, name), getattr(theirs, name, None)
        if name.startswith("_") or twin is None or not inspect.isclass(mine):
            continue
        if (namespace, name) in DIFFERENT_BY_DESIGN:
            continue
        checked += 1
        if repr(mine).replace("jaxgrad", "torch") != repr(twin):
            wrong.append((name, repr(mine), repr(twin)))
    assert not wrong
    assert checked or namespace in (".nn.functional", ".nn.init", ".nn.utils", ".linalg", ".fft",
                                    ".accelerator", ".autograd.functional", ".func")


def test_module_paths_resolve():
    """A class's printed path is a module that holds it (so pickle can find it again)."""
    for namespace in NAMESPACES:
        module = importlib.import_module("jaxgrad" + namespace)
        for name in dir(module):
            cls = getattr(module, name)
            if name.startswith("_") or not inspect.isclass(cls):
                continue
            if not cls.__module__.startswith("jaxgrad"):
                continue
            home = importlib.import_module(cls.__module__)
            assert getattr(home, cls.__qualname__, None) is cls, (namespace, name)


def test_types_of_runtime_objects():
    def program(T):
        x = T.ones(2, requires_grad=True)
        y = x * 2

        class Double(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        objects = [x, y.grad_fn, y.grad_fn.next_functions[0][0], T.nn.Linear(1, 1),
                   T.optim.SGD([x], lr=1.0), T.float32, x.shape, x.device, T.no_grad(),
                   Double.apply(x).grad_fn, T.autograd.graph.saved_tensors_hooks(id, id)]
        return [repr(type(o)).replace("test_public_paths", "__main__") for o in objects]

    ok(program)


def test_torch_spelling_is_compared():
    assert repr(jaxgrad.no_grad) == "<class 'jaxgrad.autograd.grad_mode.no_grad'>"
    assert repr(torch.no_grad) == "<class 'torch.autograd.grad_mode.no_grad'>"
