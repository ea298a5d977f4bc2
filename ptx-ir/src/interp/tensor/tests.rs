//! Tensor maps and tensor copies against the manual (§5.5.3 bounding box,
//! traversal stride and out-of-bound fill, §5.5.7 swizzle tables) and on
//! small kernels whose results are known by construction.

use super::map::{Atomicity, ElemType, Fill, MapError, Swizzle, TensorMap};
use super::tile::{plan, swizzle};
use crate::interp::{run, KernelArg, Launch, RunError};

/// §5.5.7, the 16-byte-atomicity tables of the 32B, 64B and 128B swizzle
/// modes: row r (a 128-byte row of shared memory) lists, for each 16-byte
/// position of the row, the 16-byte unit of the unswizzled data it holds.
const TABLE_32B: [[u64; 8]; 2] = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]];
const TABLE_64B: [[u64; 8]; 4] = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5], [3, 2, 1, 0, 7, 6, 5, 4]];
const TABLE_128B: [[u64; 8]; 8] = [
    [0, 1, 2, 3, 4, 5, 6, 7],
    [1, 0, 3, 2, 5, 4, 7, 6],
    [2, 3, 0, 1, 6, 7, 4, 5],
    [3, 2, 1, 0, 7, 6, 5, 4],
    [4, 5, 6, 7, 0, 1, 2, 3],
    [5, 4, 7, 6, 1, 0, 3, 2],
    [6, 7, 4, 5, 2, 3, 0, 1],
    [7, 6, 5, 4, 3, 2, 1, 0],
];
/// §5.5.7, 128B swizzle with 32-byte atomicity: "0 1 | 2 3 | 4 5 | 6 7",
/// "2 3 | 0 1 | 6 7 | 4 5", "4 5 | 6 7 | 0 1 | 2 3", "6 7 | 4 5 | 2 3 | 0 1";
/// with 64-byte atomicity: "0 1 2 3 | 4 5 6 7", "4 5 6 7 | 0 1 2 3".
const TABLE_128B_ATOM32: [[u64; 8]; 4] = [[0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 0, 1, 6, 7, 4, 5], [4, 5, 6, 7, 0, 1, 2, 3], [6, 7, 4, 5, 2, 3, 0, 1]];
const TABLE_128B_ATOM64: [[u64; 8]; 2] = [[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 0, 1, 2, 3]];

/// Every byte of `repeats` patterns starting at `base` lands where the table says.
fn check_table(mode: Swizzle, atomicity: Atomicity, table: &[[u64; 8]], base: u64) {
    let rows = table.len() as u64;
    for rep in 0..3u64 {
        for (r, row) in table.iter().enumerate() {
            for (p, &unit) in row.iter().enumerate() {
                for byte in 0..16u64 {
                    let row_at = base + (rep * rows + r as u64) * 128;
                    let logical = row_at + unit * 16 + byte;
                    let physical = row_at + p as u64 * 16 + byte;
                    assert_eq!(swizzle(mode, atomicity, logical), physical, "{mode:?} {atomicity:?}: row {r}, position {p}");
                }
            }
        }
    }
}

#[test]
fn swizzle_modes_follow_the_manuals_tables() {
    // The tables start on the pattern's boundary (256, 512, 1024 bytes).
    check_table(Swizzle::B32, Atomicity::B16, &TABLE_32B, 256 * 5);
    check_table(Swizzle::B64, Atomicity::B16, &TABLE_64B, 512 * 3);
    check_table(Swizzle::B128, Atomicity::B16, &TABLE_128B, 1024 * 2);
    check_table(Swizzle::B128, Atomicity::B32, &TABLE_128B_ATOM32, 512);
    check_table(Swizzle::B128, Atomicity::B64, &TABLE_128B_ATOM64, 256);
    for a in [0u64, 16, 1000, 4096 + 48] {
        assert_eq!(swizzle(Swizzle::None, Atomicity::B16, a), a);
    }
    // A box that starts 3 rows into the 128B pattern starts with the
    // manual's base offset (dstMem / 128) % 8 = 3: its first row is table row 3.
    let start = 1024 + 3 * 128;
    for p in 0..8u64 {
        assert_eq!(swizzle(Swizzle::B128, Atomicity::B16, start + TABLE_128B[3][p as usize] * 16), start + p * 16);
    }
}

/// A 2d u32 tensor of 10 × 6 elements, rows 48 bytes apart (§5.5.1: padding
/// at the end of each row), at 0x1000.
fn map_10x6(box_dims: &[u32]) -> TensorMap {
    let mut m = TensorMap::new(ElemType::U32, &[10, 6], &[48], box_dims);
    m.global_address = 0x1000;
    m
}

#[test]
fn the_bounding_box_and_out_of_bound_elements() {
    // §5.5.3.1/§5.5.3.3: a box of 4 × 3 at (-2, 4): columns -2..2, rows 4..7;
    // column < 0 or row ≥ 6 is out of bounds.
    let t = plan(&map_10x6(&[4, 3]), &[-2, 4], 256);
    assert_eq!(t.elems.len(), 12);
    for (k, e) in t.elems.iter().enumerate() {
        let (x, y) = (k as i64 % 4 - 2, k as i64 / 4 + 4);
        assert_eq!(e.shared, 256 + 4 * k as u64, "dense in shared memory, dimension 0 fastest");
        let want = (x >= 0 && y < 6).then(|| 0x1000 + y as u64 * 48 + x as u64 * 4);
        assert_eq!(e.global, want, "element ({x}, {y})");
    }
    assert_eq!(t.global_runs, vec![(0x1000 + 4 * 48, 0x1000 + 4 * 48 + 8), (0x1000 + 5 * 48, 0x1000 + 5 * 48 + 8)]);
    assert_eq!(t.shared_runs, vec![(256, 256 + 48)]);
    // A box entirely past the end: nothing in bounds.
    assert!(plan(&map_10x6(&[4, 1]), &[12, 0], 0).elems.iter().all(|e| e.global.is_none()));
}

#[test]
fn traversal_strides_skip_elements() {
    // §5.5.3.2: a traversal stride of 2 in dimension 1 takes every other
    // row; the box of 5 rows holds ⌈5 / 2⌉ = 3 of them.
    let mut m = map_10x6(&[4, 5]);
    m.element_strides[1] = 2;
    assert_eq!(m.box_counts()[..2], [4, 3]);
    assert_eq!(m.box_bytes(), 48);
    let t = plan(&m, &[1, 1], 0);
    let rows: Vec<Option<u64>> = t.elems.iter().step_by(4).map(|e| e.global.map(|g| (g - 0x1000) / 48)).collect();
    assert_eq!(rows, vec![Some(1), Some(3), Some(5)]);
    // 3d, stride 3 in dimension 2 of 7: elements 0, 3, 6.
    let mut m = TensorMap::new(ElemType::U8, &[16, 2, 7], &[16, 32], &[16, 1, 7]);
    m.element_strides[2] = 3;
    let t = plan(&m, &[0, 1, 0], 0);
    let planes: Vec<u64> = t.elems.iter().step_by(16).map(|e| e.global.unwrap() / 32).collect();
    assert_eq!(planes, vec![0, 3, 6]);
}

#[test]
fn maps_encode_decode_and_bad_maps_are_refused() {
    let mut m = TensorMap::new(ElemType::F16, &[64, 32, 3], &[128, 4096], &[64, 8, 1]);
    m.global_address = 0x1_0000_0040;
    m.swizzle = Swizzle::B128;
    m.fill = Fill::OobNan;
    assert_eq!(TensorMap::decode(&m.encode()), Ok(m.clone()));
    let invalid = |f: &dyn Fn(&mut [u8; 128])| {
        let mut b = m.encode();
        f(&mut b);
        match TensorMap::decode(&b) {
            Err(MapError::Invalid(why)) => why,
            other => panic!("{other:?}"),
        }
    };
    assert!(invalid(&|b| b[0] = b'Q').contains("not a tensor map"));
    assert!(invalid(&|b| b[4] = 5).contains("rank 6"));
    assert!(invalid(&|b| b[7] = 9).contains("swizzle mode 9"));
    assert!(invalid(&|b| b[16] = 8).contains("not a multiple of 16"));
    assert!(invalid(&|b| b[80] = 4).contains("multiple of 16 bytes"), "a box row of 8 bytes");
    let mut wide = m.clone();
    wide.box_dims[0] = 128;
    wide.swizzle = Swizzle::B64;
    assert!(matches!(wide.check(), Err(MapError::Invalid(w)) if w.contains("wider than its 64-byte swizzle")));
    let mut nan_int = TensorMap::new(ElemType::U32, &[8], &[], &[8]);
    nan_int.fill = Fill::OobNan;
    assert!(matches!(nan_int.check(), Err(MapError::Invalid(w)) if w.contains("OOB-NaN")));
    let mut stride0 = TensorMap::new(ElemType::U32, &[8], &[], &[8]);
    stride0.element_strides[0] = 2;
    assert!(matches!(stride0.check(), Err(MapError::Invalid(w)) if w.contains("§5.5.3.2")));
    let mut interleaved = m.clone();
    interleaved.interleave = super::Interleave::B16;
    assert!(matches!(interleaved.check(), Err(MapError::Unsupported(_))));
}

// ----- kernels ---------------------------------------------------------------

const HEAD: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n";

/// Thread 0 loads the box at (cx, cy) of map `tin` into `tile` (an mbarrier
/// with expect_tx of `bytes`), every thread polls the mbarrier, thread k
/// copies word k of the tile (as it lies in shared memory) to out[k] and
/// stores word + 1000 to `tile2`; after a proxy fence and bar.sync thread 0
/// runs `STORE [tout, {cx, cy}], [tile2]` and waits for the bulk group.
/// `early` is put right after the load (thread 0).
fn kernel(store: &str, early: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .align 64 .b8 tin[128], .param .align 64 .b8 tout[128], .param .u64 out, .param .u32 cx, .param .u32 cy, .param .u32 bytes)
{{
	.shared .align 1024 .b8 tile[1024];
	.shared .align 1024 .b8 tile2[1024];
	.shared .align 8 .b64 bar;
	.reg .pred %p<4>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	mov.u32 %r1, %tid.x;
	ld.param.u32 %r2, [cx];
	ld.param.u32 %r3, [cy];
	ld.param.u32 %r9, [bytes];
	mov.b64 %rd1, tin;
	cvta.param.u64 %rd2, %rd1;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra INITED;
	prefetch.param.tensormap [tin];
	mbarrier.init.shared::cta.b64 [bar], 1;
	fence.mbarrier_init.release.cluster;
INITED:
	bar.sync 0;
	@%p1 bra POLL;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [bar], %r9;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.tile [tile], [%rd2, {{%r2, %r3}}], [bar];
{early}
POLL:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra POLL;
	shl.b32 %r4, %r1, 2;
	mov.u32 %r5, tile;
	add.u32 %r6, %r5, %r4;
	ld.shared.u32 %r7, [%r6];
	ld.param.u64 %rd4, [out];
	mul.wide.u32 %rd5, %r4, 1;
	add.u64 %rd6, %rd4, %rd5;
	st.global.u32 [%rd6], %r7;
	add.u32 %r7, %r7, 1000;
	mov.u32 %r5, tile2;
	add.u32 %r6, %r5, %r4;
	st.shared.u32 [%r6], %r7;
	fence.proxy.async.shared::cta;
	bar.sync 0;
	@%p1 bra DONE;
	{store} [tout, {{%r2, %r3}}], [tile2];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
DONE:
	ret;
}}
"
    )
}

const PLAIN_STORE: &str = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group";

/// The input tensor: `rows` × `cols` u32, element (x, y) = y * 1000 + x + 1,
/// rows `pitch` bytes apart.
fn input(cols: usize, rows: usize, pitch: usize) -> Vec<u8> {
    let mut b = vec![0u8; rows * pitch];
    for y in 0..rows {
        for x in 0..cols {
            b[y * pitch + 4 * x..y * pitch + 4 * x + 4].copy_from_slice(&((y * 1000 + x + 1) as u32).to_le_bytes());
        }
    }
    b
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

struct Setup {
    map: TensorMap,
    cols: usize,
    rows: usize,
    pitch: usize,
    at: (i32, i32),
    /// Initial words of the output tensor (buffer 1).
    out_tensor: u32,
}

/// Runs [`kernel`]: buffers 0 input tensor, 1 output tensor, 2 out words.
fn go(s: &Setup, store: &str, early: &str, tin: Option<KernelArg>) -> Result<(Vec<u32>, Vec<u32>), RunError> {
    go_text(s, kernel(store, early), tin)
}

fn go_text(s: &Setup, text: String, tin: Option<KernelArg>) -> Result<(Vec<u32>, Vec<u32>), RunError> {
    let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let n = s.map.box_counts().iter().product::<usize>() as u32;
    let mut l = Launch::new("k", [1, 1, 1], [n, 1, 1]);
    l.buffers.push(input(s.cols, s.rows, s.pitch));
    l.buffers.push(s.out_tensor.to_le_bytes().repeat(s.rows * s.pitch / 4));
    l.buffers.push(vec![0; 4 * n as usize]);
    l.args.push(tin.unwrap_or(KernelArg::TensorMap { buffer: 0, offset: 0, map: s.map.clone() }));
    l.args.push(KernelArg::TensorMap { buffer: 1, offset: 0, map: s.map.clone() });
    l.args.push(KernelArg::Buffer(2));
    for v in [s.at.0 as u32, s.at.1 as u32, s.map.box_bytes() as u32] {
        l.args.push(KernelArg::Scalar { ty: crate::isa::ScalarType::U32, bits: v as u128 });
    }
    let out = run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l)?;
    Ok((words(&out.buffers[2].bytes), words(&out.buffers[1].bytes)))
}

/// The value of input element (x, y), 0 outside the tensor (zero fill).
fn element(s: &Setup, x: i64, y: i64) -> Option<u32> {
    (x >= 0 && y >= 0 && (x as usize) < s.cols && (y as usize) < s.rows).then(|| (y * 1000 + x + 1) as u32)
}

fn setup(box_dims: [u32; 2], swz: Swizzle, at: (i32, i32)) -> Setup {
    let (cols, rows, pitch) = (40, 64, 176);
    let mut map = TensorMap::new(ElemType::U32, &[cols as u64, rows as u64], &[pitch as u64], &box_dims);
    map.swizzle = swz;
    Setup { map, cols, rows, pitch, at, out_tensor: 7 }
}

/// Checks the output tensor after a store (`f(old, tile value)` at the
/// box's in-bound elements, the rest untouched).
fn check_out_tensor(s: &Setup, got: &[u32], f: &dyn Fn(u32, u32) -> u32) {
    let [bw, bh] = [s.map.box_dims[0] as i64, s.map.box_dims[1] as i64];
    for y in 0..s.rows as i64 {
        for x in 0..s.pitch as i64 / 4 {
            let inside_box = (s.at.0 as i64..s.at.0 as i64 + bw).contains(&x) && (s.at.1 as i64..s.at.1 as i64 + bh).contains(&y);
            let want = match element(s, x, y) {
                Some(v) if inside_box => f(s.out_tensor, v + 1000),
                _ => s.out_tensor,
            };
            assert_eq!(got[(y as usize * s.pitch) / 4 + x as usize], want, "output tensor ({x}, {y})");
        }
    }
}

/// A 2d tile that sticks out of the tensor on two sides: out-of-bound
/// elements read as 0 (§5.5.3.3), the store writes only in-bound ones.
#[test]
fn a_tile_load_and_store_round_trip_with_zero_fill() {
    let s = setup([8, 8], Swizzle::None, (36, 60));
    let (out, tensor) = go(&s, PLAIN_STORE, "", None).unwrap();
    assert_eq!(out.len(), 64);
    for (k, &got) in out.iter().enumerate() {
        let (x, y) = (36 + k as i64 % 8, 60 + k as i64 / 8);
        assert_eq!(got, element(&s, x, y).unwrap_or(0), "tile element ({x}, {y})");
    }
    check_out_tensor(&s, &tensor, &|_, v| v);
    // The map operand as compilers write it: the .param address `mov` gives.
    let text = kernel(PLAIN_STORE, "").replace("cvta.param.u64 %rd2, %rd1;", "mov.b64 %rd2, %rd1;");
    assert_eq!(go_text(&s, text, None).unwrap().0, out);
    // Negative coordinates.
    let s = setup([4, 2], Swizzle::None, (-2, -1));
    let (out, _) = go(&s, PLAIN_STORE, "", None).unwrap();
    assert_eq!(out, vec![0, 0, 0, 0, 0, 0, 1, 2]);
}

/// 128B swizzle: the tile of 32 u32 per row (128 bytes) lies in shared
/// memory as §5.5.7's 128B table says — position p of row r holds the
/// 16-byte unit p ^ r — and the store undoes it.
#[test]
fn a_swizzled_tile_lies_as_the_table_says() {
    let s = setup([32, 8], Swizzle::B128, (3, 5));
    let (out, tensor) = go(&s, PLAIN_STORE, "", None).unwrap();
    for (k, &got) in out.iter().enumerate() {
        let (r, p, w) = (k / 32, (k % 32) / 4, k % 4);
        let col = TABLE_128B[r][p] as usize * 4 + w;
        assert_eq!(got, element(&s, 3 + col as i64, 5 + r as i64).unwrap_or(0), "shared word {k}");
    }
    check_out_tensor(&s, &tensor, &|_, v| v);
}

/// cp.reduce.async.bulk.tensor .add and .min (§9.7.9.25.5.3) into the
/// output tensor.
#[test]
fn tile_reductions_combine_with_global_memory() {
    let s = setup([8, 4], Swizzle::None, (34, 62));
    let (_, tensor) = go(&s, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group", "", None).unwrap();
    check_out_tensor(&s, &tensor, &|old, v| old + v);
    // Tile values (+1000) 1035..4040 against 3000: some smaller, some not.
    let mut s = setup([8, 4], Swizzle::None, (34, 0));
    s.out_tensor = 3000;
    let (_, tensor) = go(&s, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.bulk_group", "", None).unwrap();
    check_out_tensor(&s, &tensor, &|old, v| old.min(v));
}

/// §9.7.9.25.1: reading the destination before the mbarrier phase completes
/// is undefined, and so is a map that is not one.
#[test]
fn early_reads_and_bad_maps_are_reported() {
    let s = setup([8, 8], Swizzle::None, (0, 0));
    match go(&s, PLAIN_STORE, "\tld.shared.u32 %r8, [tile+64];", None) {
        Err(RunError::Undefined { message, .. }) => assert!(message.contains("the destination of `cp.async.bulk.tensor`"), "{message}"),
        other => panic!("{other:?}"),
    }
    match go(&s, PLAIN_STORE, "", Some(KernelArg::Bytes(vec![0; 128]))) {
        Err(RunError::Undefined { message, .. }) => assert!(message.contains("invalid tensor map") && message.contains("not a tensor map"), "{message}"),
        other => panic!("{other:?}"),
    }
    let mut bad = s.map.clone();
    bad.box_dims[0] = 3;
    match go(&s, PLAIN_STORE, "", Some(KernelArg::TensorMap { buffer: 0, offset: 0, map: bad })) {
        Err(RunError::Launch(m)) => assert!(m.contains("multiple of 16 bytes"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// A map in global memory, copied to shared memory, changed by
/// `tensormap.replace` (global address, box rows, OOB-NaN fill: Table 32's
/// value 1), copied back by `tensormap.cp_fenceproxy` and used after
/// `fence.proxy.tensormap::generic` (the manual's example in §9.7.13.16).
/// The 4 × 2 f32 box at (-1, 1) of a 4 × 2 tensor: one row in bounds but
/// its first element, the second row outside: OOB-NaN (§5.5.3.3), any NaN.
#[test]
fn tensormap_replace_then_use_with_nan_fill() {
    let mut body = String::new();
    for k in 0..8 {
        body += &format!("\tld.global.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd1+{}];\n\tst.shared.v4.u32 [smap+{}], {{%r1, %r2, %r3, %r4}};\n", 16 * k, 16 * k);
    }
    let mut out = String::new();
    for k in 0..8 {
        out += &format!("\tld.shared.u32 %r1, [tile+{}];\n\tst.global.u32 [%rd4+{}], %r1;\n", 4 * k, 4 * k);
    }
    let text = format!(
        "{HEAD}.visible .entry r(.param .u64 maps, .param .u64 newaddr, .param .u64 out)
{{
	.shared .align 128 .b8 smap[128];
	.shared .align 128 .b8 tile[64];
	.shared .align 8 .b64 bar;
	.reg .pred %p<4>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [maps];
	ld.param.u64 %rd2, [newaddr];
	ld.param.u64 %rd4, [out];
	add.u64 %rd3, %rd1, 128;
{body}	tensormap.replace.tile.global_address.shared::cta.b1024.b64 [smap], %rd2;
	tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [smap], 1, 2;
	tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [smap], 1;
	tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd3], [smap], 128;
	fence.proxy.tensormap::generic.acquire.gpu [%rd3], 128;
	mbarrier.init.shared::cta.b64 [bar], 1;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd5, [bar], 32;
	mov.u32 %r5, -1;
	mov.u32 %r6, 1;
	cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.tile [tile], [%rd3, {{%r5, %r6}}], [bar];
POLL:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra POLL;
{out}	ret;
}}
"
    );
    let parsed = crate::parse("r.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let mut map = TensorMap::new(ElemType::F32, &[4, 2], &[16], &[4, 1]);
    map.global_address = 0x18;
    let mut maps = map.encode().to_vec();
    maps.resize(256, 0);
    let data: Vec<u8> = (0..8).flat_map(|k| (k as f32 + 0.5).to_bits().to_le_bytes()).collect();
    let mut l = Launch::new("r", [1, 1, 1], [1, 1, 1]);
    l.buffers = vec![maps, data, vec![0; 32]];
    l.args = vec![KernelArg::Buffer(0), KernelArg::Scalar { ty: crate::isa::ScalarType::U64, bits: super::buffer_address(1) as u128 }, KernelArg::Buffer(2)];
    let r = run(&parsed.module, &parsed.source_map, "r.ptx", text.as_bytes(), &l).unwrap();
    let got = words(&r.buffers[2].bytes);
    for (k, &w) in got.iter().enumerate() {
        let q = r.buffers[2].quality[4 * k];
        if k == 0 || k >= 4 {
            assert!(f32::from_bits(w).is_nan() && q == crate::eval::Quality::AnyNan, "element {k}: {w:x} {q:?}");
        } else {
            assert_eq!((f32::from_bits(w), q), (4.0 + k as f32 - 1.0 + 0.5, crate::eval::Quality::Exact), "element {k}");
        }
    }
    // The unchanged map (global address 0x18) is refused.
    let bad = text.replace("[%rd3, {%r5", "[%rd1, {%r5");
    let parsed = crate::parse("r.ptx", bad.as_bytes()).unwrap();
    match run(&parsed.module, &parsed.source_map, "r.ptx", bad.as_bytes(), &l) {
        Err(RunError::Undefined { message, .. }) => assert!(message.contains("global address 0x18 is not a multiple of 16"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// A 5d box (the largest rank) half outside the tensor in dimension 4.
#[test]
fn a_5d_box_walks_every_dimension() {
    let m = TensorMap::new(ElemType::U32, &[4, 2, 3, 2, 2], &[16, 32, 96, 192], &[4, 2, 3, 2, 2]);
    let t = plan(&m, &[0, 0, 0, 0, 1], 0);
    assert_eq!(t.elems.len(), 96);
    for (k, e) in t.elems.iter().enumerate() {
        let (i0, i1, i2, i3, i4) = (k % 4, k / 4 % 2, k / 8 % 3, k / 24 % 2, k / 48);
        let want = (i4 == 0).then(|| (i0 * 4 + i1 * 16 + i2 * 32 + i3 * 96 + 192) as u64);
        assert_eq!(e.global, want, "element {k}");
    }
}

/// §9.7.9.25.5.3's table of valid `.redOp` / element-type pairs, and the
/// element results.
#[test]
fn reductions_follow_the_manuals_table() {
    use super::copy::reduce;
    use super::RedOp::*;
    use crate::eval::Val;
    let v = |x: u128| Val::exact(x);
    let valid = [
        (Add, vec![ElemType::U32, ElemType::S32, ElemType::U64, ElemType::F32, ElemType::F16, ElemType::Bf16]),
        (Min, vec![ElemType::U32, ElemType::S32, ElemType::U64, ElemType::S64, ElemType::F16, ElemType::Bf16]),
        (Max, vec![ElemType::U32, ElemType::S32, ElemType::U64, ElemType::S64, ElemType::F16, ElemType::Bf16]),
        (Inc, vec![ElemType::U32]),
        (Dec, vec![ElemType::U32]),
        (And, vec![ElemType::U32, ElemType::S32, ElemType::U64, ElemType::S64]),
        (Or, vec![ElemType::U32, ElemType::S32, ElemType::U64, ElemType::S64]),
        (Xor, vec![ElemType::U32, ElemType::S32, ElemType::U64, ElemType::S64]),
    ];
    for (op, types) in &valid {
        for code in 0..13 {
            let ty = ElemType::from_code(code).unwrap();
            assert_eq!(reduce(*op, ty, v(0), v(0)).is_some(), types.contains(&ty), "{op:?} {}", ty.name());
        }
    }
    assert_eq!(reduce(Add, ElemType::U32, v(0xffff_ffff), v(2)).unwrap().bits, 1);
    assert_eq!(reduce(Min, ElemType::S32, v(5), v(0xffff_fffe)).unwrap().bits, 0xffff_fffe, "-2 < 5 signed");
    assert_eq!(reduce(Min, ElemType::U32, v(5), v(0xffff_fffe)).unwrap().bits, 5);
    assert_eq!(reduce(Inc, ElemType::U32, v(7), v(7)).unwrap().bits, 0, "old >= src wraps to 0");
    assert_eq!(reduce(Dec, ElemType::U32, v(0), v(9)).unwrap().bits, 9);
    assert_eq!(reduce(Add, ElemType::F16, v(0x3c00), v(0x3c00)).unwrap().bits, 0x4000, "1 + 1 = 2");
    assert_eq!(reduce(Add, ElemType::F32, v(1f32.to_bits() as u128), v(0.5f32.to_bits() as u128)).unwrap(), Val::exact(1.5f32.to_bits() as u128));
    let sub = reduce(Add, ElemType::F32, v(1), v(0)).unwrap();
    assert_eq!(sub.quality, crate::eval::Quality::Unspecified, "a subnormal .f32 add may be flushed");
}

/// §5.5.1: `.tf32` rounds to nearest even in the copy, the `.ftz` types may
/// flush: bits that could change are unspecified, the rest exact.
#[test]
fn element_types_that_may_change_in_the_copy() {
    use super::copy::copied_quality;
    use crate::eval::Quality::{Exact, Unspecified};
    assert_eq!(copied_quality(ElemType::Tf32, 0x3f80_0000, Exact), Exact);
    assert_eq!(copied_quality(ElemType::Tf32, 0x3f80_0001, Exact), Unspecified);
    assert_eq!(copied_quality(ElemType::F32Ftz, 1, Exact), Unspecified);
    assert_eq!(copied_quality(ElemType::F32Ftz, 0x3f80_0001, Exact), Exact);
    assert_eq!(copied_quality(ElemType::F32, 1, Exact), Exact);
}
