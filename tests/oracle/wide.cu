// Double precision in every rounding mode, f64 <-> integer conversions,
// 64-bit integer intrinsics, and half / bfloat16 conversions and arithmetic
// (through inline PTX, so that no CUDA header is needed).
#define NO 45
#define D(v) ((unsigned long long)__double_as_longlong(v))
extern "C" __global__ void kwide(const unsigned long long *in, unsigned long long *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = __longlong_as_double(in[3*i]), y = __longlong_as_double(in[3*i+1]);
  unsigned long long a = in[3*i+2], b = in[3*i+1];
  long long sa = (long long)a, sb = (long long)b;
  unsigned long long *o = out + NO * i;
  o[0] = D(__dadd_rn(x, y)); o[1] = D(__dadd_rz(x, y)); o[2] = D(__dadd_ru(x, y)); o[3] = D(__dadd_rd(x, y));
  o[4] = D(__dmul_rn(x, y)); o[5] = D(__dmul_rz(x, y)); o[6] = D(__dmul_ru(x, y)); o[7] = D(__dmul_rd(x, y));
  o[8] = D(__fma_rn(x, y, x)); o[9] = D(__fma_rz(x, y, x)); o[10] = D(__fma_ru(x, y, x)); o[11] = D(__fma_rd(x, y, x));
  o[12] = D(__ddiv_rn(x, y)); o[13] = D(__ddiv_rz(x, y)); o[14] = D(__ddiv_ru(x, y)); o[15] = D(__ddiv_rd(x, y));
  o[16] = D(__dsqrt_rn(x)); o[17] = D(__drcp_rn(x)); o[18] = D(x / y); o[19] = D(sqrt(x));
  o[20] = (unsigned)__double2int_rn(x); o[21] = (unsigned)__double2int_rz(x);
  o[22] = (unsigned)__double2int_ru(x); o[23] = (unsigned)__double2int_rd(x);
  o[24] = (unsigned long long)__double2ll_rz(x); o[25] = __double2ull_rn(x);
  o[26] = D(__ll2double_rn(sa)); o[27] = D(__ll2double_rz(sa)); o[28] = D(__ll2double_ru(sa)); o[29] = D(__ll2double_rd(sa));
  o[30] = (unsigned long long)__mul64hi(sa, sb); o[31] = __umul64hi(a, b);
  o[32] = __popcll(a); o[33] = __clzll(sa); o[34] = __brevll(a);
  o[35] = (sb != 0 && !(sa == (long long)0x8000000000000000ULL && sb == -1)) ? (unsigned long long)(sa / sb) : 0;
  o[36] = (sb != 0 && !(sa == (long long)0x8000000000000000ULL && sb == -1)) ? (unsigned long long)(sa % sb) : 0;
  o[37] = b ? a / b : 0;
  o[38] = __ffsll(sa);
  float xf = __double2float_rn(x);
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(xf)); o[39] = h;
  asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(xf)); o[40] = h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(xf)); o[41] = h;
  float back;
  asm("cvt.f32.f16 %0, %1;" : "=f"(back) : "h"((unsigned short)a)); o[42] = __float_as_uint(back);
  asm("add.rn.f16 %0, %1, %2;" : "=h"(h) : "h"((unsigned short)a), "h"((unsigned short)(a >> 16))); o[43] = h;
  unsigned hx2;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(hx2) : "r"((unsigned)a), "r"((unsigned)(a >> 32)), "r"((unsigned)b)); o[44] = hx2;
}
