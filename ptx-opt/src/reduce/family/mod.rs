//! The reductions, one family per kind of change, and the order the search
//! tries them in each round.
//!
//! A family lists the [`Site`]s it could change in a module and makes the
//! module with any subset of them changed. It does not check the result:
//! the search prints, re-parses and verifies every candidate and skips the
//! invalid ones. So a family may offer changes that are sometimes invalid
//! (dropping an instruction whose label is still a branch target is caught
//! by the parser), but it should not offer ones that never are, because
//! each costs a parse.

mod debug;
mod guards;
mod items;
mod operands;
mod registers;
mod statements;

use super::sites::Site;
use ptx_ir::ir::Module;

/// One kind of reduction.
pub(crate) trait Family {
    /// The name progress reports show (`drop-instructions`).
    fn name(&self) -> &'static str;
    /// The places this family could change in `m`, in module order. After
    /// a change to some of them, the others keep their order.
    fn sites(&self, m: &Module) -> Vec<Site>;
    /// `m` with `chosen` (a subset of `self.sites(m)`) changed.
    fn apply(&self, m: &Module, chosen: &[Site]) -> Module;
}

/// Every family, in the order a round tries them: what removes the most at
/// once first (debug information, whole items), then control flow, single
/// statements, and last the operand rewrites that only simplify.
pub(crate) fn all() -> Vec<Box<dyn Family>> {
    vec![
        Box::new(debug::DropDebug),
        Box::new(items::DropItems),
        Box::new(items::DropItemsWithUses),
        Box::new(statements::DropBranches),
        Box::new(guards::DropGuards),
        Box::new(statements::DropInstructions),
        Box::new(statements::DropScopes),
        Box::new(statements::DropUnusedDecls),
        Box::new(statements::DropUnusedLabels),
        Box::new(operands::ToConstant(0)),
        Box::new(operands::ToConstant(1)),
        Box::new(items::DropUnusedParams),
        Box::new(registers::ShrinkRegRanges),
    ]
}
