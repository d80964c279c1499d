"""Every ``>>>`` example in jaxgrad's docstrings runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import jaxgrad

# _tensor_str's examples need its own globals and print options: test_tensor_str runs them.
# "jaxgrad" itself holds the functions generated from op declarations (their __module__).
MODULES = ["jaxgrad"] + sorted(m.name for m in pkgutil.walk_packages(jaxgrad.__path__, "jaxgrad.")
                               if m.name != "jaxgrad._core.tensor_str")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    finder = doctest.DocTestFinder()
    tests = finder.find(module, name, globs={})
    # classes shown under their public path (Tensor.__module__ is "jaxgrad") are still this
    # module's: the finder would skip them (and their methods) everywhere
    for obj in vars(module).values():
        if inspect.isclass(obj) and obj.__module__ != name and _defined_in(obj, module):
            tests += finder.find(obj, f"{name}.{obj.__name__}", module=module, globs={})
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def _defined_in(cls: type, module) -> bool:
    try:
        return inspect.getsourcefile(cls) == getattr(module, "__file__", None)
    except TypeError:
        return False


PUBLIC_NAMESPACES = ["jaxgrad", "jaxgrad.nn", "jaxgrad.nn.functional", "jaxgrad.nn.init",
                     "jaxgrad.optim", "jaxgrad.optim.lr_scheduler", "jaxgrad.optim.swa_utils",
                     "jaxgrad.autograd",
                     "jaxgrad.autograd.functional", "jaxgrad.autograd.graph",
                     "jaxgrad.autograd.profiler", "jaxgrad.autograd.function",
                     "jaxgrad.autograd.gradcheck", "jaxgrad.cuda",
                     "jaxgrad.serialization", "jaxgrad.accelerator", "jaxgrad.utils",
                     "jaxgrad.utils.data", "jaxgrad.func", "jaxgrad.distributed",
                     "jaxgrad.distributed.checkpoint", "jaxgrad.distributed.run",
                     "jaxgrad.nn.parallel", "jaxgrad.backends", "jaxgrad.backends.cudnn",
                     "jaxgrad.backends.mha", "jaxgrad.backends.mkldnn", "jaxgrad.backends.mps",
                     "jaxgrad.backends.cuda",
                     "jaxgrad.backends.opt_einsum", "jaxgrad.utils.benchmark", "jaxgrad.onnx",
                     "jaxgrad.distributions", "jaxgrad.fft"]


@pytest.mark.parametrize("name", PUBLIC_NAMESPACES)
def test_public_functions_and_classes_have_a_runnable_example(name):
    """Every public function and class a namespace exports has a docstring with an example
    (generated ops get theirs from their declaration)."""
    module = importlib.import_module(name)
    missing = [attr for attr in dir(module) if not attr.startswith("_")
               and (inspect.isfunction(obj := getattr(module, attr)) or inspect.isclass(obj))
               and (obj.__module__ or "").startswith("jaxgrad")
               and ">>>" not in (obj.__doc__ or "")]
    assert not missing, missing
