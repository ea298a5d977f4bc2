
#define NF 34
#define U(v) __float_as_uint(v)
extern "C" __global__ void kflt(const float *in, const double *ind, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[2*i], y = in[2*i+1];
  double d = ind[i];
  unsigned *o = out + NF * i;
  o[0] = U(__fadd_rn(x, y)); o[1] = U(__fadd_rz(x, y)); o[2] = U(__fadd_ru(x, y)); o[3] = U(__fadd_rd(x, y));
  o[4] = U(__fmul_rn(x, y)); o[5] = U(__fmul_rz(x, y)); o[6] = U(__fmul_ru(x, y)); o[7] = U(__fmul_rd(x, y));
  o[8] = U(__fmaf_rn(x, y, x)); o[9] = U(__fmaf_rz(x, y, x)); o[10] = U(__fmaf_ru(x, y, x)); o[11] = U(__fmaf_rd(x, y, x));
  o[12] = U(__fdiv_rn(x, y)); o[13] = U(__fdiv_rz(x, y)); o[14] = U(__fdiv_ru(x, y)); o[15] = U(__fdiv_rd(x, y));
  o[16] = __float2int_rn(x); o[17] = __float2int_rz(x); o[18] = __float2int_ru(x); o[19] = __float2int_rd(x);
  o[20] = __float2uint_rn(x);
  int yi = (int)__float_as_uint(y);
  o[21] = U(__int2float_rn(yi)); o[22] = U(__int2float_rz(yi)); o[23] = U(__int2float_ru(yi)); o[24] = U(__int2float_rd(yi));
  o[25] = U(__double2float_rn(d)); o[26] = U(__double2float_rz(d)); o[27] = U(__double2float_ru(d)); o[28] = U(__double2float_rd(d));
  o[29] = U(fminf(x, y));
  o[30] = U(__fsqrt_rn(x));
  o[31] = U(__frcp_rn(x));
  o[32] = U(x / y);
  o[33] = U(sqrtf(x));
}
