//! `sccp`: sparse conditional constant propagation (Wegman and Zadeck).
//!
//! Every register version of the value view gets a value in the lattice
//! *unknown* (not yet reached) → *one constant* → *varies*, and every CFG
//! edge is executable or not, both found together and optimistically: a
//! block is looked at only once an executable edge reaches it, a φ merges
//! only what arrives over executable edges, and a branch whose guard is a
//! constant makes only its chosen edge executable. So a constant survives a
//! merge when every path that can run brings the same one, and code behind
//! a branch that cannot be taken does not spoil it.
//!
//! Values are computed the way the e-graph engine folds them
//! ([`crate::engine::build::value_parts`] and its shape's evaluation on
//! `ptx_ir::eval`): only `Exact` results are constants (no `.approx`, no
//! unspecified division by zero, no "some NaN"). A guarded write is the new
//! value when its guard is a known true, the old one when a known false,
//! else the merge of both. Anything else a statement writes (a load, a
//! call, a vector lane, a carry) varies; the value on entry varies.
//!
//! What changes, in place and nothing else:
//! - an instruction whose result is a constant, and that reads a constant
//!   merged at a φ or by a guarded write (what the engine cannot see),
//!   becomes `mov d, C` (same destination; unguarded, or its guard a known
//!   true); the engine folds what follows from it;
//! - an instruction under a known false guard is removed; a branch (or
//!   other terminator) under a known true guard loses it (a `@p bra` whose
//!   `p` is a known 0 goes, one whose `p` is a known 1 becomes `bra`), after
//!   which `simplify-cfg` removes the blocks nothing reaches. Other
//!   instructions keep a known true guard: a predicated instruction costs
//!   nothing in SASS, and unguarding Triton's `@%p cp.async` rows measured
//!   four more registers in one kernel (ptxas schedules them otherwise).
//!
//! Why, when the e-graph folds constants and `simplify-cfg` folds branches
//! on `mov.pred p, 0/1`: the engine sees only values defined by one
//! statement; a register merged at a φ (a flag set to the same constant on
//! both sides of an `if`, a variable whose other definition sits behind a
//! branch that cannot be taken) is a leaf to it. `sccp` turns those into
//! constants for the passes after it.

use super::{Analyses, Pass, Preserves};
use crate::engine::build::{value_dest, value_parts, SourceOf};
use crate::engine::lang::{type_width, Shape};
use crate::values::{ValueView, Version, VersionDef};
use crate::{ModuleContext, OptLevel};
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::EdgeRef;
use ptx_ir::cfg::{Cfg, EdgeKind};
use ptx_ir::ir::{Function, Instruction, Operand, RegId, Stmt};
use ptx_ir::isa::Opcode;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

pub const PASS: Pass = Pass {
    name: "sccp",
    description: "sparse conditional constant propagation: constants through merges, branches on constants folded",
    run,
    preserves: Preserves::Nothing,
    edit: None,
};

/// The value of one version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lattice {
    /// Not reached yet (optimistic start).
    Unknown,
    /// This register-width bit pattern on every executable path.
    Const(u128),
    /// More than one value, or one this pass cannot know.
    Varies,
}

impl Lattice {
    fn meet(self, other: Lattice) -> Lattice {
        match (self, other) {
            (Lattice::Unknown, x) | (x, Lattice::Unknown) => x,
            (Lattice::Const(a), Lattice::Const(b)) if a == b => self,
            _ => Lattice::Varies,
        }
    }
}

fn run(f: &Function, analyses: &mut Analyses, ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    if !merges_a_constant(f, body) {
        return None;
    }
    let (cfg, _, view) = analyses.values(f);
    let sol = solve(f, body, cfg, view, ctx);
    rewrite(f, body, view, &sol)
}

/// Can a merge bring a constant at all: is some register written by a
/// `mov` of an immediate and written elsewhere too? Without one, every
/// constant is one the e-graph engine sees (and this pass's solve, the
/// costliest step of a pipeline on large modules, is skipped).
fn merges_a_constant(f: &Function, body: &[Stmt]) -> bool {
    // A register two immediate moves write says yes without the walk over
    // every statement's registers (on a 3.8 MB module: 10.4 → 0.7 M).
    let mut const_movs = vec![0u8; f.regs.len()];
    let mut any = false;
    for s in body {
        let Stmt::Instr(ins) = s else { continue };
        if let Some(d) = const_mov_dest(ins) {
            if let Some(c) = const_movs.get_mut(d.0 as usize) {
                if *c == 1 {
                    debug_assert!(merges_a_constant_by_writes(f, body), "sccp: two immediate moves to {d:?}");
                    return true;
                }
                *c = 1;
                any = true;
            }
        }
    }
    any && merges_a_constant_by_writes(f, body)
}

/// [`merges_a_constant`], counting every register write.
fn merges_a_constant_by_writes(f: &Function, body: &[Stmt]) -> bool {
    let mut writes = vec![0u32; f.regs.len()];
    let mut const_movs = vec![false; f.regs.len()];
    for s in body {
        let Stmt::Instr(ins) = s else { continue };
        ins.for_each_reg(|r, a| {
            if a.write {
                if let Some(w) = writes.get_mut(r.0 as usize) {
                    *w += 1;
                }
            }
        });
        if let Some(d) = const_mov_dest(ins) {
            if let Some(c) = const_movs.get_mut(d.0 as usize) {
                *c = true;
            }
        }
    }
    writes.iter().zip(&const_movs).any(|(&n, &c)| c && n >= 2)
}

/// The register a `mov` of an immediate writes.
fn const_mov_dest(ins: &Instruction) -> Option<RegId> {
    if ins.opcode != Opcode::MOV || !matches!(ins.operands.get(1), Some(Operand::Imm(_))) {
        return None;
    }
    match ins.operands.first() {
        Some(Operand::Reg(d)) => Some(d.reg),
        _ => None,
    }
}

/// How a statement is evaluated, prepared once: the register it writes,
/// its shape (made when first evaluated: some statements are prepared and
/// never are), and per source the register it reads (none for immediates).
struct Prepared {
    dest: RegId,
    /// The instruction the shape is made of, until it is (taken, not
    /// copied: 1.8 M of copies on a 3.8 MB module).
    template: std::cell::Cell<Option<Instruction>>,
    dest_width: u8,
    shape: std::cell::OnceCell<Shape>,
    sources: Vec<SourceOf>,
    regs: Vec<Option<RegId>>,
}

fn prepare(f: &Function, ins: &Instruction) -> Option<Prepared> {
    // An impure form is never a value (`value_parts` says so first): no
    // unguarded copy of a guarded branch, load or store.
    if !ins.form.flags().is_pure() {
        return None;
    }
    let unguarded;
    let ins = if ins.guard.is_some() {
        unguarded = Instruction { guard: None, ..ins.clone() };
        &unguarded
    } else {
        ins
    };
    let p = value_parts(f, ins)?;
    Some(Prepared { dest: p.dest, template: std::cell::Cell::new(Some(p.template)), dest_width: p.dest_width, shape: std::cell::OnceCell::new(), sources: p.sources, regs: p.regs })
}

/// The solution: the value of each version and the executable blocks.
/// Versions are numbered once ([`Versions`]); the solver works on numbers.
struct Solution<'v> {
    versions: Versions<'v>,
    values: Vec<Lattice>,
    executable: Vec<bool>,
}

/// Dense numbers for the versions of a function: the registers statement
/// `k` writes are numbered from `def_base[k]` (in `written` order, as the
/// view numbers writes: [`ValueView::writes`]), and
/// after them the φs, as they are met ([`Versions::number`]): the solver
/// asks for few of a function's φs, and numbering every one the view has
/// cost a placement of φs no read sees (renderer -O2: 275,266 φs, of which
/// sccp reads 3,468). The value on entry has none (it varies).
#[derive(Clone)]
struct Versions<'v> {
    def_base: &'v [u32],
    written: &'v [RegId],
    /// The φs numbered, by number from `written.len()`.
    phis: Vec<(NodeIndex, RegId)>,
    phi_ids: FxHashMap<(NodeIndex, RegId), u32>,
    count: u32,
}

/// A version's number, or `ENTRY` for the value on entry.
const ENTRY: u32 = u32::MAX;

impl<'v> Versions<'v> {
    fn new(view: &'v ValueView) -> Versions<'v> {
        let (def_base, written) = view.writes();
        let count = written.len() as u32;
        Versions { def_base, written, phis: Vec::new(), phi_ids: FxHashMap::default(), count }
    }

    /// The registers statement `k` writes.
    fn written(&self, k: usize) -> &[RegId] {
        &self.written[self.def_base[k] as usize..self.def_base[k + 1] as usize]
    }

    /// The numbers of the versions statement `k` writes (aligned with
    /// [`Versions::written`]).
    fn def_range(&self, k: usize) -> std::ops::Range<u32> {
        self.def_base[k]..self.def_base[k + 1]
    }

    /// The number of `v`; `ENTRY` for the value on entry (and, never
    /// expected, for a version the view does not have or a φ not yet
    /// numbered ([`Versions::number`]): it varies).
    fn id(&self, v: Version) -> u32 {
        match v.def {
            VersionDef::Entry => ENTRY,
            VersionDef::Def(k) => self.written(k).iter().position(|&r| r == v.reg).map_or(ENTRY, |i| self.def_base[k] + i as u32),
            VersionDef::Phi(b) => {
                let id = self.phi_ids.get(&(b, v.reg)).copied();
                debug_assert!(id.is_some(), "sccp: the φ of {:?} at {b:?} is asked for before it is numbered", v.reg);
                id.unwrap_or(ENTRY)
            }
        }
    }

    /// The number of `v`, a version the view gives, numbering it if it is
    /// a φ not yet numbered.
    fn number(&mut self, v: Version) -> u32 {
        match v.def {
            VersionDef::Phi(b) => *self.phi_ids.entry((b, v.reg)).or_insert_with(|| {
                self.phis.push((b, v.reg));
                self.count += 1;
                self.count - 1
            }),
            _ => self.id(v),
        }
    }

    /// The block and register of φ number `id`.
    fn phi(&self, id: u32) -> (NodeIndex, RegId) {
        self.phis[id as usize - self.written.len()]
    }
}

impl Solution<'_> {
    fn get(&self, id: u32) -> Lattice {
        if id == ENTRY {
            return Lattice::Varies;
        }
        self.values[id as usize]
    }

    /// Lowers version `id` to `x` met with what it had; true when that changed it.
    fn lower(&mut self, id: u32, x: Lattice) -> bool {
        let old = self.get(id);
        let new = old.meet(x);
        if new != old {
            self.values[id as usize] = new;
            return true;
        }
        false
    }

    fn of(&self, v: Version) -> Lattice {
        self.get(self.versions.id(v))
    }

    /// The value `reg` has at statement `k` (before it).
    fn at(&self, view: &ValueView, reg: RegId, k: usize) -> Lattice {
        self.of(version_read(view, reg, k))
    }
}

/// The version of `reg` statement `k` reads: the view's, else the version
/// `reg` holds there (asked only then: asked for every read, the walks of
/// `version_at` cost matrix_free -O2's `sccp` 1.1 M for answers not used).
fn version_read(view: &ValueView, reg: RegId, k: usize) -> Version {
    view.read(k, reg).unwrap_or_else(|| Version { reg, def: view.version_at(reg, k) })
}

/// The guard's value at statement `k`: `Some(true/false)` when known.
fn guard_value(sol: &Solution, view: &ValueView, ins: &Instruction, k: usize) -> Lattice {
    match ins.guard {
        None => Lattice::Const(1),
        Some(g) => guard_of(sol.at(view, g.reg, k), g.negated),
    }
}

fn guard_of(p: Lattice, negated: bool) -> Lattice {
    match p {
        Lattice::Const(c) => Lattice::Const(((c & 1) == 1) as u128 ^ negated as u128),
        x => x,
    }
}

/// What the solver needs of one statement that writes registers, with every
/// version it reads or writes numbered once. The versions it writes are
/// `Versions::def_range(stmt)`; what they held before, for a guarded one,
/// is in [`Steps::before`].
struct Step {
    /// The statement.
    stmt: usize,
    /// How its value is computed ([`Evaluation`]), made when first needed:
    /// most statements read a version that varies and never need it
    /// ([`Steps::a_source_varies`]). A computed one is boxed: a function has
    /// one step per statement, and few are ever evaluated.
    evaluation: std::cell::OnceCell<Option<Evaluation>>,
    /// The range of [`Steps::reads`] with the version of every register it
    /// reads (the guard's too), when the registers of its operands are all
    /// read: then each one but the guard's is a register source of
    /// [`Prepared::sources`] (or it is no value at all), and once one
    /// varies, so does its value.
    reads: Option<std::ops::Range<u32>>,
    /// The guard's version and negation.
    guard: Option<(u32, bool)>,
}

/// The steps of a function: one per reachable statement that writes
/// registers, in statement order, so that each block's are one range. The
/// versions they read and what their writes keep sit in flat tables, not
/// in each step (on a 3.8 MB module, steps with their own small vectors
/// cost 16 M more to make, walk and drop).
struct Steps {
    list: Vec<Step>,
    /// The versions steps read ([`Step::reads`]).
    reads: Vec<u32>,
    /// Per `Def` version (as [`Versions`] numbers them), for a guarded
    /// step, the version its register held before (kept when the guard
    /// is false); `ENTRY` for the others.
    before: Vec<u32>,
    /// Per block, the range of `list` of its statements.
    of_block: Vec<std::ops::Range<u32>>,
}

impl Steps {
    fn new(body: &[Stmt], cfg: &Cfg, view: &ValueView, versions: &mut Versions) -> Steps {
        // Sized once: growing the list of steps copied it some 600 times on a
        // 3.8 MB module (6.3 M). A step writes a register, and most read
        // one or two.
        let mut list: Vec<Step> = Vec::with_capacity(versions.written.len());
        let mut reads: Vec<u32> = Vec::with_capacity(2 * versions.written.len());
        let mut before = vec![ENTRY; versions.written.len()];
        let mut of_block = vec![0..0; cfg.node_bound()];
        for (k, s) in body.iter().enumerate() {
            let Stmt::Instr(ins) = s else { continue };
            if versions.written(k).is_empty() || !view.reachable(k) {
                continue;
            }
            // Every register of its operands that is not written read, and
            // some (so that [`Prepared::sources`] has a register, each one of
            // these: a register source is an operand that is not written):
            // then the versions it reads are all of its register sources.
            let read = view.operands_all_read(k).then(|| {
                let start = reads.len() as u32;
                reads.extend(view.reads(k).iter().map(|(_, v)| versions.number(*v)));
                start..reads.len() as u32
            });
            let guard = ins.guard.map(|g| (versions.number(version_read(view, g.reg, k)), g.negated));
            if ins.guard.is_some() {
                for id in versions.def_range(k) {
                    let r = versions.written[id as usize];
                    before[id as usize] = versions.number(Version { reg: r, def: view.version_at(r, k) });
                }
            }
            let range = &mut of_block[view.block_of(k).index()];
            if range.start == range.end {
                *range = list.len() as u32..list.len() as u32;
            }
            range.end += 1;
            list.push(Step { stmt: k, evaluation: std::cell::OnceCell::new(), reads: read, guard });
        }
        Steps { list, reads, before, of_block }
    }

    /// The versions `step` reads, when they are all of its register
    /// sources ([`Step::reads`]).
    fn reads(&self, step: &Step) -> Option<&[u32]> {
        step.reads.clone().map(|r| &self.reads[r.start as usize..r.end as usize])
    }

    /// Does a register `step` reads as a source vary (the guard is left
    /// out: the value is computed as if unguarded)? Then so does its value:
    /// [`Step::computed`] gives a constant only when every source is one,
    /// and a version that varies stays so.
    fn a_source_varies(&self, step: &Step, sol: &Solution) -> bool {
        let guard = step.guard.map(|(id, _)| id);
        self.reads(step).is_some_and(|reads| reads.iter().any(|&id| Some(id) != guard && sol.get(id) == Lattice::Varies))
    }
}

/// How a step is evaluated ([`prepare_step`]).
enum Evaluation {
    /// `mov d, IMM` into a register as wide as the move's type: the
    /// immediate's bits, read as the engine reads them
    /// ([`ptx_ir::eval::imm_bits`]). A third of the statements a large
    /// function evaluates, which need no shape.
    Immediate(RegId, u128),
    /// `mov d, s` between registers as wide as the move's type
    /// ([`register_copy`]): the value of `s`'s version (its number), so
    /// the value `d` gets. A sixth of the statements matrix_free -O2
    /// evaluated (466 of 2,777), each costing a shape to make and evaluate.
    Copy(RegId, u32),
    Computed(Box<Computed>),
}

/// A step evaluated through its shape, and what it last gave.
struct Computed {
    prepared: Prepared,
    /// The version each source reads (`ENTRY` for immediates).
    sources: Vec<u32>,
    /// The constant sources it was last evaluated on and the value that
    /// gave: each round asks again, mostly with the same constants.
    last: std::cell::RefCell<Option<(Sources, Lattice)>>,
}

/// The constant sources of an evaluation: value bits and width.
type Sources = SmallVec<[(u128, u8); 4]>;

impl Step {
    /// Can looking at it again change nothing, now that it was looked at?
    /// So when every version it writes varies
    /// (nothing but this step lowers them, and nothing lowers the bottom),
    /// or when it is an unguarded immediate move (it writes the same
    /// constant every time; dropping those took the rounds of a 3.8 MB
    /// module from 57.3 to 52.1 M).
    fn settled(&self, sol: &Solution) -> bool {
        let immediate = self.guard.is_none() && matches!(self.evaluation.get(), Some(Some(Evaluation::Immediate(..))));
        immediate || sol.versions.def_range(self.stmt).all(|id| sol.get(id) == Lattice::Varies)
    }

    fn guard_value(&self, sol: &Solution) -> Lattice {
        match self.guard {
            None => Lattice::Const(1),
            Some((id, negated)) => guard_of(sol.get(id), negated),
        }
    }

    /// The value it computes (as if unguarded) into the register it writes;
    /// `prepare` makes its [`Step::evaluation`] when first asked.
    fn computed(&self, sol: &Solution, ctx: &ModuleContext, prepare: impl FnOnce() -> Option<Evaluation>) -> Option<(RegId, Lattice)> {
        match self.evaluation.get_or_init(prepare).as_ref()? {
            Evaluation::Immediate(dest, bits) => Some((*dest, Lattice::Const(*bits))),
            Evaluation::Copy(dest, source) => Some((*dest, sol.get(*source))),
            Evaluation::Computed(c) => c.value(sol, ctx),
        }
    }
}

impl Computed {
    fn new(prepared: Prepared, sources: Vec<u32>) -> Computed {
        Computed { prepared, sources, last: std::cell::RefCell::new(None) }
    }

    /// Its value on the sources' current values ([`Step::computed`]).
    fn value(&self, sol: &Solution, ctx: &ModuleContext) -> Option<(RegId, Lattice)> {
        let Computed { prepared: p, sources, last } = self;
        let mut kids: Sources = SmallVec::with_capacity(p.sources.len());
        for ((s, r), &id) in p.sources.iter().zip(&p.regs).zip(sources) {
            match (s, r) {
                (SourceOf::Imm(bits, w), _) => kids.push((*bits, *w)),
                (SourceOf::Reg(w), Some(_)) => match sol.get(id) {
                    Lattice::Const(c) => kids.push((c, *w)),
                    x => return Some((p.dest, x)),
                },
                _ => return Some((p.dest, Lattice::Varies)),
            }
        }
        if let Some((seen, value)) = &*last.borrow() {
            if *seen == kids {
                return Some((p.dest, *value));
            }
        }
        let shape = p.shape.get_or_init(|| Shape::new(p.template.take().expect("the template is taken once, for the shape"), p.dest_width));
        let value = shape.eval(&ctx.dialect, &kids).map_or(Lattice::Varies, Lattice::Const);
        *last.borrow_mut() = Some((kids, value));
        Some((p.dest, value))
    }
}

/// How statement `k` is evaluated (`None`: its value varies, whatever its
/// sources): an immediate move, else its
/// [`Prepared`] with the version of each source (one entry per source,
/// aligned with `Prepared::sources`; `ENTRY` for immediates). (`ctx` is
/// read by the debug builds' checks of the shortcuts only.)
#[cfg_attr(not(debug_assertions), allow(unused_variables))]
fn prepare_step(f: &Function, ins: &Instruction, view: &ValueView, sol: &Solution, ctx: &ModuleContext, k: usize) -> Option<Evaluation> {
    let computed = || by_shape(f, ins, view, &sol.versions, k);
    if moves_a_leaf(ins) {
        // Its one source, a special register or a symbol's address, is no
        // constant: it varies, as its shape gives (checked by the suite,
        // which runs with debug assertions, on every such move). A fifth
        // of the statements matrix_free -O2 prepared (596 of 2,777), each
        // costing `value_parts` and a shape's parts for nothing.
        #[cfg(debug_assertions)]
        {
            let full = computed().and_then(|c| c.value(sol, ctx));
            assert!(full.is_none_or(|(_, v)| v == Lattice::Varies), "sccp: the move of a leaf {ins:?} gives {full:?}");
        }
        return None;
    }
    if let Some((dest, source)) = register_copy(f, ins) {
        // The shape's evaluation gives the same (checked by debug builds at
        // every look: `look_at`).
        return Some(Evaluation::Copy(dest, sol.versions.id(version_read(view, source, k))));
    }
    match immediate_move(f, ins) {
        Some((dest, bits)) => {
            // The shape's evaluation gives the same (checked by the suite,
            // which runs with debug assertions, on every immediate move).
            #[cfg(debug_assertions)]
            {
                let full = computed().and_then(|c| c.value(sol, ctx));
                assert_eq!(full, Some((dest, Lattice::Const(bits))), "sccp: the immediate move {ins:?}");
            }
            Some(Evaluation::Immediate(dest, bits))
        }
        None => computed().map(|c| Evaluation::Computed(Box::new(c))),
    }
}

/// Statement `k` evaluated through its shape, the general way (what
/// [`prepare_step`]'s shortcuts must agree with).
fn by_shape(f: &Function, ins: &Instruction, view: &ValueView, versions: &Versions, k: usize) -> Option<Computed> {
    let p = prepare(f, ins)?;
    let sources = p
        .sources
        .iter()
        .zip(&p.regs)
        .map(|(s, r)| match (s, r) {
            (SourceOf::Reg(_), Some(r)) => versions.id(version_read(view, *r, k)),
            _ => ENTRY,
        })
        .collect();
    Some(Computed::new(p, sources))
}

/// `mov d, a` of a special register or a symbol's address (what the
/// engine takes as a leaf: never a constant).
fn moves_a_leaf(ins: &Instruction) -> bool {
    ins.opcode == Opcode::MOV && matches!(ins.operands.as_slice(), [_, Operand::SReg(..) | Operand::Sym(_)])
}

/// `mov.T d, s` (as if unguarded) between scalar registers as wide as
/// `T` (16, 32 or 64 bits, not `.pred`), neither with a selector or a
/// prefix: its destination and source. Its shape gives the source's bits.
fn register_copy(f: &Function, ins: &Instruction) -> Option<(RegId, RegId)> {
    let [Operand::Reg(d), Operand::Reg(s)] = ins.operands.as_slice() else { return None };
    let plain = |r: &ptx_ir::ir::RegOperand| r.sel.is_none() && r.prefix == ptx_ir::ir::Prefix::None;
    if ins.opcode != Opcode::MOV || ins.vector().is_some() || !plain(d) || !plain(s) {
        return None;
    }
    let ty = ins.operand_type(1)?;
    let width = type_width(ty);
    if ty == ptx_ir::isa::ScalarType::Pred || !matches!(width, 16 | 32 | 64) {
        return None;
    }
    let as_wide = |r: RegId| f.regs.get(r.0 as usize).is_some_and(|x| x.vector.is_none() && type_width(x.ty) == width);
    (as_wide(d.reg) && as_wide(s.reg)).then_some((d.reg, s.reg))
}

/// `mov.T d, IMM` (as if unguarded) into a scalar register of `T`'s width
/// (not `.pred`): its destination and the immediate's bits at that width.
fn immediate_move(f: &Function, ins: &Instruction) -> Option<(RegId, u128)> {
    let [Operand::Reg(d), Operand::Imm(imm)] = ins.operands.as_slice() else { return None };
    if ins.opcode != Opcode::MOV || d.sel.is_some() || d.prefix != ptx_ir::ir::Prefix::None {
        return None;
    }
    let reg = f.regs.get(d.reg.0 as usize)?;
    let ty = ins.operand_type(1)?;
    if reg.vector.is_some() || ty == ptx_ir::isa::ScalarType::Pred || type_width(ty) != type_width(reg.ty) {
        return None;
    }
    Some((d.reg, ptx_ir::eval::imm_bits(imm, ty)))
}

/// The φs whose values the solver needs, with their inputs. A φ is needed
/// when a guard or a statement the solver evaluates reads its version, when
/// a guarded write keeps it as the old value, or when it is an input of a
/// needed φ (the rewrite asks for nothing else: a statement it may replace
/// is one the solver evaluates). The view is minimal SSA: most φs of a large function are of
/// registers dead at the merge and are none of these (on a 3.8 MB module,
/// 3,468 of 274,850 are read); they are never numbered ([`Versions`]) and
/// their inputs never found.
struct PhiInputs {
    /// Per input: the predecessor and the version arriving from it (a
    /// needed φ's inputs side by side).
    inputs: Vec<(NodeIndex, u32)>,
    /// Per block, its needed φs, in order, each with the range of `inputs`
    /// holding its inputs (kept with the φ, not in a table over every φ:
    /// most are not needed).
    open_phis: Vec<Vec<NeededPhi>>,
    /// Per φ (from the first): is it needed (read by the debug builds' check).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    needed: Vec<bool>,
}

/// A needed φ's version and the range of [`PhiInputs::inputs`] with its inputs.
#[derive(Clone, Copy)]
struct NeededPhi {
    id: u32,
    inputs: (u32, u32),
}

impl PhiInputs {
    /// The needed φs (with `all`: every φ of the function, the debug
    /// builds' reference), numbered if they were not.
    fn of_needed(body: &[Stmt], cfg: &Cfg, view: &ValueView, versions: &mut Versions, steps: &Steps, all: bool) -> PhiInputs {
        if all {
            for (b, reg) in view.all_phis() {
                versions.number(Version { reg, def: VersionDef::Phi(b) });
            }
        }
        let first_phi = versions.written.len() as u32;
        let nphis = (versions.count - first_phi) as usize;
        let mut needed = vec![all; nphis];
        let mut work: Vec<u32> = if all { (first_phi..versions.count).collect() } else { Vec::new() };
        let mut mark = |id: u32, work: &mut Vec<u32>| {
            if id == ENTRY || id < first_phi {
                return;
            }
            let i = (id - first_phi) as usize;
            if i >= needed.len() {
                // A φ numbered since.
                needed.resize(i + 1, false);
            }
            if !std::mem::replace(&mut needed[i], true) {
                work.push(id);
            }
        };
        // The steps, in statement order, met along the statements.
        let mut next_step = steps.list.iter().peekable();
        for (k, s) in body.iter().enumerate() {
            let Stmt::Instr(ins) = s else { continue };
            // Steps are reachable; any other statement matters only for its
            // guard, and most have none (asked first).
            let step = next_step.next_if(|step| step.stmt == k);
            if step.is_none() && (ins.guard.is_none() || !view.reachable(k)) {
                continue;
            }
            // Every version the solver and the rewrite may ask for at `k`:
            // the guard's (a step numbered it already: `Step::guard`), and
            // for a statement it evaluates, the versions
            // it reads (`Step::reads`, when they are all of its register
            // sources; else what each register it names without writing
            // holds there, as `version_read` finds it) and the old values
            // a guarded write keeps.
            let guard = match step {
                Some(step) => step.guard.map(|(id, _)| id),
                None => ins.guard.map(|g| versions.number(version_read(view, g.reg, k))),
            };
            if let Some(id) = guard {
                mark(id, &mut work);
            }
            let Some(step) = step else { continue };
            match steps.reads(step) {
                Some(reads) => reads.iter().for_each(|&id| mark(id, &mut work)),
                None => ins.for_each_reg(|r, a| {
                    if a.read || !a.write {
                        mark(versions.number(version_read(view, r, k)), &mut work);
                    }
                }),
            }
            for id in versions.def_range(k) {
                mark(steps.before[id as usize], &mut work);
            }
        }
        let mut inputs: Vec<(NodeIndex, u32)> = Vec::new();
        // (block, φ) of every needed φ, found in any order.
        let mut found: Vec<(usize, NeededPhi)> = Vec::new();
        while let Some(id) = work.pop() {
            let (b, r) = versions.phi(id);
            let start = inputs.len() as u32;
            for (p, def) in view.phi_inputs(cfg, b, r) {
                let v = versions.number(Version { reg: r, def });
                inputs.push((p, v));
                mark(v, &mut work);
            }
            found.push((b.index(), NeededPhi { id, inputs: (start, inputs.len() as u32) }));
        }
        found.sort_unstable_by_key(|&(_, phi)| phi.id);
        let mut open_phis: Vec<Vec<NeededPhi>> = vec![Vec::new(); cfg.node_bound()];
        for (b, phi) in found {
            open_phis[b].push(phi);
        }
        PhiInputs { inputs, open_phis, needed }
    }
}

fn solve<'v>(f: &Function, body: &[Stmt], cfg: &Cfg, view: &'v ValueView, ctx: &ModuleContext) -> Solution<'v> {
    let mut versions = Versions::new(view);
    let steps = Steps::new(body, cfg, view, &mut versions);
    // The terminator deciding each block's edges: its guard, when it has one.
    let deciding: Vec<Option<(u32, bool)>> = (0..cfg.node_bound())
        .map(|b| {
            let b = NodeIndex::new(b);
            if !cfg.graph.contains_node(b) {
                return None;
            }
            let (k, ins) = cfg.block(b).stmts.clone().rev().find_map(|k| match &body[k] {
                Stmt::Instr(ins) => Some((k, ins)),
                _ => None,
            })?;
            let g = ins.guard.filter(|_| ptx_ir::cfg::is_terminator(ins.opcode))?;
            Some((versions.number(version_read(view, g.reg, k)), g.negated))
        })
        .collect();
    let phis = PhiInputs::of_needed(body, cfg, view, &mut versions, &steps, false);
    // Debug builds solve with every φ too, and check that each version the
    // solver may read (every one but the φs not needed) and each block come
    // out the same.
    #[cfg(debug_assertions)]
    let reference = {
        let mut versions = versions.clone();
        let all = PhiInputs::of_needed(body, cfg, view, &mut versions, &steps, true);
        iterate(f, body, cfg, view, ctx, versions, &steps, &deciding, all)
    };
    #[cfg(debug_assertions)]
    let needed = phis.needed.clone();
    let sol = iterate(f, body, cfg, view, ctx, versions, &steps, &deciding, phis);
    #[cfg(debug_assertions)]
    {
        let first_phi = sol.versions.written.len();
        assert_eq!(sol.executable, reference.executable, "sccp: executable blocks of `{}` with only the needed φs", f.name);
        for (id, (a, b)) in sol.values.iter().zip(&reference.values).enumerate() {
            if id < first_phi || needed.get(id - first_phi).copied().unwrap_or(false) {
                assert_eq!(a, b, "sccp: version {id} of `{}` with only the needed φs", f.name);
            }
        }
    }
    sol
}

/// The solver's rounds, to a fixed point, over the φs `phis` gives.
#[allow(clippy::too_many_arguments)]
fn iterate<'v>(f: &Function, body: &[Stmt], cfg: &Cfg, view: &ValueView, ctx: &ModuleContext, versions: Versions<'v>, steps: &Steps, deciding: &[Option<(u32, bool)>], phis: PhiInputs) -> Solution<'v> {
    let n = versions.count as usize;
    let mut sol = Solution { versions, values: vec![Lattice::Unknown; n], executable: vec![false; cfg.node_bound()] };
    sol.executable[cfg.entry.index()] = true;
    // Per block, the predecessors whose edge to it is executable.
    let mut edges: Vec<SmallVec<[NodeIndex; 2]>> = std::iter::repeat_with(SmallVec::new).take(cfg.node_bound()).collect();
    // Per block, are all its out edges executable (then a round need not
    // look at them again)?
    let mut all_out_executable = vec![false; cfg.node_bound()];
    // Reverse postorder: definitions before their uses but around loops,
    // so a round carries values as far as they go.
    let mut order: Vec<NodeIndex> = Vec::with_capacity(cfg.node_bound());
    let mut dfs = petgraph::visit::DfsPostOrder::new(&cfg.graph, cfg.entry);
    while let Some(b) = dfs.next(&cfg.graph) {
        order.push(b);
    }
    order.reverse();
    // Per block, its needed φs that may still be lowered (not yet
    // `Varies`), in order: a φ that varies is dropped from it (nothing
    // lowers the bottom), so a round does not walk the many φs that vary.
    let PhiInputs { inputs: phi_in, mut open_phis, .. } = phis;
    // Per block, its steps that may still lower a version: `live[r]` for
    // `r` in `of_block[b].start..live_end[b]`. A step is dropped once
    // looking at it again can change nothing ([`Step::settled`]), so that
    // later rounds walk only the steps that still can. With that, the rounds
    // after the first cost little: skipping, in addition, the blocks none of
    // whose reads was lowered since they were last looked at (an index of
    // each version's reading blocks) cost renderer -O2 13.2 M to build and
    // saved under 2 M of rounds (`sccp` 96.4 -> 111.2 M); a round's cost is
    // mostly its first look at each step.
    let mut live: Vec<u32> = (0..steps.list.len() as u32).collect();
    let mut live_end: Vec<u32> = steps.of_block.iter().map(|r| r.end).collect();
    loop {
        let mut changed = false;
        // The blocks a later round must look at again, in order: `order[..still]`.
        let mut still = 0;
        for i in 0..order.len() {
            let b = order[i];
            'look: {
                if !sol.executable[b.index()] {
                    break 'look;
                }
                let mut open = std::mem::take(&mut open_phis[b.index()]);
                open.retain(|phi| {
                    let mut merged = Lattice::Unknown;
                    for &(p, v) in &phi_in[phi.inputs.0 as usize..phi.inputs.1 as usize] {
                        if edges[b.index()].contains(&p) {
                            merged = merged.meet(sol.get(v));
                        }
                    }
                    changed |= sol.lower(phi.id, merged);
                    sol.get(phi.id) != Lattice::Varies
                });
                open_phis[b.index()] = open;
                let mut kept = steps.of_block[b.index()].start;
                for i in steps.of_block[b.index()].start..live_end[b.index()] {
                    let step = &steps.list[live[i as usize] as usize];
                    changed |= look_at(f, body, view, ctx, steps, step, &mut sol);
                    if !step.settled(&sol) {
                        live[kept as usize] = live[i as usize];
                        kept += 1;
                    }
                }
                live_end[b.index()] = kept;
                // The edges out of `b` this round makes executable.
                if all_out_executable[b.index()] {
                    break 'look;
                }
                let taken = match deciding[b.index()] {
                    Some((id, negated)) => guard_of(sol.get(id), negated),
                    None => Lattice::Varies,
                };
                for e in cfg.graph.edges(b) {
                    let go = match (taken, *e.weight()) {
                        (Lattice::Unknown, _) => false,
                        (Lattice::Varies, _) => true,
                        (Lattice::Const(t), kind) => (t == 1) == (kind == EdgeKind::Taken),
                    };
                    if go && !edges[e.target().index()].contains(&b) {
                        edges[e.target().index()].push(b);
                        changed = true;
                        sol.executable[e.target().index()] = true;
                    }
                }
                all_out_executable[b.index()] = taken == Lattice::Varies;
            }
            // A block with no φ nor step left to look at and every out edge
            // executable is done: looking at it again changes nothing, and it
            // never has any again (φs and steps are only dropped, edges only
            // made executable). The rounds after this one skip it
            // (matrix_free -O2: 7,900 blocks, up to 6 rounds).
            let done = sol.executable[b.index()] && open_phis[b.index()].is_empty() && live_end[b.index()] == steps.of_block[b.index()].start && all_out_executable[b.index()];
            if !done {
                order[still] = b;
                still += 1;
            }
        }
        order.truncate(still);
        if !changed {
            // Debug builds check that no step, dropped or not, would
            // change anything at the fixed point.
            #[cfg(debug_assertions)]
            for (b, range) in steps.of_block.iter().enumerate() {
                if sol.executable[b] {
                    for step in &steps.list[range.start as usize..range.end as usize] {
                        assert!(!look_at(f, body, view, ctx, steps, step, &mut sol), "sccp: statement {} of `{}` changes at the fixed point", step.stmt, f.name);
                    }
                }
            }
            return sol;
        }
    }
}

/// Looks at `step` once: lowers each version it writes to what it
/// computes under its guard. True when that changed one.
fn look_at(f: &Function, body: &[Stmt], view: &ValueView, ctx: &ModuleContext, steps: &Steps, step: &Step, sol: &mut Solution) -> bool {
    let k = step.stmt;
    let value = if steps.a_source_varies(step, sol) {
        // What `computed` gives once its sources are known,
        // without preparing it.
        None
    } else {
        let Stmt::Instr(ins) = &body[k] else { unreachable!("steps are instructions") };
        step.computed(sol, ctx, || prepare_step(f, ins, view, sol, ctx, k))
    };
    #[cfg(debug_assertions)]
    if steps.a_source_varies(step, sol) {
        let Stmt::Instr(ins) = &body[k] else { unreachable!() };
        let full = step.computed(sol, ctx, || prepare_step(f, ins, view, sol, ctx, k));
        assert!(full.is_none_or(|(_, v)| !matches!(v, Lattice::Const(_))), "sccp: statement {k} of `{}` reads a varying version but computes {full:?}", f.name);
    }
    #[cfg(debug_assertions)]
    if let Some(Some(Evaluation::Copy(..))) = step.evaluation.get() {
        let Stmt::Instr(ins) = &body[k] else { unreachable!() };
        let full = by_shape(f, ins, view, &sol.versions, k).and_then(|c| c.value(sol, ctx));
        assert_eq!(value.filter(|_| !steps.a_source_varies(step, sol)), full.filter(|_| !steps.a_source_varies(step, sol)), "sccp: the copy {ins:?}");
    }
    let guard = step.guard_value(sol);
    let mut changed = false;
    for id in sol.versions.def_range(k) {
        let r = sol.versions.written[id as usize];
        let before = steps.before[id as usize];
        let new = match value {
            Some((d, v)) if d == r => v,
            _ => Lattice::Varies,
        };
        let x = match guard {
            Lattice::Unknown => Lattice::Unknown,
            Lattice::Const(1) => new,
            Lattice::Const(_) => sol.get(before),
            Lattice::Varies => new.meet(sol.get(before)),
        };
        changed |= sol.lower(id, x);
    }
    changed
}

fn rewrite(f: &Function, body: &[Stmt], view: &ValueView, sol: &Solution) -> Option<Function> {
    // The statements that change (`None`: removed), found before anything
    // is copied: most functions have none.
    let mut edits: Vec<(usize, Option<Instruction>)> = Vec::new();
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        // An unguarded statement can only become a `mov` of a constant it
        // writes, and most write none (a version is a constant only once
        // a step of an executable block lowered it): asked first, before
        // its block and guard.
        if ins.guard.is_none() && !writes_a_constant(sol, k) {
            continue;
        }
        if !view.reachable(k) || !sol.executable[view.block_of(k).index()] {
            continue;
        }
        let guard = guard_value(sol, view, ins, k);
        if ins.guard.is_some() && guard == Lattice::Const(0) {
            edits.push((k, None));
            continue;
        }
        let mut new: Option<Instruction> = None;
        if ins.guard.is_some() && guard == Lattice::Const(1) && ptx_ir::cfg::is_terminator(ins.opcode) {
            new = Some(Instruction { guard: None, ..(**ins).clone() });
        }
        let cur = new.as_ref().unwrap_or(ins);
        // The cheap conditions first: most statements read no merged constant.
        let is_const_mov = cur.opcode == Opcode::MOV && matches!(cur.operands.get(1), Some(Operand::Imm(_)));
        if !is_const_mov && cur.guard.is_none() && writes_a_constant(sol, k) && reads_a_merged_constant(body, view, sol, k) {
            if let Some(d) = value_dest(f, cur) {
                if let Lattice::Const(c) = sol.of(Version { reg: d, def: VersionDef::Def(k) }) {
                    let width = crate::engine::lang::type_width(f.reg(d).ty);
                    if let Some(mov) = crate::engine::emit::const_mov(d, c, width) {
                        new = Some(mov);
                    }
                }
            }
        }
        if let Some(n) = new {
            edits.push((k, Some(n)));
        }
    }
    if edits.is_empty() {
        return None;
    }
    let mut out: Vec<Stmt> = Vec::with_capacity(body.len());
    let mut edits = edits.into_iter().peekable();
    for (k, s) in body.iter().enumerate() {
        match edits.next_if(|(j, _)| *j == k) {
            Some((_, Some(new))) => out.push(Stmt::Instr(Box::new(new))),
            Some((_, None)) => {}
            None => out.push(s.clone()),
        }
    }
    let mut g = f.clone();
    g.body = Some(out);
    Some(g)
}

/// Does statement `k` write a version that is a constant? Without one,
/// nothing of it becomes a `mov` (the register a `mov` would write is one
/// of these), and asking what it reads is skipped: on a 3.8 MB module
/// most statements write one that varies.
fn writes_a_constant(sol: &Solution, k: usize) -> bool {
    sol.versions.def_range(k).any(|id| matches!(sol.get(id), Lattice::Const(_)))
}

/// Does statement `k` read a constant the e-graph engine cannot see: one
/// merged at a φ or by a guarded write? Only then is a constant result
/// written as a `mov` (the engine folds the rest itself, and a copy of a
/// constant register is better left a copy than made a second immediate).
fn reads_a_merged_constant(body: &[Stmt], view: &ValueView, sol: &Solution, k: usize) -> bool {
    view.reads(k).iter().any(|(_, v)| {
        let merged = match v.def {
            VersionDef::Phi(_) => true,
            VersionDef::Def(j) => matches!(&body[j], Stmt::Instr(i) if i.guard.is_some()),
            VersionDef::Entry => false,
        };
        merged && matches!(sol.of(*v), Lattice::Const(_))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sccp(body: &str) -> String {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}\n");
        let m = ptx_ir::parse_str(&text).unwrap();
        let ctx = ModuleContext::of_module(&m);
        let ptx_ir::ir::Item::Func(f) = &m.items[0] else { panic!() };
        let g = run(f, &mut Analyses::default(), &ctx, OptLevel::O2).unwrap_or_else(|| (**f).clone());
        let mut m2 = m.clone();
        m2.items[0] = ptx_ir::ir::Item::Func(Box::new(g));
        // One space between words, so that expectations need not spell the printer's tabs.
        ptx_print::print_module(&m2).split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The kernel `sccp` tests wrap `body` in, parsed.
    fn kernel(body: &str) -> Function {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}\n");
        let m = ptx_ir::parse_str(&text).unwrap();
        let ptx_ir::ir::Item::Func(f) = &m.items[0] else { panic!() };
        (**f).clone()
    }

    #[test]
    fn merges_a_constant_agrees_with_counting_every_write() {
        let decls = ".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;";
        let cases = [
            // Two immediate moves to one register (the answer without the walk).
            ("mov.u32 %r1, 1; mov.u32 %r1, 2; ret;", true),
            // One immediate move and another write.
            ("ld.param.u32 %r1, [n]; mov.u32 %r1, 2; ret;", true),
            ("mov.u32 %r1, 2; add.u32 %r1, %r1, 1; ret;", true),
            // One immediate move each, or none.
            ("mov.u32 %r1, 1; mov.u32 %r2, 1; add.u32 %r3, %r1, %r2; ret;", false),
            ("ld.param.u32 %r1, [n]; add.u32 %r1, %r1, 1; ret;", false),
        ];
        for (code, want) in cases {
            let f = kernel(&format!("{decls} {code}"));
            let body = f.body.as_ref().unwrap();
            assert_eq!(merges_a_constant(&f, body), want, "{code}");
            assert_eq!(merges_a_constant_by_writes(&f, body), want, "{code}");
        }
    }

    /// What each statement of `body` computes through [`prepare_step`] (its
    /// shortcuts) and through its shape ([`by_shape`]), for every version
    /// it reads set to each of a few values (constants of 32 bits at most:
    /// `body` has no narrower register but `.pred`s it does not write): the
    /// same, a value that varies and no value being one.
    fn assert_shortcuts_agree(body: &str) {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}\n");
        let m = ptx_ir::parse_str(&text).unwrap();
        let ctx = ModuleContext::of_module(&m);
        let ptx_ir::ir::Item::Func(f) = &m.items[0] else { panic!() };
        let stmts = f.body.as_ref().unwrap();
        let mut analyses = Analyses::default();
        let (cfg, _, view) = analyses.values(f);
        let mut versions = Versions::new(view);
        let steps = Steps::new(stmts, cfg, view, &mut versions);
        PhiInputs::of_needed(stmts, cfg, view, &mut versions, &steps, true);
        let varies = |x: Option<(RegId, Lattice)>| x.map_or(Lattice::Varies, |(_, v)| v);
        for value in [Lattice::Unknown, Lattice::Varies, Lattice::Const(0), Lattice::Const(1), Lattice::Const(0x7fc0_0001)] {
            let sol = Solution { versions: versions.clone(), values: vec![value; versions.count as usize], executable: vec![true; cfg.node_bound()] };
            for step in &steps.list {
                let Stmt::Instr(ins) = &stmts[step.stmt] else { unreachable!() };
                let general = by_shape(f, ins, view, &sol.versions, step.stmt).and_then(|c| c.value(&sol, &ctx));
                let fast = step.computed(&sol, &ctx, || prepare_step(f, ins, view, &sol, &ctx, step.stmt));
                assert_eq!(varies(fast), varies(general), "{ins:?} with its sources {value:?}");
                if let (Some((a, _)), Some((b, Lattice::Const(_)))) = (fast, general) {
                    assert_eq!(a, b, "{ins:?}");
                }
            }
        }
    }

    #[test]
    fn shortcuts_agree_with_the_shape() {
        assert_shortcuts_agree(
            ".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<4>; .reg .f32 %f<3>;
            mov.u32 %r1, %tid.x;
            mov.u64 %rd1, p;
            mov.u32 %r2, 5;
            add.u32 %r3, %r2, %r1;
            mov.u32 %r4, %ctaid.y;
            mov.u32 %r5, %r2;
            mov.b32 %f1, %r3;
            mov.f32 %f2, %f1;
            mov.b64 %rd2, %rd1;
            mov.u32 %r1, %r1;
            ret;",
        );
    }

    /// `%r2` set to 7 in both arms of an `if` on `n`, up to the join.
    const SEVEN_IN_BOTH_ARMS: &str = ".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.param.u32 %r1, [n];
            setp.eq.u32 %p1, %r1, 0;
            @%p1 bra ELSE;
            mov.u32 %r2, 7;
            bra JOIN;
        ELSE:
            mov.u32 %r2, 7;
        JOIN:";

    #[test]
    fn constant_through_a_merge() {
        let out = sccp(&format!("{SEVEN_IN_BOTH_ARMS}
            add.u32 %r3, %r2, 1;
            setp.ne.u32 %p2, %r2, 7;
            @%p2 bra OUT;
            st.global.u32 [%rd1], %r3;
        OUT:
            ret;"));
        assert!(out.contains("mov.b32 %r3, 8;"), "{out}");
        // The branch on a known false is gone; the one on `n` stays.
        assert!(!out.contains("@%p2 bra"), "{out}");
        assert!(out.contains("@%p1 bra"), "{out}");
    }

    #[test]
    fn a_branch_that_cannot_be_taken_does_not_spoil_a_merge() {
        let out = sccp(".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            mov.u32 %r1, 0;
            mov.u32 %r2, 5;
            setp.ne.u32 %p1, %r1, 0;
            @%p1 bra SKIP;
            bra JOIN;
        SKIP:
            mov.u32 %r2, 9;
        JOIN:
            mul.lo.u32 %r3, %r2, 3;
            st.global.u32 [%rd1], %r3;
            ret;");
        assert!(out.contains("mov.b32 %r3, 15;"), "{out}");
        assert!(!out.contains("@%p1"), "{out}");
    }

    #[test]
    fn a_loop_variable_varies() {
        let out = sccp(".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            mov.u32 %r1, 0;
        L:
            add.u32 %r1, %r1, 1;
            setp.lt.u32 %p1, %r1, 10;
            @%p1 bra L;
            st.global.u32 [%rd1], %r1;
            ret;");
        assert!(out.contains("add.u32 %r1, %r1, 1;"), "{out}");
        assert!(out.contains("@%p1 bra L;"), "{out}");
    }

    #[test]
    fn a_loop_invariant_merge_is_constant() {
        // %r2 is 4 on entry and re-set to 4 in the loop: constant at every use.
        let out = sccp(".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.param.u32 %r1, [n];
            mov.u32 %r2, 4;
        L:
            shl.b32 %r3, %r2, 1;
            mov.u32 %r2, 4;
            sub.u32 %r1, %r1, 1;
            setp.ne.u32 %p1, %r1, 0;
            @%p1 bra L;
            st.global.u32 [%rd1], %r3;
            ret;");
        assert!(out.contains("mov.b32 %r3, 8;"), "{out}");
    }

    #[test]
    fn a_varying_source_under_a_known_false_guard_is_not_taken_for_the_value() {
        // The guarded copy reads a register that varies, but its guard is a
        // known false: the statement is evaluated (not skipped as one whose
        // sources vary), and %r2 keeps its 5.
        let out = sccp(".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.param.u32 %r1, [n];
            mov.u32 %r2, 5;
            setp.ne.u32 %p1, %r2, 5;
            @%p1 mov.u32 %r2, %r1;
            add.u32 %r3, %r2, 1;
            st.global.u32 [%rd1], %r3;
            ret;");
        assert!(!out.contains("@%p1"), "{out}");
        assert!(out.contains("mov.b32 %r3, 6;"), "{out}");
    }

    #[test]
    fn a_constant_kept_by_a_guarded_write_through_a_phi_no_read_sees() {
        // No read sees the φ of %r2 at JOIN (its read follows the guarded
        // write there), so the view places it only when asked; the old
        // value the guarded write keeps is that φ, a 7 from both arms.
        let out = sccp(&format!("{SEVEN_IN_BOTH_ARMS}
            @%p1 mov.u32 %r2, 7;
            add.u32 %r3, %r2, 1;
            st.global.u32 [%rd1], %r3;
            ret;"));
        assert!(out.contains("mov.b32 %r3, 8;"), "{out}");
    }

    #[test]
    fn guarded_writes_merge_and_unspecified_results_are_not_constants() {
        let out = sccp(".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.param.u32 %r1, [n];
            setp.eq.u32 %p1, %r1, 0;
            mov.u32 %r2, 1;
            @%p1 mov.u32 %r2, 2;
            add.u32 %r3, %r2, 1;
            mov.u32 %r4, 0;
            mov.u32 %r5, 6;
            div.u32 %r5, %r5, %r4;
            st.global.u32 [%rd1], %r3;
            st.global.u32 [%rd1+4], %r5;
            ret;");
        assert!(out.contains("add.u32 %r3, %r2, 1;"), "{out}");
        assert!(out.contains("div.u32 %r5, %r5, %r4;"), "{out}");
    }
}
