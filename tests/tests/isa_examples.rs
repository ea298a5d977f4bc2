//! Every instruction example of the manuals (`isa-examples.txt` in the shared
//! corpus) parses inside a minimal kernel and round-trips.

use ptx_tests::corpus::shared_corpus_dir;
use ptx_tests::roundtrip::round_trip;
use ptx_tests::snippet::kernel_around;

/// Example lines that are typos in the manuals themselves: each was checked
/// against the syntax block, and the ones that look plausible against ptxas
/// (`bfe.b32`, `mad.u32`, `atom...b128` without brackets are all rejected by
/// ptxas 12.9). They must fail with a diagnostic.
const MANUAL_TYPOS: &[&str] = &[
    "or.b32 mask mask,0x00010001;",
    "cvt.rz.relu.satfinite.bf16.f3 2 b, f;",
    "ld.gloal.nc.L1::evict_last.u32 d, [a];",
    "isspacep.shared::cluster ishrdany sptr;",
    "atom.shared.b128.cas d, a, b, c;",
    "atom.global.b128.exch d, a, b;",
    "bfe.b32 d,a,start,len;",
    "@!p bra try_wait loop;",
    "clusterlaunchcontrol.query_cancel.is_canceled pred.b128 p, handle;",
    "@p clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {xdim, ydim, zdim, ignr} handle;",
    "cp.async.cg.shared.global.L2::chache_hint [%r0], [%r2], 16, q, cache-policy;",
    "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint} [dstMem], [srcMem], size, cache-policy;",
    "mad.u32 %r0,%h1,%h2,%r0;",
    "mma.sync.aligned.m16n8k64.row.col kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0 {%Rd0, %Rd1, %Rd2, %Rd3}, {%Ra0, %Ra1, %Ra2, %Ra3}, {%Rb0, %Rb1}, {%Rc0, %Rc1, %Rc2, %Rc3}, scaleAData, {2, 1}, scaleBData, {2, 3};",
    "red.global.v2.f16x2.max.noftz {%bd0, %bd1}, [g], {%b0, %b1};",
    "red.global.v2.bf16x2.add.noftz {%bd0, %bd1}, [g], {%b0, %b1};",
    "red.global.v2.f32.add {%f0, %f1}, [g], {%f0, %f1};",
    "tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4.collector::a:fill [taddr2], [taddr1], bdesc, [tmem_spmeta1], idesc, [tmem_scaleA], [tmem_scaleB], p;",
    "tcgen05.mma.ws.cta_group::1.kind::i8.collector::b2:use [taddr2], [taddr1], bdesc, idesc, p;",
    "tcgen05.mma.cta_group.kind [taddr0], adesc, bdesc, idesc, p;",
];

#[test]
fn every_isa_example_parses_and_round_trips() {
    let Some(dir) = shared_corpus_dir() else {
        eprintln!("no shared corpus here; skipping");
        return;
    };
    let text = std::fs::read_to_string(dir.join("isa-examples.txt")).unwrap();
    let mut section = String::new();
    let (mut ok, mut failures) = (0, Vec::new());
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = h.trim().to_string();
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || section.starts_with('.') || line.starts_with('.') {
            continue;
        }
        let module = kernel_around(line, "sm_100a", "8.7");
        match round_trip(&format!("isa-examples.txt [{section}] `{line}`"), module.as_bytes()) {
            Ok(_) => {
                ok += 1;
                if MANUAL_TYPOS.contains(&line) {
                    failures.push(format!("`{line}` is listed as a manual typo but parses"));
                }
            }
            Err(m) if MANUAL_TYPOS.contains(&line) => {
                assert!(m.contains("error:"), "{m}");
            }
            Err(m) => failures.push(m),
        }
    }
    assert!(failures.is_empty(), "{} examples fail ({ok} pass):\n{}", failures.len(), failures.join("\n"));
}
