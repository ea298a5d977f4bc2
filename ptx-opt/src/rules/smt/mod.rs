//! Proofs of the rewrite rules for all inputs, by an SMT solver (z3). This
//! module owns the bit-vector semantics of the integer instructions
//! ([`encode`], tied to the evaluator by `tests/tests/rules_smt.rs`), the
//! expressions and their SMT-LIB2 text ([`bv`]), the z3 process
//! ([`solve`]) and the proof of one rule instance ([`prove`]); the test
//! beside them proves every instance of every rule it can encode. See
//! "Proofs by SMT" in `rules/README.md`.

pub mod bv;
pub mod encode;
pub mod prove;
pub mod solve;

#[cfg(test)]
mod tests;
