"""Reference results of int.cu: integer intrinsics and C integer semantics on u32 inputs."""
import struct
M = 0xffffffff
def s32(x): x &= M; return x - (1 << 32) if x >> 31 else x
def popc(x): return bin(x & M).count("1")
def clz(x):
    x &= M
    return 32 - x.bit_length()
def ffs(x):
    x &= M
    return 0 if x == 0 else (x & -x).bit_length()
def brev(x): return int(format(x & M, "032b")[::-1], 2)
def byte_perm(a, b, s):
    bs = [(a >> (8*i)) & 0xff for i in range(4)] + [(b >> (8*i)) & 0xff for i in range(4)]
    r = 0
    for n in range(4):
        r |= bs[(s >> (4*n)) & 7] << (8*n)
    return r
def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q
def ref(a, b):
    sa, sb = s32(a), s32(b)
    o = []
    o.append(((sa * sb) >> 32) & M)
    o.append(((a * b) >> 32) & M)
    o.append(popc(a)); o.append(clz(a)); o.append(ffs(a)); o.append(brev(a))
    o.append(byte_perm(a, b, b & 0x7777))
    o.append((((b << 32 | a) << (b & 31)) >> 32) & M)
    o.append(((b << 32 | a) >> min(b, 32)) & M)
    o.append((abs(sa - sb) + 7) & M)
    o.append(((sa + sb) >> 1) & M)
    o.append(((sa + sb + 1) >> 1) & M)
    o.append(((a + b) >> 1) & M)
    ok = sb != 0 and not (sa == -2**31 and sb == -1)
    o.append(tdiv(sa, sb) & M if ok else 0)
    o.append((sa - tdiv(sa, sb) * sb) & M if ok else 0)
    o.append(a // b if b else 0)
    o.append(min(sa, sb) & M); o.append(max(a, b))
    o.append(abs(sa) & M)
    o.append((sa >> (b & 31)) & M)
    o.append(sum(abs(((a >> (8*i)) & 0xff) - ((b >> (8*i)) & 0xff)) << (8*i) for i in range(4)))
    def sb8(x, i): v = (x >> (8*i)) & 0xff; return v - 256 if v >= 128 else v
    o.append((sum(sb8(a, i) * sb8(b, i) for i in range(4)) + 5) & M)
    o.append(((a * b) >> 7) & M)
    o.append((a >> (b & 15)) & 31)
    return o
