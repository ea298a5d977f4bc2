#define NOUT 24
extern "C" __global__ void kint(const unsigned *in, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = in[2*i], b = in[2*i+1];
  int sa = (int)a, sb = (int)b;
  unsigned *o = out + NOUT * i;
  o[0] = __mulhi(sa, sb);
  o[1] = __umulhi(a, b);
  o[2] = __popc(a);
  o[3] = __clz(sa);
  o[4] = __ffs(sa);
  o[5] = __brev(a);
  o[6] = __byte_perm(a, b, b & 0x7777);
  o[7] = __funnelshift_l(a, b, b);
  o[8] = __funnelshift_rc(a, b, b);
  o[9] = __sad(sa, sb, 7u);
  o[10] = __hadd(sa, sb);
  o[11] = __rhadd(sa, sb);
  o[12] = __uhadd(a, b);
  o[13] = (sb != 0 && !(sa == (int)0x80000000 && sb == -1)) ? sa / sb : 0;
  o[14] = (sb != 0 && !(sa == (int)0x80000000 && sb == -1)) ? sa % sb : 0;
  o[15] = b != 0 ? a / b : 0;
  o[16] = min(sa, sb);
  o[17] = max(a, b);
  o[18] = abs(sa);
  o[19] = sa >> (b & 31);
  o[20] = __vabsdiffu4(a, b);
  o[21] = __dp4a(sa, sb, 5);
  o[22] = (unsigned)(((unsigned long long)a * b) >> 7);
  o[23] = (a >> (b & 15)) & 31;
}
