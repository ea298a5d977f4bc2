//! Lowerings: instructions ptxas expands badly, rewritten as straight-line
//! programs of cheaper instructions, for the optimizer to turn into e-graph
//! nodes.
//!
//! - [`program`]: the [`Program`] representation (placeholder registers,
//!   guards) and its runner on the bit-exact evaluator, which also checks
//!   rewrite rules.
//! - [`builder`]: building programs instruction by instruction.
//! - [`magic`]: magic numbers for division by constants.
//! - [`div_const`]: `div`/`rem` by a constant ([`div_by_const`]).
//! - [`div64`]: 64-bit `div`/`rem` with a 32-bit fast path ([`div64_bypass`]).
//! - [`text`]: a program as a PTX kernel, for ptxas and the interpreter.
//!
//! `README.md` next to this file has the SASS instruction counts measured
//! with ptxas.

pub mod builder;
pub mod div64;
pub mod div_const;
pub mod magic;
pub mod program;
pub mod text;

pub use div64::div64_bypass;
pub use div_const::div_by_const;
pub use program::{Program, Runner};
