//! Every instance of every rule, proven for all inputs by z3 (see
//! [`super::prove`]); a summary table per rule goes to stderr. Fails on a
//! counterexample, on an instance the rule does not fire on, and on any
//! instance of the integer families (`algebra`, `divide`) that is not
//! proven. Skipped, loudly, when z3 is not installed (`tools/test.sh`
//! installs it).

use super::prove::{prove_instance, Status};
use super::solve::{available, Z3};
use crate::rules::all;

/// Families every instance of which must be proven.
const MUST_PROVE: &[&str] = &["algebra", "divide"];

#[test]
fn every_rule_instance_is_proven_by_z3() {
    if !available() {
        eprintln!("\n*** SMT PROOFS SKIPPED: z3 not installed (tools/test.sh installs it; or `apt-get install z3`) ***\n");
        return;
    }
    let mut z3 = Z3::start(20_000).expect("z3 starts");
    let mut failures: Vec<String> = Vec::new();
    let mut table: Vec<String> = Vec::new();
    let (mut total_proven, mut total) = (0, 0);
    for (family, rule) in all() {
        let (mut proven, mut concrete, mut unknown) = (0, 0, 0);
        let mut why: Vec<String> = Vec::new();
        for (i, term) in (rule.instances)().iter().enumerate() {
            total += 1;
            let what = format!("{family}/{} instance {i} ({term:?})", rule.name);
            match prove_instance(&mut z3, rule, term) {
                Status::Proven => proven += 1,
                Status::Concrete(r) => {
                    concrete += 1;
                    why.extend(r.iter().cloned());
                    if MUST_PROVE.contains(&family) {
                        failures.push(format!("{what}: not encoded: {}", r.join("; ")));
                    }
                }
                Status::Unknown(q) => {
                    unknown += 1;
                    eprintln!("unknown: {what}: {}", q.join("; "));
                    if MUST_PROVE.contains(&family) {
                        failures.push(format!("{what}: z3 gave up on {}", q.join("; ")));
                    }
                }
                Status::Refuted(cex) => failures.push(format!("{what}: COUNTEREXAMPLE {cex}")),
                Status::NotFired => failures.push(format!("{what}: the rule did not fire")),
                Status::Error(e) => failures.push(format!("{what}: {e}")),
            }
        }
        total_proven += proven;
        why.sort();
        why.dedup();
        table.push(format!("{:<10} {:<20} {:>7} {:>9} {:>8}  {}", family, rule.name, proven, concrete, unknown, why.join("; ")));
    }
    eprintln!("\nSMT proofs of the rules ({total_proven} of {total} instances proven for all inputs)");
    eprintln!("{:<10} {:<20} {:>7} {:>9} {:>8}  why not proven", "family", "rule", "proven", "concrete", "unknown");
    for l in &table {
        eprintln!("{l}");
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(total_proven > 0);
}
