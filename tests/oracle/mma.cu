// Tensor-core tiles through inline PTX (sm_80): per warp, one
// mma.m16n8k16 f16 x f16 + f32 tile with fragments loaded from global
// memory at the manual's lane addresses, the same A fragment again through
// shared memory and ldmatrix.x4, and one mma.m16n8k32 s8 x s8 + s32 tile
// with .satfinite. Inputs are small integers, so every f32 result is exact.
extern "C" __global__ void kmma(const unsigned *a, const unsigned *bt, const float *c, float *d,
                                const unsigned *a8, const unsigned *bt8, const int *c8, int *d8) {
  unsigned lane = threadIdx.x & 31, warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, wib = threadIdx.x >> 5;
  unsigned g = lane >> 2, t = lane & 3;
  // A: 16x16 halves row-major (8 words a row); B^T: 8x16 halves (B column-major); C, D: 16x8 f32.
  const unsigned *A = a + warp * 128, *B = bt + warp * 64;
  const float *C = c + warp * 128;
  float *D = d + warp * 256;
  unsigned a0 = A[g * 8 + t], a1 = A[(g + 8) * 8 + t], a2 = A[g * 8 + t + 4], a3 = A[(g + 8) * 8 + t + 4];
  unsigned b0 = B[g * 8 + t], b1 = B[g * 8 + t + 4];
  float c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], c2 = C[(g + 8) * 8 + 2 * t], c3 = C[(g + 8) * 8 + 2 * t + 1];
  float d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  D[g * 8 + 2 * t] = d0; D[g * 8 + 2 * t + 1] = d1; D[(g + 8) * 8 + 2 * t] = d2; D[(g + 8) * 8 + 2 * t + 1] = d3;
  // The A tile through shared memory: ldmatrix.x4, lane l gives row l % 16, column 8 * (l / 16).
  __shared__ __align__(16) unsigned sh[4][128];
  for (unsigned k = lane; k < 128; k += 32) sh[wib][k] = A[k];
  __syncwarp();
  unsigned row = lane % 16, col = 8 * (lane / 16);
  unsigned addr;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(addr) : "l"(&sh[wib][row * 8 + col / 2]));
  unsigned l0, l1, l2, l3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(l0), "=r"(l1), "=r"(l2), "=r"(l3) : "r"(addr));
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "r"(l0), "r"(l1), "r"(l2), "r"(l3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  D[128 + g * 8 + 2 * t] = d0; D[128 + g * 8 + 2 * t + 1] = d1; D[128 + (g + 8) * 8 + 2 * t] = d2; D[128 + (g + 8) * 8 + 2 * t + 1] = d3;
  // s8: A 16x32 row-major (8 words a row), B^T 8x32 (8 words a row), C, D 16x8 s32.
  const unsigned *A8 = a8 + warp * 128, *B8 = bt8 + warp * 64;
  const int *C8 = c8 + warp * 128;
  int *D8 = d8 + warp * 128;
  unsigned e0 = A8[g * 8 + t], e1 = A8[(g + 8) * 8 + t], e2 = A8[g * 8 + t + 4], e3 = A8[(g + 8) * 8 + t + 4];
  unsigned f0 = B8[g * 8 + t], f1 = B8[g * 8 + t + 4];
  int i0 = C8[g * 8 + 2 * t], i1 = C8[g * 8 + 2 * t + 1], i2 = C8[(g + 8) * 8 + 2 * t], i3 = C8[(g + 8) * 8 + 2 * t + 1];
  int o0, o1, o2, o3;
  asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=r"(o0), "=r"(o1), "=r"(o2), "=r"(o3)
               : "r"(e0), "r"(e1), "r"(e2), "r"(e3), "r"(f0), "r"(f1), "r"(i0), "r"(i1), "r"(i2), "r"(i3));
  D8[g * 8 + 2 * t] = o0; D8[g * 8 + 2 * t + 1] = o1; D8[(g + 8) * 8 + 2 * t] = o2; D8[(g + 8) * 8 + 2 * t + 1] = o3;
}
