//! `wgmma` kernels run through the interpreter: 128 threads copy A and B
//! images (laid out in the test from the manual's canonical layouts, not
//! from `layout.rs`) into shared memory, build descriptors, and run
//! `wgmma.fence / mma_async / commit_group / wait_group`; D is checked bit
//! for bit against a CPU product. Plus the undefined behaviours the
//! manual names.

use super::layout::{a_coord, d_coord};
use crate::interp::matrix::tests::f16_of_int;
use crate::eval::Quality;
use crate::interp::{run, KernelArg, Launch, RunError, RunOutput};

/// What a test kernel does.
struct Kernel {
    /// Accumulator registers per thread.
    d_regs: usize,
    /// Bytes of the shared A and B images.
    a_bytes: usize,
    b_bytes: usize,
    /// A-descriptor and B-descriptor fields above the start address.
    a_fields: u64,
    b_fields: u64,
    /// The wgmma instructions: `{d}` is the D vector, `{a}` the A vector,
    /// `{da}`/`{db}` descriptor registers of step `k` (start advanced by `advance * k` 16-byte units).
    wgmma: Vec<String>,
    advance: u64,
    /// Inserted after the fence / after the mma_async lines.
    after_fence: String,
    before_wait: String,
    fence: bool,
    threads: u32,
}

impl Kernel {
    fn new(d_regs: usize, a_bytes: usize, b_bytes: usize, a_fields: u64, b_fields: u64, wgmma: &str) -> Kernel {
        Kernel { d_regs, a_bytes, b_bytes, a_fields, b_fields, wgmma: vec![wgmma.to_string()], advance: 0, after_fence: String::new(), before_wait: String::new(), fence: true, threads: 128 }
    }

    fn text(&self) -> String {
        let mut s = String::from(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u64 pr)\n{\n");
        s += "\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<40>;\n\t.reg .b32 %d<140>;\n\t.reg .b32 %a<4>;\n";
        s += &format!("\t.shared .align 1024 .b8 sa[{}];\n\t.shared .align 1024 .b8 sb[{}];\n", self.a_bytes.max(16), self.b_bytes.max(16));
        for (k, p) in ["pa", "pb", "pc", "pd", "pr"].iter().enumerate() {
            s += &format!("\tld.param.u64 %rd{}, [{p}];\n", k + 1);
        }
        s += "\tmov.u32 %r1, %tid.x;\n";
        for (name, bytes, src) in [("sa", self.a_bytes, 1), ("sb", self.b_bytes, 2)] {
            s += &format!(
                "\tmov.u32 %r2, %r1;\nL_{name}:\n\tsetp.ge.u32 %p1, %r2, {};\n\t@%p1 bra E_{name};\n\tmul.wide.u32 %rd10, %r2, 16;\n\tadd.s64 %rd11, %rd{src}, %rd10;\n\
                 \tld.global.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd11];\n\tmov.u32 %r3, {name};\n\tshl.b32 %r4, %r2, 4;\n\tadd.u32 %r5, %r3, %r4;\n\
                 \tst.shared.v4.u32 [%r5], {{%r10, %r11, %r12, %r13}};\n\tadd.u32 %r2, %r2, 128;\n\tbra L_{name};\nE_{name}:\n",
                bytes / 16
            );
        }
        s += "\tbar.sync 0;\n\tfence.proxy.async.shared::cta;\n";
        s += &format!("\tmul.wide.u32 %rd12, %r1, {};\n\tadd.s64 %rd13, %rd3, %rd12;\n", self.d_regs * 4);
        for i in 0..self.d_regs {
            s += &format!("\tld.global.b32 %d{i}, [%rd13+{}];\n", 4 * i);
        }
        s += "\tmul.wide.u32 %rd14, %r1, 16;\n\tadd.s64 %rd15, %rd5, %rd14;\n";
        for j in 0..4 {
            s += &format!("\tld.global.b32 %a{j}, [%rd15+{}];\n", 4 * j);
        }
        s += &format!("\tmov.u32 %r6, sa;\n\tcvt.u64.u32 %rd20, %r6;\n\tshr.u64 %rd20, %rd20, 4;\n\tor.b64 %rd20, %rd20, {};\n", self.a_fields);
        s += &format!("\tmov.u32 %r7, sb;\n\tcvt.u64.u32 %rd21, %r7;\n\tshr.u64 %rd21, %rd21, 4;\n\tor.b64 %rd21, %rd21, {};\n", self.b_fields);
        if self.fence {
            s += "\twgmma.fence.sync.aligned;\n";
        }
        s += &self.after_fence;
        let d: Vec<String> = (0..self.d_regs).map(|i| format!("%d{i}")).collect();
        let d = format!("{{{}}}", d.join(", "));
        for (k, w) in self.wgmma.iter().enumerate() {
            let off = self.advance * k as u64;
            s += &format!("\tadd.s64 %rd22, %rd20, {off};\n\tadd.s64 %rd23, %rd21, {off};\n");
            s += &format!("\t{};\n", w.replace("{d}", &d).replace("{a}", "{%a0, %a1, %a2, %a3}").replace("{da}", "%rd22").replace("{db}", "%rd23"));
        }
        s += "\twgmma.commit_group.sync.aligned;\n";
        s += &self.before_wait;
        s += "\twgmma.wait_group.sync.aligned 0;\n\tadd.s64 %rd16, %rd4, %rd12;\n";
        for i in 0..self.d_regs {
            s += &format!("\tst.global.b32 [%rd16+{}], %d{i};\n", 4 * i);
        }
        s += "\tret;\n}\n";
        s
    }

    /// Runs with the A and B images, the initial D fragments (by thread,
    /// register) and the A register fragments (by thread, 4 registers).
    fn run(&self, a: Vec<u8>, b: Vec<u8>, c: &[u32], a_regs: &[u32]) -> Result<RunOutput, RunError> {
        let text = self.text();
        let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut l = Launch::new("k", [1, 1, 1], [self.threads, 1, 1]);
        l.args = (0..5).map(KernelArg::Buffer).collect();
        let words = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let mut a_regs = words(a_regs);
        a_regs.resize(128 * 16, 0);
        l.buffers = vec![a, b, words(c), vec![0; 128 * self.d_regs * 4], a_regs];
        run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l)
    }
}

fn lcg(seed: &mut u64) -> i32 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*seed >> 33) as i32
}

/// A `rows x cols` matrix of small integers.
fn matrix(rows: usize, cols: usize, span: i32, seed: &mut u64) -> Vec<Vec<i32>> {
    (0..rows).map(|_| (0..cols).map(|_| lcg(seed).rem_euclid(2 * span + 1) - span).collect()).collect()
}

/// The shared-memory image of a matrix (`rows` along M or N, `ks` along K)
/// with `offset(r, k)` giving each element's byte offset (§9.7.15.5.1.2):
/// `.f16` (elem 2) or 8-bit integers (elem 1) of the values.
fn image(m: &[Vec<i32>], bytes: usize, elem: usize, offset: impl Fn(usize, usize) -> usize) -> Vec<u8> {
    image_with(m, bytes, offset, |v| if elem == 2 { f16_of_int(v).to_le_bytes().to_vec() } else { vec![v as i8 as u8] })
}

fn image_with(m: &[Vec<i32>], bytes: usize, offset: impl Fn(usize, usize) -> usize, encode: impl Fn(i32) -> Vec<u8>) -> Vec<u8> {
    let mut out = vec![0u8; bytes];
    for (r, row) in m.iter().enumerate() {
        for (k, &v) in row.iter().enumerate() {
            let o = offset(r, k);
            let b = encode(v);
            out[o..o + b.len()].copy_from_slice(&b);
        }
    }
    out
}

/// K-major without swizzle: 8x16-byte core matrices, LBO between K
/// columns of them, SBO between 8-row groups (§9.7.15.5.1.2.1.1-2).
fn k_major(elem: usize, lbo: usize, sbo: usize) -> impl Fn(usize, usize) -> usize {
    move |r, k| (r / 8) * sbo + (r % 8) * 16 + (k * elem / 16) * lbo + (k * elem) % 16
}

/// D fragments by thread (registers `d_regs`, `.f32`/`.s32`) into the 64 x N matrix.
fn unfragment(out: &[u8], n: u32) -> Vec<Vec<u32>> {
    let mut d = vec![vec![0u32; n as usize]; 64];
    let w: Vec<u32> = out.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    for t in 0..128 {
        for i in 0..n / 2 {
            let (r, c) = d_coord(t, i);
            d[r as usize][c as usize] = w[(t * n / 2 + i) as usize];
        }
    }
    d
}

fn fragment_words(n: u32, value: impl Fn(usize, usize) -> u32) -> Vec<u32> {
    (0..128).flat_map(|t| (0..n / 2).map(move |i| (t, i))).map(|(t, i)| {
        let (r, c) = d_coord(t, i);
        value(r as usize, c as usize)
    }).collect()
}

/// f16 x f16 + f32, m64n16k16: A K-major and B N-major (`imm-trans-b` 1)
/// without swizzle, `imm-scale-a = -1`: D = C - A * B, exact.
#[test]
fn f16_f32_descriptors_transposed_b() {
    let mut seed = 11;
    let a = matrix(64, 16, 3, &mut seed);
    let bt = matrix(16, 16, 3, &mut seed); // B as [n][k]
    let c = matrix(64, 16, 100, &mut seed);
    // A: LBO 128 (the second K column of core matrices), SBO 256.
    let a_img = image(&a, 2048, 2, k_major(2, 128, 256));
    // B N-major, no swizzle ("interleaved", figure 167): 8 N x 8 K core
    // matrices of 16 bytes per K row; SBO between 8-column N groups, LBO between K groups.
    let b_img = image(&bt, 512, 2, |n, k| (n / 8) * 128 + (k % 8) * 16 + (k / 8) * 256 + (n % 8) * 2);
    let kern = Kernel::new(8, 2048, 512, (8 << 16) | (16 << 32), (16 << 16) | (8 << 32), "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {d}, {da}, {db}, 1, -1, 1, 0, 1");
    let cw = fragment_words(16, |r, col| (c[r][col] as f32).to_bits());
    let out = kern.run(a_img, b_img, &cw, &[]).unwrap();
    let d = unfragment(&out.buffers[3].bytes, 16);
    for i in 0..64 {
        for j in 0..16 {
            let want = c[i][j] - (0..16).map(|k| a[i][k] * bt[j][k]).sum::<i32>();
            assert_eq!(f32::from_bits(d[i][j]), want as f32, "D[{i}][{j}]");
        }
    }
    assert!(out.buffers[3].quality.iter().all(|q| *q == Quality::Exact));
}

/// s8 x s8 + s32 with `.satfinite`, m64n8k32: A from registers (figure
/// 151), B K-major from a descriptor.
#[test]
fn s8_s32_register_a() {
    let mut seed = 5;
    let a = matrix(64, 32, 100, &mut seed);
    let bt = matrix(8, 32, 100, &mut seed);
    let c = matrix(64, 8, 100000, &mut seed);
    let b_img = image(&bt, 256, 1, k_major(1, 128, 256));
    let mut a_regs = vec![0u32; 128 * 4];
    for t in 0..128 {
        for i in 0..16 {
            let (r, k) = a_coord(32, t, i).unwrap();
            a_regs[(t * 4 + i / 4) as usize] |= (a[r as usize][k as usize] as u8 as u32) << (8 * (i % 4));
        }
    }
    let kern = Kernel::new(4, 0, 256, 0, (8 << 16) | (16 << 32), "wgmma.mma_async.sync.aligned.m64n8k32.satfinite.s32.s8.s8 {d}, {a}, {db}, 1");
    let cw = fragment_words(8, |r, col| c[r][col] as u32);
    let out = kern.run(vec![], b_img, &cw, &a_regs).unwrap();
    let d = unfragment(&out.buffers[3].bytes, 8);
    for i in 0..64 {
        for j in 0..8 {
            let want = c[i][j] + (0..32).map(|k| a[i][k] * bt[j][k]).sum::<i32>();
            assert_eq!(d[i][j] as i32, want, "D[{i}][{j}]");
        }
    }
    assert!(out.buffers[3].quality.iter().all(|q| *q == Quality::Exact));
}

/// 128-byte swizzle, K-major (figure 156): rows of 128 bytes whose 16-byte
/// chunks are permuted by XOR with the row within the 8-row atom. K = 64
/// runs as four chained m64n8k16 wgmmas advancing both descriptors by 32
/// bytes, the first with `scale-d = 0` (C ignored).
#[test]
fn f16_f32_swizzle_128b_chained() {
    let mut seed = 3;
    let a = matrix(64, 64, 4, &mut seed);
    let bt = matrix(8, 64, 4, &mut seed);
    let swz = |r: usize, k: usize| (r / 8) * 1024 + (r % 8) * 128 + (((k * 2) / 16) ^ (r % 8)) * 16 + (k * 2) % 16;
    let a_img = image(&a, 8192, 2, swz);
    let b_img = image(&bt, 1024, 2, swz);
    // SBO 1024 (field 64), LBO unused (1), swizzle mode 1 (128 B).
    let fields = (1 << 16) | (64u64 << 32) | (1u64 << 62);
    let mut kern = Kernel::new(4, 8192, 1024, fields, fields, "");
    kern.wgmma = (0..4).map(|k| format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{d}}, {{da}}, {{db}}, {}, 1, 1, 0, 0", (k > 0) as u32)).collect();
    kern.advance = 2;
    let cw = fragment_words(8, |_, _| 12345.0f32.to_bits());
    let out = kern.run(a_img, b_img, &cw, &[]).unwrap();
    let d = unfragment(&out.buffers[3].bytes, 8);
    for i in 0..64 {
        for j in 0..8 {
            let want = (0..64).map(|k| a[i][k] * bt[j][k]).sum::<i32>();
            assert_eq!(f32::from_bits(d[i][j]), want as f32, "D[{i}][{j}]");
        }
    }
    assert!(out.buffers[3].quality.iter().all(|q| *q == Quality::Exact));
}

fn undefined(kern: &Kernel) -> String {
    let img = vec![0u8; 2048];
    match kern.run(img.clone(), img, &vec![0; 128 * kern.d_regs], &[]) {
        Err(RunError::Undefined { message, .. }) => message,
        other => panic!("expected undefined behaviour, got {:?}", other.map(|o| o.steps)),
    }
}

fn small() -> Kernel {
    Kernel::new(4, 2048, 2048, (8 << 16) | (16 << 32), (8 << 16) | (16 << 32), "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d}, {da}, {db}, 1, 1, 1, 0, 0")
}

#[test]
fn reading_the_accumulator_before_the_wait_is_undefined() {
    let mut k = small();
    k.before_wait = "\tmov.b32 %r30, %d2;\n".into();
    let m = undefined(&k);
    assert!(m.contains("reads `%d2`") && m.contains("still in flight"), "{m}");
    // After the wait it is fine.
    let mut k = small();
    k.before_wait = "\twgmma.wait_group.sync.aligned 0;\n\tmov.b32 %r30, %d2;\n".into();
    let img = vec![0u8; 2048];
    k.run(img.clone(), img, &[0; 512], &[]).unwrap();
}

#[test]
fn missing_fence_and_writes_after_it_are_undefined() {
    let mut k = small();
    k.fence = false;
    assert!(undefined(&k).contains("without a `wgmma.fence`"));
    let mut k = small();
    k.after_fence = "\tmov.b32 %d1, 7;\n".into();
    let m = undefined(&k);
    assert!(m.contains("`%d1` was written after the last `wgmma.fence`"), "{m}");
}

#[test]
fn an_incomplete_warpgroup_is_undefined() {
    let mut k = small();
    k.threads = 64;
    assert!(undefined(&k).contains("64 threads of warpgroup 0"));
}

#[test]
fn sparse_wgmma_is_unsupported() {
    let text = ".version 8.2\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %d<4>;\n\t.reg .b64 %rd<3>;\n\t.reg .b32 %m;\n\
                wgmma.fence.sync.aligned;\n\twgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%d0, %d1, %d2, %d3}, %rd1, %rd2, %m, 0, 1, 1, 1, 0, 0;\n\tret;\n}\n";
    let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let l = Launch::new("k", [1, 1, 1], [128, 1, 1]);
    match run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l) {
        Err(RunError::Unsupported { what, .. }) => assert!(what.contains("sparse"), "{what}"),
        other => panic!("{:?}", other.map(|o| o.steps)),
    }
}

/// `.tf32`, m64n8k8: the low 13 bits of every input are garbage, which
/// wgmma truncates before multiplying (§9.7.15.5.2): the exact product of
/// the truncated values, marked exact.
#[test]
fn tf32_inputs_are_truncated() {
    let mut seed = 9;
    let a = matrix(64, 8, 5, &mut seed);
    let bt = matrix(8, 8, 5, &mut seed);
    let c = matrix(64, 8, 1000, &mut seed);
    let noisy = |v: i32| ((v as f32).to_bits() | if v != 0 { 0x1abc } else { 0 }).to_le_bytes().to_vec();
    let a_img = image_with(&a, 2048, k_major(4, 128, 256), noisy);
    let b_img = image_with(&bt, 256, k_major(4, 128, 256), noisy);
    let kern = Kernel::new(4, 2048, 256, (8 << 16) | (16 << 32), (8 << 16) | (16 << 32), "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {d}, {da}, {db}, 1, 1, -1");
    let cw = fragment_words(8, |r, col| (c[r][col] as f32).to_bits());
    let out = kern.run(a_img, b_img, &cw, &[]).unwrap();
    let d = unfragment(&out.buffers[3].bytes, 8);
    for i in 0..64 {
        for j in 0..8 {
            let want = c[i][j] - (0..8).map(|k| a[i][k] * bt[j][k]).sum::<i32>();
            assert_eq!(f32::from_bits(d[i][j]), want as f32, "D[{i}][{j}]");
        }
    }
    assert!(out.buffers[3].quality.iter().all(|q| *q == Quality::Exact));
}

fn e4m3_of_int(i: i32) -> u8 {
    if i == 0 {
        return 0;
    }
    let (s, a) = ((i < 0) as u8, i.unsigned_abs());
    let e = 31 - a.leading_zeros();
    s << 7 | ((e + 7) as u8) << 3 | (((a << 3 >> e) & 7) as u8)
}

/// `.e4m3` inputs with an `.f16` accumulator, m64n16k32: D is two
/// `.f16x2` registers per thread; small integers stay exact even at the
/// half precision the manual guarantees for an `.f16` D.
#[test]
fn e4m3_with_f16_accumulator() {
    let mut seed = 21;
    let a = matrix(64, 32, 3, &mut seed);
    let bt = matrix(16, 32, 3, &mut seed);
    let c = matrix(64, 16, 200, &mut seed);
    let enc = |v: i32| vec![e4m3_of_int(v)];
    let a_img = image_with(&a, 2048, k_major(1, 128, 256), enc);
    let b_img = image_with(&bt, 512, k_major(1, 128, 256), enc);
    let kern = Kernel::new(4, 2048, 512, (8 << 16) | (16 << 32), (8 << 16) | (16 << 32), "wgmma.mma_async.sync.aligned.m64n16k32.f16.e4m3.e4m3 {d}, {da}, {db}, 1, 1, 1");
    // Thread t, register j: elements 2j (low half) and 2j + 1.
    let words: Vec<u32> = (0..128u32)
        .flat_map(|t| (0..4u32).map(move |j| (t, j)))
        .map(|(t, j)| {
            let h = |i: u32| {
                let (r, col) = d_coord(t, i);
                f16_of_int(c[r as usize][col as usize]) as u32
            };
            h(2 * j) | h(2 * j + 1) << 16
        })
        .collect();
    let out = kern.run(a_img, b_img, &words, &[]).unwrap();
    let w: Vec<u32> = out.buffers[3].bytes.chunks(4).map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]])).collect();
    for t in 0..128u32 {
        for i in 0..8u32 {
            let (r, col) = d_coord(t, i);
            let (r, col) = (r as usize, col as usize);
            let got = (w[(t * 4 + i / 2) as usize] >> (16 * (i % 2))) as u16;
            let want = c[r][col] + (0..32).map(|k| a[r][k] * bt[col][k]).sum::<i32>();
            assert_eq!(got, f16_of_int(want), "D[{r}][{col}]");
        }
    }
    assert!(out.buffers[3].quality.iter().all(|q| *q == Quality::Exact));
}

/// `.b1` with `.and.popc`, m64n8k256: A from registers (figure 153), B
/// K-major bits (128 per 16-byte core-matrix row, element 0 in bit 0).
#[test]
fn b1_and_popc() {
    let mut seed = 33;
    let a = matrix(64, 256, 1, &mut seed).into_iter().map(|r| r.into_iter().map(|v| (v != 0) as i32).collect::<Vec<_>>()).collect::<Vec<_>>();
    let bt = matrix(8, 256, 1, &mut seed).into_iter().map(|r| r.into_iter().map(|v| (v == 0) as i32).collect::<Vec<_>>()).collect::<Vec<_>>();
    let mut b_img = vec![0u8; 256];
    for (n, row) in bt.iter().enumerate() {
        for (k, &v) in row.iter().enumerate() {
            let byte = (n % 8) * 16 + (k / 128) * 128 + (k % 128) / 8;
            b_img[byte] |= (v as u8) << (k % 8);
        }
    }
    let mut a_regs = vec![0u32; 128 * 4];
    for t in 0..128 {
        for i in 0..128 {
            let (r, k) = a_coord(256, t, i).unwrap();
            a_regs[(t * 4 + i / 32) as usize] |= (a[r as usize][k as usize] as u32) << (i % 32);
        }
    }
    let kern = Kernel::new(4, 0, 256, 0, (8 << 16) | (16 << 32), "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {d}, {a}, {db}, 1");
    let cw = fragment_words(8, |r, col| (r * 8 + col) as u32);
    let out = kern.run(vec![], b_img, &cw, &a_regs).unwrap();
    let d = unfragment(&out.buffers[3].bytes, 8);
    for i in 0..64 {
        for j in 0..8 {
            let want = (i * 8 + j) as i32 + (0..256).map(|k| a[i][k] & bt[j][k]).sum::<i32>();
            assert_eq!(d[i][j] as i32, want, "D[{i}][{j}]");
        }
    }
}

/// Two groups: `wait_group 1` completes the older only; its accumulators
/// may be read, the newer's may not.
#[test]
fn wait_group_completes_the_older_groups() {
    let mut k = small();
    k.d_regs = 8;
    k.wgmma = vec![
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1, %d2, %d3}, {da}, {db}, 0, 1, 1, 0, 0".into(),
        "wgmma.commit_group.sync.aligned".into(),
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d4, %d5, %d6, %d7}, {da}, {db}, 0, 1, 1, 0, 0".into(),
    ];
    let img = vec![0u8; 2048];
    k.before_wait = "\twgmma.wait_group.sync.aligned 1;\n\tmov.b32 %r30, %d3;\n".into();
    k.run(img.clone(), img, &[0; 1024], &[]).unwrap();
    k.before_wait = "\twgmma.wait_group.sync.aligned 1;\n\tmov.b32 %r30, %d4;\n".into();
    assert!(undefined(&k).contains("reads `%d4`"));
}

/// Overwriting a matrix that an operation in flight reads is undefined
/// until a wait completes it; after the wait it is fine.
#[test]
fn writing_a_matrix_in_flight_is_undefined() {
    let mut k = small();
    k.before_wait = "\tst.shared.u32 [sb+16], %r1;\n".into();
    let m = undefined(&k);
    assert!(m.contains("which the wgmma.mma_async at k.ptx:"), "{m}");
    k.before_wait = "\twgmma.wait_group.sync.aligned 0;\n\tst.shared.u32 [sb+16], %r1;\n".into();
    let img = vec![0u8; 2048];
    k.run(img.clone(), img.clone(), &[0; 512], &[]).unwrap();
    // An asynchronous copy into the matrix that completes before the
    // wgmma's wait is undefined too (it writes when `cp.async.wait_all`
    // completes it); completed after the wgmma's wait, it is fine.
    k.before_wait = "\tcp.async.ca.shared.global [sb+16], [%rd1], 16;\n\tcp.async.wait_all;\n".into();
    let m = undefined(&k);
    assert!(m.contains("`cp.async` (completing now) writes shared memory") && m.contains("which the wgmma.mma_async at k.ptx:"), "{m}");
    k.before_wait = "\tcp.async.ca.shared.global [sb+16], [%rd1], 16;\n\twgmma.wait_group.sync.aligned 0;\n\tcp.async.wait_all;\n".into();
    k.run(img.clone(), img, &[0; 512], &[]).unwrap();
}

/// A K-major with the 64-byte swizzle (figure 158: 64-byte rows, whose
/// 16-byte chunks XOR with address bits 7-8, i.e. row / 2) and B N-major
/// with the 128-byte swizzle (figure 155: eight K rows of 64 N-elements,
/// chunks XOR the K row), m64n64k16, `imm-trans-b = 1`.
#[test]
fn f16_swizzle_64b_a_and_mn_major_128b_b() {
    let mut seed = 17;
    let a = matrix(64, 16, 3, &mut seed);
    let bt = matrix(64, 16, 3, &mut seed); // [n][k]
    let a_img = image(&a, 4096, 2, |r, k| (r / 8) * 512 + (r % 8) * 64 + ((k / 8) ^ ((r % 8) / 2)) * 16 + (k % 8) * 2);
    let b_img = image(&bt, 2048, 2, |n, k| (k / 8) * 1024 + (k % 8) * 128 + ((n / 8) ^ (k % 8)) * 16 + (n % 8) * 2);
    // A: SBO 512 (field 32), swizzle 2 (64 B). B: SBO 1024 (field 64), LBO (next 64 N-elements, unused here) 8192, swizzle 1 (128 B).
    let kern = Kernel::new(32, 4096, 2048, (1 << 16) | (32u64 << 32) | (2u64 << 62), (512 << 16) | (64u64 << 32) | (1u64 << 62), "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {d}, {da}, {db}, 0, 1, 1, 0, 1");
    let out = kern.run(a_img, b_img, &vec![0; 128 * 32], &[]).unwrap();
    let d = unfragment(&out.buffers[3].bytes, 64);
    for i in 0..64 {
        for j in 0..64 {
            let want = (0..16).map(|k| a[i][k] * bt[j][k]).sum::<i32>();
            assert_eq!(f32::from_bits(d[i][j]), want as f32, "D[{i}][{j}]");
        }
    }
    assert!(out.buffers[3].quality.iter().all(|q| *q == Quality::Exact));
}
