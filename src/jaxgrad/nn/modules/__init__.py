"""Layers and containers of ``jaxgrad.nn``, one family per module."""

from . import module as module
from .activation import LogSoftmax as LogSoftmax
from .activation import ReLU as ReLU
from .activation import Sigmoid as Sigmoid
from .activation import Softmax as Softmax
from .activation import Tanh as Tanh
from .container import ModuleDict as ModuleDict
from .container import ModuleList as ModuleList
from .container import Sequential as Sequential
from .flatten import Flatten as Flatten
from .linear import Identity as Identity
from .linear import Linear as Linear
from .module import Module as Module
