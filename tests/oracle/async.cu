// A double-buffered cp.async pipeline (the sm_80 way Triton and CUTLASS
// feed shared memory): each block streams NT tiles of 512 words from global
// into two shared buffers with cp.async.cg (16 bytes per thread), committing
// one group per tile and waiting with cp.async.wait_group 1 so the next
// tile's copy is in flight while the current one is read; then a 4-byte
// cp.async.ca with src-size 0 or 4 (zero fill) and wait_group 0.
#define NT 6
#define TILE 512

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async4(void *smem, const void *gmem, unsigned src_size) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(src_size) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

extern "C" __global__ void kasync(const unsigned *in, unsigned *out) {
  __shared__ __align__(16) unsigned buf[2][TILE];
  __shared__ unsigned z[128];
  unsigned t = threadIdx.x;
  const unsigned *base = in + blockIdx.x * NT * TILE;
  cp_async16(&buf[0][t * 4], base + t * 4);
  commit();
  unsigned sum = 0, x = 0;
  for (int i = 0; i < NT; ++i) {
    if (i + 1 < NT) cp_async16(&buf[(i + 1) & 1][t * 4], base + (i + 1) * TILE + t * 4);
    commit();
    wait_group<1>();
    __syncthreads();
    sum += buf[i & 1][(t * 4 + 37 * i + 5) % TILE] * (i + 1);
    x ^= buf[i & 1][TILE - 1 - t] + i;
    __syncthreads();
  }
  cp_async4(&z[t], base + t, (t & 1) ? 4 : 0);
  commit();
  wait_group<0>();
  unsigned g = blockIdx.x * blockDim.x + t;
  out[g * 3 + 0] = sum;
  out[g * 3 + 1] = x;
  out[g * 3 + 2] = z[t];
}
