"""Reference results of float.cu, computed exactly with rationals: IEEE
binary32 rounding in the four modes, subnormals, overflow per mode, signed
zeros, NaN (any NaN), and with `ftz` the flushing of -ftz=true builds
(subnormal inputs and results become signed zeros)."""
import math, struct
from fractions import Fraction as F
def f32(b): return struct.unpack("<f", struct.pack("<I", b))[0]
def bits32(x): return struct.unpack("<I", struct.pack("<f", x))[0]
def round_bin(v, mode, p, emin, emax, ebits):
    """Bits of the binary format (precision p incl. hidden bit) nearest v under mode rn/rz/ru/rd; v nonzero Fraction."""
    neg = v < 0; a = -v if neg else v
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if F(2) ** e > a: e -= 1
    if F(2) ** (e + 1) <= a: e += 1
    e = max(e, emin)
    q = F(2) ** (e - p + 1)
    m = a / q; n = m.numerator // m.denominator; rem = m - n
    up = False
    if rem:
        if mode == "rn": up = rem > F(1, 2) or (rem == F(1, 2) and n % 2 == 1)
        elif mode == "rz": up = False
        elif mode == "ru": up = not neg
        elif mode == "rd": up = neg
    n += up
    r = n * q
    mbits = p - 1
    sign = (1 << (ebits + mbits)) if neg else 0
    if r >= F(2) ** (emax + 1):
        inf = ((1 << ebits) - 1) << mbits
        maxf = inf - 1
        if mode == "rn": return sign | inf
        if mode == "rz": return sign | maxf
        if mode == "ru": return sign | (maxf if neg else inf)
        if mode == "rd": return sign | (inf if neg else maxf)
    if r < F(2) ** emin:
        return sign | int(r / F(2) ** (emin - mbits))
    e2 = r.numerator.bit_length() - r.denominator.bit_length()
    if F(2) ** e2 > r: e2 -= 1
    mant = int(r / F(2) ** (e2 - mbits)) - (1 << mbits)
    return sign | ((e2 + (1 << (ebits - 1)) - 1) << mbits) | mant
def r32(v, mode): return round_bin(v, mode, 24, -126, 127, 8)
def r16(v, mode): return round_bin(v, mode, 11, -14, 15, 5)
def r64(v, mode): return round_bin(v, mode, 53, -1022, 1023, 11)
def rbf16(v, mode): return round_bin(v, mode, 8, -126, 127, 8)
def f64(b): return struct.unpack("<d", struct.pack("<Q", b))[0]
def bits64(x): return struct.unpack("<Q", struct.pack("<d", x))[0]
NAN = "nan"
# A binary format: value of bits, bits of a host float, rounding of a rational, sign bit.
FMT32 = (f32, bits32, r32, 1 << 31)
FMT64 = (f64, bits64, r64, 1 << 63)
def arith(op, xs, mode, fmt=FMT32):
    val, bits32, r32, signbit = fmt
    fl = [val(b) for b in xs]
    if any(math.isnan(x) for x in fl): return NAN
    if any(math.isinf(x) for x in fl) or op == "div" and fl[1] == 0:
        # specials follow IEEE; double arithmetic gives the same class and sign
        try:
            if op == "add": r = fl[0] + fl[1]
            elif op == "mul": r = fl[0] * fl[1]
            elif op == "fma": r = fl[0] * fl[1] + fl[2]
            elif op == "div": r = fl[0] / fl[1] if fl[1] != 0 else (math.copysign(math.inf, fl[0]) * math.copysign(1, fl[1]) if fl[0] != 0 else math.nan)
        except ZeroDivisionError:
            r = math.nan
        if math.isnan(r): return NAN
        if math.isinf(r): return bits32(r)
        # finite result from infinite operands is impossible except x/inf
        if r == 0: return bits32(r)
    v = [F(x) for x in fl]
    if op == "add": exact = v[0] + v[1]; zsign = (math.copysign(1, fl[0]) < 0 and math.copysign(1, fl[1]) < 0)
    elif op == "mul": exact = v[0] * v[1]; zsign = (math.copysign(1, fl[0]) < 0) != (math.copysign(1, fl[1]) < 0)
    elif op == "fma":
        exact = v[0] * v[1] + v[2]
        ps = (math.copysign(1, fl[0]) < 0) != (math.copysign(1, fl[1]) < 0)
        if v[0] * v[1] == 0 and v[2] == 0: zsign = ps and math.copysign(1, fl[2]) < 0
        else: zsign = None
    elif op == "div":
        if v[1] == 0: return NAN
        exact = v[0] / v[1]; zsign = (math.copysign(1, fl[0]) < 0) != (math.copysign(1, fl[1]) < 0)
    if exact == 0:
        if op in ("add", "fma") and (op == "add" and not (v[0] == 0 and v[1] == 0) or op == "fma" and zsign is None):
            neg = mode == "rd"
        elif op == "add" and v[0] == 0 and v[1] == 0:
            s0, s1 = math.copysign(1, fl[0]) < 0, math.copysign(1, fl[1]) < 0
            neg = (s0 and s1) or (s0 != s1 and mode == "rd")
        elif op == "fma":
            ps = (math.copysign(1, fl[0]) < 0) != (math.copysign(1, fl[1]) < 0)
            s2 = math.copysign(1, fl[2]) < 0
            neg = (ps and s2) or (ps != s2 and mode == "rd")
        else:
            neg = zsign
        return signbit if neg else 0
    return r32(exact, mode)
def to_int(b, mode, lo, hi, val=f32):
    x = val(b)
    if math.isnan(x): return 0
    if math.isinf(x): return hi if x > 0 else lo
    v = F(x)
    fl = math.floor(v); c = math.ceil(v)
    if mode == "rz": r = math.trunc(v)
    elif mode == "ru": r = c
    elif mode == "rd": r = fl
    else:
        d = v - fl
        r = fl + 1 if d > F(1, 2) or (d == F(1, 2) and fl % 2 == 1) else fl
    return max(lo, min(hi, r))
def from_value(v, mode, fmt=r32):
    if v == 0: return 0
    return fmt(F(v), mode)
def sqrt_rn(b, fmt=FMT32):
    val, _, rnd, _ = fmt
    x = val(b)
    if math.isnan(x) or x < 0 and x != 0: return NAN
    if x == 0 or math.isinf(x): return b
    v = F(x); k = 1200
    t = v * F(4) ** k
    n = t.numerator // t.denominator
    r = math.isqrt(n)
    exact = r * r == n and t.denominator == 1
    approx = F(r, 2 ** k) if exact else (F(r) + F(1, 2)) / 2 ** k
    return rnd(approx, "rn")
def ref(xb, yb, db, ftz=False):
    """The 34 outputs of float.cu for inputs x, y (f32 bits) and d (f64 bits)."""
    def fl(b):
        if ftz and isinstance(b, int) and (b & 0x7f800000) == 0: return b & 0x80000000
        return b
    r = ref0(fl(xb), fl(yb), db, yb)
    return [fl(x) if k not in (16, 17, 18, 19, 20, 21, 22, 23, 24) else x for k, x in enumerate(r)]
def ref0(xb, yb, db, yraw):
    o = []
    for op in ("add", "mul"):
        for m in ("rn", "rz", "ru", "rd"): o.append(arith(op, [xb, yb], m))
    for m in ("rn", "rz", "ru", "rd"): o.append(arith("fma", [xb, yb, xb], m))
    for m in ("rn", "rz", "ru", "rd"): o.append(arith("div", [xb, yb], m))
    for m in ("rn", "rz", "ru", "rd"): o.append(to_int(xb, m, -2**31, 2**31 - 1) & 0xffffffff)
    o.append(to_int(xb, "rn", 0, 2**32 - 1))
    yi = yraw - 2**32 if yraw >> 31 else yraw
    for m in ("rn", "rz", "ru", "rd"): o.append(from_value(yi, m))
    d = struct.unpack("<d", struct.pack("<Q", db))[0]
    for m in ("rn", "rz", "ru", "rd"):
        if math.isnan(d): o.append(NAN)
        elif math.isinf(d) or d == 0: o.append(bits32(d))
        else: o.append(r32(F(d), m))
    x, y = f32(xb), f32(yb)
    if math.isnan(x) and math.isnan(y): o.append("nan")
    elif math.isnan(x): o.append(yb)
    elif math.isnan(y): o.append(xb)
    elif x == 0 and y == 0: o.append(xb | yb)
    else: o.append(xb if x < y else yb if y < x else xb)
    o.append(sqrt_rn(xb))
    o.append(arith("div", [0x3f800000, xb], "rn"))
    o.append(arith("div", [xb, yb], "rn"))
    o.append(sqrt_rn(xb))
    return o
