//! Analyses of a function, each a plain function of the IR and its CFG:
//! per-instruction effects from the ISA tables, dominators and
//! post-dominators with frontiers, natural loops, liveness, reaching
//! definitions and def-use chains (the carry flag included).

pub mod dataflow;
pub mod dom;
pub mod effects;
pub mod loops;

pub use dataflow::{statement_effects, BitRows, BitSet, BlockSets, DefSite, DefUse, Groups, Liveness, LivenessSolver, UseSite};
pub use dom::{dominance_frontiers, DomTree, Frontiers};
pub use effects::{effects, Def, Effects, Loc, LocTable};
pub use loops::{Loop, LoopForest};

use crate::cfg::Cfg;
use crate::ir::Function;

/// Every analysis of one function, computed together.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionAnalyses {
    pub cfg: Cfg,
    pub locs: LocTable,
    pub effects: Vec<Option<Effects>>,
    pub dom: DomTree,
    pub post_dom: DomTree,
    pub loops: LoopForest,
    pub liveness: Liveness,
    pub def_use: DefUse,
}

impl FunctionAnalyses {
    pub fn compute(f: &Function) -> FunctionAnalyses {
        let cfg = Cfg::build(f);
        let locs = LocTable::new(f);
        let effects = statement_effects(f, &locs);
        let dom = DomTree::dominators(&cfg);
        let post_dom = DomTree::post_dominators(&cfg);
        let loops = LoopForest::compute(&cfg, &dom);
        let liveness = Liveness::compute(&cfg, &locs, &effects);
        let def_use = DefUse::compute(&cfg, &locs, &effects);
        FunctionAnalyses { cfg, locs, effects, dom, post_dom, loops, liveness, def_use }
    }
}
