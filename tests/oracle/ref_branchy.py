"""Reference results of branchy.cu."""
M = 0xffffffff
NB = 8


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a & M


def mix(lo, hi, k):
    rlo = (lo * 2654435761 + k) & M
    return rlo, ((hi ^ rlo) >> (k & 7)) & M


def collatz(x):
    steps = 0
    while x != 1:
        if steps > 200:
            return M
        x = (3 * x + 1) & M if x & 1 else x // 2
        steps += 1
    return steps


def ref(a, b):
    o = [fib(a % 16)]
    c = a % 9
    o.append([(b + 1) & M, (b * 3) & M, b ^ 0x5a5a5a5a, b >> 3, ~b & M, (b - 77) & M, (b << 5) & M, b | 0xf0f0, 12345][c])
    acc = 0
    for j in range(64):
        if (b >> (j % 32)) & 1:
            continue
        acc = (acc + j * a) & M
        if acc > 0x80000000:
            break
    o.append(acc)
    loc = [(a * j + b) & M for j in range(16)]
    o.append((loc[b % 16] + loc[(a >> 4) % 16]) & M)
    lo, hi = a, b
    for k in range((a & 3) + 1):
        lo, hi = mix(lo, hi, (k + b) & M)
    o += [lo, hi]
    o.append(collatz((a % 1000) + 1))
    o.append(1 if a & 0x100 else 2)
    return o
