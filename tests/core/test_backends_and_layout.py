"""``backends`` (flags set and read back, availability answers), ``is_complex`` /
``is_floating_point`` as functions, and the layout and representation flags of tensors, against
torch's CPU build."""

from __future__ import annotations

import pytest

import jaxgrad
from differential import ok, raises, torch

# (module, flag) pairs that both libraries keep; restored after each test
FLAGS = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"),
         ("cudnn", "allow_tf32"), ("mkldnn", "enabled"), ("mkldnn", "deterministic"),
         ("opt_einsum", "enabled"), ("opt_einsum", "strategy")]


@pytest.fixture(autouse=True)
def _restore_flags():
    saved = {lib: [getattr(getattr(lib.backends, m), f) for m, f in FLAGS]
             for lib in (torch, jaxgrad)}
    tf32 = {lib: lib.backends.cuda.matmul.allow_tf32 for lib in (torch, jaxgrad)}
    yield
    for lib, values in saved.items():
        for (m, f), v in zip(FLAGS, values):
            setattr(getattr(lib.backends, m), f, v)
        lib.backends.cuda.matmul.allow_tf32 = tf32[lib]


def test_availability_answers_as_torch_cpu():
    if jaxgrad.cuda.is_available():
        pytest.skip("torch's CPU build answers for a machine without a GPU")
    ok(lambda T: [T.backends.cudnn.is_available(), T.backends.cudnn.version(),
                  T.backends.mps.is_available(), T.backends.mps.is_built(),
                  T.backends.mkldnn.is_available(), T.backends.cuda.is_built(),
                  T.backends.opt_einsum.is_available(), T.backends.cudnn.benchmark_limit])


def test_default_flags():
    ok(lambda T: [getattr(getattr(T.backends, m), f) for m, f in FLAGS]
       + [T.backends.cuda.matmul.allow_tf32,
          T.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
          T.backends.cuda.matmul.allow_bf16_reduced_precision_reduction])


@pytest.mark.parametrize("module,flag", FLAGS[:6])
def test_flags_are_set_and_read_back(module, flag):
    def program(T):
        m = getattr(T.backends, module)
        before = getattr(m, flag)
        setattr(m, flag, not before)
        return [before, getattr(m, flag)]
    ok(program)


def test_matmul_allow_tf32_is_set_and_read_back():
    def program(T):
        T.backends.cuda.matmul.allow_tf32 = True
        return T.backends.cuda.matmul.allow_tf32
    ok(program)


@pytest.mark.parametrize("module,flag", FLAGS[:6] + [("cuda.matmul", "allow_tf32")])
@pytest.mark.parametrize("value", [1, None, "yes"])
def test_flags_take_only_bools(module, flag, value):
    def program(T):
        m = T.backends
        for part in module.split("."):
            m = getattr(m, part)
        setattr(m, flag, value)
    raises(program)


def test_unknown_matmul_attribute():
    raises(lambda T: T.backends.cuda.matmul.tf32)
    raises(lambda T: setattr(T.backends.cuda.matmul, "tf32", True))


def test_unknown_module_attribute_is_a_plain_module_attribute():
    def program(T):
        T.backends.cudnn.my_setting = 3
        value = T.backends.cudnn.my_setting
        del T.backends.cudnn.my_setting
        return value
    ok(program)


def test_cudnn_flags_context_manager_restores():
    def program(T):
        T.backends.cudnn.benchmark = True
        with T.backends.cudnn.flags(enabled=False, deterministic=True):
            inside = [T.backends.cudnn.enabled, T.backends.cudnn.benchmark,
                      T.backends.cudnn.deterministic, T.backends.cudnn.allow_tf32]
        after = [T.backends.cudnn.enabled, T.backends.cudnn.benchmark,
                 T.backends.cudnn.deterministic, T.backends.cudnn.allow_tf32]
        return inside, after
    ok(program)


def test_mkldnn_flags_context_manager_restores():
    def program(T):
        with T.backends.mkldnn.flags(enabled=False):
            inside = [T.backends.mkldnn.enabled, T.backends.mkldnn.deterministic]
        return inside, T.backends.mkldnn.enabled
    ok(program)


def test_module_class_names():
    ok(lambda T: [type(T.backends.cudnn).__name__, type(T.backends.mkldnn).__name__,
                  type(T.backends.cuda.matmul).__name__])


def test_opt_einsum_flags():
    def program(T):
        T.backends.opt_einsum.strategy = "greedy"
        return T.backends.opt_einsum.strategy, T.backends.opt_einsum.get_opt_einsum().__name__
    ok(program)


# -- is_complex / is_floating_point as functions -------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64",
                                   "bool", "bfloat16", "float16"])
def test_is_complex_and_is_floating_point_functions(dtype):
    ok(lambda T: [T.is_complex(T.zeros(2, dtype=getattr(T, dtype))),
                  T.is_floating_point(T.zeros(2, dtype=getattr(T, dtype))),
                  T.zeros(2, dtype=getattr(T, dtype)).is_complex()])


def test_is_complex_rejects_non_tensors():
    raises(lambda T: T.is_complex(1))
    raises(lambda T: T.is_floating_point([1.0]))


# -- layout and representation flags ------------------------------------------------------------

def test_layout_and_flags():
    def program(T):
        x = T.ones(2, 3)
        return [str(x.layout), repr(x.layout), x.layout == T.strided, x.layout == T.sparse_coo,
                x.is_sparse, x.is_xpu, x.is_mkldnn, x.is_meta, x.is_cuda, x.is_quantized,
                x.t().layout == T.strided, isinstance(x.layout, T.layout),
                repr(T.layout), str(T.sparse_coo)]
    ok(program)
