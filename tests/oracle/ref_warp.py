"""Reference results of warp.cu: warp shuffles, votes, reductions, match,
divergent loops, shared memory with barriers, __syncthreads_count, atomics."""
M = 0xffffffff
NW = 12

def ref(v, grid, block):
    out = [0] * (len(v) * NW)
    for blk in range(grid):
        bv = v[blk * block:(blk + 1) * block]
        cnt = sum(1 for x in bv if x & 2)
        for w in range(block // 32):
            wv = bv[w * 32:(w + 1) * 32]
            for lane in range(32):
                t = w * 32 + lane
                x = wv[lane]
                o = [0] * NW
                o[0] = sum(wv) & M
                o[1] = sum(1 << l for l in range(32) if wv[l] & 1)
                o[2] = max(wv)
                o[3] = wv[lane - 3] if lane >= 3 else x
                o[4] = wv[(lane * 7) & 31]
                o[5] = sum(1 << l for l in range(32) if wv[l] & 3 == x & 3)
                o[6] = 32
                o[7] = (sum(j * lane for j in range(x & 15)) & M) if lane & 1 else x ^ lane
                o[8] = bv[(t + 37) % block]
                o[9] = cnt
                o[10] = wv[lane + 2] if (lane % 8) + 2 < 8 else x
                o[11] = max(bv)
                g = blk * block + t
                out[g * NW:(g + 1) * NW] = o
    return out
