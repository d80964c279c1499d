"""``jaxgrad.nn.functional``: torch.nn.functional's layers, activations and losses.

Each function checks its arguments from shapes (with torch's messages) and then either calls one
op-table row (``jaxgrad._ops.nn``) or composes existing ops exactly as torch composes them, so
the graph has torch's nodes (``F.linear`` on a 2-D input is one ``AddmmBackward0``; ``F.l1_loss``
is ``MeanBackward0(AbsBackward0(SubBackward0))``).

>>> import jaxgrad
>>> import jaxgrad.nn.functional as F
>>> x = jaxgrad.tensor([[1.0, -2.0]], requires_grad=True)
>>> F.relu(x)
tensor([[1., 0.]], grad_fn=<ReluBackward0>)
"""

from .._core.typename import public_path
from .._functions.distance import pdist as pdist  # (torch's F.pdist is torch.pdist)
from ._functional.activations import celu as celu
from ._functional.activations import elu as elu
from ._functional.activations import elu_ as elu_
from ._functional.activations import gelu as gelu
from ._functional.activations import glu as glu
from ._functional.activations import gumbel_softmax as gumbel_softmax
from ._functional.activations import hardshrink as hardshrink
from ._functional.activations import hardsigmoid as hardsigmoid
from ._functional.activations import hardswish as hardswish
from ._functional.activations import hardtanh as hardtanh
from ._functional.activations import hardtanh_ as hardtanh_
from ._functional.activations import leaky_relu as leaky_relu
from ._functional.activations import leaky_relu_ as leaky_relu_
from ._functional.activations import log_softmax as log_softmax
from ._functional.activations import logsigmoid as logsigmoid
from ._functional.activations import mish as mish
from ._functional.activations import prelu as prelu
from ._functional.activations import relu as relu
from ._functional.activations import relu6 as relu6
from ._functional.activations import relu_ as relu_
from ._functional.activations import rrelu as rrelu
from ._functional.activations import rrelu_ as rrelu_
from ._functional.activations import selu as selu
from ._functional.activations import sigmoid as sigmoid
from ._functional.activations import silu as silu
from ._functional.activations import softmax as softmax
from ._functional.activations import softmin as softmin
from ._functional.activations import softplus as softplus
from ._functional.activations import softshrink as softshrink
from ._functional.activations import softsign as softsign
from ._functional.activations import tanh as tanh
from ._functional.activations import tanhshrink as tanhshrink
from ._functional.activations import threshold as threshold
from ._functional.activations import threshold_ as threshold_
from ._functional.aten_forms import celu_ as celu_
from ._functional.aten_forms import selu_ as selu_
from ._functional.attention import _canonical_mask as _canonical_mask  # torch's name, for nn
from ._functional.attention import multi_head_attention_forward as multi_head_attention_forward
from ._functional.attention import scaled_dot_product_attention as scaled_dot_product_attention
from ._functional.channels import channel_shuffle as channel_shuffle
from ._functional.channels import local_response_norm as local_response_norm
from ._functional.channels import native_channel_shuffle as native_channel_shuffle
from ._functional.convolution import bilinear as bilinear
from ._functional.convolution import conv1d as conv1d
from ._functional.convolution import conv2d as conv2d
from ._functional.convolution import conv3d as conv3d
from ._functional.convolution import conv_tbc as conv_tbc
from ._functional.convolution import conv_transpose1d as conv_transpose1d
from ._functional.convolution import conv_transpose2d as conv_transpose2d
from ._functional.convolution import conv_transpose3d as conv_transpose3d
from ._functional.convolution import linear as linear
from ._functional.convolution import pad as pad
from ._functional.dropout import alpha_dropout as alpha_dropout
from ._functional.dropout import dropout as dropout
from ._functional.dropout import dropout1d as dropout1d
from ._functional.dropout import dropout2d as dropout2d
from ._functional.dropout import dropout3d as dropout3d
from ._functional.dropout import feature_alpha_dropout as feature_alpha_dropout
from ._functional.folding import affine_grid as affine_grid
from ._functional.folding import fold as fold
from ._functional.folding import grid_sample as grid_sample
from ._functional.folding import unfold as unfold
from ._functional.interpolation import interpolate as interpolate
from ._functional.linear_cross_entropy import linear_cross_entropy as linear_cross_entropy
from ._functional.losses import binary_cross_entropy as binary_cross_entropy
from ._functional.losses import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from ._functional.losses import cosine_embedding_loss as cosine_embedding_loss
from ._functional.losses import cross_entropy as cross_entropy
from ._functional.losses import ctc_loss as ctc_loss
from ._functional.losses import gaussian_nll_loss as gaussian_nll_loss
from ._functional.losses import hinge_embedding_loss as hinge_embedding_loss
from ._functional.losses import huber_loss as huber_loss
from ._functional.losses import kl_div as kl_div
from ._functional.losses import l1_loss as l1_loss
from ._functional.losses import margin_ranking_loss as margin_ranking_loss
from ._functional.losses import mse_loss as mse_loss
from ._functional.losses import multi_margin_loss as multi_margin_loss
from ._functional.losses import multilabel_margin_loss as multilabel_margin_loss
from ._functional.losses import multilabel_soft_margin_loss as multilabel_soft_margin_loss
from ._functional.losses import nll_loss as nll_loss
from ._functional.losses import poisson_nll_loss as poisson_nll_loss
from ._functional.losses import smooth_l1_loss as smooth_l1_loss
from ._functional.losses import soft_margin_loss as soft_margin_loss
from ._functional.losses import triplet_margin_loss as triplet_margin_loss
from ._functional.losses import (
    triplet_margin_with_distance_loss as triplet_margin_with_distance_loss,
)
from ._functional.normalization import batch_norm as batch_norm
from ._functional.normalization import cosine_similarity as cosine_similarity
from ._functional.normalization import group_norm as group_norm
from ._functional.normalization import instance_norm as instance_norm
from ._functional.normalization import layer_norm as layer_norm
from ._functional.normalization import normalize as normalize
from ._functional.normalization import pairwise_distance as pairwise_distance
from ._functional.normalization import rms_norm as rms_norm
from ._functional.pooling import adaptive_avg_pool1d as adaptive_avg_pool1d
from ._functional.pooling import adaptive_avg_pool2d as adaptive_avg_pool2d
from ._functional.pooling import adaptive_max_pool1d as adaptive_max_pool1d
from ._functional.pooling import adaptive_max_pool2d as adaptive_max_pool2d
from ._functional.pooling import avg_pool1d as avg_pool1d
from ._functional.pooling import avg_pool2d as avg_pool2d
from ._functional.pooling import max_pool1d as max_pool1d
from ._functional.pooling import max_pool2d as max_pool2d
from ._functional.pooling import pixel_shuffle as pixel_shuffle
from ._functional.pooling import pixel_unshuffle as pixel_unshuffle
from ._functional.pooling_nd import adaptive_avg_pool3d as adaptive_avg_pool3d
from ._functional.pooling_nd import (
    adaptive_max_pool1d_with_indices as adaptive_max_pool1d_with_indices,
)
from ._functional.pooling_nd import (
    adaptive_max_pool2d_with_indices as adaptive_max_pool2d_with_indices,
)
from ._functional.pooling_nd import adaptive_max_pool3d as adaptive_max_pool3d
from ._functional.pooling_nd import (
    adaptive_max_pool3d_with_indices as adaptive_max_pool3d_with_indices,
)
from ._functional.pooling_nd import avg_pool3d as avg_pool3d
from ._functional.pooling_nd import fractional_max_pool2d as fractional_max_pool2d
from ._functional.pooling_nd import (
    fractional_max_pool2d_with_indices as fractional_max_pool2d_with_indices,
)
from ._functional.pooling_nd import fractional_max_pool3d as fractional_max_pool3d
from ._functional.pooling_nd import (
    fractional_max_pool3d_with_indices as fractional_max_pool3d_with_indices,
)
from ._functional.pooling_nd import lp_pool1d as lp_pool1d
from ._functional.pooling_nd import lp_pool2d as lp_pool2d
from ._functional.pooling_nd import lp_pool3d as lp_pool3d
from ._functional.pooling_nd import max_pool1d_with_indices as max_pool1d_with_indices
from ._functional.pooling_nd import max_pool2d_with_indices as max_pool2d_with_indices
from ._functional.pooling_nd import max_pool3d as max_pool3d
from ._functional.pooling_nd import max_pool3d_with_indices as max_pool3d_with_indices
from ._functional.pooling_nd import max_unpool1d as max_unpool1d
from ._functional.pooling_nd import max_unpool2d as max_unpool2d
from ._functional.pooling_nd import max_unpool3d as max_unpool3d
from ._functional.sparse import embedding as embedding
from ._functional.sparse import embedding_bag as embedding_bag
from ._functional.sparse import one_hot as one_hot
from ._functional.upsampling import upsample as upsample
from ._functional.upsampling import upsample_bilinear as upsample_bilinear
from ._functional.upsampling import upsample_nearest as upsample_nearest

# shown where torch shows its own: <function jaxgrad.nn.functional.relu>
for _function in [f for f in list(globals().values())
                  if getattr(f, "__module__", "").startswith("jaxgrad.nn._functional.")
                  and not f.__name__.startswith("_")]:
    public_path(__name__)(_function)
del _function
