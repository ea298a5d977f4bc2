"""Reference results of wide.cu: f64 arithmetic in the four rounding modes,
f64 <-> integer conversions, 64-bit integer intrinsics, f16/bf16
conversions and arithmetic. Exact rationals, as in ref_float.py."""
import math
from fractions import Fraction as F
from ref_float import FMT64, arith, f32, f64, bits32, bits64, r16, r32, r64, rbf16, sqrt_rn, to_int

M64 = (1 << 64) - 1
NO = 45


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def half(b):
    """The value of f16 bits: a Fraction, or 'inf'/'-inf'/'nan'."""
    s, e, m = b >> 15 & 1, b >> 10 & 31, b & 1023
    if e == 31:
        return "nan" if m else ("-inf" if s else "inf")
    v = F(m, 1 << 24) if e == 0 else F(1024 + m, 1 << 10) * F(2) ** (e - 15)
    return -v if s else v


def to_half(v, mode, rnd=r16, inf=0x7c00, sign=0x8000):
    """Bits of the rounding of a value (Fraction or special) to f16/bf16; 'nan16' for any NaN."""
    if v == "nan":
        return "nan16"
    if v in ("inf", "-inf"):
        return inf | (sign if v == "-inf" else 0)
    if v == 0:
        return 0
    return rnd(v, mode)


def f32_value(b):
    x = f32(b)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return F(x)


def half_add(p, q):
    a, b = half(p), half(q)
    if "nan" in (a, b) or {a, b} == {"inf", "-inf"}:
        return "nan16"
    if a in ("inf", "-inf"):
        return to_half(a, "rn")
    if b in ("inf", "-inf"):
        return to_half(b, "rn")
    s = a + b
    if s == 0:
        return 0x8000 if (p >> 15) & (q >> 15) else 0
    return r16(s, "rn")


def half_fma(p, q, r):
    a, b, c = half(p), half(q), half(r)
    if "nan" in (a, b, c):
        return "nan16"
    specials = [x for x in (a, b, c) if x in ("inf", "-inf")]
    if specials:
        fa = float("nan") if a == "nan" else float(a)
        fb = float(b) if b not in ("inf", "-inf") else float(b)
        fc = float(c) if c not in ("inf", "-inf") else float(c)
        prod = float(fa) * float(fb)
        res = prod + fc
        if math.isnan(res):
            return "nan16"
        if math.isinf(res):
            return 0x7c00 | (0x8000 if res < 0 else 0)
        return r16(F(res), "rn") if res != 0 else 0
    s = a * b + c
    if s == 0:
        ps = ((p >> 15) ^ (q >> 15)) & 1
        return 0x8000 if ps and (r >> 15) & 1 else 0
    return r16(s, "rn")


def ref(xb, yb, ab, ftz=False):
    """The 45 outputs of wide.cu for x = in[0], y = b = in[1], a = in[2];
    `ftz`: a -ftz=true build, where __double2float_rn flushes a subnormal
    float result to zero."""
    o = []
    for op in ("add", "mul"):
        for m in ("rn", "rz", "ru", "rd"):
            o.append(arith(op, [xb, yb], m, FMT64))
    for m in ("rn", "rz", "ru", "rd"):
        o.append(arith("fma", [xb, yb, xb], m, FMT64))
    for m in ("rn", "rz", "ru", "rd"):
        o.append(arith("div", [xb, yb], m, FMT64))
    o.append(sqrt_rn(xb, FMT64))
    o.append(arith("div", [bits64(1.0), xb], "rn", FMT64))
    o.append(arith("div", [xb, yb], "rn", FMT64))
    o.append(sqrt_rn(xb, FMT64))
    for m in ("rn", "rz", "ru", "rd"):
        o.append(to_int(xb, m, -2**31, 2**31 - 1, f64) & 0xffffffff)
    o.append(to_int(xb, "rz", -2**63, 2**63 - 1, f64) & M64)
    o.append(to_int(xb, "rn", 0, M64, f64))
    sa, sb, a, b = s64(ab), s64(yb), ab, yb
    for m in ("rn", "rz", "ru", "rd"):
        o.append(0 if sa == 0 else r64(F(sa), m))
    o.append(((sa * sb) >> 64) & M64)
    o.append((a * b) >> 64)
    o.append(bin(a).count("1"))
    o.append(64 - a.bit_length())
    o.append(int(format(a, "064b")[::-1], 2))
    ok = sb != 0 and not (sa == -2**63 and sb == -1)
    o.append(tdiv(sa, sb) & M64 if ok else 0)
    o.append((sa - tdiv(sa, sb) * sb) & M64 if ok else 0)
    o.append(a // b if b else 0)
    o.append(0 if a == 0 else (a & -a).bit_length())
    x = f64(xb)
    # The double rounded to float (rn), as __double2float_rn does.
    if math.isnan(x):
        xv = "nan"
    elif math.isinf(x):
        xv = "inf" if x > 0 else "-inf"
    elif x == 0:
        xv = F(0)
    else:
        fb = r32(F(x), "rn")
        if ftz and fb & 0x7f800000 == 0:
            fb &= 0x80000000
        xv = f32_value(fb)
    o.append(to_half(xv, "rn"))
    o.append(to_half(xv, "rz"))
    o.append(to_half(xv, "rn", rbf16, 0x7f80, 0x8000) if xv != "nan" else "nanbf")
    hv = half(a & 0xffff)
    o.append("nan" if hv == "nan" else bits32(float(hv)) if hv in ("inf", "-inf") else bits32(float(hv)) if hv != 0 else (0x80000000 if a & 0x8000 else 0))
    o.append(half_add(a & 0xffff, (a >> 16) & 0xffff))
    lanes = []
    for k in (0, 1):
        lanes.append(half_fma((a >> (16 * k)) & 0xffff, (a >> (32 + 16 * k)) & 0xffff, (b >> (16 * k)) & 0xffff))
    o.append(("lanes", lanes))
    # Zero conversions keep the sign of the float.
    if xv == 0:
        neg = math.copysign(1, x) < 0 if x == 0 else x < 0
        o[39] = o[40] = o[41] = 0x8000 if neg else 0
    return o
