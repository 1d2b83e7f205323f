"""Kernels of Dawsn, Expint, FresnelCos, FresnelSin and Spence (ops/math_special_cephes.py).

TensorFlow evaluates Cephes' rational approximations in the input's own type (float32 for
float32, the double coefficients rounded to float), and so do these: the same intervals, the
same Horner order, each product and sum rounded on its own (TF's CPU build emits no fused
multiply-add), so float32 results carry TF's rounding, not a more accurate value's. It shows:
float32 expint overflows to inf above x ~ 88.7 (exp(x) does, before the division by x), and
the Fresnel integrals' asymptotic form takes cos/sin of pi/2 x**2 rounded to the input's type
(float32 values off by up to ~3e-4 at |x| ~ 4000). Edge values are TF's: expint(0) = -inf,
NaN for x < 0 and x = inf; spence(0) = pi**2/6, NaN for x < 0 and x = inf; fresnel = +-1/2
beyond |x| = 36974; dawsn(x) = 0.5/x from |x| >= 1e9, which TF then negates for x < 0 (so it
is positive there).

Two implementations of the same code:
- numba (CPU tensors, when numba and ATen's OpenMP are found): TF's scalar functions, branch
  for branch, one pass over the tensor on ATen's OpenMP team. With glibc's expf/logf/cosf
  (TF's std:: calls) and the subnormals flushed as TF flushes them, results equal TF's bit for
  bit on float32 and float64, subnormal inputs included.
- ATen (GPUs; CPUs without numba): every interval on every element, the results selected with
  `where`; within a few ulps of TF's (ATen's exp/log/cos differ by an ulp), where a subnormal x
  reads as 0 in expint's log (-inf, TF's float64 value; TF's float32 logf makes -103.39 of it).

TF registers these ops' kernels for float and double only (CPU and GPU); half and bfloat16,
which the op definitions accept, raise its NotFoundError (eager) or InvalidArgumentError
(graph).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core.errors import OpError
from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once
from ndflow.kernels.registry import kernel, no_kernel_error
from ndflow.ops import math_special_cephes as sc

# -- Dawson's integral: three rational approximations and 1 / (2x) ------------------------------

_DAWSN_AN = (1.13681498971755972054E-11, 8.49262267667473811108E-10, 1.94434204175553054283E-8,
             9.53151741254484363489E-7, 3.07828309874913200438E-6, 3.52513368520288738649E-4,
             -8.50149846724410912031E-4, 4.22618223005546594270E-2,
             -9.17480371773452345351E-2, 9.99999999999999994612E-1)
_DAWSN_AD = (2.40372073066762605484E-11, 1.48864681368493396752E-9, 5.21265281010541664570E-8,
             1.27258478273186970203E-6, 2.32490249820789513991E-5, 3.25524741826057911661E-4,
             3.48805814657162590916E-3, 2.79448531198828973716E-2, 1.58874241960120565368E-1,
             5.74918629489320327824E-1, 1.00000000000000000539E0)
_DAWSN_BN = (5.08955156417900903354E-1, -2.44754418142697847934E-1, 9.41512335303534411857E-2,
             -2.18711255142039025206E-2, 3.66207612329569181322E-3, -4.23209114460388756528E-4,
             3.59641304793896631888E-5, -2.14640351719968974225E-6, 9.10010780076391431042E-8,
             -2.40274520828250956942E-9, 3.59233385440928410398E-11)
_DAWSN_BD = (1.0, -6.31839869873368190192E-1, 2.36706788228248691528E-1,
             -5.31806367003223277662E-2, 8.48041718586295374409E-3, -9.47996768486665330168E-4,
             7.81025592944552338085E-5, -4.55875153252442634831E-6, 1.89100358111421846170E-7,
             -4.91324691331920606875E-9, 7.18466403235734541950E-11)
_DAWSN_CN = (-5.90592860534773254987E-1, 6.29235242724368800674E-1, -1.72858975380388136411E-1,
             1.64837047825189632310E-2, -4.86827613020462700845E-4)
_DAWSN_CD = (1.0, -2.69820057197544900361E0, 1.73270799045947845857E0,
             -3.93708582281939493482E-1, 3.44278924041233391079E-2, -9.73655226040941223894E-4)

# -- the exponential integral Ei: x < 2, then x exp(-x) Ei(x) - 1 in 1/x on six intervals -------

_EUL = 0.5772156649015329
_EXPINT_A = (-5.350447357812542947283E0, 2.185049168816613393830E2, -4.176572384826693777058E3,
             5.541176756393557601232E4, -3.313381331178144034309E5, 1.592627163384945414220E6)
_EXPINT_B = (1.0, -5.250547959112862969197E1, 1.259616186786790571525E3,
             -1.756549581973534652631E4, 1.493062117002725991967E5, -7.294949239640527645655E5,
             1.592627163384945429726E6)
# (lower bound, numerator, denominator) per interval of x >= 2
_EXPINT_TAIL = (
    (2.0, (1.981808503259689673238E-2, -1.271645625984917501326E0, -2.088160335681228318920E0,
           2.755544509187936721172E0, -4.409507048701600257171E-1, 4.665623805935891391017E-2,
           -1.545042679673485262580E-3, 7.059980605299617478514E-5),
     (1.0, 1.476498670914921440652E0, 5.629177174822436244827E-1, 1.699017897879307263248E-1,
      2.291647179034212017463E-2, 4.450150439728752875043E-3, 1.727439612206521482874E-4,
      3.953167195549672482304E-5)),
    (4.0, (-1.373215375871208729803E0, -7.084559133740838761406E-1, 1.580806855547941010501E0,
           -2.601500427425622944234E-1, 2.994674694113713763365E-2, -1.038086040188744005513E-3,
           4.371064420753005429514E-5, 2.141783679522602903795E-6),
     (1.0, 8.585231423622028380768E-1, 4.483285822873995129957E-1, 7.687932158124475434091E-2,
      2.449868241021887685904E-2, 8.832165941927796567926E-4, 4.590952299511353531215E-4,
      -4.729848351866523044863E-6, 2.665195537390710170105E-6)),
    (8.0, (-2.106934601691916512584E0, 1.732733869664688041885E0, -2.423619178935841904839E-1,
           2.322724180937565842585E-2, 2.372880440493179832059E-4, -8.343219561192552752335E-5,
           1.363408795605250394881E-5, -3.655412321999253963714E-7, 1.464941733975961318456E-8,
           6.176407863710360207074E-10),
     (1.0, -2.298062239901678075778E-1, 1.105077041474037862347E-1, -1.566542966630792353556E-2,
      2.761106850817352773874E-3, -2.089148012284048449115E-4, 1.708528938807675304186E-5,
      -4.459311796356686423199E-7, 1.394634930353847498145E-8, 6.150865933977338354138E-10)),
    (16.0, (-2.458119367674020323359E-1, -1.483382253322077687183E-1, 7.248291795735551591813E-2,
            -1.348315687380940523823E-2, 1.342775069788636972294E-3, -7.942465637159712264564E-5,
            2.644179518984235952241E-6, -4.239473659313765177195E-8),
     (1.0, -1.044225908443871106315E-1, -2.676453128101402655055E-1, 9.695000254621984627876E-2,
      -1.601745692712991078208E-2, 1.496414899205908021882E-3, -8.462452563778485013756E-5,
      2.728938403476726394024E-6, -4.239462431819542051337E-8)),
    (32.0, (1.212561118105456670844E-1, -5.823133179043894485122E-1, 2.348887314557016779211E-1,
            -3.040034318113248237280E-2, 1.510082146865190661777E-3, -2.523137095499571377122E-5),
     (1.0, -1.002252150365854016662E0, 2.928709694872224144953E-1, -3.337004338674007801307E-2,
      1.560544881127388842819E-3, -2.523137093603234562648E-5)),
    (64.0, (-7.657847078286127362028E-1, 6.886192415566705051750E-1, -2.132598113545206124553E-1,
            3.346107552384193813594E-2, -3.076541477344756050249E-3, 1.747119316454907477380E-4,
            -6.103711682274170530369E-6, 1.218032765428652199087E-7, -1.086076102793290233007E-9),
     (1.0, -1.888802868662308731041E0, 1.066691687211408896850E0, -2.751915982306380647738E-1,
      3.930852688233823569726E-2, -3.414684558602365085394E-3, 1.866844370703555398195E-4,
      -6.345146083130515357861E-6, 1.239754287483206878024E-7, -1.086076102793126632978E-9)),
)

# -- the Fresnel integrals: power series in x**4 for x**2 < 2.5625, else the auxiliary f, g -----

_FRESNEL_CN = (-4.98843114573573548651E-8, 9.50428062829859605134E-6, -6.45191435683965050962E-4,
               1.88843319396703850064E-2, -2.05525900955013891793E-1, 9.99999999999999998822E-1)
_FRESNEL_CD = (3.99982968972495980367E-12, 9.15439215774657478799E-10, 1.25001862479598821474E-7,
               1.22262789024179030997E-5, 8.68029542941784300606E-4, 4.12142090722199792936E-2,
               1.00000000000000000118E0)
_FRESNEL_SN = (-2.99181919401019853726E3, 7.08840045257738576863E5, -6.29741486205862506537E7,
               2.54890880573376359104E9, -4.42979518059697779103E10, 3.18016297876567817986E11)
_FRESNEL_SD = (1.0, 2.81376268889994315696E2, 4.55847810806532581675E4, 5.17343888770096400730E6,
               4.19320245898111231129E8, 2.24411795645340920940E10, 6.07366389490084639049E11)
_FRESNEL_FN = (4.21543555043677546506E-1, 1.43407919780758885261E-1, 1.15220955073585758835E-2,
               3.45017939782574027900E-4, 4.63613749287867322088E-6, 3.05568983790257605827E-8,
               1.02304514164907233465E-10, 1.72010743268161828879E-13,
               1.34283276233062758925E-16, 3.76329711269987889006E-20)
_FRESNEL_FD = (1.0, 7.51586398353378947175E-1, 1.16888925859191382142E-1,
               6.44051526508858611005E-3, 1.55934409164153020873E-4, 1.84627567348930545870E-6,
               1.12699224763999035261E-8, 3.60140029589371370404E-11, 5.88754533621578410010E-14,
               4.52001434074129701496E-17, 1.25443237090011264384E-20)
_FRESNEL_GN = (5.04442073643383265887E-1, 1.97102833525523411709E-1, 1.87648584092575249293E-2,
               6.84079380915393090172E-4, 1.15138826111884280931E-5, 9.82852443688422223854E-8,
               4.45344415861750144738E-10, 1.08268041139020870318E-12,
               1.37555460633261799868E-15, 8.36354435630677421531E-19,
               1.86958710162783235106E-22)
_FRESNEL_GD = (1.0, 1.47495759925128324529E0, 3.37748989120019970451E-1,
               2.53603741420338795122E-2, 8.14679107184306179049E-4, 1.27545075667729118702E-5,
               1.04314589657571990585E-7, 4.60680728146520428211E-10, 1.10273215066240270757E-12,
               1.38796531259578871258E-15, 8.39158816283118707363E-19, 1.86958710162783236342E-22)

# -- Spence's integral (the dilogarithm Li2(1 - x)) ---------------------------------------------

_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)
_PI2O6 = math.pi * math.pi / 6.0


# -- ATen: each interval on every element, the results selected (GPUs; CPUs without numba) -----

def _horner(t, coeffs):
    """coeffs[0] t**n + ... + coeffs[n], evaluated as Eigen's ppolevl: y = y * t + c, each
    product and sum rounded."""
    y = torch.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        y.mul_(t).add_(c)
    return y


def _ratio_in(t, numerator, denominator):
    return _horner(t, numerator).div_(_horner(t, denominator))


def _dawsn(x):
    ax = x.abs()
    x2 = ax * ax
    near = ax * _horner(x2, _DAWSN_AN) / _horner(x2, _DAWSN_AD)          # |x| < 3.25
    inv = 1 / ax
    inv2 = inv * inv
    mid = _horner(inv2, _DAWSN_BN) / (ax * _horner(inv2, _DAWSN_BD))     # |x| < 6.25
    far = _horner(inv2, _DAWSN_CN) / (ax * _horner(inv2, _DAWSN_CD))     # |x| < 1e9
    tail = torch.where(ax < 6.25, mid, far).mul_(inv2).add_(inv).mul_(0.5)
    out = torch.where(ax < 3.25, near, tail)
    out = torch.where(ax < 1e9, out, 0.5 / x)   # x, not |x|: negated below, as TF does
    return torch.where(x < 0, -out, out)


def _expint(x):
    # a subnormal x reads as 0 in TF's log (its CPU kernels run with subnormals flushed)
    log_x = torch.log(torch.where(x.abs() < torch.finfo(x.dtype).tiny, 0.0, x))
    small = x * _ratio_in(x, _EXPINT_A, _EXPINT_B) + _EUL + log_x        # 0 <= x < 2
    w = 1 / x
    f = None
    for lower, numerator, denominator in _EXPINT_TAIL:
        part = _ratio_in(w, numerator, denominator)
        f = part if f is None else torch.where(x < lower, f, part)
    large = torch.exp(x).mul_(w).mul_(f.mul_(w).add_(1))
    out = torch.where(x < 2, small, large)
    return torch.where(x < 0, math.nan, out)


def _fresnel(x, use_sin: bool):
    ax = x.abs()
    ax2 = ax * ax
    x4 = ax2 * ax2
    if use_sin:
        near = (ax * ax2) * _horner(x4, _FRESNEL_SN) / _horner(x4, _FRESNEL_SD)
    else:
        near = ax * _horner(x4, _FRESNEL_CN) / _horner(x4, _FRESNEL_CD)
    t = 1 / (math.pi * ax2)
    u = t * t
    f = 1 - u * _ratio_in(u, _FRESNEL_FN, _FRESNEL_FD)
    g = t * _horner(u, _FRESNEL_GN) / _horner(u, _FRESNEL_GD)
    z = (math.pi / 2) * ax2
    c, s = torch.cos(z), torch.sin(z)
    y = 1 / (math.pi * ax)
    if use_sin:
        far = 0.5 - (f * c + g * s) * y
    else:
        far = 0.5 + (f * s - g * c) * y
    out = torch.where(ax2 < 2.5625, near, far)
    out = torch.where(ax > 36974.0, 0.5, out)
    return torch.where(x < 0, -out, out)


def _spence(x):
    y = torch.where(x < 2, x, 1 / x)
    w = torch.where(y > 1.5, 1 / y - 1, torch.where(y < 0.5, -y, y - 1))
    out = -w * _ratio_in(w, _SPENCE_A, _SPENCE_B)
    z = torch.log(y)
    out = torch.where(y < 0.5, -z * torch.log1p(-y) + _PI2O6 - out, out)
    out = torch.where(x > 1.5, -0.5 * z * z - out, out)
    out = torch.where(x == 1, 0.0, out)
    out = torch.where(x == 0, _PI2O6, out)
    return torch.where(x < 0, math.nan, out)


# -- numba: TF's scalar code, one pass on ATen's OpenMP team (contiguous CPU tensors) -----------

def _flat(*parts):
    """The parts' numbers in one list, and where each part starts (and the last ends)."""
    flat, starts = [], [0]
    for p in parts:
        flat += p
        starts.append(len(flat))
    return flat, tuple(starts)


# Each function's constants in one array of the input's type (rounded from these doubles, as
# TF's Scalar(c)), polynomials first; D, E, F and S below are where each part starts.
_SCALARS = (0.5, 1.0, math.nan, _EUL, math.pi, math.pi / 2, _PI2O6)
_HALF, _ONE, _NAN, _K_EUL, _PI, _HALF_PI, _K_PI2O6 = range(7)   # offsets into _SCALARS
_TABLES = {}
_TABLES["dawsn"], D = _flat(_DAWSN_AN, _DAWSN_AD, _DAWSN_BN, _DAWSN_BD, _DAWSN_CN, _DAWSN_CD,
                            _SCALARS)
_TABLES["expint"], E = _flat(_EXPINT_A, _EXPINT_B, *(p for _, n, d in _EXPINT_TAIL
                                                    for p in (n, d)), _SCALARS)
_TABLES["fresnel"], F = _flat(_FRESNEL_CN, _FRESNEL_CD, _FRESNEL_SN, _FRESNEL_SD, _FRESNEL_FN,
                              _FRESNEL_FD, _FRESNEL_GN, _FRESNEL_GD, _SCALARS)
_TABLES["spence"], S = _flat(_SPENCE_A, _SPENCE_B, _SCALARS)
_FUNCTION_IDS = {"dawsn": 0, "expint": 1, "fresnel_cos": 2, "fresnel_sin": 3, "spence": 4}
_TABLE_OF = {"dawsn": "dawsn", "expint": "expint", "fresnel_cos": "fresnel",
             "fresnel_sin": "fresnel", "spence": "spence"}
_CONSTANTS = {(name, dt): torch.tensor(_TABLES[_TABLE_OF[name]], dtype=torch.float64).to(dt)
              for name in _FUNCTION_IDS for dt in (torch.float32, torch.float64)}
CHUNK = 1 << 14   # elements per claimed chunk
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = None
nb_poly = nb_dawsn = nb_expint = nb_fresnel = nb_spence = nb_apply = nb_run = None


def _define():
    """Defines the numba functions (compiled per type on first use); None without numba or
    ATen's OpenMP."""
    if omp_pool.launcher() is None:
        return None
    try:
        import numba  # noqa: PLC0415 - loads with the first such op, not with ndflow
    except ImportError:
        return None
    global claim_chunk, address_as_pointer, carray
    global nb_poly, nb_dawsn, nb_expint, nb_fresnel, nb_spence, nb_apply, nb_run
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    njit = numba.njit(cache=True, nogil=True)

    # Every constant is c[i], of the input's type: a Python float would make the arithmetic
    # float64 for a float32 input. Comparisons against literals are exact (the bounds are
    # float32 numbers).
    @numba.njit(cache=True, nogil=True, inline="always")
    def nb_poly(t, c, lo, hi):
        y = c[lo]
        for i in range(lo + 1, hi):
            y = y * t + c[i]
        return y

    @njit
    def nb_dawsn(x, c):
        k = D[6]
        ax = abs(x)
        if ax < 3.25:
            x2 = ax * ax
            y = (ax * nb_poly(x2, c, D[0], D[1])) / nb_poly(x2, c, D[1], D[2])
        elif ax < 6.25:
            inv = c[k + _ONE] / ax
            inv2 = inv * inv
            z = nb_poly(inv2, c, D[2], D[3]) / (ax * nb_poly(inv2, c, D[3], D[4]))
            y = c[k + _HALF] * (inv2 * z + inv)
        elif ax < 1e9:
            inv = c[k + _ONE] / ax
            inv2 = inv * inv
            z = nb_poly(inv2, c, D[4], D[5]) / (ax * nb_poly(inv2, c, D[5], D[6]))
            y = c[k + _HALF] * (inv2 * z + inv)
        else:
            y = c[k + _HALF] / x   # x, not |x| (TF's)
        return -y if x < 0 else y

    @njit
    def nb_expint(x, c):
        k = E[14]
        if x < 0:
            return c[k + _NAN]
        if x < 2:
            f = nb_poly(x, c, E[0], E[1]) / nb_poly(x, c, E[1], E[2])
            return x * f + c[k + _K_EUL] + math.log(x)
        w = c[k + _ONE] / x
        # each interval's polynomials at constant offsets (unrolled, as TF's)
        if x < 4:
            f = nb_poly(w, c, E[2], E[3]) / nb_poly(w, c, E[3], E[4])
        elif x < 8:
            f = nb_poly(w, c, E[4], E[5]) / nb_poly(w, c, E[5], E[6])
        elif x < 16:
            f = nb_poly(w, c, E[6], E[7]) / nb_poly(w, c, E[7], E[8])
        elif x < 32:
            f = nb_poly(w, c, E[8], E[9]) / nb_poly(w, c, E[9], E[10])
        elif x < 64:
            f = nb_poly(w, c, E[10], E[11]) / nb_poly(w, c, E[11], E[12])
        else:
            f = nb_poly(w, c, E[12], E[13]) / nb_poly(w, c, E[13], E[14])
        f = w * f + c[k + _ONE]
        return math.exp(x) * w * f

    @njit
    def nb_fresnel(x, c, use_sin):
        k = F[8]
        half, one, pi = c[k + _HALF], c[k + _ONE], c[k + _PI]
        ax = abs(x)
        if ax > 36974.0:
            return -half if x < 0 else half
        x2 = ax * ax
        if x2 < 2.5625:
            x4 = x2 * x2
            if use_sin:
                y = ((ax * x2) * nb_poly(x4, c, F[2], F[3])) / nb_poly(x4, c, F[3], F[4])
            else:
                y = (ax * nb_poly(x4, c, F[0], F[1])) / nb_poly(x4, c, F[1], F[2])
        else:
            t = one / (pi * x2)
            u = t * t
            f = one - u * (nb_poly(u, c, F[4], F[5]) / nb_poly(u, c, F[5], F[6]))
            g = (t * nb_poly(u, c, F[6], F[7])) / nb_poly(u, c, F[7], F[8])
            z = c[k + _HALF_PI] * x2
            cz, sz = math.cos(z), math.sin(z)
            r = one / (pi * ax)
            if use_sin:
                y = half - (f * cz + g * sz) * r
            else:
                y = half + (f * sz - g * cz) * r
        return -y if x < 0 else y

    @njit
    def nb_spence(x, c):
        k = S[2]
        one, half, pi2o6 = c[k + _ONE], c[k + _HALF], c[k + _K_PI2O6]
        if x < 0:
            return c[k + _NAN]
        if x == 0:
            return pi2o6
        if x == 1:
            return x - x
        y = x if x < 2 else one / x
        if y > 1.5:
            w = one / y - one
        elif y < 0.5:
            w = -y
        else:
            w = y - one
        out = -w * (nb_poly(w, c, S[0], S[1]) / nb_poly(w, c, S[1], S[2]))
        z = math.log(y)
        if y < 0.5:
            out = -z * math.log1p(-y) + pi2o6 - out
        if x > 1.5:
            out = -half * z * z - out
        return out

    @njit
    def nb_apply(fid, x, out, c):
        if fid == 0:
            for i in range(x.size):
                out[i] = nb_dawsn(x[i], c)
        elif fid == 1:
            for i in range(x.size):
                out[i] = nb_expint(x[i], c)
        elif fid == 2:
            for i in range(x.size):
                out[i] = nb_fresnel(x[i], c, False)
        elif fid == 3:
            for i in range(x.size):
                out[i] = nb_fresnel(x[i], c, True)
        else:
            for i in range(x.size):
                out[i] = nb_spence(x[i], c)

    @numba.njit(cache=True, nogil=True, inline="always")
    def nb_run(data, dtype, itemsize):
        """A callback's work: chunks of x (elements of `dtype`, `itemsize` bytes) claimed
        from the counter until none is left, nb_apply on each."""
        d = carray(data, 12, dtype=np.int64)
        n, chunk = d[1], d[2]
        c = carray(address_as_pointer(d[7], dtype), d[8])
        fid = carray(address_as_pointer(d[9], np.int64), 1)[0]
        q = claim_chunk(data)
        while q * chunk < n:
            lo = q * chunk
            m = min(lo + chunk, n) - lo
            nb_apply(fid, carray(address_as_pointer(d[3] + lo * itemsize, dtype), m),
                     carray(address_as_pointer(d[5] + lo * itemsize, dtype), m), c)
            q = claim_chunk(data)

    return True


_defined = built_once(_define)


# Each type's callback compiles (or loads from numba's disk cache) on its first use: a cold
# compile of one takes seconds. data = [counter, n, chunk, (address, length) of x, out, the
# constants, (function id,)].
def _float_callback():
    from numba import cfunc, types  # noqa: PLC0415

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def run_float(data):
        nb_run(data, np.float32, 4)
    return run_float.address


def _double_callback():
    from numba import cfunc, types  # noqa: PLC0415

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def run_double(data):
        nb_run(data, np.float64, 8)
    return run_double.address


_CALLBACKS = {torch.float32: built_once(lambda: _float_callback() if _defined() else None),
              torch.float64: built_once(lambda: _double_callback() if _defined() else None)}
_FUNCTION_ARRAYS = {name: np.array([fid], dtype=np.int64) for name, fid in _FUNCTION_IDS.items()}


def numba_available() -> bool:
    """Whether CPU tensors run the numba pass (numba and ATen's OpenMP found)."""
    return _defined() is not None


def compute(name: str, x: torch.Tensor, use_numba: bool = True) -> torch.Tensor:
    """tf.math.special.`name` of float32/float64 `x`: numba's pass on a CPU tensor (when numba
    and ATen's OpenMP are found), else ATen's ops."""
    if use_numba and x.device.type == "cpu" and _defined() is not None:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            chunks = -(-n // CHUNK)
            omp_pool.run_chunks(_CALLBACKS[x.dtype](), n, CHUNK,
                                [x, out, _CONSTANTS[(name, x.dtype)], _FUNCTION_ARRAYS[name]],
                                min(torch.get_num_threads(), chunks))
        return out
    return _TORCH[name](x)


_TORCH = {
    "dawsn": _dawsn,
    "expint": _expint,
    "fresnel_cos": lambda x: _fresnel(x, False),
    "fresnel_sin": lambda x: _fresnel(x, True),
    "spence": _spence,
}
_OPS = {sc.Dawsn: "dawsn", sc.Expint: "expint", sc.FresnelCos: "fresnel_cos",
        sc.FresnelSin: "fresnel_sin", sc.Spence: "spence"}
_TYPES = {torch.float16: "DT_HALF", torch.bfloat16: "DT_BFLOAT16"}


def _no_kernel(node, dtype) -> OpError:
    """TF's error for a type the op accepts but has no kernel for: the eager lookup's
    NotFoundError, or the graph executor's InvalidArgumentError (a graph's NodeInfo knows its
    inputs' readers; an eager one does not)."""
    name, t = node.op_def.name, _TYPES.get(dtype, str(dtype))
    registered = ("  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; T in [DT_FLOAT]\n"
                  "  device='GPU'; T in [DT_DOUBLE]\n  device='GPU'; T in [DT_FLOAT]")
    return no_kernel_error(node, name, f"T={t}", registered)


def _register(op_def, name):
    @kernel(op_def)
    def factory(node):
        dtype = node.input_dtypes[0].torch_dtype
        if dtype not in (torch.float32, torch.float64):
            raise _no_kernel(node, dtype)
        return lambda x: compute(name, x)
    return factory


for _op, _name in _OPS.items():
    _register(_op, _name)
