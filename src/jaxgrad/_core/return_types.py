"""The named tuples returned by ``max``/``min`` along a dim, ``sort``, ``topk``... (torch's
structseqs ``torch.return_types.max``...), shown at their public path ``jaxgrad.return_types``."""

from __future__ import annotations

from typing import Any

from .typename import public_path

_PUBLIC = "jaxgrad.return_types"


class _ValuesIndices(tuple):
    """A ``(values, indices)`` pair with named fields."""

    __slots__ = ()

    def __new__(cls, values: Any, indices: Any) -> _ValuesIndices:
        return super().__new__(cls, (values, indices))

    @property
    def values(self) -> Any:
        return self[0]

    @property
    def indices(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return (f"jaxgrad.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


@public_path(_PUBLIC)
class max(_ValuesIndices):
    """The result of ``max(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class min(_ValuesIndices):
    """The result of ``min(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class sort(_ValuesIndices):
    """The result of ``sort(input)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class topk(_ValuesIndices):
    """The result of ``topk(input, k)``."""

    __slots__ = ()



@public_path(_PUBLIC)
class cummax(_ValuesIndices):
    """The result of ``cummax(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class cummin(_ValuesIndices):
    """The result of ``cummin(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class median(_ValuesIndices):
    """The result of ``median(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class nanmedian(_ValuesIndices):
    """The result of ``nanmedian(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class kthvalue(_ValuesIndices):
    """The result of ``kthvalue(input, k, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class mode(_ValuesIndices):
    """The result of ``mode(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class aminmax(tuple):
    """The result of ``aminmax(input)``: a ``(min, max)`` pair with named fields."""

    __slots__ = ()

    def __new__(cls, min: Any, max: Any) -> aminmax:
        return super().__new__(cls, (min, max))

    @property
    def min(self) -> Any:
        return self[0]

    @property
    def max(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"jaxgrad.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"


class _Pair(tuple):
    """A pair with two named fields (``_fields``), printed as torch prints its structseqs."""

    __slots__ = ()
    _fields: tuple[str, str] = ("", "")

    def __new__(cls, first: Any, second: Any) -> _Pair:
        return super().__new__(cls, (first, second))

    def __repr__(self) -> str:
        a, b = self._fields
        return f"jaxgrad.return_types.{type(self).__name__}(\n{a}={self[0]!r},\n{b}={self[1]!r})"


def _pair(name: str, first: str, second: str, doc: str) -> type:
    cls = type(name, (_Pair,), {
        "__slots__": (), "_fields": (first, second), "__doc__": doc, "__module__": __name__,
        first: property(lambda self: self[0]), second: property(lambda self: self[1])})
    return public_path(_PUBLIC)(cls)


linalg_inv_ex = _pair("linalg_inv_ex", "inverse", "info",
                      "The result of ``linalg.inv_ex(A)``: ``(inverse, info)``.")
linalg_slogdet = _pair("linalg_slogdet", "sign", "logabsdet",
                       "The result of ``linalg.slogdet(A)``: ``(sign, logabsdet)``.")
slogdet = _pair("slogdet", "sign", "logabsdet",
                "The result of ``slogdet(A)``: ``(sign, logabsdet)``.")
linalg_solve_ex = _pair("linalg_solve_ex", "result", "info",
                        "The result of ``linalg.solve_ex(A, B)``: ``(result, info)``.")
linalg_cholesky_ex = _pair("linalg_cholesky_ex", "L", "info",
                           "The result of ``linalg.cholesky_ex(A)``: ``(L, info)``.")


class _Named(tuple):
    """A tuple with named fields (``_fields``), printed as torch prints its structseqs."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __new__(cls, *values: Any) -> _Named:
        if len(values) != len(cls._fields):
            raise TypeError(f"{cls.__name__} takes {len(cls._fields)} values")
        return super().__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"jaxgrad.return_types.{type(self).__name__}(\n{body})"


def _named(name: str, fields: tuple[str, ...], doc: str) -> type:
    props = {f: property(lambda self, i=i: self[i]) for i, f in enumerate(fields)}
    cls = type(name, (_Named,), {"__slots__": (), "_fields": fields, "__doc__": doc,
                                 "__module__": __name__, **props})
    return public_path(_PUBLIC)(cls)


triangular_solve = _named("triangular_solve", ("solution", "cloned_coefficient"),
                          "The result of ``triangular_solve(B, A)``: ``(solution, "
                          "cloned_coefficient)``.")
histogram = _named("histogram", ("hist", "bin_edges"),
                   "The result of ``histogram(input, bins)``: ``(hist, bin_edges)``.")
histogramdd = _named("histogramdd", ("hist", "bin_edges"),
                     "The result of ``histogramdd(input, bins)``: ``(hist, bin_edges)``.")
frexp = _named("frexp", ("mantissa", "exponent"),
               "The result of ``frexp(input)``: ``(mantissa, exponent)``.")
linalg_eigh = _named("linalg_eigh", ("eigenvalues", "eigenvectors"),
                     "The result of ``linalg.eigh(A)``: ``(eigenvalues, eigenvectors)``.")
linalg_eig = _named("linalg_eig", ("eigenvalues", "eigenvectors"),
                    "The result of ``linalg.eig(A)``: ``(eigenvalues, eigenvectors)``.")
linalg_svd = _named("linalg_svd", ("U", "S", "Vh"),
                    "The result of ``linalg.svd(A)``: ``(U, S, Vh)``.")
svd = _named("svd", ("U", "S", "V"), "The result of ``svd(A)``: ``(U, S, V)``.")
linalg_lstsq = _named("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"),
                      "The result of ``linalg.lstsq(A, B)``: ``(solution, residuals, rank, "
                      "singular_values)``.")
linalg_qr = _named("linalg_qr", ("Q", "R"), "The result of ``linalg.qr(A)``: ``(Q, R)``.")
qr = _named("qr", ("Q", "R"), "The result of ``qr(A)``: ``(Q, R)``.")
linalg_lu_factor = _named("linalg_lu_factor", ("LU", "pivots"),
                          "The result of ``linalg.lu_factor(A)``: ``(LU, pivots)``.")
linalg_lu_factor_ex = _named("linalg_lu_factor_ex", ("LU", "pivots", "info"),
                             "The result of ``linalg.lu_factor_ex(A)``: ``(LU, pivots, info)``.")
linalg_lu = _named("linalg_lu", ("P", "L", "U"), "The result of ``linalg.lu(A)``: ``(P, L, U)``.")
lu_unpack = _named("lu_unpack", ("P", "L", "U"),
                   "The result of ``lu_unpack(LU, pivots)``: ``(P, L, U)``.")
geqrf = _named("geqrf", ("a", "tau"), "The result of ``geqrf(A)``: ``(a, tau)``.")
linalg_ldl_factor = _named("linalg_ldl_factor", ("LD", "pivots"),
                           "The result of ``linalg.ldl_factor(A)``: ``(LD, pivots)``.")
linalg_ldl_factor_ex = _named("linalg_ldl_factor_ex", ("LD", "pivots", "info"),
                              "The result of ``linalg.ldl_factor_ex(A)``: ``(LD, pivots, info)``.")
