"""Reference for mma.cu: matrix products in Python integers (the f16 inputs
are small integers, so the f32 results are exact integers too)."""
import struct

WARPS = 4


def f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", float(x)))[0]


def words_of_halves(vals):
    return [f16_bits(vals[2 * i]) | f16_bits(vals[2 * i + 1]) << 16 for i in range(len(vals) // 2)]


def words_of_bytes(vals):
    return [sum((vals[4 * i + k] & 0xff) << (8 * k) for k in range(4)) for i in range(len(vals) // 4)]


def inputs(rnd):
    """Per warp: A 16x16, B^T 8x16, C 16x8 (f16/f32 small integers); A8 16x32, B8^T 8x32 (s8), C8 16x8 (s32)."""
    t = {"a": [], "bt": [], "c": [], "a8": [], "bt8": [], "c8": []}
    for w in range(WARPS):
        t["a"].append([rnd.randint(-8, 8) for _ in range(256)])
        t["bt"].append([rnd.randint(-8, 8) for _ in range(128)])
        t["c"].append([rnd.randint(-1000, 1000) for _ in range(128)])
        big = w % 2 == 1  # odd warps: large inputs and accumulators near the limits, to saturate
        t["a8"].append([rnd.choice([127, -128, 126]) if big else rnd.randint(-128, 127) for _ in range(512)])
        t["bt8"].append([rnd.choice([127, 127, -128]) if big else rnd.randint(-128, 127) for _ in range(256)])
        t["c8"].append([rnd.choice([2**31 - 1 - rnd.randint(0, 9999), -2**31 + rnd.randint(0, 9999)]) if big else rnd.randint(-2**31, 2**31 - 1) for _ in range(128)])
    return t


def ref(t):
    """(d as f32 values: two products per warp, d8 as s32, and which d8 elements are order-dependent)."""
    d, d8, open_ = [], [], set()
    for w in range(WARPS):
        a, bt, c = t["a"][w], t["bt"][w], t["c"][w]
        prod = [c[i * 8 + j] + sum(a[i * 16 + k] * bt[j * 16 + k] for k in range(16)) for i in range(16) for j in range(8)]
        d += prod + prod
        a8, bt8, c8 = t["a8"][w], t["bt8"][w], t["c8"][w]
        for i in range(16):
            for j in range(8):
                terms = [a8[i * 32 + k] * bt8[j * 32 + k] for k in range(32)] + [c8[i * 8 + j]]
                s = sum(terms)
                pos, neg = sum(x for x in terms if x > 0), sum(x for x in terms if x < 0)
                # .satfinite clamps; where a partial sum could overflow in one
                # order and not another, the result depends on the order.
                if not (pos <= 2**31 - 1 and neg >= -2**31) and not (s > 2**31 - 1 and neg == 0) and not (s < -2**31 and pos == 0):
                    open_.add(w * 128 + i * 8 + j)
                d8.append(max(-2**31, min(2**31 - 1, s)))
    return d, d8, open_
