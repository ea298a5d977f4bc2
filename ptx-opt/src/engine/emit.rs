//! Putting the function back: the skeleton in its original order, and each
//! value computed where it is needed ("elaboration").
//!
//! The walk follows the original statements in layout order, remembering
//! where each e-class's value is available:
//!
//! - in a register written once (an original single-definition register, or
//!   a new temporary): wherever the write dominates;
//! - in a register that is rewritten (a physical register, a leaf's home):
//!   only where the original program's register still holds that version
//!   ([`ValueView::version_at`]), since every write the output keeps to an
//!   original register is one the input makes at the same place.
//!
//! A value statement of the input places its class there (its *anchor*:
//! the original schedule is kept, which keeps ptxas's view of the code
//! familiar) if the class is demanded and not already available — a second
//! computation of an available value disappears (GVN), an undemanded one too
//! (dead code). A skeleton read takes the value from wherever it is
//! available, or elaborates it just before. Elaborating a class picks the
//! extracted node if its operands can be had here, else another node of the
//! class whose operands can (the input's own node always can at its anchor).
//! Physical registers get their writes back at their original places.
//!
//! An input statement written back as it was (a skeleton statement whose
//! reads stay, a value statement rebuilt from its own registers and
//! literals) is a marker for that statement ([`Out::Input`]), copied (or
//! moved, out of a function the caller gives up) only when the output is
//! made ([`Rewritten::write`]); when every statement is in its place as it was
//! and no register was made, the walk gives [`Emitted::Unchanged`] and
//! nothing is copied (most functions the engine sees at `-O2`). Whether a
//! value statement is written back so is decided without the general
//! work of elaborating it (`Emitter::written_back_as_it_was`, tested
//! against that work, which debug builds also run and compare at each use).

use super::build::{Built, InputNode, LeafHome, Plan};
use super::extract::Choice;
use super::lang::{Node, DEST};
use crate::values::{ValueView, VersionDef};
use egg::Id;
use petgraph::stable_graph::NodeIndex;
use ptx_ir::analysis::DomTree;
use ptx_ir::cfg::Cfg;
use ptx_ir::ir::{FloatLit, Function, Imm, Instruction, IntLit, Operand, Operands, Radix, RegId, RegOperand, Stmt};
use ptx_ir::isa::{Mod, Opcode, ScalarType, TypeClass};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

/// SASS instructions from which a value computed twice by the input is
/// computed once (see `Emitter::worth_reusing`).
const REUSE_COST: u64 = 8;

/// One statement of the output: the input's statement `k` as it was
/// (copied only when the output is made: a function written back as it was
/// is never copied), or a new one.
enum Out {
    Input(usize),
    New(Stmt),
}

/// What the walk gives.
pub enum Emitted {
    /// Every input statement in its place, as it was, and no new register:
    /// the input itself.
    Unchanged,
    Changed(Rewritten),
}

/// A function the walk changed, before the input's statements are put in
/// ([`Rewritten::write`]): copied from a function the caller keeps, or
/// moved out of one it gives up.
pub struct Rewritten {
    /// The function with the registers the walk made, if it made any
    /// ([`Emitter::new_reg`]).
    made: Option<Function>,
    /// The output of every block, in the order the walk emitted them.
    out: Vec<Out>,
    /// Where each block's output is in `out`, in layout order: the output
    /// is these in turn.
    blocks: Vec<std::ops::Range<u32>>,
    /// The number of statements of the input's body.
    input_len: usize,
}

impl Rewritten {
    /// Makes `f`, the function the walk was given (or one with its header),
    /// the output: its body becomes the output's, and the whole function
    /// the one with the registers the walk made when it made some.
    /// `input(k)` gives the input's statement `k` (a copy, or the statement
    /// itself taken out of a body the caller gives up); it is asked at
    /// most once for each `k`. Gives the number of instructions of the
    /// output (counted as they are written: counted apart, the output was
    /// walked again, its input statements looked up in the input's body).
    pub fn write(mut self, f: &mut Function, mut input: impl FnMut(usize) -> Stmt) -> usize {
        let mut out = std::mem::take(&mut self.out);
        // A body of its own size (collected in place, it would keep the
        // larger allocation of the `Out`s for as long as the module lives).
        let mut body: Vec<Stmt> = Vec::with_capacity(self.blocks.iter().map(|b| b.len()).sum());
        let mut instructions = 0;
        for b in &self.blocks {
            body.extend(out[b.start as usize..b.end as usize].iter_mut().map(|o| {
                let s = match std::mem::replace(o, Out::Input(usize::MAX)) {
                    Out::Input(k) => taken_from_copy(&mut self.made, self.input_len, k).unwrap_or_else(|| input(k)),
                    Out::New(s) => s,
                };
                instructions += matches!(s, Stmt::Instr(_)) as usize;
                s
            }));
        }
        let mut out = body;
        let Some(mut made) = self.made.take() else {
            f.body = Some(out);
            return instructions;
        };
        let mut new_body: Vec<Stmt> = made.body.take().unwrap_or_default();
        let fresh_decls = new_body.len() - self.input_len;
        // A fresh declaration the input had already (an earlier pass made
        // registers of that type) grew in the copy of the body, not in the
        // statements re-emitted from the input: carry its count over.
        let grown: rustc_hash::FxHashMap<ptx_ir::ir::Name, u32> = new_body[fresh_decls..]
            .iter()
            .filter_map(|s| match s {
                Stmt::Decl(d) if d.space() == ptx_ir::isa::StateSpace::Reg && d.name_count() == 1 => d.name(0).and_then(|n| Some((n.name.clone(), n.range?))),
                _ => None,
            })
            .collect();
        for s in &mut out {
            if let Stmt::Decl(d) = s {
                if d.space() == ptx_ir::isa::StateSpace::Reg && d.name_count() == 1 {
                    let counts = d.name(0).and_then(|n| Some((n.range?, *grown.get(n.name)?)));
                    if let (Some((n, m)), Some(mut range)) = (counts, d.range_mut()) {
                        if m > n {
                            range.set(Some(m));
                        }
                    }
                }
            }
        }
        new_body.truncate(fresh_decls);
        new_body.extend(out);
        made.body = Some(new_body);
        *f = made;
        instructions
    }
}

/// The input's statement `k` moved out of the copy of the input's body
/// in `made`, the function the first new register made
/// ([`Emitter::new_reg`]), when there is one and the statement is an
/// instruction (declarations stay: `new_reg` finds and grows its own
/// there); `input_len` is the input body's length.
fn taken_from_copy(made: &mut Option<Function>, input_len: usize, k: usize) -> Option<Stmt> {
    let copy = made.as_mut()?.body.as_mut()?;
    // New declarations go to the top: statement `k` is as many places down.
    let at = k + (copy.len() - input_len);
    if !matches!(copy[at], Stmt::Instr(_)) {
        return None;
    }
    Some(std::mem::replace(&mut copy[at], Stmt::ScopeEnd))
}

/// A position of the output: block, and order within the block's emission.
#[derive(Clone, Copy, Debug)]
struct Point {
    block: NodeIndex,
    seq: u32,
}

/// Where a class's value is.
#[derive(Clone, Copy, Debug)]
struct Avail {
    reg: RegId,
    at: Point,
    /// Valid only while the original register holds this version.
    version: Option<VersionDef>,
}

/// Items recorded per class, by canonical class id, read latest first:
/// an array index instead of a hash map keyed by class, which hashed and
/// probed for every question about a source (the walk on renderer at -O2:
/// 120.2 -> 116.5 M host instructions). Each class's items are a list
/// through one array, the latest first (a list per class, grown in place,
/// cost renderer at -O2 about 3 M more host instructions to record into).
struct ByClass<T> {
    /// Per class id, its latest item in `items`; [`ByClass::NONE`] when
    /// nothing was recorded.
    latest: Vec<u32>,
    /// Every item, with the one recorded before it for its class.
    items: Vec<(T, u32)>,
}

impl<T> ByClass<T> {
    const NONE: u32 = u32::MAX;

    /// For class ids below `bound`, with room for `expected` items.
    fn new(bound: usize, expected: usize) -> ByClass<T> {
        ByClass { latest: vec![Self::NONE; bound], items: Vec::with_capacity(expected) }
    }

    /// What was recorded for the canonical class `class`, the latest first.
    fn latest_first(&self, class: Id) -> impl Iterator<Item = &T> + '_ {
        let mut k = self.latest[usize::from(class)];
        std::iter::from_fn(move || {
            let (item, before) = self.items.get(k as usize)?;
            k = *before;
            Some(item)
        })
    }

    fn push(&mut self, class: Id, item: T) {
        let latest = &mut self.latest[usize::from(class)];
        self.items.push((item, *latest));
        *latest = (self.items.len() - 1) as u32;
    }
}

/// The register type a new temporary of `width` bits gets: bit types fit
/// every instruction of the same size.
fn temp_type(width: u8) -> ScalarType {
    match width {
        1 => ScalarType::Pred,
        16 => ScalarType::B16,
        32 => ScalarType::B32,
        _ => ScalarType::B64,
    }
}

/// May a register of type `have` stand where the input had `want` (same
/// width)? PTX accepts bit types for any type of their size, and signed for
/// unsigned integers.
fn compatible(have: ScalarType, want: ScalarType) -> bool {
    if have == want {
        return true;
    }
    if have.bits() != want.bits() || have == ScalarType::Pred || want == ScalarType::Pred {
        return false;
    }
    let (a, b) = (have.class(), want.class());
    a == TypeClass::Bits || b == TypeClass::Bits || (matches!(a, TypeClass::Signed | TypeClass::Unsigned) && matches!(b, TypeClass::Signed | TypeClass::Unsigned))
}

/// Does PTX take an immediate for source operands of this instruction?
/// Not for the video instructions (ptxas: "Incorrect video selector"),
/// whose forms give their sources lane selectors.
pub fn takes_immediates(ins: &Instruction) -> bool {
    !ins.form.syntax().contains("sel}")
}

/// Does PTX take an immediate for a `width`-bit value of operand type
/// `ty`? [`immediate`] gives one exactly then, whatever the value: the walk
/// asks this where the input's own literal is written back, without
/// making an immediate to drop.
pub fn takes_immediate_of(width: u8, ty: Option<ScalarType>) -> bool {
    let Some(ty) = ty else { return false };
    match ty.class() {
        TypeClass::Float => matches!((ty, width), (ScalarType::F32, 32) | (ScalarType::F64, 64)),
        TypeClass::Bits | TypeClass::Signed | TypeClass::Unsigned => {
            (8..=64).contains(&ty.bits()) && width > 1 && !matches!(ty, ScalarType::U16x2 | ScalarType::S16x2 | ScalarType::S8x4 | ScalarType::U8x4)
        }
        _ => false,
    }
}

/// An immediate for operand type `ty`, when PTX takes one there
/// ([`takes_immediate_of`]).
pub fn immediate(bits: u128, width: u8, ty: Option<ScalarType>) -> Option<Operand> {
    let ty = ty.filter(|_| takes_immediate_of(width, ty))?;
    Some(Operand::Imm(match ty {
        ScalarType::F32 => Imm::Float(FloatLit::F32(bits as u32)),
        ScalarType::F64 => Imm::Float(FloatLit::F64(bits as u64)),
        _ => Imm::Int(int_lit(bits, width)),
    }))
}

/// An integer literal for `bits` of a `width`-bit value: small values in
/// decimal (negative when the sign-extended value is small), others in hex.
pub fn int_lit(bits: u128, width: u8) -> IntLit {
    let v = bits as u64;
    let signed = ptx_ir::eval::sext(bits, width as u32) as i64;
    if v < (1 << 31) {
        IntLit::dec(v as i64)
    } else if (-(1i64 << 31)..0).contains(&signed) {
        IntLit::dec(signed)
    } else {
        IntLit { value: v, radix: Radix::Hex, unsigned: v > i64::MAX as u64, suffix: false }
    }
}

/// `mov.bN d, c` (`mov.pred` for width 1): how a constant of a register's
/// width is written into it.
pub fn const_mov(d: RegId, c: u128, width: u8) -> Option<Instruction> {
    let ty = temp_type(width);
    let src = if width == 1 { Operand::Imm(Imm::Int(IntLit::dec(c as i64 & 1))) } else { Operand::Imm(Imm::Int(int_lit(c, width))) };
    Instruction::new(Opcode::MOV, &[Mod::from_text(ty.text())?], [Operand::reg(d), src]).ok()
}

pub struct Emitter<'a> {
    f: &'a Function,
    costs: &'a dyn super::extract::NodeCost,
    /// `None` until the first new register, then a copy of the input
    /// with the registers made since (see [`Self::new_reg`]).
    made: Option<Function>,
    built: &'a Built,
    choice: &'a Choice,
    view: &'a ValueView,
    cfg: &'a Cfg,
    dom: &'a DomTree,
    /// By canonical class id, whether the skeleton needs the class
    /// (`demanded_classes`, from the roots it is given).
    demanded: Vec<bool>,
    /// Where each class's value is.
    avail: ByClass<Avail>,
    out: Vec<Out>,
    /// The original statement the walk is before.
    here: usize,
    point: Point,
    /// Classes being elaborated (cycle guard).
    in_progress: FxHashSet<Id>,
    /// Memo of "can be elaborated here" for the current statement.
    can_memo: FxHashMap<Id, bool>,
    /// Number of instructions emitted for values.
    pub emitted: usize,
    /// Input instructions written back as they were, by class (to tell a
    /// duplicate the input computes again from a value a rule made equal).
    /// Equal nodes are in one class (the e-graph is rebuilt), so a node is
    /// looked for among its class's only: a set of every node hashed each
    /// one written (renderer at -O2: 7.7 M host instructions).
    ///
    /// Each is kept as its statement's [`InputNode`], compared by its node
    /// ([`Self::same_input`]) when a duplicate is looked for: moving the
    /// node in cost the walk on renderer at -O2 3.5 M host instructions.
    emitted_inputs: ByClass<&'a InputNode>,
    /// The e-graph's classes by id ([`super::facts::classes_by_id`]): egg
    /// finds a class in a hash map, 3.7 M of the walk's 35.6 M host
    /// instructions on matrix_free at -O2.
    classes: Vec<Option<&'a super::facts::EClass>>,
    /// Per shape, [`takes_immediates`] of its instruction once asked (a
    /// search of the form's syntax, 1.5 M host instructions of the walk on
    /// matrix_free at -O2 when asked per operand).
    takes_immediates: Vec<Option<bool>>,
    /// Whether [`Self::written_back_as_it_was`] may decide for
    /// [`Self::elaborate_as_input`]'s general work (off: the reference
    /// the tests compare it against).
    fast_paths: bool,
}

/// The input's instruction of a value statement, to be written back as the
/// input wrote it ([`Emitter::emit_op_with`]).
struct AsInput<'i> {
    input: &'i InputNode,
    /// Per source, the register the input read it from when that register
    /// still holds it here.
    held: SmallVec<[Option<RegId>; 3]>,
}

impl<'a> Emitter<'a> {
    /// `classes` are `built`'s e-graph's classes by id
    /// ([`super::facts::classes_by_id`]).
    pub fn new(f: &'a Function, built: &'a Built, classes: Vec<Option<&'a super::facts::EClass>>, choice: &'a Choice, costs: &'a dyn super::extract::NodeCost, view: &'a ValueView, cfg: &'a Cfg, dom: &'a DomTree, roots: &[Id]) -> Emitter<'a> {
        let demanded = super::demanded_classes(&built.egraph, choice, roots, &classes);
        Emitter {
            f,
            costs,
            made: None,
            built,
            choice,
            view,
            cfg,
            dom,
            demanded,
            out: Vec::new(),
            here: 0,
            point: Point { block: cfg.entry, seq: 0 },
            in_progress: FxHashSet::default(),
            can_memo: FxHashMap::default(),
            emitted: 0,
            emitted_inputs: ByClass::new(classes.len(), built.values),
            avail: ByClass::new(classes.len(), built.values),
            classes,
            takes_immediates: Vec::new(),
            fast_paths: true,
        }
    }

    /// The walk without its fast path ([`Self::written_back_as_it_was`]):
    /// the general work decides every value statement (the reference the
    /// fast path is tested against).
    pub fn without_fast_paths(mut self) -> Emitter<'a> {
        self.fast_paths = false;
        self
    }

    /// A new register, declared (by [`Function::new_reg`]) at the top of a
    /// copy of the input made on the first call: what the fresh names avoid
    /// is read from the whole input then; [`Rewritten::write`] keeps the
    /// declarations added at the top of the copy and takes the input's
    /// instructions out of the rest.
    fn new_reg(&mut self, ty: ScalarType) -> RegId {
        self.made.get_or_insert_with(|| self.f.clone()).new_reg(ty)
    }

    /// The type of register `r` (an input register or a new one).
    fn reg_type(&self, r: RegId) -> ScalarType {
        self.made.as_ref().unwrap_or(self.f).regs[r.0 as usize].ty
    }

    /// The input's statement `k`, for the output: moved out of the body
    /// copy of [`Self::new_reg`] when there is one and it is an instruction
    /// (declarations stay: `new_reg` finds and grows its own there), else
    /// a copy.
    fn input_stmt(&mut self, k: usize) -> Stmt {
        let body = self.f.body.as_deref().unwrap_or(&[]);
        let s = taken_from_copy(&mut self.made, body.len(), k).unwrap_or_else(|| body[k].clone());
        debug_assert!(s == body[k], "the body copy is out of step with the input");
        s
    }

    /// The input's body.
    fn body(&self) -> &'a [Stmt] {
        self.f.body.as_deref().unwrap_or(&[])
    }

    fn eg(&self) -> &'a super::facts::EGraph {
        &self.built.egraph
    }

    fn find(&self, id: Id) -> Id {
        self.built.egraph.find(id)
    }

    /// The class of `id` (`egraph[id]`, from [`Self::classes`]).
    fn class(&self, id: Id) -> &'a super::facts::EClass {
        self.classes[usize::from(self.find(id))].expect("the id of a class")
    }

    /// The value of class `id`, when known exactly.
    fn constant(&self, id: Id) -> Option<u128> {
        self.eg().analysis.constant(self.class(id).data)
    }

    /// Whether PTX takes immediates for the sources of shape `s`'s
    /// instruction ([`takes_immediates`], asked once per shape).
    fn shape_takes_immediates(&mut self, s: super::lang::ShapeId) -> bool {
        let k = s.0 as usize;
        if k >= self.takes_immediates.len() {
            self.takes_immediates.resize(self.eg().analysis.shapes.len().max(k + 1), None);
        }
        *self.takes_immediates[k].get_or_insert_with(|| takes_immediates(&self.built.egraph.analysis.shapes.get(s).ins))
    }

    fn dominates(&self, a: Point, b: Point) -> bool {
        if a.block == b.block {
            a.seq <= b.seq
        } else {
            self.dom.dominates(a.block, b.block)
        }
    }

    /// A register holding `class` here.
    fn available(&self, class: Id) -> Option<RegId> {
        self.available_from(class).map(|(r, _)| r)
    }

    /// Where the input computes a value again that is already available,
    /// is the available one worth reusing? Only for expensive values
    /// (divisions, calls: [`REUSE_COST`] SASS instructions or more). Cheap
    /// ones are computed again as the input does: ptxas does its own CSE,
    /// fuses address arithmetic per use (`LEA` of a sign-extended, shifted
    /// index), and a shared cheap value only lengthens a live range.
    ///
    /// Only a true duplicate is computed again: the same input instruction
    /// on the same values, emitted before. A value that is available because
    /// a rule proved this instruction equal to another (`x + 0` is `x`) is
    /// reused: computing it again would keep the instruction the rule removed.
    fn worth_reusing(&self, class: Id, input: Option<&InputNode>) -> bool {
        let class = self.find(class);
        if self.available(class).is_none() {
            return false;
        }
        // A special register or a symbol's address read again (`mov r,
        // %tid.x`) is read again as the input does: one S2R or MOV either
        // way, and sharing the first read keeps a register live across the
        // kernel (measured: one to three more registers). So is an
        // instruction the rules found equal to one (`add.u64 %rd1, %SPL, 0`
        // stays: ptxas gave two more SASS instructions without it).
        if self.rewritten_as_input(class) {
            return false;
        }
        let duplicate = input.is_some_and(|i| self.emitted_inputs.latest_first(class).any(|e| self.same_input(e, i)));
        if !duplicate {
            // A copy (a `mov`, free in SASS) stays as the input wrote it:
            // propagating it gains nothing after ptxas and only moves its
            // choices; an instruction that costs something is dropped.
            let own = input.map_or(1, |i| self.costs.node_cost(self.eg(), &self.canonical_input(i)));
            return own > 0;
        }
        let cost = self.choice.node(self.eg(), class).map_or(0, |n| self.costs.node_cost(self.eg(), n));
        cost >= REUSE_COST * super::cost::SCALE
    }

    /// Is `class` a special register or a symbol's address (read with a
    /// `mov`), or an address a skeleton `cvta` made from one (NVVM's `%SP`,
    /// the generic address of the local frame)? Where the input computes
    /// such a value again (`mov r, %tid.x` again, `add.u64 %rd1, %SP, 0`),
    /// the instruction is written back as it was: sharing a special
    /// register's first read keeps a register live across the kernel
    /// (measured: one to three registers more), and ptxas treats NVVM's
    /// `add.u64 %rd, %SP, 0` copies of the frame address better than
    /// direct uses of `%SP` (measured: one or two SASS instructions more
    /// without them).
    fn rewritten_as_input(&self, class: Id) -> bool {
        let body = self.f.body.as_deref().unwrap_or(&[]);
        self.class(class).nodes.iter().any(|n| match n {
            Node::Leaf(l) => match &self.built.leaf_homes[l.0 as usize] {
                LeafHome::Materialize { .. } => true,
                LeafHome::Reg { version: VersionDef::Def(k), .. } => matches!(body.get(*k), Some(Stmt::Instr(i)) if i.opcode == Opcode::CVTA),
                LeafHome::Reg { .. } => false,
            },
            _ => false,
        })
    }

    /// The version register `r` holds just before the statement being
    /// walked: the version the statement itself reads when it reads `r`
    /// (the view's per-statement table, a scan of a few entries), else the
    /// view's walk up the dominator tree. Most questions are about the
    /// registers the statement reads (is its source still in its
    /// register?): the walk cost about 700 host instructions a question on
    /// matrix_free.
    fn version_here(&self, r: RegId) -> VersionDef {
        match self.view.read(self.here, r) {
            Some(v) => {
                debug_assert_eq!(v.def, self.view.version_at(r, self.here), "the version a statement reads is not the one its register holds before it");
                v.def
            }
            None => self.view.version_at(r, self.here),
        }
    }

    /// Does register `r` hold `class` here?
    fn holds(&self, r: RegId, class: Id) -> bool {
        let class = self.find(class);
        let valid = |a: &Avail| a.reg == r && self.dominates(a.at, self.point) && a.version.is_none_or(|v| self.version_here(a.reg) == v);
        // Latest first: a class computed again and again (a constant kept
        // in many registers) has a long list, and the register a statement
        // reads was mostly written last (renderer at -O2: 10.2 M host
        // instructions of 14.9 M in this scan, front to back).
        if self.avail.latest_first(class).any(valid) {
            return true;
        }
        self.class(class).nodes.iter().any(|n| match n {
            Node::Leaf(l) => matches!(&self.built.leaf_homes[l.0 as usize], LeafHome::Reg { reg, version } if *reg == r && self.version_here(r) == *version),
            _ => false,
        })
    }

    /// A constant the input computed with an instruction (not a `mov` of
    /// it): the instruction folds away; a register that needs the constant
    /// gets it where it is read.
    fn folded_away(&self, class: Id, input: Option<&InputNode>) -> bool {
        self.constant(class).is_some() && input.is_none_or(|i| self.eg().analysis.shapes.get(i.shape).opcode() != Opcode::MOV)
    }

    /// A `mov` of a constant whose register the input reads: kept as the
    /// input wrote it (its readers, written back as the input wrote them,
    /// read the register; ptxas folds it either way).
    fn kept_constant_copy(&self, k: usize, class: Id, input: Option<&InputNode>) -> bool {
        self.constant(class).is_some() && input.is_some_and(|i| self.eg().analysis.shapes.get(i.shape).opcode() == Opcode::MOV) && self.view.is_read(k)
    }

    /// Are two input nodes one node (their [`Self::canonical_input`]s
    /// equal)? Compared without making them.
    fn same_input(&self, a: &InputNode, b: &InputNode) -> bool {
        a.shape == b.shape && a.sources.len() == b.sources.len() && a.sources.iter().zip(&b.sources).all(|((x, _), (y, _))| self.find(*x) == self.find(*y))
    }

    /// An input node with canonical children.
    fn canonical_input(&self, i: &InputNode) -> Node {
        let mut kids: SmallVec<[Id; 3]> = SmallVec::new();
        for &(k, _) in &i.sources {
            kids.push(self.find(k));
        }
        Node::Op(i.shape, kids)
    }

    /// A register holding `class` here, and the block it was written in
    /// (`None` for a leaf at home).
    fn available_from(&self, class: Id) -> Option<(RegId, Option<NodeIndex>)> {
        let class = self.find(class);
        for a in self.avail.latest_first(class) {
            if !self.dominates(a.at, self.point) {
                continue;
            }
            match a.version {
                Some(ver) if self.version_here(a.reg) != ver => continue,
                _ => return Some((a.reg, Some(a.at.block))),
            }
        }
        // A leaf at home.
        for n in &self.class(class).nodes {
            if let Node::Leaf(l) = n {
                if let LeafHome::Reg { reg, version } = &self.built.leaf_homes[l.0 as usize] {
                    if self.version_here(*reg) == *version {
                        return Some((*reg, None));
                    }
                }
            }
        }
        None
    }

    fn record(&mut self, class: Id, reg: RegId, version: Option<VersionDef>) {
        let class = self.find(class);
        let at = self.point;
        self.avail.push(class, Avail { reg, at, version });
    }

    fn push(&mut self, s: Stmt) {
        self.out.push(Out::New(s));
        self.point.seq += 1;
    }

    /// Writes the input's statement `k` as it was.
    fn push_input(&mut self, k: usize) {
        self.out.push(Out::Input(k));
        self.point.seq += 1;
    }

    /// Can `class` be had here (available, constant, or computable from what is)?
    fn can(&mut self, class: Id) -> bool {
        let class = self.find(class);
        if let Some(&b) = self.can_memo.get(&class) {
            return b;
        }
        if self.constant(class).is_some() || self.available(class).is_some() {
            self.can_memo.insert(class, true);
            return true;
        }
        if !self.in_progress.insert(class) {
            return false;
        }
        let mut ok = false;
        for n in &self.class(class).nodes {
            ok = match n {
                Node::Leaf(l) => matches!(self.built.leaf_homes[l.0 as usize], LeafHome::Materialize { .. }),
                Node::Const { .. } => true,
                Node::Op(_, kids) => kids.iter().all(|k| self.can(*k)),
            };
            if ok {
                break;
            }
        }
        self.in_progress.remove(&class);
        self.can_memo.insert(class, ok);
        ok
    }

    /// Node indices of `class` to try, the extracted one first.
    fn candidates(&self, class: Id) -> SmallVec<[usize; 4]> {
        let mut v: SmallVec<[usize; 4]> = SmallVec::new();
        if let Some(k) = self.choice.index(class) {
            v.push(k);
        }
        for k in 0..self.class(class).nodes.len() {
            if !v.contains(&k) {
                v.push(k);
            }
        }
        v
    }

    /// Puts `class` in a register here, writing it into `into` when given
    /// (the caller records availability of `into`). Gives the register.
    fn elaborate(&mut self, class: Id, into: Option<RegId>) -> Option<RegId> {
        self.elaborate_here(class, into, false)
    }

    /// [`Self::elaborate`]; with `fresh`, computes the value again even if
    /// it is available (its operands may still be reused).
    fn elaborate_here(&mut self, class: Id, into: Option<RegId>, fresh: bool) -> Option<RegId> {
        let class = self.find(class);
        let width = self.class(class).data.width();
        let constant = self.constant(class);
        if fresh {
        } else if into.is_none() {
            if let Some(r) = self.available(class) {
                return Some(r);
            }
        } else if let (Some(r), None) = (self.available(class), constant) {
            // The value is at hand: copy it (constants are written afresh).
            let d = into.unwrap();
            if r != d {
                self.copy(d, r);
            }
            return Some(d);
        }
        if let Some(c) = constant {
            // Written where it is read, every time: a constant kept in one
            // register for the whole function only lengthens a live range
            // (measured: a folded predicate shared by four readers cost two
            // registers); ptxas folds a `mov` of a constant into its reader.
            let d = into.unwrap_or_else(|| self.new_reg(temp_type(width)));
            self.materialize_const(d, c, width);
            return Some(d);
        }
        if !self.in_progress.insert(class) {
            return None;
        }
        let mut result = None;
        for k in self.candidates(class) {
            let n = self.class(class).nodes[k].clone();
            match &n {
                Node::Leaf(l) => {
                    if let LeafHome::Materialize { ty, operand } = self.built.leaf_homes[l.0 as usize].clone() {
                        let d = into.unwrap_or_else(|| self.new_reg(temp_type(width)));
                        let ins = Instruction::new(Opcode::MOV, &[Mod::from_text(ty.text()).unwrap()], [Operand::reg(d), operand]).ok()?;
                        self.push(Stmt::Instr(Box::new(ins)));
                        self.emitted += 1;
                        result = Some(d);
                        break;
                    }
                }
                Node::Const { .. } => {}
                Node::Op(s, kids) => {
                    if !kids.iter().all(|k| self.can(*k)) {
                        continue;
                    }
                    if let Some(d) = self.emit_op(*s, kids, into, width) {
                        result = Some(d);
                        break;
                    }
                }
            }
        }
        self.in_progress.remove(&class);
        if let (Some(d), None) = (result, into) {
            self.record(class, d, None);
        }
        result
    }

    /// What computing `class` here costs with its chosen node (operands at
    /// hand are free), in cost units; bounded in depth.
    fn cost_here(&mut self, class: Id, depth: u32) -> u64 {
        let class = self.find(class);
        if self.available(class).is_some() || self.constant(class).is_some() {
            return 0;
        }
        let Some(n) = self.choice.node(self.eg(), class) else { return u64::MAX / 8 };
        let n = n.clone();
        self.node_cost_here(&n, depth)
    }

    fn node_cost_here(&mut self, n: &Node, depth: u32) -> u64 {
        let own = self.costs.node_cost(self.eg(), n);
        if depth == 0 {
            return own;
        }
        let kids: SmallVec<[Id; 4]> = egg::Language::children(n).iter().copied().collect();
        kids.iter().fold(own, |a, k| a.saturating_add(self.cost_here(*k, depth - 1)))
    }

    /// Writes the input's own instruction for `class` into `into` when it
    /// can be had here and costs no more than the chosen node: equal cost
    /// keeps the input as it was. Gives the register written.
    fn elaborate_as_input(&mut self, class: Id, input: Option<&'a InputNode>, into: Option<RegId>) -> Option<RegId> {
        let input = input?;
        let class = self.find(class);
        if let Some(d) = into.filter(|_| self.fast_paths) {
            if self.written_back_as_it_was(class, input, d) {
                if cfg!(debug_assertions) {
                    // The general work, which must come to the same.
                    let (len, emitted) = (self.out.len(), self.emitted);
                    let r = self.elaborate_as_input_generally(class, input, into);
                    let here = self.here;
                    debug_assert!(r == Some(d) && self.out.len() == len + 1 && matches!(self.out.last(), Some(Out::Input(k)) if *k == here) && self.emitted == emitted + 1, "the fast path writes back statement {here} as it was, the general work does not");
                    return r;
                }
                self.push_input(self.here);
                self.emitted += 1;
                self.emitted_inputs.push(class, input);
                return Some(d);
            }
        }
        self.elaborate_as_input_generally(class, input, into)
    }

    /// Does [`Self::elaborate_as_input`] write the input's instruction of
    /// the statement being walked back as it was, into its own register
    /// `dest` (most value statements)? Decided without its general work
    /// (the sources' nodes and registers collected, `can`, the instruction
    /// rebuilt source by source in `emit_op_with`); `false` leaves the
    /// decision to it. `class` is canonical.
    ///
    /// It is that statement exactly when every source is either read from
    /// a register that holds it here and that the operand takes as it is
    /// (`coerce` keeps it), or the input's literal of a constant that PTX
    /// takes as an immediate there; the destination register takes the
    /// written type; and the chosen node is the input's own, or costs no
    /// less than it (`costs_more_here` with every source at hand).
    fn written_back_as_it_was(&mut self, class: Id, input: &'a InputNode, dest: RegId) -> bool {
        let shape = self.eg().analysis.shapes.get(input.shape);
        if shape.dest_ty.is_some_and(|t| !(compatible(self.reg_type(dest), t) || t.bits() < self.reg_type(dest).bits())) {
            return false;
        }
        let chosen = self.choice.index(class).map(|k| &self.class(class).nodes[k]);
        // Whether the chosen node is the input's own (its children are
        // canonical: the e-graph is rebuilt).
        let mut chosen_is_mine = match chosen {
            None => true,
            Some(Node::Op(s, kids)) => *s == input.shape && kids.len() == input.sources.len(),
            Some(_) => false,
        };
        for (k, &(kid, r)) in input.sources.iter().enumerate() {
            let kid = self.find(kid);
            if let Some(Node::Op(_, kids)) = chosen {
                chosen_is_mine &= kids.get(k) == Some(&kid);
            }
            let src = &shape.sources[k];
            let as_it_was = match r {
                // Read from its register, taken as it is (see `coerce`).
                Some(r) => self.holds(r, kid) && src.ty.is_none_or(|want| {
                    let have = self.reg_type(r);
                    compatible(have, want) || want.bits() != have.bits()
                }),
                // The input's literal of a constant, an immediate there.
                None => {
                    self.constant(kid).is_some()
                        && input.has_literal(k)
                        && matches!(src.prefix, ptx_ir::ir::Prefix::None)
                        && !src.in_vector
                        && src.sel.is_none()
                        && takes_immediate_of(self.class(kid).data.width(), src.ty)
                        && self.shape_takes_immediates(input.shape)
                }
            };
            if !as_it_was {
                return false;
            }
        }
        match chosen {
            Some(c) if !chosen_is_mine => {
                // Every source at hand: the input's node costs its own node
                // only; dearer than the chosen node, the general work decides.
                let mine = Node::Op(input.shape, input.sources.iter().map(|(kid, _)| self.find(*kid)).collect());
                self.costs.node_cost(self.eg(), &mine) <= self.costs.node_cost(self.eg(), c)
            }
            _ => true,
        }
    }

    /// [`Self::elaborate_as_input`]'s general work (`class` canonical).
    fn elaborate_as_input_generally(&mut self, class: Id, input: &'a InputNode, into: Option<RegId>) -> Option<RegId> {
        // Each source's canonical class, and the input's register for it
        // when that register holds it here. (Nothing the walk writes here
        // goes into an input register: what an input register holds stays
        // so for the whole statement.) Pushed one by one: collected, each
        // list cost a `SmallVec::extend`.
        let mut kids: SmallVec<[Id; 3]> = SmallVec::new();
        let mut held: SmallVec<[Option<RegId>; 3]> = SmallVec::new();
        for &(k, r) in &input.sources {
            let k = self.find(k);
            kids.push(k);
            held.push(r.filter(|r| self.holds(*r, k)));
        }
        // A source its register holds can be had (`can` says so, the
        // register holding it being available).
        debug_assert!(kids.iter().zip(&held).all(|(k, h)| h.is_none() || self.available(*k).is_some()), "a source held in its register is not available");
        if !kids.iter().zip(&held).all(|(k, h)| h.is_some() || self.can(*k)) {
            return None;
        }
        let mine = Node::Op(input.shape, kids);
        let eclass = self.class(class);
        // A value equal to a special register or symbol address is written
        // as the input wrote it (see `worth_reusing`), whatever it costs.
        if let Some(c) = self.choice.index(class).map(|k| &eclass.nodes[k]) {
            if *c != mine && !self.rewritten_as_input(class) && self.costs_more_here(&mine, &held, c) {
                return None;
            }
        }
        let width = eclass.data.width();
        let r = self.emit_op_with(input.shape, egg::Language::children(&mine), into, width, Some(&AsInput { input, held }));
        if r.is_some() {
            debug_assert_eq!(self.eg().lookup(mine.clone()).map(|c| self.find(c)), Some(class), "an input's node is not in its statement's class");
            self.emitted_inputs.push(class, input);
        }
        r
    }

    /// Does the input's node `mine` cost more here than the chosen node
    /// `chosen` ([`Self::node_cost_here`], three levels deep)? `held` says
    /// which of its sources their registers hold here.
    fn costs_more_here(&mut self, mine: &Node, held: &[Option<RegId>], chosen: &Node) -> bool {
        // With every source at hand (held, or a constant) `mine` costs its
        // own node only, and no node costs less than its own node.
        let at_hand = egg::Language::children(mine).iter().zip(held).all(|(k, h)| h.is_some() || self.constant(*k).is_some());
        if at_hand && self.costs.node_cost(self.eg(), mine) <= self.costs.node_cost(self.eg(), chosen) {
            debug_assert!(self.node_cost_here(mine, 3) <= self.node_cost_here(chosen, 3), "the input's node with its sources at hand costs more than its own node");
            return false;
        }
        self.node_cost_here(mine, 3) > self.node_cost_here(chosen, 3)
    }

    /// Emits one node's instruction.
    fn emit_op(&mut self, s: super::lang::ShapeId, kids: &[Id], into: Option<RegId>, width: u8) -> Option<RegId> {
        self.emit_op_with(s, kids, into, width, None)
    }

    /// [`Self::emit_op`]; with `as_input`, the input's instruction is written
    /// back as the input wrote it: an operand read from a register that
    /// still holds its value reads that register (not another copy of the
    /// value, which would lengthen that copy's live range), and a constant
    /// the input read from a register is read from a register holding it
    /// when there is one.
    fn emit_op_with(&mut self, s: super::lang::ShapeId, kids: &[Id], into: Option<RegId>, width: u8, as_input: Option<&AsInput>) -> Option<RegId> {
        let shape = self.eg().analysis.shapes.get(s);
        // Whether the instruction is the input's statement here as it was:
        // written into the input's register (`into`, given only for the
        // statement being walked), every source the input's register or
        // literal (the shape is the input's template, so the rest is too).
        let mut same = as_input.is_some() && into.is_some();
        // Operands first (they may emit instructions). While `same` holds,
        // the sources are the input's own registers and literals and are
        // not written into `srcs` (the instruction is the input's, and
        // most are: the walk on renderer at -O2 went from 116.5 to 113.0 M
        // host instructions without building and dropping them);
        // `input_sources` writes them when it stops holding.
        let mut srcs: Operands = SmallVec::new();
        for (k, kid) in kids.iter().enumerate() {
            let src = shape.sources[k];
            let own = as_input.and_then(|w| w.held[k]);
            if let Some(r) = own {
                let coerced = self.coerce(r, src.ty, *kid)?;
                same &= coerced == r;
                if !same {
                    input_sources(&mut srcs, self.body(), shape, as_input, k);
                    srcs.push(Operand::Reg(RegOperand { reg: coerced, prefix: src.prefix, sel: None }));
                }
                continue;
            }
            let kd = self.class(*kid).data;
            let constant = self.eg().analysis.constant(kd);
            // Asked only where it decides something: a constant operand.
            let from_register = constant.is_some() && as_input.is_some_and(|w| !w.input.has_literal(k)) && self.available(*kid).is_some();
            // Whether the constant is written as an immediate (made only
            // when it is not the input's own literal).
            let imm = match (constant, src.prefix) {
                _ if from_register => None,
                (Some(c), ptx_ir::ir::Prefix::None) if !src.in_vector && src.sel.is_none() && self.shape_takes_immediates(s) && takes_immediate_of(kd.width(), src.ty) => Some(c),
                _ => None,
            };
            // The input's literal as written (an operand the input wrote as
            // an immediate is the class of that constant).
            let literal = as_input.filter(|_| imm.is_some()).and_then(|w| w.input.literal(self.body(), k));
            let op = match (imm, literal) {
                (Some(_), Some(_)) if same => continue,
                (Some(_), Some(l)) => Operand::Imm(l.clone()),
                (Some(c), None) => {
                    same = false;
                    immediate(c, kd.width(), src.ty).expect("an immediate where PTX takes one")
                }
                (None, _) => {
                    same = false;
                    let r = self.elaborate(*kid, None)?;
                    let r = self.coerce(r, src.ty, *kid)?;
                    Operand::Reg(RegOperand { reg: r, prefix: src.prefix, sel: None })
                }
            };
            input_sources(&mut srcs, self.body(), shape, as_input, k);
            srcs.push(op);
        }
        let d = match into {
            Some(d) if shape.dest_ty.is_none_or(|t| compatible(self.reg_type(d), t) || t.bits() < self.reg_type(d).bits()) => d,
            Some(_) => return None,
            None => self.new_reg(temp_type(width)),
        };
        if same && !cfg!(debug_assertions) {
            self.push_input(self.here);
            self.emitted += 1;
            return Some(d);
        }
        input_sources(&mut srcs, self.body(), shape, as_input, kids.len());
        // The shape's instruction with its placeholders filled in.
        let mut srcs = srcs.into_iter();
        let mut fill = |o: &Operand| match o {
            Operand::Reg(r) if r.reg == DEST => Operand::reg(d),
            Operand::Reg(r) => {
                let mut new = srcs.next().expect("a source per placeholder");
                if let (Operand::Reg(n), Some(sel)) = (&mut new, r.sel) {
                    n.sel = Some(sel);
                }
                new
            }
            o => o.clone(),
        };
        let operands = shape
            .ins
            .operands
            .iter()
            .map(|o| match o {
                Operand::Vector(v) => Operand::Vector(v.iter().map(&mut fill).collect()),
                o => fill(o),
            })
            .collect();
        let ins = Instruction { guard: shape.ins.guard, opcode: shape.ins.opcode, form: shape.ins.form, mods: shape.ins.mods.clone(), operands };
        if same {
            // Checked with debug assertions only (elsewhere not built).
            debug_assert!(matches!(&self.f.body.as_deref().unwrap_or(&[])[self.here], Stmt::Instr(i) if **i == ins), "an input instruction written back differs from the input: {ins:?}");
            self.push_input(self.here);
        } else {
            self.push(Stmt::Instr(Box::new(ins)));
        }
        self.emitted += 1;
        Some(d)
    }

    /// A register of a type acceptable for operand type `want`; bit-casts
    /// through a `mov` when the register's type is not (into a register of
    /// the width of `class`, the value's class: looked up only then, most
    /// registers being acceptable as they are).
    fn coerce(&mut self, r: RegId, want: Option<ScalarType>, class: Id) -> Option<RegId> {
        let have = self.reg_type(r);
        let Some(want) = want else { return Some(r) };
        // A register wider than the operand type is read as the input read it.
        if compatible(have, want) || want.bits() != have.bits() {
            return Some(r);
        }
        let t = self.new_reg(temp_type(self.class(class).data.width()));
        self.copy(t, r);
        Some(t)
    }

    /// `mov.bN d, s` (or `mov.pred`).
    fn copy(&mut self, d: RegId, s: RegId) {
        let ty = self.reg_type(d);
        let mty = match ty {
            ScalarType::Pred => ScalarType::Pred,
            t => temp_type(t.bits() as u8),
        };
        if let Ok(ins) = Instruction::new(Opcode::MOV, &[Mod::from_text(mty.text()).unwrap()], [Operand::reg(d), Operand::reg(s)]) {
            self.push(Stmt::Instr(Box::new(ins)));
            self.emitted += 1;
        }
    }

    fn materialize_const(&mut self, d: RegId, c: u128, width: u8) {
        if let Some(ins) = const_mov(d, c, width) {
            self.push(Stmt::Instr(Box::new(ins)));
            self.emitted += 1;
        }
    }

    /// Runs the walk and gives the new function; `None` if the chosen
    /// program cannot be written back.
    pub fn run(mut self) -> Option<Emitted> {
        let body = self.f.body.as_deref()?;
        // Blocks are emitted dominators first (a value placed in a block is
        // available in the blocks it dominates, wherever they are laid out),
        // one after the other into one list; the output is their parts of
        // it in layout order (a list per block, filled, concatenated and
        // dropped, was 2.2 M host instructions on matrix_free at -O2).
        let mut order: Vec<NodeIndex> = Vec::with_capacity(self.cfg.layout.len());
        let mut stack = vec![self.cfg.entry];
        while let Some(b) = stack.pop() {
            order.push(b);
            stack.extend(self.dom.children(b).iter().rev().copied());
        }
        order.extend(self.cfg.layout.iter().copied().filter(|b| !self.dom.contains(*b)));
        let mut spans: Vec<std::ops::Range<u32>> = vec![0..0; self.cfg.node_bound()];
        // Room for the body as it was: most bodies come out as long.
        self.out.reserve_exact(body.len());
        for b in order {
            let start = self.out.len() as u32;
            self.point = Point { block: b, seq: 0 };
            let reachable = self.dom.contains(b);
            for k in self.cfg.block(b).stmts.clone() {
                self.here = k;
                self.can_memo.clear();
                let stmt = &body[k];
                if !reachable {
                    self.push_input(k);
                    continue;
                }
                match &self.built.plans[k] {
                    Plan::Keep => self.push_input(k),
                    Plan::Value { class, dest, physical, input } => {
                        let (class, dest, physical) = (*class, *dest, *physical);
                        if physical {
                            // A special register or symbol address is read
                            // again as the input reads it, not copied from
                            // an earlier read (see `rewritten_as_input`).
                            if self.elaborate_as_input(class, input.as_ref(), Some(dest)).is_none() {
                                let again = input.is_none() && super::build::is_materialized(&self.built.leaf_homes, self.eg(), self.find(class));
                                self.elaborate_here(class, Some(dest), again)?;
                            }
                            // The register holds this version from here on.
                            self.record_after(class, dest, VersionDef::Def(k));
                        } else if (self.demanded[usize::from(self.find(class))] || self.kept_constant_copy(k, class, input.as_ref())) && !self.worth_reusing(class, input.as_ref()) && !self.folded_away(class, input.as_ref()) {
                            // A value the input computes again here is computed
                            // again (see `worth_reusing`).
                            // The value goes into the input's register, written
                            // here as the input writes it: a register written
                            // only here holds it wherever this point dominates,
                            // one written again holds it while the input's
                            // register holds this version.
                            let version = if self.view.reg(dest).defs.len() == 1 { None } else { Some(VersionDef::Def(k)) };
                            if self.elaborate_as_input(class, input.as_ref(), Some(dest)).is_some() || self.elaborate_here(class, Some(dest), true).is_some() {
                                self.record(class, dest, version);
                            } else if let Some(t) = self.elaborate_as_input(class, input.as_ref(), None) {
                                self.record(class, t, None);
                            } else {
                                self.elaborate_here(class, None, true)?;
                            }
                        }
                    }
                    Plan::Skeleton { reads } => {
                        let Stmt::Instr(input) = stmt else { return None };
                        let mut map: SmallVec<[(RegId, RegId); 4]> = SmallVec::new();
                        for &(r, class) in reads.iter() {
                            // The register the input reads, when it holds the value here.
                            let have = if self.holds(r, class) { r } else { self.elaborate(class, None)? };
                            if have != r {
                                let got = self.reg_type(have);
                                let fits = read_types(self.f, input, r).iter().all(|t| compatible(got, *t));
                                let have = if fits { have } else { self.cast_to(have, self.f.regs[r.0 as usize].ty)? };
                                map.push((r, have));
                            }
                        }
                        if map.is_empty() {
                            self.push_input(k);
                        } else {
                            let Stmt::Instr(mut ins) = self.input_stmt(k) else { return None };
                            replace_reads(&mut ins, &map);
                            self.push(Stmt::Instr(ins));
                        }
                    }
                }
            }
            spans[b.index()] = start..self.out.len() as u32;
        }
        let blocks: Vec<std::ops::Range<u32>> = self.cfg.layout.iter().map(|b| spans[b.index()].clone()).collect();
        // (A new statement equal to the input's there, such as the `mov` of
        // a special register written again, is that statement; so is an
        // input statement equal to the one it stands in place of.)
        let same = |(i, o): (usize, &Out)| match o {
            Out::Input(k) => *k == i || body[*k] == body[i],
            Out::New(s) => *s == body[i],
        };
        let len: usize = blocks.iter().map(|b| b.len()).sum();
        if self.made.is_none() && len == body.len() && blocks.iter().flat_map(|b| &self.out[b.start as usize..b.end as usize]).enumerate().all(same) {
            return Some(Emitted::Unchanged);
        }
        Some(Emitted::Changed(Rewritten { made: self.made, out: self.out, blocks, input_len: body.len() }))
    }

    /// After a physical write at the current statement, the register holds `class`.
    fn record_after(&mut self, class: Id, reg: RegId, version: VersionDef) {
        // Valid from the next statement on, where version_at gives `version`.
        self.record(class, reg, Some(version));
    }

    /// A copy of `r` in a register of type `want` (same width).
    fn cast_to(&mut self, r: RegId, want: ScalarType) -> Option<RegId> {
        let t = self.new_reg(temp_type(if want == ScalarType::Pred { 1 } else { want.bits() as u8 }));
        self.copy(t, r);
        Some(t)
    }
}

/// Writes into `srcs` the sources before source `upto` it does not have:
/// those [`Emitter::emit_op_with`] left out while the instruction was the
/// input's, each the register the input read it from (`held`) or the
/// literal it wrote.
fn input_sources(srcs: &mut Operands, body: &[Stmt], shape: &super::lang::Shape, as_input: Option<&AsInput>, upto: usize) {
    let Some(w) = as_input else { return };
    for k in srcs.len()..upto {
        let op = match w.held[k] {
            Some(reg) => Operand::Reg(RegOperand { reg, prefix: shape.sources[k].prefix, sel: None }),
            None => Operand::Imm(w.input.literal(body, k).expect("a source the input wrote as a literal").clone()),
        };
        srcs.push(op);
    }
}

/// `f` without its body (`None`): everything else cloned.
pub fn without_body(f: &Function) -> Function {
    Function {
        linkage: f.linkage.clone(),
        kind: f.kind,
        attributes: f.attributes.clone(),
        ret: f.ret.clone(),
        name: f.name.clone(),
        params: f.params.clone(),
        directives: f.directives.clone(),
        regs: f.regs.clone(),
        labels: f.labels.clone(),
        body: None,
        fresh: f.fresh.clone(),
    }
}

/// The types a register read by `ins` must be compatible with: the operand
/// types of the positions reading it (an address base: any integer of its
/// width), `.pred` for a guard, and the register's own declared type.
fn read_types(f: &Function, ins: &Instruction, r: RegId) -> SmallVec<[ScalarType; 4]> {
    let reg_ty = f.regs[r.0 as usize].ty;
    let mut v: SmallVec<[ScalarType; 4]> = SmallVec::new();
    v.push(reg_ty);
    if ins.guard.is_some_and(|g| g.reg == r) {
        v.push(ScalarType::Pred);
    }
    for (k, o) in ins.operands.iter().enumerate() {
        let mut regs: SmallVec<[RegId; 4]> = SmallVec::new();
        if let Operand::Addr(a) = o {
            // An address register is an integer (or bits) of its width.
            if a.base == ptx_ir::ir::AddrBase::Reg(r) {
                v.push(if reg_ty.bits() == 64 { ScalarType::U64 } else { ScalarType::U32 });
            }
            continue;
        }
        o.regs(&mut regs);
        if regs.contains(&r) {
            if let Some(t) = ins.operand_type(k) {
                if t.bits() == reg_ty.bits() || t == ScalarType::Pred {
                    v.push(t);
                }
            }
        }
    }
    v
}

/// Replaces the rewritable reads of registers (plain sources, vector
/// elements, address bases, the guard) by `map`.
fn replace_reads(ins: &mut Instruction, map: &[(RegId, RegId)]) {
    let get = |r: RegId| map.iter().find(|(a, _)| *a == r).map(|(_, b)| *b);
    if let Some(g) = &mut ins.guard {
        if let Some(n) = get(g.reg) {
            g.reg = n;
        }
    }
    let specs = ins.form.operands();
    for (k, o) in ins.operands.iter_mut().enumerate() {
        let (read, write) = specs.get(k).map_or((true, false), |s| (s.read, s.write));
        if write {
            continue;
        }
        match o {
            Operand::Reg(r) if read && r.sel.is_none() => {
                if let Some(n) = get(r.reg) {
                    r.reg = n;
                }
            }
            Operand::Vector(v) if read => {
                let mut elems: Vec<Operand> = v.to_vec();
                for e in elems.iter_mut() {
                    if let Operand::Reg(r) = e {
                        if r.sel.is_none() {
                            if let Some(n) = get(r.reg) {
                                r.reg = n;
                            }
                        }
                    }
                }
                *o = Operand::Vector(elems.into());
            }
            Operand::Addr(a) => {
                if let ptx_ir::ir::AddrBase::Reg(r) = &mut a.base {
                    if let Some(n) = get(*r) {
                        *r = n;
                    }
                }
            }
            _ => {}
        }
    }
}
