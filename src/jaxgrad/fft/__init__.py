"""``torch.fft``: discrete Fourier transforms (one-, two- and n-dimensional; of complex, real
and Hermitian signals), their sample frequencies and shifts, under torch's names (each one's
``__name__`` is torch's, ``fft_<name>``). Every transform is composed from the three kernels
torch's are (``_fft_r2c``, ``_fft_c2r``, ``_fft_c2c``), so its graph and gradients are torch's.

>>> import jaxgrad
>>> x = jaxgrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
>>> jaxgrad.fft.rfft(x)
tensor([10.+0.j, -2.+2.j, -2.+0.j], grad_fn=<FftR2CBackward0>)
"""

from .._core.typename import public_path
from .._functions.spectral import fft_fft as fft
from .._functions.spectral import fft_fft2 as fft2
from .._functions.spectral import fft_fftfreq as fftfreq
from .._functions.spectral import fft_fftn as fftn
from .._functions.spectral import fft_fftshift as fftshift
from .._functions.spectral import fft_hfft as hfft
from .._functions.spectral import fft_hfft2 as hfft2
from .._functions.spectral import fft_hfftn as hfftn
from .._functions.spectral import fft_ifft as ifft
from .._functions.spectral import fft_ifft2 as ifft2
from .._functions.spectral import fft_ifftn as ifftn
from .._functions.spectral import fft_ifftshift as ifftshift
from .._functions.spectral import fft_ihfft as ihfft
from .._functions.spectral import fft_ihfft2 as ihfft2
from .._functions.spectral import fft_ihfftn as ihfftn
from .._functions.spectral import fft_irfft as irfft
from .._functions.spectral import fft_irfft2 as irfft2
from .._functions.spectral import fft_irfftn as irfftn
from .._functions.spectral import fft_rfft as rfft
from .._functions.spectral import fft_rfft2 as rfft2
from .._functions.spectral import fft_rfftfreq as rfftfreq
from .._functions.spectral import fft_rfftn as rfftn

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

# their examples run with this module's doctests (the generated functions say "jaxgrad")
for _fn in (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2, ifftn,
            ifftshift, ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq,
            rfftn):
    public_path(__name__)(_fn)
del _fn
