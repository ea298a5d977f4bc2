// Control flow: recursion through the stack, switch (jump tables), loops
// with break/continue, early returns, a local array indexed at run time,
// device functions taking and returning structs by value.
#define NB 8
struct Pair { unsigned lo, hi; };

__device__ __noinline__ unsigned fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ Pair mix(Pair p, unsigned k) {
  Pair r;
  r.lo = p.lo * 2654435761u + k;
  r.hi = (p.hi ^ r.lo) >> (k & 7);
  return r;
}

__device__ __noinline__ unsigned collatz(unsigned x) {
  unsigned steps = 0;
  while (x != 1) {
    if (steps > 200) return 0xffffffffu;
    x = (x & 1) ? 3 * x + 1 : x / 2;
    ++steps;
  }
  return steps;
}

extern "C" __global__ void kbranch(const unsigned *in, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = in[2*i], b = in[2*i+1];
  unsigned *o = out + NB * i;
  o[0] = fib(a % 16);
  unsigned s;
  switch (a % 9) {
    case 0: s = b + 1; break;
    case 1: s = b * 3; break;
    case 2: s = b ^ 0x5a5a5a5a; break;
    case 3: s = b >> 3; break;
    case 4: s = ~b; break;
    case 5: s = b - 77; break;
    case 6: s = b << 5; break;
    case 7: s = b | 0xf0f0; break;
    default: s = 12345;
  }
  o[1] = s;
  unsigned acc = 0;
  for (unsigned j = 0; j < 64; ++j) {
    if ((b >> (j % 32)) & 1) continue;
    acc += j * a;
    if (acc > 0x80000000u) break;
  }
  o[2] = acc;
  unsigned loc[16];
  for (int j = 0; j < 16; ++j) loc[j] = a * j + b;
  o[3] = loc[b % 16] + loc[(a >> 4) % 16];
  Pair p = {a, b};
  for (unsigned k = 0; k < (a & 3) + 1; ++k) p = mix(p, k + b);
  o[4] = p.lo; o[5] = p.hi;
  o[6] = collatz((a % 1000) + 1);
  if (a & 0x100) { o[7] = 1; return; }
  o[7] = 2;
}
