//! Matrix instructions run through the interpreter: small hand-written
//! kernels whose addresses follow the manual's layouts, checked against a
//! CPU matrix product.

use super::layout::{mma_coord, mma_fragment_len, Elem, Shape, Which};
use crate::eval::Quality;
use crate::interp::{run, KernelArg, Launch, RunError, RunOutput};

fn run_kernel(body: &str, params: usize, block: u32, buffers: Vec<Vec<u8>>) -> Result<RunOutput, RunError> {
    let ps: Vec<String> = (0..params).map(|k| format!(".param .u64 p{k}")).collect();
    let text = format!(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k({})\n{{\n\t.reg .pred %p<8>;\n\t.reg .b16 %h<40>;\n\t.reg .b32 %r<80>;\n\t.reg .b64 %rd<40>;\n\t.reg .f32 %f<40>;\n{body}\n\tret;\n}}\n", ps.join(", "));
    let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut l = Launch::new("k", [1, 1, 1], [block, 1, 1]);
    l.args = (0..params).map(KernelArg::Buffer).collect();
    l.buffers = buffers;
    run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l)
}

/// Loads the parameters into %rd1.. (global addresses).
fn params(n: usize) -> String {
    (0..n).map(|k| format!("\tld.param.u64 %rd{}, [p{k}];\n", k + 1)).collect()
}

/// The `.f16` bits of a small integer (exact for |i| <= 2048).
pub(super) fn f16_of_int(i: i32) -> u16 {
    if i == 0 {
        return 0;
    }
    let (s, a) = ((i < 0) as u16, i.unsigned_abs());
    let e = 31 - a.leading_zeros();
    s << 15 | ((e + 15) as u16) << 10 | (((a << (10 - e)) & 0x3ff) as u16)
}

fn words(out: &RunOutput, k: usize) -> Vec<u32> {
    out.buffers[k].bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn all_exact(out: &RunOutput, k: usize) -> bool {
    out.buffers[k].quality.iter().all(|q| *q == Quality::Exact)
}

/// A deterministic small pseudo-random sequence.
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

/// An m16n8k16 f16 x f16 + f32 tile: every lane computes the addresses of
/// its fragments from the manual's formulas (§9.7.14.5.8, figures 78, 80,
/// 82), small integers make the result exact, and it equals the CPU product.
#[test]
fn mma_m16n8k16_f16_f32_tile_is_the_exact_product() {
    let mut seed = 7;
    let a: Vec<i32> = (0..16 * 16).map(|_| (lcg(&mut seed) % 7) as i32 - 3).collect();
    let bt: Vec<i32> = (0..8 * 16).map(|_| (lcg(&mut seed) % 7) as i32 - 3).collect(); // B transposed: [n][k]
    let c: Vec<i32> = (0..16 * 8).map(|_| (lcg(&mut seed) % 201) as i32 - 100).collect();
    let h = |v: &[i32]| v.iter().flat_map(|x| f16_of_int(*x).to_le_bytes()).collect::<Vec<u8>>();
    let f = |v: &[i32]| v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect::<Vec<u8>>();
    let body = format!(
        "{}\tmov.u32 %r1, %laneid;\n\tshr.u32 %r2, %r1, 2;\n\tand.b32 %r3, %r1, 3;\n\
         \tshl.b32 %r4, %r2, 4;\n\tshl.b32 %r5, %r3, 1;\n\tadd.u32 %r6, %r4, %r5;\n\tshl.b32 %r6, %r6, 1;\n\
         \tcvt.u64.u32 %rd5, %r6;\n\tadd.s64 %rd6, %rd1, %rd5;\n\
         \tld.global.b32 %r10, [%rd6];\n\tld.global.b32 %r11, [%rd6+256];\n\tld.global.b32 %r12, [%rd6+16];\n\tld.global.b32 %r13, [%rd6+272];\n\
         \tadd.s64 %rd7, %rd2, %rd5;\n\tld.global.b32 %r14, [%rd7];\n\tld.global.b32 %r15, [%rd7+16];\n\
         \tshl.b32 %r7, %r2, 3;\n\tadd.u32 %r8, %r7, %r5;\n\tshl.b32 %r8, %r8, 2;\n\tcvt.u64.u32 %rd8, %r8;\n\tadd.s64 %rd9, %rd3, %rd8;\n\
         \tld.global.v2.f32 {{%f1, %f2}}, [%rd9];\n\tld.global.v2.f32 {{%f3, %f4}}, [%rd9+256];\n\
         \tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f5, %f6, %f7, %f8}}, {{%r10, %r11, %r12, %r13}}, {{%r14, %r15}}, {{%f1, %f2, %f3, %f4}};\n\
         \tadd.s64 %rd10, %rd4, %rd8;\n\tst.global.v2.f32 [%rd10], {{%f5, %f6}};\n\tst.global.v2.f32 [%rd10+256], {{%f7, %f8}};",
        params(4)
    );
    let out = run_kernel(&body, 4, 32, vec![h(&a), h(&bt), f(&c), vec![0; 16 * 8 * 4]]).unwrap();
    let d = words(&out, 3);
    for i in 0..16 {
        for j in 0..8 {
            let want = c[i * 8 + j] + (0..16).map(|k| a[i * 16 + k] * bt[j * 16 + k]).sum::<i32>();
            assert_eq!(f32::from_bits(d[i * 8 + j]), want as f32, "D[{i}][{j}]");
        }
    }
    assert!(all_exact(&out, 3), "small integers: every element exact");
}

/// Fragments arranged by lane from the layout functions (kernel: each lane
/// loads its registers from `frag[reg * 32 + lane]`, runs `mma`, stores
/// `d[reg * 32 + lane]`).
fn mma_by_fragments(head: &str, regs: [usize; 4], frags: [Vec<u32>; 3]) -> Result<RunOutput, RunError> {
    let mut body = params(4);
    body.push_str("\tmov.u32 %r1, %laneid;\n\tmul.wide.u32 %rd5, %r1, 4;\n");
    let mut names: Vec<Vec<String>> = Vec::new();
    let mut next = 10;
    for (k, n) in regs.iter().enumerate() {
        let mut v = Vec::new();
        for i in 0..*n {
            let r = format!("%r{next}");
            next += 1;
            if k > 0 {
                body.push_str(&format!("\tadd.s64 %rd6, %rd{k}, %rd5;\n\tld.global.b32 {r}, [%rd6+{}];\n", i * 128));
            }
            v.push(r);
        }
        names.push(v);
    }
    let list = |v: &Vec<String>| format!("{{{}}}", v.join(", "));
    body.push_str(&format!("\t{head} {}, {}, {}, {};\n", list(&names[0]), list(&names[1]), list(&names[2]), list(&names[3])));
    for (i, r) in names[0].iter().enumerate() {
        body.push_str(&format!("\tadd.s64 %rd6, %rd4, %rd5;\n\tst.global.b32 [%rd6+{}], {r};\n", i * 128));
    }
    let bytes = |v: &Vec<u32>| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    run_kernel(&body, 4, 32, vec![bytes(&frags[0]), bytes(&frags[1]), bytes(&frags[2]), vec![0; regs[0] * 128]])
}

/// Packs a matrix into lane fragments with the layout functions.
fn fragments(s: Shape, w: Which, ty: Elem, value: impl Fn(u32, u32) -> u32) -> Vec<u32> {
    let n = mma_fragment_len(s, w, ty);
    let per = ty.per_register();
    let regs = n.div_ceil(per);
    let mut out = vec![0u32; (regs * 32) as usize];
    for lane in 0..32 {
        for i in 0..n {
            let (r, c) = mma_coord(s, w, ty, true, lane, i).unwrap();
            let bits = ty.bits();
            let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
            out[((i / per) * 32 + lane) as usize] |= (value(r, c) & mask) << ((i % per) * bits);
        }
    }
    out
}

#[test]
fn mma_s8_saturates_and_wraps() {
    let s = Shape { m: 16, n: 8, k: 32 };
    for (a, c, sat, want) in [
        (127i32, 0x7fff_0000u32, true, i32::MAX),
        (127, 0x7fff_0000, false, (0x7fff_0000i64 + 32 * 127 * 127) as i32),
        (-127, 0x8001_0000, true, i32::MIN),
        (-127, 0x8001_0000, false, (0x8001_0000u32 as i32 as i64 - 32 * 127 * 127) as i32),
    ] {
        let fa = fragments(s, Which::A, Elem::S8, |_, _| a as u32);
        let fb = fragments(s, Which::B, Elem::S8, |_, _| 127);
        let fc = fragments(s, Which::C, Elem::S32, |_, _| c);
        let head = format!("mma.sync.aligned.m16n8k32.row.col{}.s32.s8.s8.s32", if sat { ".satfinite" } else { "" });
        let out = mma_by_fragments(&head, [4, 4, 2, 4], [fa, fb, fc]).unwrap();
        assert!(words(&out, 3).iter().all(|w| *w as i32 == want), "{head} a={a}: {:?}", &words(&out, 3)[..4]);
        assert!(all_exact(&out, 3));
    }
}

/// Mixed signedness and random values: s8 x u8 over m16n8k16 equals the
/// CPU product; u4 x s4 over m16n8k32 too.
#[test]
fn mma_integer_products_match_the_cpu() {
    let mut seed = 3;
    for (shape, at, bt, head, regs) in [
        (Shape { m: 16, n: 8, k: 16 }, Elem::S8, Elem::U8, "mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32", [4, 2, 1, 4]),
        (Shape { m: 16, n: 8, k: 32 }, Elem::U4, Elem::S4, "mma.sync.aligned.m16n8k32.row.col.s32.u4.s4.s32", [4, 2, 1, 4]),
        (Shape { m: 8, n: 8, k: 16 }, Elem::U8, Elem::U8, "mma.sync.aligned.m8n8k16.row.col.s32.u8.u8.s32", [2, 1, 1, 2]),
    ] {
        let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
        let av: Vec<u32> = (0..m * k).map(|_| lcg(&mut seed) as u32).collect();
        let bv: Vec<u32> = (0..k * n).map(|_| lcg(&mut seed) as u32).collect();
        let cv: Vec<u32> = (0..m * n).map(|_| lcg(&mut seed) as u32).collect();
        let fa = fragments(shape, Which::A, at, |r, c| av[r as usize * k + c as usize]);
        let fb = fragments(shape, Which::B, bt, |r, c| bv[r as usize * n + c as usize]);
        let fc = fragments(shape, Which::C, Elem::S32, |r, c| cv[r as usize * n + c as usize]);
        let out = mma_by_fragments(head, regs, [fa, fb, fc]).unwrap();
        let d = words(&out, 3);
        let nd = mma_fragment_len(shape, Which::C, Elem::S32);
        for lane in 0..32u32 {
            for i in 0..nd {
                let (r, c) = mma_coord(shape, Which::C, Elem::S32, true, lane, i).unwrap();
                let want = (0..k).fold(cv[r as usize * n + c as usize] as i32, |acc, x| {
                    acc.wrapping_add((at.int_value(av[r as usize * k + x] as u64) * bt.int_value(bv[x * n + c as usize] as u64)) as i32)
                });
                assert_eq!(d[(i * 32 + lane) as usize] as i32, want, "{head} D[{r}][{c}]");
            }
        }
    }
}

/// tf32 m16n8k8 and f64 m8n8k4: exact on small integers; a tf32 input
/// with low mantissa bits set is not exact.
#[test]
fn mma_tf32_and_f64() {
    let s = Shape { m: 16, n: 8, k: 8 };
    let fa = fragments(s, Which::A, Elem::Tf32, |r, c| ((r as i32 - c as i32) as f32).to_bits());
    let fb = fragments(s, Which::B, Elem::Tf32, |r, c| ((r + 2 * c) as f32).to_bits());
    let fc = fragments(s, Which::C, Elem::F32, |r, _| (r as f32).to_bits());
    let out = mma_by_fragments("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", [4, 4, 2, 4], [fa.clone(), fb.clone(), fc.clone()]).unwrap();
    let d = words(&out, 3);
    for lane in 0..32 {
        for i in 0..4 {
            let (r, c) = mma_coord(s, Which::C, Elem::F32, true, lane, i).unwrap();
            let want = r as f32 + (0..8).map(|x| (r as f32 - x as f32) * (x + 2 * c) as f32).sum::<f32>();
            assert_eq!(f32::from_bits(d[(i * 32 + lane) as usize]), want);
        }
    }
    assert!(all_exact(&out, 3));
    let mut fa2 = fa;
    fa2[0] |= 1; // lane 0, a0: low bits set
    let out = mma_by_fragments("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", [4, 4, 2, 4], [fa2, fb, fc]).unwrap();
    assert!(!all_exact(&out, 3));
}

#[test]
fn mma_m8n8k4_f64_fragments_in_64_bit_registers() {
    // a (row lane>>2, col lane%4) = row + col; b (row lane%4, col lane>>2) = row * col; c = 0.5.
    let body = format!(
        "{}\t.reg .f64 %fd<8>;\n\tmov.u32 %r1, %laneid;\n\tshr.u32 %r2, %r1, 2;\n\tand.b32 %r3, %r1, 3;\n\
         \tadd.u32 %r4, %r2, %r3;\n\tcvt.rn.f64.u32 %fd1, %r4;\n\tmul.lo.u32 %r5, %r3, %r2;\n\tcvt.rn.f64.u32 %fd2, %r5;\n\
         \tmov.f64 %fd3, 0d3FE0000000000000;\n\
         \tmma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{%fd5, %fd6}}, {{%fd1}}, {{%fd2}}, {{%fd3, %fd3}};\n\
         \tmul.wide.u32 %rd5, %r1, 16;\n\tadd.s64 %rd6, %rd1, %rd5;\n\tst.global.v2.f64 [%rd6], {{%fd5, %fd6}};",
        params(1)
    );
    let out = run_kernel(&body, 1, 32, vec![vec![0; 32 * 16]]).unwrap();
    let d: Vec<f64> = out.buffers[0].bytes.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    for lane in 0..32usize {
        for i in 0..2 {
            // §9.7.14.5.2 figure 54: row groupID, col 2 * tig + i.
            let (r, c) = (lane / 4, 2 * (lane % 4) + i);
            let want = 0.5 + (0..4).map(|k| ((r + k) * (k * c)) as f64).sum::<f64>();
            assert_eq!(d[lane * 2 + i], want, "lane {lane} c{i}");
        }
    }
    assert!(all_exact(&out, 0));
}

/// `ldmatrix.x4` and `.x4.trans` against figure 103: four matrices whose
/// rows lie at addresses the lanes choose (reversed order, to see that each
/// lane's address is used).
#[test]
fn ldmatrix_x4_and_trans_follow_the_manual() {
    // Matrix j row r sits at shared row j*8 + (7 - r); element value = 1000*j + 10*r + c.
    let mut mem = vec![0u16; 32 * 8];
    for j in 0..4 {
        for r in 0..8 {
            for c in 0..8 {
                mem[(j * 8 + 7 - r) * 8 + c] = (1000 * j + 10 * r + c) as u16;
            }
        }
    }
    for trans in [false, true] {
        let body = format!(
            "{}\t.shared .align 16 .b8 sm[512];\n\tmov.u32 %r1, %laneid;\n\
             \tmul.wide.u32 %rd5, %r1, 16;\n\tadd.s64 %rd6, %rd1, %rd5;\n\tld.global.v4.b32 {{%r2, %r3, %r4, %r5}}, [%rd6];\n\
             \tmov.u64 %rd7, sm;\n\tadd.s64 %rd8, %rd7, %rd5;\n\tst.shared.v4.b32 [%rd8], {{%r2, %r3, %r4, %r5}};\n\tbar.warp.sync -1;\n\
             \tand.b32 %r6, %r1, 24;\n\tand.b32 %r7, %r1, 7;\n\tsub.u32 %r8, 7, %r7;\n\tadd.u32 %r9, %r6, %r8;\n\
             \tmul.wide.u32 %rd9, %r9, 16;\n\tadd.s64 %rd10, %rd7, %rd9;\n\
             \tldmatrix.sync.aligned.m8n8.x4{}.shared.b16 {{%r10, %r11, %r12, %r13}}, [%rd10];\n\
             \tadd.s64 %rd11, %rd2, %rd5;\n\tst.global.v4.b32 [%rd11], {{%r10, %r11, %r12, %r13}};",
            params(2),
            if trans { ".trans" } else { "" }
        );
        let bytes: Vec<u8> = mem.iter().flat_map(|x| x.to_le_bytes()).collect();
        let out = run_kernel(&body, 2, 32, vec![bytes, vec![0; 512]]).unwrap();
        let w = words(&out, 1);
        for l in 0..32u32 {
            for j in 0..4u32 {
                // Figure 103: lane l holds row l/4, columns 2(l%4) and 2(l%4)+1; .trans: of the transpose.
                let el = |r: u32, c: u32| if trans { 1000 * j + 10 * c + r } else { 1000 * j + 10 * r + c };
                let want = el(l / 4, 2 * (l % 4)) | el(l / 4, 2 * (l % 4) + 1) << 16;
                assert_eq!(w[(l * 4 + j) as usize], want, "trans {trans} lane {l} matrix {j}");
            }
        }
        assert!(all_exact(&out, 1));
    }
}

/// `stmatrix` undoes `ldmatrix` (with and without `.trans`), and
/// `movmatrix` transposes the fragment.
#[test]
fn stmatrix_inverts_ldmatrix_and_movmatrix_transposes() {
    let data: Vec<u8> = (0..512u32).map(|x| (x * 7 + 3) as u8).collect();
    for trans in ["", ".trans"] {
        let body = format!(
            "{}\t.shared .align 16 .b8 sm[512];\n\t.shared .align 16 .b8 sm2[512];\n\tmov.u32 %r1, %laneid;\n\
             \tmul.wide.u32 %rd5, %r1, 16;\n\tadd.s64 %rd6, %rd1, %rd5;\n\tld.global.v4.b32 {{%r2, %r3, %r4, %r5}}, [%rd6];\n\
             \tmov.u64 %rd7, sm;\n\tadd.s64 %rd8, %rd7, %rd5;\n\tst.shared.v4.b32 [%rd8], {{%r2, %r3, %r4, %r5}};\n\tbar.warp.sync -1;\n\
             \tldmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 {{%r10, %r11, %r12, %r13}}, [%rd8];\n\
             \tmov.u64 %rd9, sm2;\n\tadd.s64 %rd10, %rd9, %rd5;\n\
             \tstmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 [%rd10], {{%r10, %r11, %r12, %r13}};\n\tbar.warp.sync -1;\n\
             \tld.shared.v4.b32 {{%r2, %r3, %r4, %r5}}, [%rd10];\n\tadd.s64 %rd11, %rd2, %rd5;\n\tst.global.v4.b32 [%rd11], {{%r2, %r3, %r4, %r5}};",
            params(2)
        );
        let out = run_kernel(&body, 2, 32, vec![data.clone(), vec![0; 512]]).unwrap();
        assert_eq!(out.buffers[1].bytes, data, "stmatrix{trans} after ldmatrix{trans}");
        assert!(all_exact(&out, 1));
    }
    // movmatrix: lane l holds M[l/4][2(l%4)+h] = 8 * row + col; afterwards M^T's fragment.
    let body = format!(
        "{}\tmov.u32 %r1, %laneid;\n\tshr.u32 %r2, %r1, 2;\n\tand.b32 %r3, %r1, 3;\n\tshl.b32 %r3, %r3, 1;\n\
         \tshl.b32 %r4, %r2, 3;\n\tadd.u32 %r5, %r4, %r3;\n\tadd.u32 %r6, %r5, 1;\n\tshl.b32 %r6, %r6, 16;\n\tor.b32 %r7, %r5, %r6;\n\
         \tmovmatrix.sync.aligned.m8n8.trans.b16 %r8, %r7;\n\tmul.wide.u32 %rd5, %r1, 4;\n\tadd.s64 %rd6, %rd1, %rd5;\n\tst.global.b32 [%rd6], %r8;",
        params(1)
    );
    let out = run_kernel(&body, 1, 32, vec![vec![0; 128]]).unwrap();
    let w = words(&out, 0);
    for l in 0..32u32 {
        let el = |h: u32| (2 * (l % 4) + h) * 8 + l / 4;
        assert_eq!(w[l as usize], el(0) | el(1) << 16, "lane {l}");
    }
}

/// wmma: load A (row), B (col), C (row, stride 24), mma, store D (col):
/// whatever the fragment layout, the stored result is the product.
#[test]
fn wmma_m16n16k16_product_through_memory() {
    let mut seed = 11;
    let a: Vec<i32> = (0..256).map(|_| (lcg(&mut seed) % 9) as i32 - 4).collect(); // [m][k] row-major
    let b: Vec<i32> = (0..256).map(|_| (lcg(&mut seed) % 9) as i32 - 4).collect(); // [n][k]: B col-major
    let c: Vec<i32> = (0..16 * 24).map(|_| (lcg(&mut seed) % 50) as i32).collect(); // [m][24]
    let h = |v: &[i32]| v.iter().flat_map(|x| f16_of_int(*x).to_le_bytes()).collect::<Vec<u8>>();
    let f = |v: &[i32]| v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect::<Vec<u8>>();
    let body = format!(
        "{}\twmma.load.a.sync.aligned.row.m16n16k16.global.f16 {{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}}, [%rd1];\n\
         \twmma.load.b.sync.aligned.col.m16n16k16.global.f16 {{%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}}, [%rd2];\n\
         \tmov.u32 %r40, 24;\n\twmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}}, [%rd3], %r40;\n\
         \twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {{%f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18}}, {{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}}, {{%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}}, {{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}};\n\
         \twmma.store.d.sync.aligned.col.m16n16k16.global.f32 [%rd4], {{%f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18}};",
        params(4)
    );
    let out = run_kernel(&body, 4, 32, vec![h(&a), h(&b), f(&c), vec![0; 256 * 4]]).unwrap();
    let d = words(&out, 3);
    for i in 0..16 {
        for j in 0..16 {
            let want = c[i * 24 + j] + (0..16).map(|k| a[i * 16 + k] * b[j * 16 + k]).sum::<i32>();
            assert_eq!(f32::from_bits(d[j * 16 + i]), want as f32, "D[{i}][{j}] (column-major)");
        }
    }
    assert!(all_exact(&out, 3));
}

#[test]
fn wmma_integer_m32n8k16() {
    let mut seed = 5;
    let a: Vec<u8> = (0..32 * 16).map(|_| lcg(&mut seed) as u8).collect(); // s8 [m][k]
    let b: Vec<u8> = (0..16 * 8).map(|_| lcg(&mut seed) as u8).collect(); // s8 [k][n] row-major
    let body = format!(
        "{}\twmma.load.a.sync.aligned.row.m32n8k16.global.s8 {{%r1, %r2, %r3, %r4}}, [%rd1];\n\
         \twmma.load.b.sync.aligned.row.m32n8k16.global.s8 {{%r11}}, [%rd2];\n\
         \tmov.u32 %r20, 0;\n\
         \twmma.mma.sync.aligned.row.row.m32n8k16.s32.s8.s8.s32 {{%r21, %r22, %r23, %r24, %r25, %r26, %r27, %r28}}, {{%r1, %r2, %r3, %r4}}, {{%r11}}, {{%r20, %r20, %r20, %r20, %r20, %r20, %r20, %r20}};\n\
         \twmma.store.d.sync.aligned.row.m32n8k16.global.s32 [%rd3], {{%r21, %r22, %r23, %r24, %r25, %r26, %r27, %r28}};",
        params(3)
    );
    let out = run_kernel(&body, 3, 32, vec![a.clone(), b.clone(), vec![0; 256 * 4]]).unwrap();
    let d = words(&out, 2);
    for i in 0..32 {
        for j in 0..8 {
            let want: i32 = (0..16).map(|k| a[i * 16 + k] as i8 as i32 * b[k * 8 + j] as i8 as i32).sum();
            assert_eq!(d[i * 8 + j] as i32, want, "D[{i}][{j}]");
        }
    }
}

#[test]
fn partial_warps_divergence_and_unsupported_forms_stop_the_run() {
    let mma = "\tmov.b32 %r1, 0;\n\tmma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%r2, %r3, %r4, %r5}, {%r1, %r1}, {%r1}, {%r1, %r1, %r1, %r1};";
    // 16 threads: the warp is not full.
    let e = run_kernel(mma, 0, 16, vec![]).unwrap_err();
    assert!(matches!(&e, RunError::Undefined { message, .. } if message.contains("all 32 lanes")), "{e}");
    // Half the warp waits at a barrier while the other half is at mma.
    let body = format!("\tmov.u32 %r9, %laneid;\n\tsetp.lt.u32 %p1, %r9, 16;\n\t@%p1 bra L;\n\tbar.sync 0;\nL:\n{mma}");
    let e = run_kernel(&body, 0, 32, vec![]).unwrap_err();
    assert!(matches!(&e, RunError::Undefined { message, .. } if message.contains("elsewhere")), "{e}");
    // The sparse form is not implemented.
    let sp = "\tmov.b32 %r1, 0;\n\tmma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r2, %r3, %r4, %r5}, {%r1, %r1}, {%r1, %r1}, {%r1, %r1, %r1, %r1}, %r1, 0;";
    let e = run_kernel(sp, 0, 32, vec![]).unwrap_err();
    assert!(matches!(&e, RunError::Unsupported { what, .. } if what.starts_with("mma.sp")), "{e}");
    // A full warp runs it.
    assert!(run_kernel(mma, 0, 32, vec![]).is_ok());
}

/// `.m8n8k4` with `.f16`: each quad-pair computes its own 8x8x4 product
/// (§9.7.14.5.1); here all four get the same A, B, C, with C and D `.f32`.
#[test]
fn mma_m8n8k4_f16_quad_pairs() {
    let s = Shape { m: 8, n: 8, k: 4 };
    let a = |r: u32, c: u32| f16_of_int(r as i32 - 2 * c as i32) as u32;
    let b = |r: u32, c: u32| f16_of_int(c as i32 + r as i32 - 3) as u32;
    let fa = fragments(s, Which::A, Elem::F16, a);
    let fb = fragments(s, Which::B, Elem::F16, b);
    let fc = fragments(s, Which::C, Elem::F32, |r, c| ((r * 8 + c) as f32).to_bits());
    let out = mma_by_fragments("mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32", [8, 2, 2, 8], [fa, fb, fc]).unwrap();
    let d = words(&out, 3);
    for lane in 0..32u32 {
        for i in 0..8 {
            let (r, c) = mma_coord(s, Which::C, Elem::F32, true, lane, i).unwrap();
            let want = (r * 8 + c) as i32 + (0..4).map(|k| (r as i32 - 2 * k) * (c as i32 + k - 3)).sum::<i32>();
            assert_eq!(f32::from_bits(d[(i * 32 + lane) as usize]), want as f32, "lane {lane} d{i}");
        }
    }
    assert!(all_exact(&out, 3));
}

#[test]
fn misaligned_or_disagreeing_addresses_are_undefined() {
    // ldmatrix rows must be 16-byte aligned.
    let body = "\t.shared .align 16 .b8 sm[512];\n\tmov.u32 %r1, %laneid;\n\tmul.wide.u32 %rd1, %r1, 16;\n\tmov.u64 %rd2, sm;\n\tadd.s64 %rd3, %rd2, %rd1;\n\tst.shared.v4.b32 [%rd3], {%r1, %r1, %r1, %r1};\n\tbar.warp.sync -1;\n\
                \tadd.s64 %rd3, %rd3, 4;\n\tldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%rd3];";
    let e = run_kernel(body, 0, 32, vec![]).unwrap_err();
    assert!(matches!(&e, RunError::Undefined { message, .. } if message.contains("16-byte aligned")), "{e}");
    // wmma: every lane must give the same address.
    let body = format!("{}\tmov.u32 %r1, %laneid;\n\tand.b32 %r1, %r1, 1;\n\tmul.wide.u32 %rd5, %r1, 1024;\n\tadd.s64 %rd6, %rd1, %rd5;\n\
                        \twmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}}, [%rd6];", params(1));
    let e = run_kernel(&body, 1, 32, vec![vec![0; 4096]]).unwrap_err();
    assert!(matches!(&e, RunError::Undefined { message, .. } if message.contains("differs from lane 0")), "{e}");
    // Out of bounds is a fault, as for any load.
    let body = format!("{}\twmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}}, [%rd1];", params(1));
    let e = run_kernel(&body, 1, 32, vec![vec![0; 512]]).unwrap_err();
    assert!(matches!(&e, RunError::Fault { .. }), "{e}");
}
