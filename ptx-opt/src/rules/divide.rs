//! Division and remainder by constants: powers of two to shifts and masks,
//! other divisors to `mul.hi` magic-number sequences.

use super::Rule;

pub static RULES: &[Rule] = &[];
