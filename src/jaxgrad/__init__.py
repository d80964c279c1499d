"""jaxgrad: PyTorch's autograd semantics, exactly, on JAX.

>>> import jaxgrad
>>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x ** 2).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4.])
"""

from . import (
    _jax_setup,  # noqa: F401  (enables 64-bit types before anything else)
    _tensor,  # noqa: F401  (Tensor before _dispatch: _tensor and _api import each other)
)
from . import autograd as autograd
from . import nn as nn
from . import optim as optim
from . import return_types as return_types
from ._api import abs as abs
from ._api import add as add
from ._api import addcdiv as addcdiv
from ._api import addcmul as addcmul
from ._api import all as all
from ._api import allclose as allclose
from ._api import amax as amax
from ._api import amin as amin
from ._api import any as any
from ._api import argmax as argmax
from ._api import argmin as argmin
from ._api import bmm as bmm
from ._api import cat as cat
from ._api import clamp as clamp
from ._api import clip as clip
from ._api import clone as clone
from ._api import concat as concat
from ._api import cos as cos
from ._api import div as div
from ._api import dot as dot
from ._api import eq as eq
from ._api import equal as equal
from ._api import exp as exp
from ._api import flatten as flatten
from ._api import ge as ge
from ._api import gt as gt
from ._api import isclose as isclose
from ._api import le as le
from ._api import lerp as lerp
from ._api import log as log
from ._api import log_softmax as log_softmax
from ._api import logical_not as logical_not
from ._api import lt as lt
from ._api import matmul as matmul
from ._api import max as max
from ._api import maximum as maximum
from ._api import mean as mean
from ._api import min as min
from ._api import minimum as minimum
from ._api import mm as mm
from ._api import mul as mul
from ._api import mv as mv
from ._api import ne as ne
from ._api import neg as neg
from ._api import nonzero as nonzero
from ._api import norm as norm
from ._api import permute as permute
from ._api import pow as pow
from ._api import prod as prod
from ._api import reciprocal as reciprocal
from ._api import relu as relu
from ._api import reshape as reshape
from ._api import rsub as rsub
from ._api import select as select
from ._api import sigmoid as sigmoid
from ._api import sign as sign
from ._api import sin as sin
from ._api import softmax as softmax
from ._api import sqrt as sqrt
from ._api import square as square
from ._api import squeeze as squeeze
from ._api import stack as stack
from ._api import std as std
from ._api import sub as sub
from ._api import sum as sum
from ._api import swapaxes as swapaxes
from ._api import t as t
from ._api import tanh as tanh
from ._api import transpose as transpose
from ._api import true_divide as true_divide
from ._api import unbind as unbind
from ._api import unsqueeze as unsqueeze
from ._api import var as var
from ._api import where as where
from ._creation import arange as arange
from ._creation import as_tensor as as_tensor
from ._creation import empty as empty
from ._creation import empty_like as empty_like
from ._creation import eye as eye
from ._creation import from_numpy as from_numpy
from ._creation import full as full
from ._creation import full_like as full_like
from ._creation import linspace as linspace
from ._creation import ones as ones
from ._creation import ones_like as ones_like
from ._creation import tensor as tensor
from ._creation import zeros as zeros
from ._creation import zeros_like as zeros_like
from ._device import device as device
from ._dtypes import bfloat16 as bfloat16
from ._dtypes import bool_ as bool  # noqa: F401 - torch.bool
from ._dtypes import complex64 as complex64
from ._dtypes import complex128 as complex128
from ._dtypes import dtype as dtype
from ._dtypes import float16 as float16
from ._dtypes import float32 as float32
from ._dtypes import float64 as float64
from ._dtypes import get_default_dtype as get_default_dtype
from ._dtypes import int8 as int8
from ._dtypes import int16 as int16
from ._dtypes import int32 as int32
from ._dtypes import int64 as int64
from ._dtypes import promote_types as promote_types
from ._dtypes import set_default_dtype as set_default_dtype
from ._dtypes import uint8 as uint8
from ._grad_mode import enable_grad as enable_grad
from ._grad_mode import inference_mode as inference_mode
from ._grad_mode import is_grad_enabled as is_grad_enabled
from ._grad_mode import is_inference_mode_enabled as is_inference_mode_enabled
from ._grad_mode import no_grad as no_grad
from ._grad_mode import set_grad_enabled as set_grad_enabled
from ._random import Generator as Generator
from ._random import initial_seed as initial_seed
from ._random import manual_seed as manual_seed
from ._random import rand as rand
from ._random import rand_like as rand_like
from ._random import randint as randint
from ._random import randint_like as randint_like
from ._random import randn as randn
from ._random import randn_like as randn_like
from ._random import randperm as randperm
from ._random import seed as seed
from ._tensor import Size as Size
from ._tensor import Tensor as Tensor
from ._tensor import is_tensor as is_tensor
from ._tensor_str import set_printoptions as set_printoptions

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16

__version__ = "0.1.0"
