//! The checked-in SASS cost table (`ptx-opt/src/cost/sass_costs.tsv`) is
//! what its generator measures: a sample of heads, measured again on every
//! family with ptxas (in a module of their own, so also independently of
//! the other kernels of the full run), gives the same cells, and the heads
//! ptxas rejects for a family are `-` in the table.

use ptx_opt::cost::{table, Cell};
use ptx_tests::ptxas::tools;
use ptx_tests::sass_costs::{entries, measure_families, FAMILIES};
use std::collections::BTreeSet;

/// Heads the report quotes and that exercise every kind of micro-kernel:
/// predicate sources and results, carry chains, 8-bit conversions, calls,
/// `lop3`'s immediate, video selectors, families that reject the head.
const HEADS: &[&str] = &[
    "add.s32",
    "div.u32",
    "div.u64",
    "rem.s64",
    "mul.hi.u64",
    "lop3.b32",
    "prmt.b32",
    "bfe.u32",
    "cvt.rn.f32.s32",
    "cvt.rzi.s32.f64",
    "cvt.u8.u32",
    "addc.u32",
    "madc.hi.cc.u64",
    "setp.lt.s32",
    "setp.lt.and.u64",
    "selp.b32",
    "and.pred",
    "sin.approx.f32",
    "div.rn.f32",
    "add.f64",
    "add.rn.bf16",
    "mov.b32",
    "vadd.u32.u32.u32",
];

#[test]
fn a_sample_of_the_table_measures_the_same() {
    let t = tools();
    assert!(t.ptxas_release.starts_with("12.9"), "the table was measured with ptxas 12.9: {t:?}");
    let table = table();
    let all = entries();
    // the named heads, and every 300th head of the table for spread
    let mut sample: BTreeSet<&str> = HEADS.iter().copied().collect();
    sample.extend(table.rows.iter().step_by(300).map(|r| r.head.as_str()));
    for h in &sample {
        assert!(table.row(h).is_some(), "`{h}` is not in the table");
    }
    let chosen: Vec<_> = all.into_iter().filter(|e| sample.contains(e.head.as_str())).collect();
    let names: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
    let measured = measure_families(&chosen, &names, 2).unwrap_or_else(|e| panic!("{e}"));
    let mut differences = Vec::new();
    for (f, m) in &measured {
        let col = table.family_index(f).unwrap_or_else(|| panic!("family {f} is not a column of the table"));
        for h in &sample {
            let now: Option<Cell> = m.cells.get(*h).copied();
            let checked_in = table.row(h).unwrap().cells[col];
            if now != checked_in {
                differences.push(format!("{h} at {f}: measured {now:?}, table {checked_in:?}"));
            }
            if now.is_none() {
                assert!(m.rejected.contains_key(*h), "{h} at {f}: neither measured nor rejected");
            }
        }
    }
    assert!(
        differences.is_empty(),
        "the cost table is out of date (regenerate it: cargo run --release -p ptx-tests --bin sass-costs):\n{}",
        differences.join("\n")
    );
}
