"""jaxgrad: PyTorch's autograd semantics, exactly, on JAX.

>>> import jaxgrad
>>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x ** 2).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4.])
"""

import math as _math

from . import _VF as _VF  # torch._VF: native functions by name
from . import accelerator as accelerator
from . import amp as amp
from . import autograd as autograd
from . import backends as backends
from . import compiler as compiler
from . import cpu as cpu
from . import cuda as cuda
from . import distributed as distributed
from . import distributions as distributions
from . import fft as fft
from . import func as func
from . import kernel_cache as kernel_cache
from . import linalg as linalg
from . import nn as nn
from . import onnx as onnx
from . import ops as ops
from . import optim as optim
from . import profiler as profiler
from . import random as random
from . import return_types as return_types
from . import serialization as serialization
from . import special as special
from . import storage as storage
from . import testing as testing
from . import utils as utils
from . import viz as viz
from ._autograd.lobpcg import lobpcg as lobpcg
from ._compile.compiler import compile as compile
from ._core.anomaly import is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled
from ._core.anomaly import is_anomaly_enabled as is_anomaly_enabled
from ._core.anomaly import set_anomaly_enabled as set_anomaly_enabled
from ._core.caches import clear_caches as _clear_caches  # noqa: F401 - private, for tests
from ._core.device import device as device
from ._core.device import get_default_device as get_default_device
from ._core.device import set_default_device as set_default_device
from ._core.dtypes import bfloat16 as bfloat16
from ._core.dtypes import bool_ as bool  # noqa: F401 - torch.bool
from ._core.dtypes import complex64 as complex64
from ._core.dtypes import complex128 as complex128
from ._core.dtypes import dtype as dtype
from ._core.dtypes import float16 as float16
from ._core.dtypes import float32 as float32
from ._core.dtypes import float64 as float64
from ._core.dtypes import get_default_dtype as get_default_dtype
from ._core.dtypes import int8 as int8
from ._core.dtypes import int16 as int16
from ._core.dtypes import int32 as int32
from ._core.dtypes import int64 as int64
from ._core.dtypes import promote_types as promote_types
from ._core.dtypes import set_default_dtype as set_default_dtype
from ._core.dtypes import uint8 as uint8
from ._core.grad_mode import enable_grad as enable_grad
from ._core.grad_mode import inference_mode as inference_mode
from ._core.grad_mode import is_grad_enabled as is_grad_enabled
from ._core.grad_mode import is_inference_mode_enabled as is_inference_mode_enabled
from ._core.grad_mode import no_grad as no_grad
from ._core.grad_mode import set_grad_enabled as set_grad_enabled
from ._core.layout import jagged as jagged
from ._core.layout import layout as layout
from ._core.layout import sparse_bsc as sparse_bsc
from ._core.layout import sparse_bsr as sparse_bsr
from ._core.layout import sparse_coo as sparse_coo
from ._core.layout import sparse_csc as sparse_csc
from ._core.layout import sparse_csr as sparse_csr
from ._core.layout import strided as strided
from ._core.legacy_storage import BFloat16Storage as BFloat16Storage
from ._core.legacy_storage import BoolStorage as BoolStorage
from ._core.legacy_storage import ByteStorage as ByteStorage
from ._core.legacy_storage import CharStorage as CharStorage
from ._core.legacy_storage import ComplexDoubleStorage as ComplexDoubleStorage
from ._core.legacy_storage import ComplexFloatStorage as ComplexFloatStorage
from ._core.legacy_storage import DoubleStorage as DoubleStorage
from ._core.legacy_storage import FloatStorage as FloatStorage
from ._core.legacy_storage import HalfStorage as HalfStorage
from ._core.legacy_storage import IntStorage as IntStorage
from ._core.legacy_storage import LongStorage as LongStorage
from ._core.legacy_storage import ShortStorage as ShortStorage
from ._core.memory_format import channels_last as channels_last
from ._core.memory_format import channels_last_3d as channels_last_3d
from ._core.memory_format import contiguous_format as contiguous_format
from ._core.memory_format import memory_format as memory_format
from ._core.memory_format import preserve_format as preserve_format
from ._core.process_settings import (
    are_deterministic_algorithms_enabled as are_deterministic_algorithms_enabled,
)
from ._core.process_settings import compiled_with_cxx11_abi as compiled_with_cxx11_abi
from ._core.process_settings import get_deterministic_debug_mode as get_deterministic_debug_mode
from ._core.process_settings import get_float32_matmul_precision as get_float32_matmul_precision
from ._core.process_settings import get_num_interop_threads as get_num_interop_threads
from ._core.process_settings import get_num_threads as get_num_threads
from ._core.process_settings import has_lapack as has_lapack
from ._core.process_settings import has_mkl as has_mkl
from ._core.process_settings import has_openmp as has_openmp
from ._core.process_settings import has_spectral as has_spectral
from ._core.process_settings import (
    is_deterministic_algorithms_warn_only_enabled as is_deterministic_algorithms_warn_only_enabled,
)
from ._core.process_settings import set_deterministic_debug_mode as set_deterministic_debug_mode
from ._core.process_settings import set_float32_matmul_precision as set_float32_matmul_precision
from ._core.process_settings import set_flush_denormal as set_flush_denormal
from ._core.process_settings import set_num_interop_threads as set_num_interop_threads
from ._core.process_settings import set_num_threads as set_num_threads
from ._core.process_settings import use_deterministic_algorithms as use_deterministic_algorithms
from ._core.storage import TypedStorage as TypedStorage
from ._core.storage import UntypedStorage as UntypedStorage
from ._core.tensor import Size as Size
from ._core.tensor import Tensor as Tensor
from ._core.tensor import is_tensor as is_tensor
from ._core.tensor_str import set_printoptions as set_printoptions
from ._core.type_info import finfo as finfo
from ._core.type_info import iinfo as iinfo
from ._core.warn_once import is_warn_always_enabled as is_warn_always_enabled
from ._core.warn_once import set_warn_always as set_warn_always
from ._func.jax_op import jax_op as jax_op
from ._func.transforms import vmap as vmap
from ._functions import catalog as _catalog
from ._functions import foreach as _foreach
from ._functions import methods as _methods
from ._functions.asarray import asarray as asarray
from ._functions.asarray import frombuffer as frombuffer
from ._functions.creation import arange as arange
from ._functions.creation import as_tensor as as_tensor
from ._functions.creation import empty as empty
from ._functions.creation import empty_like as empty_like
from ._functions.creation import eye as eye
from ._functions.creation import from_jax as from_jax
from ._functions.creation import from_numpy as from_numpy
from ._functions.creation import full as full
from ._functions.creation import full_like as full_like
from ._functions.creation import linspace as linspace
from ._functions.creation import logspace as logspace
from ._functions.creation import ones as ones
from ._functions.creation import ones_like as ones_like
from ._functions.creation import range as range  # (torch.range, deprecated)
from ._functions.creation import scalar_tensor as scalar_tensor
from ._functions.creation import tensor as tensor
from ._functions.creation import zeros as zeros
from ._functions.creation import zeros_like as zeros_like
from ._functions.dlpack import from_dlpack as from_dlpack
from ._functions.dlpack import to_dlpack as to_dlpack
from ._functions.legacy_types import CPU_TYPES as _CPU_TYPES
from ._functions.linalg import tensordot as tensordot
from ._functions.linalg import tril_indices as tril_indices
from ._functions.linalg import triu_indices as triu_indices
from ._functions.linalg_lowrank import pca_lowrank as pca_lowrank
from ._functions.linalg_lowrank import svd_lowrank as svd_lowrank
from ._functions.pointwise import typename as typename
from ._functions.queries import broadcast_shapes as broadcast_shapes
from ._functions.queries import is_storage as is_storage
from ._functions.random import Generator as Generator
from ._functions.random import bernoulli as bernoulli
from ._functions.random import binomial as binomial
from ._functions.random import get_rng_state as get_rng_state
from ._functions.random import initial_seed as initial_seed
from ._functions.random import manual_seed as manual_seed
from ._functions.random import multinomial as multinomial
from ._functions.random import normal as normal
from ._functions.random import poisson as poisson
from ._functions.random import rand as rand
from ._functions.random import rand_like as rand_like
from ._functions.random import randint as randint
from ._functions.random import randint_like as randint_like
from ._functions.random import randn as randn
from ._functions.random import randn_like as randn_like
from ._functions.random import randperm as randperm
from ._functions.random import rrelu as rrelu
from ._functions.random import rrelu_ as rrelu_
from ._functions.random import seed as seed
from ._functions.random import set_rng_state as set_rng_state
from ._functions.random_gamma import _dirichlet_grad as _dirichlet_grad
from ._functions.random_gamma import _sample_dirichlet as _sample_dirichlet
from ._functions.random_gamma import _standard_gamma as _standard_gamma
from ._functions.random_gamma import _standard_gamma_grad as _standard_gamma_grad
from ._functions.removed_linalg import eig as eig
from ._functions.removed_linalg import lstsq as lstsq
from ._functions.removed_linalg import matrix_rank as matrix_rank
from ._functions.removed_linalg import solve as solve
from ._functions.removed_linalg import symeig as symeig
from ._functions.unravel import unravel_index as unravel_index
from ._functions.windows import bartlett_window as bartlett_window
from ._functions.windows import blackman_window as blackman_window
from ._functions.windows import hamming_window as hamming_window
from ._functions.windows import hann_window as hann_window
from ._functions.windows import kaiser_window as kaiser_window
from ._serialization.save_load import load as load
from ._serialization.save_load import save as save
from .amp import autocast as autocast
from .amp._switches import autocast_decrement_nesting as autocast_decrement_nesting
from .amp._switches import autocast_increment_nesting as autocast_increment_nesting
from .amp._switches import clear_autocast_cache as clear_autocast_cache
from .amp._switches import get_autocast_cpu_dtype as get_autocast_cpu_dtype
from .amp._switches import get_autocast_dtype as get_autocast_dtype
from .amp._switches import get_autocast_gpu_dtype as get_autocast_gpu_dtype
from .amp._switches import is_autocast_cache_enabled as is_autocast_cache_enabled
from .amp._switches import is_autocast_cpu_enabled as is_autocast_cpu_enabled
from .amp._switches import is_autocast_enabled as is_autocast_enabled
from .amp._switches import set_autocast_cache_enabled as set_autocast_cache_enabled
from .amp._switches import set_autocast_cpu_dtype as set_autocast_cpu_dtype
from .amp._switches import set_autocast_cpu_enabled as set_autocast_cpu_enabled
from .amp._switches import set_autocast_dtype as set_autocast_dtype
from .amp._switches import set_autocast_enabled as set_autocast_enabled
from .amp._switches import set_autocast_gpu_dtype as set_autocast_gpu_dtype
from .nn._functional.aten_forms import alpha_dropout as alpha_dropout
from .nn._functional.aten_forms import alpha_dropout_ as alpha_dropout_
from .nn._functional.aten_forms import batch_norm as batch_norm
from .nn._functional.aten_forms import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from .nn._functional.aten_forms import celu as celu
from .nn._functional.aten_forms import celu_ as celu_
from .nn._functional.aten_forms import constant_pad_nd as constant_pad_nd
from .nn._functional.aten_forms import cosine_embedding_loss as cosine_embedding_loss
from .nn._functional.aten_forms import ctc_loss as ctc_loss
from .nn._functional.aten_forms import dropout as dropout
from .nn._functional.aten_forms import dropout_ as dropout_
from .nn._functional.aten_forms import embedding as embedding
from .nn._functional.aten_forms import embedding_bag as embedding_bag
from .nn._functional.aten_forms import feature_alpha_dropout as feature_alpha_dropout
from .nn._functional.aten_forms import feature_alpha_dropout_ as feature_alpha_dropout_
from .nn._functional.aten_forms import feature_dropout as feature_dropout
from .nn._functional.aten_forms import feature_dropout_ as feature_dropout_
from .nn._functional.aten_forms import group_norm as group_norm
from .nn._functional.aten_forms import hinge_embedding_loss as hinge_embedding_loss
from .nn._functional.aten_forms import instance_norm as instance_norm
from .nn._functional.aten_forms import kl_div as kl_div
from .nn._functional.aten_forms import layer_norm as layer_norm
from .nn._functional.aten_forms import margin_ranking_loss as margin_ranking_loss
from .nn._functional.aten_forms import poisson_nll_loss as poisson_nll_loss
from .nn._functional.aten_forms import rms_norm as rms_norm
from .nn._functional.aten_forms import selu as selu
from .nn._functional.aten_forms import selu_ as selu_
from .nn._functional.aten_forms import threshold as threshold
from .nn._functional.aten_forms import triplet_margin_loss as triplet_margin_loss
from .nn._functional.aten_pooling import adaptive_max_pool1d as adaptive_max_pool1d
from .nn._functional.aten_pooling import max_pool1d as max_pool1d
from .nn._functional.aten_pooling import max_pool1d_with_indices as max_pool1d_with_indices
from .nn._functional.aten_pooling import max_pool2d as max_pool2d
from .nn._functional.aten_pooling import max_pool3d as max_pool3d
from .nn._functional.channels import channel_shuffle as channel_shuffle
from .nn._functional.channels import native_channel_shuffle as native_channel_shuffle
from .nn._functional.convolution import convolution as convolution
from .nn._functional.normalization import _weight_norm as _weight_norm
from .nn._functional.normalization import _weight_norm_interface as _weight_norm_interface
from .nn._functional.normalization import native_batch_norm as native_batch_norm
from .nn._functional.normalization import native_group_norm as native_group_norm
from .nn._functional.normalization import native_layer_norm as native_layer_norm
from .nn._functional.normalization import norm_except_dim as norm_except_dim
from .nn._functional.recurrent_cells import gru_cell as gru_cell
from .nn._functional.recurrent_cells import lstm_cell as lstm_cell
from .nn._functional.recurrent_cells import rnn_relu_cell as rnn_relu_cell
from .nn._functional.recurrent_cells import rnn_tanh_cell as rnn_tanh_cell
from .nn.functional import adaptive_avg_pool1d as adaptive_avg_pool1d
from .nn.functional import avg_pool1d as avg_pool1d
from .nn.functional import bilinear as bilinear
from .nn.functional import conv1d as conv1d
from .nn.functional import conv2d as conv2d
from .nn.functional import conv3d as conv3d
from .nn.functional import conv_tbc as conv_tbc
from .nn.functional import conv_transpose1d as conv_transpose1d
from .nn.functional import conv_transpose2d as conv_transpose2d
from .nn.functional import conv_transpose3d as conv_transpose3d
from .nn.functional import cosine_similarity as cosine_similarity
from .nn.functional import hardshrink as hardshrink
from .nn.functional import pairwise_distance as pairwise_distance
from .nn.functional import pixel_shuffle as pixel_shuffle
from .nn.functional import pixel_unshuffle as pixel_unshuffle
from .nn.functional import prelu as prelu
from .nn.functional import threshold_ as threshold_

inf = float("inf")
nan = float("nan")
pi = _math.pi
e = _math.e
newaxis = None

# Every op declared with a function variant (``jaxgrad.exp``, ``jaxgrad.add``, ...), generated
# from its declaration; ``__init__.pyi`` lists them for editors and type checkers.
globals().update(_catalog.FUNCTIONS)
_methods.attach_tensor_methods()

# torch's legacy typed constructors: jaxgrad.FloatTensor, jaxgrad.LongTensor, ...
BFloat16Tensor = _CPU_TYPES["BFloat16Tensor"]
BoolTensor = _CPU_TYPES["BoolTensor"]
ByteTensor = _CPU_TYPES["ByteTensor"]
CharTensor = _CPU_TYPES["CharTensor"]
DoubleTensor = _CPU_TYPES["DoubleTensor"]
FloatTensor = _CPU_TYPES["FloatTensor"]
HalfTensor = _CPU_TYPES["HalfTensor"]
IntTensor = _CPU_TYPES["IntTensor"]
LongTensor = _CPU_TYPES["LongTensor"]
ShortTensor = _CPU_TYPES["ShortTensor"]

float = float32
double = float64
half = float16
cfloat = complex64
cdouble = complex128
long = int64
int = int32
short = int16

__version__ = "0.1.0"

# torch's _foreach_* functions (_foreach_exp, _foreach_add_, ...), generated in ``foreach``
globals().update(_foreach.FUNCTIONS)
