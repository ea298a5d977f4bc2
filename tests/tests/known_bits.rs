//! The known-bits and range analysis of the e-graph against every pure
//! instruction of the ISA: each template of the generator's catalog
//! becomes a node the way the engine builds one, over inputs with random
//! facts (bounded like special registers, or with known low bits from a
//! mask), over constants, and over a nested copy of itself; on random
//! values that satisfy the inputs' facts, every class's claimed bits and
//! range must hold. A transfer function that models a form it should not
//! (a `.sat`, packed or narrow variant) fails here.

use ptx_ir::ir::Stmt;
use ptx_opt::engine::build::{value_shape, SourceOf};
use ptx_opt::engine::facts::{EGraph, Facts};
use ptx_opt::engine::known::Known;
use ptx_opt::engine::lang::Node;
use ptx_opt::engine::Id;
use ptx_opt::rules::proof::{class_values, Rng};
use rustc_hash::FxHashMap;

fn random_known(rng: &mut Rng, w: u8) -> Known {
    let m = ptx_ir::eval::bits_mask(w as u32);
    match rng.next() % 4 {
        0 => Known::top(w),
        1 => Known::at_most(w, rng.next() as u128 % 1100),
        2 => Known::at_most(w, m >> (rng.next() % w.max(1) as u64)),
        _ => {
            // Known low bits (an aligned value).
            let k = Known { width: w, zero: (1u128 << (rng.next() % 5)) - 1, one: 0, lo: 0, hi: m };
            k.normalized().unwrap()
        }
    }
}

fn draw(rng: &mut Rng, k: &Known) -> u128 {
    for _ in 0..64 {
        let span = k.hi - k.lo;
        let v = match rng.next() % 4 {
            0 => k.lo,
            1 => k.hi,
            _ => k.lo + (rng.next() as u128 | ((rng.next() as u128) << 64)) % span.saturating_add(1).max(1),
        };
        let v = (v & !k.zero) | k.one;
        if k.admits(v) {
            return v;
        }
    }
    k.lo
}

#[test]
fn claims_hold_on_every_pure_instruction() {
    let f = &ptx_tests::gen::catalog_kernel();
    let mut rng = Rng(0xb17);
    let mut failures: Vec<String> = Vec::new();
    let (mut shapes, mut claims, mut informative) = (0, 0usize, 0usize);
    for s in f.body.as_ref().unwrap() {
        let Stmt::Instr(ins) = s else { continue };
        let Some((tmpl, width, sources)) = value_shape(f, ins) else { continue };
        shapes += 1;
        let head = format!("{}{}", ins.opcode.name(), ins.modifiers().map(|(_, m)| m.text()).collect::<String>());
        for variant in 0..12 {
            let mut eg = EGraph::new(Facts::default());
            let shape = eg.analysis.shapes.intern(tmpl.clone(), width);
            let mut leaves: Vec<(Id, Known)> = Vec::new();
            let kids = |eg: &mut EGraph, leaves: &mut Vec<(Id, Known)>, rng: &mut Rng| -> Vec<Id> {
                sources
                    .iter()
                    .map(|s| match s {
                        SourceOf::Imm(b, w) => eg.add(Node::Const { width: *w, bits: *b }),
                        SourceOf::Reg(w) | SourceOf::Leaf(w) if rng.next() % 3 == 0 => {
                            let c = if rng.next() % 2 == 0 { rng.next() as u128 % 70 } else { rng.next() as u128 };
                            eg.add(Node::Const { width: *w, bits: c & ptx_ir::eval::bits_mask(*w as u32) })
                        }
                        SourceOf::Reg(w) | SourceOf::Leaf(w) => {
                            let k = random_known(rng, *w);
                            let l = eg.analysis.new_known_leaf(k);
                            let id = eg.add(Node::Leaf(l));
                            leaves.push((id, k));
                            id
                        }
                    })
                    .collect()
            };
            let mut outer = kids(&mut eg, &mut leaves, &mut rng);
            if variant % 2 == 1 && !sources.is_empty() && matches!(sources[0], SourceOf::Reg(w) if w == width) {
                let inner = kids(&mut eg, &mut leaves, &mut rng);
                outer[0] = eg.add(Node::Op(shape, inner.into_iter().collect()));
            }
            eg.add(Node::Op(shape, outer.into_iter().collect()));
            eg.rebuild();
            informative += eg.classes().filter(|c| eg.analysis.constant(c.data).is_none() && eg.analysis.known(c.data) != Known::top(c.data.width())).count();
            for _ in 0..24 {
                let assign: FxHashMap<Id, u128> = leaves.iter().map(|(id, k)| (*id, draw(&mut rng, k))).collect();
                let vals = class_values(&eg, &assign);
                for c in eg.classes() {
                    let Some(&v) = vals.get(&eg.find(c.id)) else { continue };
                    claims += 1;
                    if !eg.analysis.known(c.data).admits(v) && failures.len() < 30 {
                        failures.push(format!("`{head}`: a class is {v:#x}, the analysis claims {:?} (inputs {assign:x?})", eg.analysis.known(c.data)));
                    }
                }
            }
        }
    }
    assert!(shapes > 1000, "only {shapes} catalog instructions are values");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(claims > 200_000 && informative > 5_000, "{claims} claims, {informative} informative classes");
}
