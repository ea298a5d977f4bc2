#define NW 12
extern "C" __global__ void kwarp(const unsigned *in, unsigned *out, unsigned *total) {
  unsigned t = threadIdx.x, lane = t & 31;
  unsigned g = blockIdx.x * blockDim.x + t;
  unsigned v = in[g];
  unsigned *o = out + g * NW;
  unsigned s = v;
  for (int off = 16; off; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
  o[0] = s;
  o[1] = __ballot_sync(0xffffffff, v & 1);
  o[2] = __reduce_max_sync(0xffffffff, v);
  o[3] = __shfl_up_sync(0xffffffff, v, 3);
  o[4] = __shfl_sync(0xffffffff, v, (lane * 7) & 31);
  o[5] = __match_any_sync(0xffffffff, v & 3);
  o[6] = __popc(__activemask());
  unsigned acc = 0;
  if (lane & 1) { for (unsigned j = 0; j < (v & 15); ++j) acc += j * lane; } else { acc = v ^ lane; }
  o[7] = acc;
  __shared__ unsigned sh[256];
  sh[t] = v;
  __syncthreads();
  o[8] = sh[(t + 37) % blockDim.x];
  o[9] = __syncthreads_count(v & 2);
  o[10] = __shfl_down_sync(0xffffffff, v, 2, 8);
  atomicAdd(total, v & 0xffff);
  __shared__ unsigned smax;
  if (t == 0) smax = 0;
  __syncthreads();
  atomicMax(&smax, v);
  __syncthreads();
  o[11] = smax;
}
