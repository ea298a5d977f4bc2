//! The analyses passes share, computed when first asked for and kept until
//! a pass that changes the function says they are no longer valid (as LLVM's
//! preserved analyses and SPIR-V Tools' analysis bitmask).
//!
//! Invariant: a cached analysis describes the function the manager hands
//! to the next pass. After a pass returns a changed function the manager
//! calls [`Analyses::invalidate`] with the pass's [`Preserves`]; a pass that
//! replaces statements one for one (same statement indices, same branches)
//! keeps the CFG and the dominator tree, as long as it adds no statement (the
//! manager checks: a pass that had to declare a register, shifting every
//! index, invalidates them whatever it declares). The value view depends on every
//! register write, so every change drops it, but for a pass that only
//! renames reads and updates it itself ([`Analyses::reads_renamed`]);
//! passes that change nothing share one.
//!
//! It also carries the e-graph engine's report of its last run from the
//! `egraph` pass to the manager ([`Analyses::engine_report`]), for
//! statistics and remarks.

use super::memory::Touches;
use super::operands::block_declared_names;
use rustc_hash::FxHashSet;
use crate::values::ValueView;
use ptx_ir::analysis::DomTree;
use ptx_ir::cfg::Cfg;
use ptx_ir::ir::Function;

/// What a pass that changed the function leaves valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preserves {
    /// Statements were added, removed or moved, or branches changed.
    Nothing,
    /// Statements were replaced one for one, branches untouched: the CFG
    /// (blocks are statement ranges) and the dominator tree stay valid.
    Cfg,
}

/// The cached analyses of the function being optimized.
#[derive(Default)]
pub struct Analyses {
    cfg: Option<Cfg>,
    /// The dominator tree of `cfg`, computed when first asked for (`dce`
    /// needs only the CFG).
    dom: Option<DomTree>,
    view: Option<ValueView>,
    /// What each statement does to memory, found as the memory passes ask.
    memory: Option<Touches>,
    /// The names of the registers declared inside `{ }` blocks, which
    /// `copy-prop`, `address-space` and `load-forward` each ask for
    /// (matrix_free -O2: 1.3 M host instructions, each walking the body,
    /// before they shared them).
    block_names: Option<std::sync::Arc<FxHashSet<String>>>,
    /// How many times the CFG was computed.
    pub computed: u32,
    /// How many times a pass found it (or the value view) cached.
    pub reused: u32,
    /// What the e-graph engine reported on its last run over this function
    /// (rules fired, why it left the function alone): set by the `egraph`
    /// pass, taken by the pass manager for its observer. Not an analysis
    /// of the function; it rides here because every pass is handed this.
    pub engine_report: Option<crate::engine::Report>,
    /// The pass that just ran updated the value view to its output
    /// ([`Analyses::reads_renamed`]): the next invalidation keeps it.
    view_is_of_output: bool,
}

impl Analyses {
    /// The CFG of `f`, which must be the function the manager is running
    /// passes on.
    pub fn cfg(&mut self, f: &Function) -> &Cfg {
        if self.cfg.is_none() {
            self.cfg = Some(Cfg::build(f));
            self.computed += 1;
        } else {
            self.reused += 1;
        }
        self.cfg.as_ref().expect("computed above")
    }

    /// The CFG and dominator tree of `f`, which must be the function the
    /// manager is running passes on.
    pub fn cfg_dom(&mut self, f: &Function) -> (&Cfg, &DomTree) {
        self.cfg(f);
        let cfg = self.cfg.as_ref().expect("computed above");
        (cfg, self.dom.get_or_insert_with(|| DomTree::dominators(cfg)))
    }

    /// The CFG, the dominator tree and the value view of `f`, which must
    /// be the function the manager is running passes on.
    pub fn values(&mut self, f: &Function) -> (&Cfg, &DomTree, &ValueView) {
        if self.view.is_none() {
            let (cfg, dom) = self.cfg_dom(f);
            let view = ValueView::build(f, cfg, dom);
            self.view = Some(view);
        } else {
            self.reused += 1;
        }
        let (c, d) = (self.cfg.as_ref().expect("computed with the view"), self.dom.as_ref().expect("computed with the view"));
        (c, d, self.view.as_ref().expect("computed above"))
    }

    /// [`Analyses::values`], and what each statement of `f` does to memory.
    pub fn memory(&mut self, f: &Function) -> (&Cfg, &DomTree, &ValueView, &Touches) {
        self.values(f);
        let memory = self.memory.get_or_insert_with(|| Touches::of(f));
        let (c, d, v) = (self.cfg.as_ref().expect("computed with the view"), self.dom.as_ref().expect("computed with the view"), self.view.as_ref().expect("computed above"));
        (c, d, v, memory)
    }

    /// The names of the registers declared inside `{ }` blocks of `f`
    /// ([`super::operands::block_declared_names`]).
    pub fn block_declared_names(&mut self, f: &Function) -> std::sync::Arc<FxHashSet<String>> {
        let body = f.body.as_deref().unwrap_or(&[]);
        let names = self.block_names.get_or_insert_with(|| std::sync::Arc::new(block_declared_names(body)));
        // Kept only while the function is the one it was found for.
        debug_assert!(**names == block_declared_names(body), "`{}`: the kept names declared in blocks are stale", f.name);
        names.clone()
    }

    /// For a pass that renamed register reads of statements `changed` and
    /// nothing else (same statements, writes and branches; `copy-prop`),
    /// and returns `g`, the function so changed: the cached value view
    /// becomes `g`'s ([`ValueView::reads_renamed`]) and outlives the
    /// invalidation that follows the change (with [`Preserves::Cfg`]).
    pub fn reads_renamed(&mut self, g: &Function, changed: &[usize]) {
        let Some(view) = self.view.as_mut() else { return };
        view.reads_renamed(g, changed);
        self.view_is_of_output = true;
        #[cfg(debug_assertions)]
        if let (Some(cfg), Some(dom)) = (&self.cfg, &self.dom) {
            assert!(self.view.as_ref().expect("updated above").same_as(&ValueView::build(g, cfg, dom)), "the value view updated after renamed reads differs from the view built for `{}`", g.name);
        }
    }

    /// Drops what a change of the function made stale.
    pub fn invalidate(&mut self, keeps: Preserves) {
        // Addresses name registers: renamed reads change them too.
        self.memory = None;
        self.block_names = None;
        if !(self.view_is_of_output && keeps == Preserves::Cfg) {
            self.view = None;
        }
        self.view_is_of_output = false;
        if keeps == Preserves::Nothing {
            self.cfg = None;
            self.dom = None;
        }
    }
}
