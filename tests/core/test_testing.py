"""``jaxgrad.testing`` (assert_close, make_tensor), ``finfo``/``iinfo``, layouts and the RNG state
functions, against torch; and the ``testing._internal`` helpers PyTorch's test files import."""

from __future__ import annotations

import io
import math
import unittest
import warnings

import numpy as np
import pytest

import jaxgrad
from differential import Raised, normalise, same

torch = pytest.importorskip("torch")


def _closeness_cases(T):
    """(actual, expected, keyword arguments) pairs covering every kind of leaf and container."""
    nan, inf = float("nan"), float("inf")
    return [
        (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0 + 1e-7]), {}),
        (T.tensor([1.0, 4.0, 5.0]), T.tensor([1.0, 2.0, 3.0]), {}),
        (T.tensor(1.0), T.tensor(2.0), {}),
        (T.tensor([1, 2]), T.tensor([1, 3]), {}),
        (T.tensor([1, 2], dtype=T.uint8), T.tensor([3, 2], dtype=T.uint8), {}),
        (T.tensor([1.0]), T.tensor([1.0], dtype=T.float64), {}),
        (T.tensor([1.0]), T.tensor([1.0], dtype=T.float64), {"check_dtype": False}),
        (T.ones(2), T.ones(3), {}),
        (T.ones(2), 1.0, {}),
        (T.tensor([nan]), T.tensor([nan]), {}),
        (T.tensor([nan]), T.tensor([nan]), {"equal_nan": True}),
        (T.tensor([0.0, 1.0]), T.tensor([0.0, nan]), {}),
        (T.tensor([1.0, inf]), T.tensor([1.0, inf]), {}),
        (T.tensor([1.0, 2.0]), T.tensor([1.1, 2.0]), {"msg": lambda m: "Header\n" + m}),
        (T.tensor([[1.0, 2.0], [3.0, 4.0]]), T.tensor([[1.0, 2.0], [3.0, 5.0]]), {"msg": "x"}),
        (T.tensor([0.0, 1.0]), T.tensor([1e-3, 1.0]), {}),
        (T.tensor([1.0, 2.0], dtype=T.bfloat16), T.tensor([1.1, 2.0], dtype=T.bfloat16), {}),
        (T.tensor([1.0, 2.0], dtype=T.float16), T.tensor([1.0, 2.001], dtype=T.float16), {}),
        (T.tensor([1 + 1j, 2]), T.tensor([1 + 2j, 2]), {}),
        (T.ones(2), T.ones(2), {"rtol": 1}),
        (T.ones(2), T.zeros(2), {"rtol": 0.5, "atol": 0.5}),
        (T.ones(2, 3).t(), T.ones(3, 2), {"check_stride": True}),
        (np.ones(2), np.zeros(2), {}),
        (np.ones(2), np.ones(2), {}),
        (1, 1.0, {}),
        (1, 1.0, {"check_dtype": False}),
        (1.0, 1.0 + 1e-9, {}),
        (2 + 1j, 2 + 1j, {}),
        (True, False, {}),
        (None, 1, {}),
        (None, None, {}),
        ([1, 2], [1, 3], {}),
        ([1, 2], [1, 2, 3], {}),
        ((T.ones(1),), [T.ones(1)], {}),
        ([T.ones(2), T.ones(3)], [T.ones(2), T.zeros(3)], {}),
        ({"a": T.ones(2)}, {"b": T.ones(2)}, {}),
        ({"a": T.ones(2), "b": [T.zeros(1)]}, {"a": T.ones(2), "b": [T.ones(1)]}, {}),
        ("a", "a", {}),
    ]


def _outcome(T, case):
    actual, expected, kwargs = case
    try:
        T.testing.assert_close(actual, expected, **kwargs)
        return "ok"
    except Exception as e:
        return Raised(e)


@pytest.mark.parametrize("index", range(len(_closeness_cases(jaxgrad))))
def test_assert_close_passes_and_fails_with_torchs_messages(index):
    expected = _outcome(torch, _closeness_cases(torch)[index])
    got = _outcome(jaxgrad, _closeness_cases(jaxgrad)[index])
    assert repr(got) == repr(expected)


def test_assert_allclose_is_deprecated_and_looser():
    def program(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.testing.assert_allclose(T.tensor([1.0, 2.0]), [1.00001, 2.0])
            T.testing.assert_allclose(T.tensor([float("nan")]), T.tensor([float("nan")]))
            try:
                T.testing.assert_allclose(T.tensor([1.0]), [1.1])
            except AssertionError as e:
                failure = str(e)
        return [(w.category.__name__, str(w.message)) for w in caught], failure

    assert normalise(repr(program(jaxgrad))) == normalise(repr(program(torch)))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                   "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_make_tensor_draws_in_torchs_default_ranges(dtype):
    d = getattr(jaxgrad, dtype)
    x = jaxgrad.testing.make_tensor(200, dtype=d, device="cpu")
    torch_x = torch.testing.make_tensor(200, dtype=getattr(torch, dtype), device="cpu")
    assert x.dtype == d and x.shape == (200,)
    values = x.resolve_conj().numpy() if d.is_complex else x.to(jaxgrad.float64).numpy()
    reference = torch_x.numpy() if d.is_complex else torch_x.to(torch.float64).numpy()
    parts = (values.real, values.imag) if d.is_complex else (values,)
    reference_parts = (reference.real, reference.imag) if d.is_complex else (reference,)
    for part, ref in zip(parts, reference_parts):
        # the same bounds: both samples stay inside torch's range and spread across it
        assert part.min() >= ref.min() - 2 and part.max() <= ref.max() + 2
        assert part.max() - part.min() > 0.5 * (ref.max() - ref.min())


def test_make_tensor_options_as_torch():
    def program(T):
        make = T.testing.make_tensor
        x = make(3, 4, dtype=T.float32, device="cpu", low=-1, high=1, requires_grad=True)
        n = make((2, 3), dtype=T.int64, device="cpu", noncontiguous=True)
        z = make(50, dtype=T.int32, device="cpu", low=0, high=2, exclude_zero=True)
        f = make(50, dtype=T.float32, device="cpu", low=0, high=1e-30, exclude_zero=True)
        one = make(1, dtype=T.float32, device="cpu", noncontiguous=True)
        return (tuple(x.shape), x.requires_grad, x.is_leaf, bool(((x >= -1) & (x < 1)).all()),
                n.is_contiguous(), n.stride(), bool((z != 0).all()), bool((f != 0).all()),
                one.is_contiguous(), tuple(make([2, 2], dtype=T.bool, device="cpu").shape))

    assert repr(program(jaxgrad)) == repr(program(torch))


@pytest.mark.parametrize("call", [
    lambda T: T.testing.make_tensor(2, dtype=T.int64, device="cpu", requires_grad=True),
    lambda T: T.testing.make_tensor(2, dtype=T.float32, device="cpu", low=2, high=1),
    lambda T: T.testing.make_tensor(2, dtype=T.float32, device="cpu", low=math.nan),
    lambda T: T.testing.make_tensor(2, dtype=T.uint8, device="cpu", low=-5, high=-1),
    lambda T: T.testing.make_tensor(2, dtype=T.float32, device="cpu", noncontiguous=True,
                                    memory_format=T.contiguous_format),
])
def test_make_tensor_errors_as_torch(call):
    same(call)


def test_make_tensor_low_equal_high_warns_as_torch():
    def program(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = T.testing.make_tensor(3, dtype=T.float32, device="cpu", low=2, high=2)
        return x, [(w.category.__name__, str(w.message)) for w in caught]

    assert normalise(repr(program(jaxgrad)[1])) == normalise(repr(program(torch)[1]))
    same(lambda T: program(T)[0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64",
                                   "complex128"])
def test_finfo_as_torch(dtype):
    info, torch_info = jaxgrad.finfo(getattr(jaxgrad, dtype)), torch.finfo(getattr(torch, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(info, field) == getattr(torch_info, field), field
        assert type(getattr(info, field)) is type(getattr(torch_info, field)), field
    assert repr(info) == repr(torch_info)
    assert info == jaxgrad.finfo(getattr(jaxgrad, dtype))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_as_torch(dtype):
    info, torch_info = jaxgrad.iinfo(getattr(jaxgrad, dtype)), torch.iinfo(getattr(torch, dtype))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(info, field) == getattr(torch_info, field), field
    assert repr(info) == repr(torch_info)


@pytest.mark.parametrize("call", [lambda T: T.finfo(), lambda T: T.finfo(T.int32),
                                  lambda T: T.iinfo(T.float32), lambda T: T.iinfo(T.bool),
                                  lambda T: T.finfo("float32"),
                                  lambda T: T.finfo(T.float32) == T.finfo(T.float32)])
def test_type_info_defaults_and_errors_as_torch(call):
    def outcome(T):
        try:
            return repr(call(T))
        except Exception as e:
            return repr(Raised(e))

    assert outcome(jaxgrad) == normalise(outcome(torch))


def test_layout_and_representation_flags_as_torch():
    def program(T):
        x = T.ones(2, 3)
        return (repr(x.layout), x.layout == T.strided, x.layout == T.sparse_coo, x.is_cpu,
                x.is_sparse, x.is_sparse_csr, x.is_quantized, x.is_nested, x.is_meta,
                x.is_mkldnn, x.is_mps, x.is_xla, T.zeros(2, layout=T.strided).layout,
                T.randn(2, layout=T.strided).shape, T.empty_like(x, layout=None).shape,
                T.full((2,), 1.0, layout=T.strided).layout, isinstance(T.strided, T.layout))

    assert normalise(repr(program(torch))) == repr(program(jaxgrad))


def test_sparse_layouts_are_refused():
    with pytest.raises(NotImplementedError, match="jaxgrad tensors are dense"):
        jaxgrad.zeros(2, layout=jaxgrad.sparse_coo)


def test_rng_state_round_trips_as_torch():
    def program(T):
        T.manual_seed(5)
        state = T.get_rng_state()
        a = T.rand(4)
        T.manual_seed(9)
        T.set_rng_state(state)
        g = T.Generator().manual_seed(3)
        g_state = g.get_state()
        g.manual_seed(4)
        g.set_state(g_state)
        return (state.dtype, state.dim(), bool((T.rand(4) == a).all()), T.initial_seed(),
                g.initial_seed())

    assert normalise(repr(program(torch))) == repr(program(jaxgrad))
    same(lambda T: T.set_rng_state(T.zeros(3)))


# ---- testing._internal ---------------------------------------------------------------------


def test_assert_equal_relaxes_pairing_as_torchs_test_case():
    from jaxgrad.testing._internal.common_utils import TestCase

    case = TestCase()
    case.assertEqual(jaxgrad.tensor([1.0, 2.0]), [1, 2])  # a sequence becomes a tensor
    case.assertEqual(jaxgrad.tensor(3.0), 3)  # a number against a one-element tensor
    case.assertEqual(1, 1.0)
    case.assertEqual(jaxgrad.tensor([float("nan")]), jaxgrad.tensor([float("nan")]))
    case.assertEqual(jaxgrad.tensor([1.0]), np.array([1.0], dtype=np.float32))
    case.assertEqual({"a": (1, "x")}, {"a": [1, "x"]})
    case.assertEqual(jaxgrad.float32, jaxgrad.float32)
    case.assertEqual(jaxgrad.nn.ModuleList([]), [])
    case.assertNotEqual(jaxgrad.tensor([1.0]), jaxgrad.tensor([1.0], dtype=jaxgrad.float64))
    case.assertEqual(jaxgrad.tensor([1.0]), jaxgrad.tensor([1.0], dtype=jaxgrad.float64),
                     exact_dtype=False)
    case.precision = 0.5
    case.assertEqual(jaxgrad.tensor([1.0]), jaxgrad.tensor([1.4]))
    with pytest.raises(AssertionError, match=r"(?s)Tensor-likes are not close!.*\nextra$"):
        TestCase().assertEqual(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 3.0]), "extra")
    with pytest.raises(ValueError, match="Only single element tensor-likes"):
        TestCase().assertEqual(jaxgrad.tensor([1.0, 2.0]), 1.0)
    with pytest.raises(AssertionError, match="String comparison failed"):
        TestCase().assertEqual("a", "b")


def _generic_test_class(T, utils, device_type, ran):
    class TestExample(utils.TestCase):
        @utils.parametrize("x", [1, 2.5, utils.subtest("s", name="named"), (1,)])
        @utils.parametrize("flag", [True, False])
        def test_values(self, x, flag):
            ran.append((x, flag))

        @utils.parametrize("a,b", [(1, "p"), (2, "q")], name_fn=lambda a, b: f"{b}{a}")
        def test_named(self, a, b):
            ran.append((a, b))

        @device_type.dtypes(T.float32, T.float64)
        @utils.parametrize("n", [0, 3])
        def test_device(self, device, dtype, n):
            self.assertEqual(T.ones(n, device=device, dtype=dtype).sum(), n)
            ran.append((device, str(dtype), n))

        @device_type.onlyCUDA
        def test_cuda_only(self, device):
            ran.append("cuda")

        def helper(self):
            return 1

    return TestExample


def _instantiated(T, utils, device_type):
    ran: list = []
    generic = _generic_test_class(T, utils, device_type, ran)
    scope = {"TestExample": generic}
    device_type.instantiate_device_type_tests(generic, scope, only_for="cpu")
    cpu = scope.pop("TestExampleCPU")
    names = sorted(unittest.defaultTestLoader.getTestCaseNames(cpu))
    result = unittest.TextTestRunner(stream=io.StringIO()).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(cpu))
    return (sorted(scope), names, result.testsRun, len(result.skipped),
            len(result.failures + result.errors), normalise(repr(sorted(map(repr, ran)))),
            cpu("test_named_p1_cpu").helper())


def test_device_type_tests_are_instantiated_as_torchs():
    from torch.testing._internal import common_device_type as torch_device_type
    from torch.testing._internal import common_utils as torch_utils

    from jaxgrad.testing._internal import common_device_type, common_utils

    expected = _instantiated(torch, torch_utils, torch_device_type)
    assert _instantiated(jaxgrad, common_utils, common_device_type) == expected


def test_parametrized_tests_are_instantiated_as_torchs():
    from torch.testing._internal import common_utils as torch_utils

    from jaxgrad.testing._internal import common_utils

    def names(utils):
        class TestPlain(utils.TestCase):
            @utils.parametrize("x", [1, "a", None])
            def test_x(self, x):
                pass

        utils.instantiate_parametrized_tests(TestPlain)
        return sorted(n for n in dir(TestPlain) if n.startswith("test_"))

    assert names(common_utils) == names(torch_utils)
