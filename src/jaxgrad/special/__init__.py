"""``torch.special``: the special functions, under torch's names (each one's ``__name__`` is
torch's, ``special_<name>``; where it is another name of a top-level op, it records that op's
node, as torch's does: ``expit`` records SigmoidBackward0).

>>> import jaxgrad
>>> jaxgrad.special.gammaincc(jaxgrad.tensor([1.0]), jaxgrad.tensor([0.0]))
tensor([1.])
>>> jaxgrad.special.expit(jaxgrad.tensor([0.0]))
tensor([0.5000])
"""

from .._functions import catalog as _catalog  # noqa: F401 - the ops below are declared there
from .._functions.opgen import FORMS as _FORMS
from .._functions.opgen import namespaced_alias
from .._functions.special import POLYNOMIALS as _POLYNOMIALS

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy",
    "zeta",
]

# other names of top-level ops (torch's CompositeImplicit aliases: the op's node)
digamma = namespaced_alias("digamma", "special_digamma")
erf = namespaced_alias("erf", "special_erf")
erfc = namespaced_alias("erfc", "special_erfc")
erfinv = namespaced_alias("erfinv", "special_erfinv")
exp2 = namespaced_alias("exp2", "special_exp2")
expit = namespaced_alias("sigmoid", "special_expit")
expm1 = namespaced_alias("expm1", "special_expm1")
gammainc = namespaced_alias("igamma", "special_gammainc")
gammaincc = namespaced_alias("igammac", "special_gammaincc")
gammaln = namespaced_alias("lgamma", "special_gammaln")
i0 = namespaced_alias("i0", "special_i0")
log1p = namespaced_alias("log1p", "special_log1p")
logit = namespaced_alias("logit", "special_logit")
multigammaln = namespaced_alias("mvlgamma", "special_multigammaln")
polygamma = namespaced_alias("polygamma", "special_polygamma")
psi = namespaced_alias("digamma", "special_psi")
sinc = namespaced_alias("sinc", "special_sinc")
xlogy = namespaced_alias("xlogy", "special_xlogy")

# torch.special's own ops, and the ones written on top of rows (``_functions/special.py``)
entr = _FORMS["special_entr"]
erfcx = _FORMS["special_erfcx"]
i0e = _FORMS["special_i0e"]
i1 = _FORMS["special_i1"]
i1e = _FORMS["special_i1e"]
log_ndtr = _FORMS["special_log_ndtr"]
log_softmax = _FORMS["special_log_softmax"]
logsumexp = _FORMS["special_logsumexp"]
ndtr = _FORMS["special_ndtr"]
ndtri = _FORMS["special_ndtri"]
round = _FORMS["special_round"]
softmax = _FORMS["special_softmax"]
xlog1py = _FORMS["special_xlog1py"]
zeta = _FORMS["special_zeta"]

# non-differentiable: the Bessel family and the orthogonal polynomials
airy_ai = _FORMS["special_airy_ai"]
bessel_j0 = _FORMS["special_bessel_j0"]
bessel_j1 = _FORMS["special_bessel_j1"]
bessel_y0 = _FORMS["special_bessel_y0"]
bessel_y1 = _FORMS["special_bessel_y1"]
chebyshev_polynomial_t = _POLYNOMIALS["special_chebyshev_polynomial_t"]
chebyshev_polynomial_u = _POLYNOMIALS["special_chebyshev_polynomial_u"]
chebyshev_polynomial_v = _POLYNOMIALS["special_chebyshev_polynomial_v"]
chebyshev_polynomial_w = _POLYNOMIALS["special_chebyshev_polynomial_w"]
hermite_polynomial_h = _POLYNOMIALS["special_hermite_polynomial_h"]
hermite_polynomial_he = _POLYNOMIALS["special_hermite_polynomial_he"]
laguerre_polynomial_l = _POLYNOMIALS["special_laguerre_polynomial_l"]
legendre_polynomial_p = _POLYNOMIALS["special_legendre_polynomial_p"]
modified_bessel_i0 = _FORMS["special_modified_bessel_i0"]
modified_bessel_i1 = _FORMS["special_modified_bessel_i1"]
modified_bessel_k0 = _FORMS["special_modified_bessel_k0"]
modified_bessel_k1 = _FORMS["special_modified_bessel_k1"]
scaled_modified_bessel_k0 = _FORMS["special_scaled_modified_bessel_k0"]
scaled_modified_bessel_k1 = _FORMS["special_scaled_modified_bessel_k1"]
shifted_chebyshev_polynomial_t = _POLYNOMIALS["special_shifted_chebyshev_polynomial_t"]
shifted_chebyshev_polynomial_u = _POLYNOMIALS["special_shifted_chebyshev_polynomial_u"]
shifted_chebyshev_polynomial_v = _POLYNOMIALS["special_shifted_chebyshev_polynomial_v"]
shifted_chebyshev_polynomial_w = _POLYNOMIALS["special_shifted_chebyshev_polynomial_w"]
spherical_bessel_j0 = _FORMS["special_spherical_bessel_j0"]
