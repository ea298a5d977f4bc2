"""Reference results of async.cu: the double-buffered cp.async pipeline and
the zero-filling copy, computed from the input words directly."""
M = 0xffffffff
NT, TILE = 6, 512


def ref(v, grid, block):
    out = []
    for b in range(grid):
        base = v[b * NT * TILE:(b + 1) * NT * TILE]
        for t in range(block):
            s = x = 0
            for i in range(NT):
                tile = base[i * TILE:(i + 1) * TILE]
                s = (s + tile[(t * 4 + 37 * i + 5) % TILE] * (i + 1)) & M
                x ^= (tile[TILE - 1 - t] + i) & M
            out += [s, x, base[t] if t & 1 else 0]
    return out
