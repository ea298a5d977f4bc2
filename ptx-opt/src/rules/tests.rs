//! The proof of every rule: each instance of each rule is added to an
//! e-graph, the rule runs, and every node of every e-class must then compute
//! the same bits as the others on 10,000 random inputs and on the edge values
//! of the inputs' widths ([`super::proof`]). A rule that never fires on one
//! of its instances fails too, so instances cannot silently stop covering it.

use super::all;
use super::proof::{check_rule, Rng};
use crate::engine::facts::{EGraph, Facts};
use ptx_ir::eval::Dialect;

#[test]
fn every_rule_is_sound_on_its_instances() {
    let mut rng = Rng(0x5eed);
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for (family, rule) in all() {
        let instances = (rule.instances)();
        assert!(!instances.is_empty(), "rule {family}/{} has no instances", rule.name);
        for (i, term) in instances.iter().enumerate() {
            let mut eg = EGraph::new(Facts::new(Dialect::MODERN));
            let mut leaves = Vec::new();
            term.add(&mut eg, &mut leaves);
            eg.rebuild();
            let leaves: Vec<egg::Id> = leaves.into_iter().flatten().collect();
            match check_rule(rule, eg, &leaves, 10_000, &mut rng) {
                Ok(true) => checked += 1,
                Ok(false) => failures.push(format!("{family}/{} instance {i} ({term:?}): the rule did not fire", rule.name)),
                Err(e) => failures.push(format!("{family}/{} instance {i} ({term:?}): {e}", rule.name)),
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(checked > 0);
}

/// Rule names are unique: reports sum applications by name, and the
/// engine's runner does not check for repeats at each run as egg's does.
#[test]
fn rule_names_are_unique() {
    let mut names: Vec<&str> = all().map(|(_, r)| r.name).collect();
    names.sort_unstable();
    let repeated: Vec<&str> = names.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    assert!(repeated.is_empty(), "rules named twice: {repeated:?}");
}
