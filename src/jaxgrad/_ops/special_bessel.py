"""``torch.special``'s Bessel family: ``airy_ai``, ``bessel_j0/j1/y0/y1``,
``modified_bessel_i0/i1/k0/k1``, ``scaled_modified_bessel_k0/k1`` and ``spherical_bessel_j0``,
one row each with torch's schema.

torch computes them in the input's dtype (float32 or float64; integral and bool inputs in the
default float dtype; half, bfloat16 and complex refused) with the Cephes rational and Chebyshev
approximations, and derivatives.yaml marks them non-differentiable: a result never requires
grad, JAX's autodiff sees a constant (``stop_gradient``). The kernels below evaluate the same
approximations, in the same order of operations, as pure JAX: every branch is computed and the
lanes are selected with ``where``; Airy's power series is a ``while_loop`` over the lanes that
have not converged. The coefficient tables are the Cephes Math Library's (Copyright (c) 2018,
Stephen L. Moshier, 3-Clause BSD License).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._core.dtypes import scalar_type_name
from ._table import Op
from ._table import example_doc as _doc

_SUPPORTED = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def refuse_unsupported(kernel: str, dtype) -> None:
    """torch's CPU kernels of these functions exist for float32 and float64 only."""
    if np.dtype(dtype) not in _SUPPORTED:
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                  f"'{scalar_type_name(np.dtype(dtype))}'")


def non_differentiable(kernel: str, fn):
    """A forward for ``fn``: float32/float64 only, a constant to JAX's autodiff (torch's
    ``output_differentiability: [False]``)."""

    def forward(*arrays):
        refuse_unsupported(kernel, jnp.result_type(*arrays))
        return jax.lax.stop_gradient(fn(*arrays))

    forward.__name__ = f"_{kernel}"
    return forward


def libm(fn, x):
    """``fn(x)`` for glibc's float32 ``sinf``/``cosf``/``acosf`` (which torch's float32 kernels
    call): computed in float64 and rounded once, within their ulp where XLA's own float32
    kernels drift for large arguments (Ai's phase, ``cos(n acos x)``)."""
    if x.dtype == jnp.float32:
        return fn(x.astype(jnp.float64)).astype(jnp.float32)
    return fn(x)


def _rounded(op, *operands):
    """``op`` of float32 operands rounded once to float32, as the C++ evaluates it: computed in
    float64, so that XLA cannot fuse it with its neighbours (a multiply-add, a division by a
    constant turned into a product) where an ulp matters (a phase, an exponent)."""
    if operands[0].dtype != jnp.float32:
        return op(*operands)
    return op(*(o.astype(jnp.float64) for o in operands)).astype(jnp.float32)


def _three_halves(x, root):
    """``2 |x| sqrt(|x|) / 3`` (Ai's exponent, or its phase below 0), each float32 step
    rounded as torch's kernel rounds it: an ulp of a phase of hundreds of radians shows."""
    product = _rounded(lambda a, b: (2.0 * a) * b, jnp.abs(x), root)
    return _rounded(lambda a: a / 3.0, product)


def _polevl(x, coefficients):
    """``c[0] x^N + ... + c[N]`` by Horner's rule (Cephes' polevl)."""
    result = jnp.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        result = result * x + c
    return result


def _chbevl(y, coefficients):
    """The Chebyshev series ``sum' c_i T_i(y / 2)`` by Clenshaw's recurrence (Cephes' chbevl)."""
    b0, b1, b2 = jnp.full_like(y, coefficients[0]), jnp.zeros_like(y), jnp.zeros_like(y)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _const(value, x):
    return jnp.asarray(value, x.dtype)


# --- Bessel functions of the first and second kind ---------------------------------------------

_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)

_PI_4 = 0.785398163397448309615660845819875721
_3PI_4 = 2.356194490192344928846982537459627163
_SQRT_2_PI = 0.797884560802865355879892119868763737
_2_PI = 0.636619772367581343075535053490057448


def _hankel_asymptotic(x, w, pp, pq, qp, qq, shift, second_kind):
    """The large-``x`` form ``(P cos(x - shift) - 5/x Q sin(x - shift)) sqrt(2/pi) / sqrt(x)``
    (``sin``/``+cos`` for the second kind), with ``w = 25 / x^2``."""
    p = _polevl(w, pp) / _polevl(w, pq)
    q = _const(5.0, x) / x * (_polevl(w, qp) / _polevl(w, qq))
    phase = x - _const(shift, x)
    if second_kind:
        wave = p * libm(jnp.sin, phase) + q * libm(jnp.cos, phase)
    else:
        wave = p * libm(jnp.cos, phase) - q * libm(jnp.sin, phase)
    return wave * _const(_SQRT_2_PI, x) / jnp.sqrt(x)


def _j0_of_abs(x):
    """J0 of ``x >= 0`` (or NaN)."""
    small = x <= 5.0
    xs = jnp.where(small, x, _const(1.0, x))
    z = xs * xs
    rational = (z - _const(5.78318596294678452118e+00, x)) * (
        z - _const(3.04712623436620863991e+01, x)) * _polevl(z, _J0_RP) / _polevl(z, _J0_RQ)
    tiny = _const(1.0, x) - xs * xs / _const(4.0, x)
    xl = jnp.where(small, _const(6.0, x), x)
    large = _hankel_asymptotic(xl, _const(25.0, x) / (xl * xl), _J0_PP, _J0_PQ, _J0_QP, _J0_QQ,
                               _PI_4, False)
    return jnp.where(small, jnp.where(xs < 0.00001, tiny, rational), large)


def _j1_of_abs(x):
    """J1 of ``x >= 0`` (or NaN)."""
    small = x <= 5.0
    xs = jnp.where(small, x, _const(1.0, x))
    z = xs * xs
    rational = _polevl(z, _J1_RP) / _polevl(z, _J1_RQ) * xs * (
        z - _const(1.46819706421238932572e+01, x)) * (z - _const(4.92184563216946036703e+01, x))
    xl = jnp.where(small, _const(6.0, x), x)
    five_over = _const(5.0, x) / xl
    large = _hankel_asymptotic(xl, five_over * five_over, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ,
                               _3PI_4, False)
    return jnp.where(small, rational, large)


def _bessel_j0(x):
    return _j0_of_abs(jnp.abs(x))


def _bessel_j1(x):
    value = _j1_of_abs(jnp.abs(x))
    return jnp.where(x < 0, -value, value)


def _bessel_y0(x):
    small = x <= 5.0
    xs = jnp.where(small & (x > 0), x, _const(1.0, x))
    z = xs * xs
    rational = _polevl(z, _Y0_YP) / _polevl(z, _Y0_YQ) + (
        _const(_2_PI, x) * jnp.log(xs) * _j0_of_abs(xs))
    xl = jnp.where(small, _const(6.0, x), x)
    large = _hankel_asymptotic(xl, _const(25.0, x) / (xl * xl), _J0_PP, _J0_PQ, _J0_QP, _J0_QQ,
                               _PI_4, True)
    edge = jnp.where(x == 0, _const(-jnp.inf, x), _const(jnp.nan, x))
    return jnp.where(small, jnp.where(x > 0, rational, edge), large)


def _bessel_y1(x):
    small = x <= 5.0
    xs = jnp.where(small & (x > 0), x, _const(1.0, x))
    z = xs * xs
    rational = xs * (_polevl(z, _Y1_YP) / _polevl(z, _Y1_YQ)) + _const(_2_PI, x) * (
        _j1_of_abs(xs) * jnp.log(xs) - _const(1.0, x) / xs)
    xl = jnp.where(small, _const(6.0, x), x)
    five_over = _const(5.0, x) / xl
    large = _hankel_asymptotic(xl, five_over * five_over, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ,
                               _3PI_4, True)
    edge = jnp.where(x == 0, _const(-jnp.inf, x), _const(jnp.nan, x))
    return jnp.where(small, jnp.where(x > 0, rational, edge), large)


# --- modified Bessel functions -----------------------------------------------------------------

_I0_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
         1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
         9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-09,
         -1.30002500998624804212e-08, 6.04699502254191894932e-08, -2.67079385394061173391e-07,
         1.11738753912010371815e-06, -4.41673835845875056359e-06, 1.64484480707288970893e-05,
         -5.75419501008210370398e-05, 1.88502885095841655729e-04, -5.76375574538582365885e-04,
         1.63947561694133579842e-03, -4.32430999505057594430e-03, 1.05464603945949983183e-02,
         -2.37374148058994688156e-02, 4.93052842396707084878e-02, -9.49010970480476444210e-02,
         1.71620901522208775349e-01, -3.04682672343198398683e-01, 6.76795274409476084995e-01)
_I0_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
         3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
         -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
         -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-09, 2.26666899049817806459e-08, 2.04891858946906374183e-07,
         2.89137052083475648297e-06, 6.88975834691682398426e-05, 3.36911647825569408990e-03,
         8.04490411014108831608e-01)
_I1_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
         -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
         3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
         -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-09,
         9.38153738649577178388e-09, -4.44505912879632808065e-08, 2.00329475355213526229e-07,
         -8.56872026469545474066e-07, 3.47025130813767847674e-06, -1.32731636560394358279e-05,
         4.78156510755005422638e-05, -1.61760815825896745588e-04, 5.12285956168575772895e-04,
         -1.51357245063125314899e-03, 4.15642294431288815669e-03, -1.05640848946261981558e-02,
         2.47264490306265168283e-02, -5.29459812080949914269e-02, 1.02643658689847095384e-01,
         -1.76416518357834055153e-01, 2.52587186443633654823e-01)
_I1_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
         -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
         -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
         4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
         -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
         3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
         -3.83538038596423702205e-09, -2.63146884688951950684e-08, -2.51223623787020892529e-07,
         -3.88256480887769039346e-06, -1.10588938762623716291e-04, -9.76109749136146840777e-03,
         7.78576235018280120474e-01)
_K0_A = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
         1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
         -5.35327393233902768720e-01)
_K0_B = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
         2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
         -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
         2.44030308206595545468e+00)
_K1_A = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
         -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
         -3.53155960776544875667e-01, 1.52530022733894777053e+00)
_K1_B = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
         -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
         1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
         2.72062619048444266945e+00)


def _modified_bessel_i0(x):
    a = jnp.abs(x)
    small = a <= 8.0
    as_ = jnp.where(small, a, _const(1.0, x))
    al = jnp.where(small, _const(9.0, x), a)
    inner = jnp.exp(as_) * _chbevl(as_ / _const(2.0, x) - _const(2.0, x), _I0_A)
    outer = jnp.exp(al) * _chbevl(_const(32.0, x) / al - _const(2.0, x), _I0_B) / jnp.sqrt(al)
    return jnp.where(small, inner, outer)


def _modified_bessel_i1(x):
    a = jnp.abs(x)
    small = a <= 8.0
    as_ = jnp.where(small, a, _const(1.0, x))
    al = jnp.where(small, _const(9.0, x), a)
    inner = _chbevl(as_ / _const(2.0, x) - _const(2.0, x), _I1_A) * as_ * jnp.exp(as_)
    outer = jnp.exp(al) * _chbevl(_const(32.0, x) / al - _const(2.0, x), _I1_B) / jnp.sqrt(al)
    value = jnp.where(small, inner, outer)
    return jnp.where(x < 0, -value, value)


def _k_of_positive(x, small_form, b, scaled):
    """K0/K1 (``exp(x)`` times them when ``scaled``): inf at 0, NaN below, ``small_form(x)``
    up to 2, Cephes' Chebyshev series in ``8 / x - 2`` above."""
    small = x <= 2.0
    xs = jnp.where(small & (x > 0), x, _const(1.0, x))
    inner = small_form(xs)
    if scaled:
        inner = inner * jnp.exp(xs)
    xl = jnp.where(small, _const(3.0, x), x)
    series = _chbevl(_const(8.0, x) / xl - _const(2.0, x), b)
    outer = (series if scaled else jnp.exp(-xl) * series) / jnp.sqrt(xl)
    edge = jnp.where(x == 0, _const(jnp.inf, x), _const(jnp.nan, x))
    return jnp.where(x > 0, jnp.where(small, inner, outer), edge)


def _k0_small(x):
    """K0 up to 2. torch writes ``log(0.5 * x)`` with a double 0.5: in float32 the product, the
    logarithm and the difference are double, rounded once at the end."""
    series = _chbevl(x * x - _const(2.0, x), _K0_A)
    if x.dtype == jnp.float64:
        return series - jnp.log(_const(0.5, x) * x) * _modified_bessel_i0(x)
    wide = x.astype(jnp.float64)
    return (series.astype(jnp.float64) - jnp.log(0.5 * wide) * _modified_bessel_i0(x).astype(
        jnp.float64)).astype(x.dtype)


def _k0_small_scaled(x):
    """The scaled K0 up to 2, before ``* exp(x)`` (all in the input's dtype)."""
    return _chbevl(x * x - _const(2.0, x), _K0_A) - jnp.log(
        _const(0.5, x) * x) * _modified_bessel_i0(x)


def _k1_small(x):
    return jnp.log(_const(0.5, x) * x) * _modified_bessel_i1(x) + _chbevl(
        x * x - _const(2.0, x), _K1_A) / x


def _modified_bessel_k0(x):
    return _k_of_positive(x, _k0_small, _K0_B, scaled=False)


def _modified_bessel_k1(x):
    return _k_of_positive(x, _k1_small, _K1_B, scaled=False)


def _scaled_modified_bessel_k0(x):
    return _k_of_positive(x, _k0_small_scaled, _K0_B, scaled=True)


def _scaled_modified_bessel_k1(x):
    return _k_of_positive(x, _k1_small, _K1_B, scaled=True)


# --- Airy, spherical Bessel -------------------------------------------------------------------

_AI_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
          1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
          1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AI_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
          1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
          1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AI_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
           -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AI_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
           9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
           4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AI_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
           9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
           5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
           8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AI_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
           5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
           4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
           4.91834570062930015649e-09)
_SQRT_1_PI = 5.64189583547756286948e-01


def _airy_series(x):
    """Ai(x) for ``|x| < 2.09`` by its Maclaurin series ``c1 f(x) - c2 g(x)``, summed lane by
    lane until the last term added is below the dtype's epsilon relative to ``f``."""
    eps = jnp.finfo(x.dtype).eps
    one = jnp.ones_like(x)
    z = x * x * x

    def step(state):
        m, n, k, f, g, t = state
        active = t > eps
        m2 = m * z
        k2 = k + 1.0
        m2 = m2 / k2
        n2 = n * z
        k2 = k2 + 1.0
        n2 = n2 / k2
        m2 = m2 / k2
        f2 = f + m2
        k2 = k2 + 1.0
        n2 = n2 / k2
        g2 = g + n2
        t2 = jnp.abs(m2 / f2)
        new = (m2, n2, k2, f2, g2, t2)
        return tuple(jnp.where(active, a, b) for a, b in zip(new, state))

    state = (one, x, one, one, x, one)
    state = jax.lax.while_loop(lambda s: jnp.any(s[5] > eps), step, state)
    f, g = state[3], state[4]
    return _const(0.355028053887817239260, x) * f - _const(0.258819403792806798405, x) * g


def _airy_ai(x):
    negative = x < -2.09
    positive = x >= 2.09
    xn = jnp.where(negative, x, _const(-3.0, x))
    root = jnp.sqrt(-xn)
    zeta_n = _three_halves(xn, root)
    z = _const(1.0, x) / zeta_n
    zz = z * z
    phase = _rounded(jnp.add, zeta_n, _const(0.25, x) * _const(math.pi, x))
    oscillating = _const(_SQRT_1_PI, x) / jnp.sqrt(root) * (
        libm(jnp.sin, phase) * (_const(1.0, x) + zz * _polevl(zz, _AI_AFN) / _polevl(
            zz, _AI_AFD)) - libm(jnp.cos, phase) * (z * _polevl(zz, _AI_AGN) / _polevl(
                zz, _AI_AGD)))
    xp = jnp.where(positive & (x <= 103.892), x, _const(3.0, x))
    zeta = _three_halves(xp, jnp.sqrt(xp))
    inverse = _const(1.0, x) / zeta
    decaying = _const(_SQRT_1_PI, x) * (_polevl(inverse, _AI_AN) / _polevl(inverse, _AI_AD)) / (
        _const(2.0, x) * jnp.sqrt(jnp.sqrt(xp)) * jnp.exp(zeta))
    middle = ~(negative | positive | jnp.isinf(x))
    series = _airy_series(jnp.where(middle, x, jnp.zeros_like(x)))
    series = jnp.where(jnp.isnan(x), x, series)
    value = jnp.where(negative, oscillating, jnp.where(positive, decaying, series))
    return jnp.where(jnp.isinf(x), _const(jnp.nan, x),
                     jnp.where(x > 103.892, jnp.zeros_like(x), value))


def _spherical_bessel_j0(x):
    """``sin(x) / x``: its Taylor series below 0.5, 0 at +-inf."""
    small = jnp.abs(x) < 0.5
    return jnp.where(jnp.isinf(x), jnp.zeros_like(x),
                     jnp.where(small, _spherical_series(x), jnp.sin(x) / x))


def _spherical_series(x):
    """``1 + x^2 (-1/6 + x^2 (1/120 + ...))``, each ``a / b`` rounded in the dtype as torch's."""
    xx = x * x
    terms = ((-1.0, 6.0), (1.0, 120.0), (-1.0, 5040.0), (1.0, 362880.0), (-1.0, 39916800.0),
             (1.0, 6227020800.0))
    inner = _const(terms[-1][0], x) / _const(terms[-1][1], x)
    for numerator, denominator in terms[-2::-1]:
        inner = _const(numerator, x) / _const(denominator, x) + xx * inner
    return _const(1.0, x) + xx * inner


# --- the rows ----------------------------------------------------------------------------------

def _row(name: str, param: str, fn, summary: str, call: str, output: str) -> Op:
    """A one-tensor row of torch.special (torch's ``special_<name>``), non-differentiable."""
    return Op(f"special_{name}(Tensor {param}) -> Tensor", None, non_differentiable(name, fn),
              promote="float", doc=_doc(summary, call, output))


SPECIAL_AIRY_AI = _row(
    "airy_ai", "x", _airy_ai, "The Airy function Ai of each element.",
    "jaxgrad.special.airy_ai(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.3550, 0.1353])")
SPECIAL_BESSEL_J0 = _row(
    "bessel_j0", "self", _bessel_j0, "The Bessel function of the first kind of order 0.",
    "jaxgrad.special.bessel_j0(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 0.7652])")
SPECIAL_BESSEL_J1 = _row(
    "bessel_j1", "self", _bessel_j1, "The Bessel function of the first kind of order 1.",
    "jaxgrad.special.bessel_j1(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.4401])")
SPECIAL_BESSEL_Y0 = _row(
    "bessel_y0", "self", _bessel_y0,
    "The Bessel function of the second kind of order 0 (-inf at 0, NaN below).",
    "jaxgrad.special.bessel_y0(jaxgrad.tensor([1.0, 2.0]))", "tensor([0.0883, 0.5104])")
SPECIAL_BESSEL_Y1 = _row(
    "bessel_y1", "self", _bessel_y1,
    "The Bessel function of the second kind of order 1 (-inf at 0, NaN below).",
    "jaxgrad.special.bessel_y1(jaxgrad.tensor([1.0, 2.0]))", "tensor([-0.7812, -0.1070])")
SPECIAL_MODIFIED_BESSEL_I0 = _row(
    "modified_bessel_i0", "self", _modified_bessel_i0,
    "The modified Bessel function of the first kind of order 0.",
    "jaxgrad.special.modified_bessel_i0(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 1.2661])")
SPECIAL_MODIFIED_BESSEL_I1 = _row(
    "modified_bessel_i1", "self", _modified_bessel_i1,
    "The modified Bessel function of the first kind of order 1.",
    "jaxgrad.special.modified_bessel_i1(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.5652])")
SPECIAL_MODIFIED_BESSEL_K0 = _row(
    "modified_bessel_k0", "self", _modified_bessel_k0,
    "The modified Bessel function of the second kind of order 0 (inf at 0, NaN below).",
    "jaxgrad.special.modified_bessel_k0(jaxgrad.tensor([1.0, 2.0]))", "tensor([0.4210, 0.1139])")
SPECIAL_MODIFIED_BESSEL_K1 = _row(
    "modified_bessel_k1", "self", _modified_bessel_k1,
    "The modified Bessel function of the second kind of order 1 (inf at 0, NaN below).",
    "jaxgrad.special.modified_bessel_k1(jaxgrad.tensor([1.0, 2.0]))", "tensor([0.6019, 0.1399])")
SPECIAL_SCALED_MODIFIED_BESSEL_K0 = _row(
    "scaled_modified_bessel_k0", "x", _scaled_modified_bessel_k0,
    "``exp(x) * modified_bessel_k0(x)``.",
    "jaxgrad.special.scaled_modified_bessel_k0(jaxgrad.tensor([1.0, 2.0]))",
    "tensor([1.1445, 0.8416])")
SPECIAL_SCALED_MODIFIED_BESSEL_K1 = _row(
    "scaled_modified_bessel_k1", "x", _scaled_modified_bessel_k1,
    "``exp(x) * modified_bessel_k1(x)``.",
    "jaxgrad.special.scaled_modified_bessel_k1(jaxgrad.tensor([1.0, 2.0]))",
    "tensor([1.6362, 1.0335])")
SPECIAL_SPHERICAL_BESSEL_J0 = _row(
    "spherical_bessel_j0", "x", _spherical_bessel_j0,
    "The spherical Bessel function of the first kind of order 0: ``sin(x) / x``.",
    "jaxgrad.special.spherical_bessel_j0(jaxgrad.tensor([0.0, 1.0]))",
    "tensor([1.0000, 0.8415])")
