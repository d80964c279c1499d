"""``jaxgrad.nn``: ``Module`` with torch's registration, state-dict and hook semantics,
``Parameter``, containers, layers and losses.

>>> import jaxgrad
>>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(2, 2), jaxgrad.nn.ReLU())
>>> [name for name, _ in net.named_parameters()]
['0.weight', '0.bias']
"""

from . import functional as functional
from . import init as init
from . import modules as modules
from . import utils as utils
from .modules import ELU as ELU
from .modules import GELU as GELU
from .modules import GRU as GRU
from .modules import LSTM as LSTM
from .modules import RNN as RNN
from .modules import AdaptiveAvgPool2d as AdaptiveAvgPool2d
from .modules import AvgPool2d as AvgPool2d
from .modules import BatchNorm1d as BatchNorm1d
from .modules import BatchNorm2d as BatchNorm2d
from .modules import BCELoss as BCELoss
from .modules import BCEWithLogitsLoss as BCEWithLogitsLoss
from .modules import Bilinear as Bilinear
from .modules import CircularPad1d as CircularPad1d
from .modules import CircularPad2d as CircularPad2d
from .modules import CircularPad3d as CircularPad3d
from .modules import ConstantPad1d as ConstantPad1d
from .modules import ConstantPad2d as ConstantPad2d
from .modules import ConstantPad3d as ConstantPad3d
from .modules import Conv1d as Conv1d
from .modules import Conv2d as Conv2d
from .modules import ConvTranspose1d as ConvTranspose1d
from .modules import ConvTranspose2d as ConvTranspose2d
from .modules import CrossEntropyLoss as CrossEntropyLoss
from .modules import Dropout as Dropout
from .modules import Dropout1d as Dropout1d
from .modules import Dropout2d as Dropout2d
from .modules import Dropout3d as Dropout3d
from .modules import Embedding as Embedding
from .modules import Flatten as Flatten
from .modules import GRUCell as GRUCell
from .modules import Hardtanh as Hardtanh
from .modules import HuberLoss as HuberLoss
from .modules import Identity as Identity
from .modules import KLDivLoss as KLDivLoss
from .modules import L1Loss as L1Loss
from .modules import LayerNorm as LayerNorm
from .modules import LeakyReLU as LeakyReLU
from .modules import Linear as Linear
from .modules import LogSoftmax as LogSoftmax
from .modules import LSTMCell as LSTMCell
from .modules import MaxPool2d as MaxPool2d
from .modules import Module as Module
from .modules import ModuleDict as ModuleDict
from .modules import ModuleList as ModuleList
from .modules import MSELoss as MSELoss
from .modules import MultiheadAttention as MultiheadAttention
from .modules import NLLLoss as NLLLoss
from .modules import ParameterDict as ParameterDict
from .modules import ParameterList as ParameterList
from .modules import ReflectionPad1d as ReflectionPad1d
from .modules import ReflectionPad2d as ReflectionPad2d
from .modules import ReflectionPad3d as ReflectionPad3d
from .modules import ReLU as ReLU
from .modules import ReLU6 as ReLU6
from .modules import ReplicationPad1d as ReplicationPad1d
from .modules import ReplicationPad2d as ReplicationPad2d
from .modules import ReplicationPad3d as ReplicationPad3d
from .modules import RNNBase as RNNBase
from .modules import RNNCell as RNNCell
from .modules import RNNCellBase as RNNCellBase
from .modules import Sequential as Sequential
from .modules import Sigmoid as Sigmoid
from .modules import SiLU as SiLU
from .modules import SmoothL1Loss as SmoothL1Loss
from .modules import Softmax as Softmax
from .modules import Softplus as Softplus
from .modules import Tanh as Tanh
from .modules import ZeroPad1d as ZeroPad1d
from .modules import ZeroPad2d as ZeroPad2d
from .modules import ZeroPad3d as ZeroPad3d
from .parameter import Buffer as Buffer
from .parameter import Parameter as Parameter
