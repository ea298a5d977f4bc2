//! The known-bits and range analysis against the evaluator: random
//! programs over bounded inputs, every claim of every class checked on
//! random values of the inputs, before and after every rule has run (facts
//! merged across nodes must still hold).

use super::Known;
use crate::engine::facts::{EGraph, Facts};
use crate::engine::lang::Node;
use crate::rules::proof::{class_values, edge_values, Rng};
use crate::rules::Term;
use egg::Id;
use ptx_ir::eval::{bits_mask, Dialect};
use rustc_hash::FxHashMap;

fn suffix(w: u8) -> &'static str {
    match w {
        16 => "16",
        32 => "32",
        _ => "64",
    }
}

/// A leaked instruction head (rules take `&'static str` heads; tests make a few hundred).
fn head(text: String) -> &'static str {
    use std::sync::Mutex;
    static HEADS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut h = HEADS.lock().unwrap();
    if let Some(s) = h.iter().find(|s| **s == text) {
        return s;
    }
    let s: &'static str = Box::leak(text.into_boxed_str());
    h.push(s);
    s
}

/// A random term of `w` bits over the inputs `vars` (index, width).
fn term(rng: &mut Rng, w: u8, depth: u32, vars: &[(u8, u8)]) -> Term {
    let leaf = |rng: &mut Rng| -> Term {
        let same: Vec<&(u8, u8)> = vars.iter().filter(|v| v.1 == w).collect();
        if !same.is_empty() && rng.next() % 4 != 0 {
            let v = same[(rng.next() % same.len() as u64) as usize];
            Term::var(v.0, v.1)
        } else {
            let e = edge_values(w);
            let c = if rng.next() % 2 == 0 { e[(rng.next() % e.len() as u64) as usize] } else { rng.next() as u128 % 5000 };
            Term::c(w, c)
        }
    };
    if depth == 0 || rng.next() % 5 == 0 {
        return leaf(rng);
    }
    let s = suffix(w);
    let sub = |rng: &mut Rng, w2: u8| term(rng, w2, depth - 1, vars);
    let amount = |rng: &mut Rng| Term::c(32, [0, 1, 3, 7, w as u128 - 1, w as u128, 200][(rng.next() % 7) as usize]);
    match rng.next() % 22 {
        0 => Term::op(head(format!("add.u{s}")), vec![sub(rng, w), sub(rng, w)]),
        1 => Term::op(head(format!("sub.s{s}")), vec![sub(rng, w), sub(rng, w)]),
        2 => Term::op(head(format!("mul.lo.u{s}")), vec![sub(rng, w), sub(rng, w)]),
        3 => Term::op(head(format!("and.b{s}")), vec![sub(rng, w), sub(rng, w)]),
        4 => Term::op(head(format!("or.b{s}")), vec![sub(rng, w), sub(rng, w)]),
        5 => Term::op(head(format!("xor.b{s}")), vec![sub(rng, w), sub(rng, w)]),
        6 => Term::op(head(format!("not.b{s}")), vec![sub(rng, w)]),
        7 => Term::op(head(format!("shl.b{s}")), vec![sub(rng, w), amount(rng)]),
        8 => Term::op(head(format!("shr.u{s}")), vec![sub(rng, w), amount(rng)]),
        9 => Term::op(head(format!("shr.s{s}")), vec![sub(rng, w), amount(rng)]),
        10 => Term::op(head(format!("div.u{s}")), vec![sub(rng, w), sub(rng, w)]),
        11 => Term::op(head(format!("rem.s{s}")), vec![sub(rng, w), sub(rng, w)]),
        12 => Term::op(head(format!("min.s{s}")), vec![sub(rng, w), sub(rng, w)]),
        13 => Term::op(head(format!("max.u{s}")), vec![sub(rng, w), sub(rng, w)]),
        14 => {
            let p = Term::op(head(format!("setp.lt.u{s}")), vec![sub(rng, w), sub(rng, w)]);
            Term::op(head(format!("selp.b{s}")), vec![sub(rng, w), sub(rng, w), p])
        }
        15 | 16 => {
            let from = [16u8, 32, 64][(rng.next() % 3) as usize];
            let (d, f) = if rng.next() % 2 == 0 { ("u", "u") } else { ("s", "s") };
            if from == w {
                return sub(rng, w);
            }
            Term::op(head(format!("cvt.{d}{}.{f}{}", suffix(w), suffix(from))), vec![sub(rng, from)])
        }
        17 if w == 64 => Term::op("mul.wide.u32", vec![sub(rng, 32), sub(rng, 32)]),
        17 if w == 32 => Term::op("mul.wide.s16", vec![sub(rng, 16), sub(rng, 16)]),
        18 if w == 32 => Term::op("popc.b32", vec![sub(rng, 32)]),
        18 if w == 64 => Term::op("cvt.u64.u32", vec![Term::op("clz.b64", vec![sub(rng, 64)])]),
        19 => Term::op(head(format!("div.s{s}")), vec![sub(rng, w), sub(rng, w)]),
        20 => Term::op(head(format!("rem.u{s}")), vec![sub(rng, w), sub(rng, w)]),
        _ => leaf(rng),
    }
}

/// Checks every class's facts on `n` random assignments within the leaves' facts.
fn check(eg: &EGraph, leaves: &[(Id, Known)], rng: &mut Rng, n: usize) -> Result<usize, String> {
    let mut claims = 0;
    for _ in 0..n {
        let mut assign: FxHashMap<Id, u128> = FxHashMap::default();
        for (id, k) in leaves {
            // A value within the leaf's range (often at its ends).
            let span = k.hi - k.lo;
            let v = match rng.next() % 4 {
                0 => k.lo,
                1 => k.hi,
                _ => k.lo + (rng.next() as u128 | ((rng.next() as u128) << 64)) % (span.saturating_add(1).max(1)),
            };
            assign.insert(*id, v);
        }
        let vals = class_values(eg, &assign);
        for c in eg.classes() {
            let Some(&v) = vals.get(&eg.find(c.id)) else { continue };
            let k = eg.analysis.known(c.data);
            if !k.admits(v) {
                return Err(format!("class {} = {v:#x} but the analysis claims {k:?}; nodes {:?}", c.id, c.nodes));
            }
            claims += 1;
        }
    }
    Ok(claims)
}

#[test]
fn claims_hold_on_random_programs_before_and_after_rules() {
    let mut rng = Rng(0xb175);
    let mut claims = 0;
    let mut useful = 0;
    for round in 0..400 {
        let mut eg = EGraph::new(Facts::new(Dialect::MODERN));
        // Three inputs, some bounded like special registers.
        let widths = [16u8, 32, 64];
        let mut leaves: Vec<(Id, Known)> = Vec::new();
        let mut vars = Vec::new();
        for k in 0..3u8 {
            let w = widths[(rng.next() % 3) as usize];
            let known = match rng.next() % 3 {
                0 => Known::top(w),
                1 => Known::at_most(w, rng.next() as u128 % 2048),
                _ => Known::at_most(w, bits_mask(w as u32) >> (rng.next() % w as u64)),
            };
            let l = eg.analysis.new_known_leaf(known);
            leaves.push((eg.add(Node::Leaf(l)), known));
            vars.push((k, w));
        }
        let mut tv: Vec<Option<Id>> = leaves.iter().map(|l| Some(l.0)).collect();
        for _ in 0..3 {
            let w = widths[(rng.next() % 3) as usize];
            term(&mut rng, w, 4, &vars).add(&mut eg, &mut tv);
        }
        eg.rebuild();
        useful += eg.classes().filter(|c| eg.analysis.constant(c.data).is_none() && eg.analysis.known(c.data) != Known::top(c.data.width())).count();
        claims += check(&eg, &leaves, &mut rng, 40).unwrap_or_else(|e| panic!("round {round}, before rules: {e}"));
        let runner: egg::Runner<Node, Facts, ()> = egg::Runner::new(Facts::new(Dialect::MODERN)).with_egraph(eg).with_iter_limit(3).with_node_limit(5_000).run(&crate::rules::rewrites(crate::rules::Target { sm: 80, ptx: (8, 7) }, true));
        let eg = runner.egraph;
        assert!(eg.analysis.contradiction.is_none(), "round {round}: {:?}", eg.analysis.contradiction);
        claims += check(&eg, &leaves, &mut rng, 40).unwrap_or_else(|e| panic!("round {round}, after rules: {e}"));
    }
    assert!(claims > 100_000, "only {claims} claims checked");
    assert!(useful > 1_000, "the analysis proved something of only {useful} classes");
}

#[test]
fn transfer_examples() {
    let k = Known::at_most(32, 1023);
    assert_eq!(k.zero, !0x3ffu128 & 0xffff_ffff);
    assert!(k.non_negative(32));
    // Sum of two bounded values: the top bit stays known zero.
    let a = Known::at_most(32, (1 << 30) - 1);
    let s = super::add(&a, &k, false).normalized().unwrap();
    assert!(s.non_negative(32) && s.hi == (1 << 30) - 1 + 1023);
    // A range [lo, hi] fixes the bits above their first difference.
    let r = Known { width: 16, zero: 0, one: 0, lo: 0x1200, hi: 0x12ff }.normalized().unwrap();
    assert_eq!((r.one, r.zero), (0x1200, 0xed00));
    assert!(Known::exact(8, 3).meet(&Known::exact(8, 4)).is_none());
}
