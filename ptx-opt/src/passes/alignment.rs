//! Known alignment of addresses, for `vectorize`: per register version
//! and per function-local variable, as log2 of bytes (at most 4: 16 bytes
//! is all a vector access needs).
//!
//! A version's alignment comes from: a kernel parameter declared
//! `.ptr .align N` (its `ld.param`), a function-local variable's address
//! (its `.align`, else its type's size), and what `cvta`, `mov`, `cvt`
//! between integer widths, `add`/`sub` (the smaller), `mul`/`mad`/`shl` by
//! constants (more zero bits) and `and` with a mask keep of it. Nothing
//! else is assumed.
//!
//! **Found on demand.** A version's alignment is worked out when it is
//! first asked for, from the definitions it depends on only, each once:
//! most functions with a candidate group ask about a few base registers,
//! where every version's alignment was found before (renderer -O2: 33 M
//! host instructions over 76 functions the pass then left unchanged).
//! The answer is [`ValueView::propagate`]'s, which [`Alignment::every`]
//! still computes: definitions are evaluated inputs first, which is what
//! one round of `propagate` does when every definition reads only
//! versions defined before it in the text. When a definition reached
//! reads a version defined after it (blocks laid out out of dominance
//! order), `propagate`'s rounds decide, and every version's alignment is
//! found with it.

use super::memory::{Base, Location, Symbols};
use super::operands::plain_reg;
use crate::values::{ValueView, Version, VersionDef};
use ptx_ir::ir::{AddrBase, Function, Instruction, Name, Operand, RegId, Stmt};
use ptx_ir::isa::{Mod, Opcode, StateSpace, TypeClass};
use rustc_hash::FxHashMap;

const MAX_LOG2: u32 = 4;

/// Only these give an alignment ([`Sources::given`]).
const ALIGNING: &[Opcode] = &[Opcode::LD, Opcode::MOV, Opcode::CVTA, Opcode::CVT, Opcode::ADD, Opcode::SUB, Opcode::MUL, Opcode::MAD, Opcode::SHL, Opcode::AND];

/// log2 of the largest power of two dividing `n`, at most [`MAX_LOG2`]
/// (0 is divisible by all).
pub fn log2_of(n: u64) -> u32 {
    if n == 0 {
        MAX_LOG2
    } else {
        n.trailing_zeros().min(MAX_LOG2)
    }
}

/// What a definition's alignment is made from: the function, its value
/// view, and the alignments of its symbols.
struct Sources<'a> {
    f: &'a Function,
    view: &'a ValueView,
    body: &'a [Stmt],
    syms: FxHashMap<Name, u32>,
    ptr_params: FxHashMap<Name, u32>,
}

impl<'a> Sources<'a> {
    fn of(f: &'a Function, view: &'a ValueView) -> Sources<'a> {
        let mut syms: FxHashMap<Name, u32> = FxHashMap::default();
        let mut ptr_params: FxHashMap<Name, u32> = FxHashMap::default();
        if f.kind == ptx_ir::ir::FuncKind::Entry {
            for d in f.params.iter().flatten() {
                if let Some(a) = d.ptr().and_then(|p| p.align) {
                    ptr_params.extend(d.names.iter().map(|n| (n.name.clone(), log2_of(a))));
                }
            }
        }
        let syms_scope = Symbols::of(f);
        let mut depth = 0usize;
        for s in f.body.iter().flatten() {
            match s {
                Stmt::ScopeBegin => depth += 1,
                Stmt::ScopeEnd => depth = depth.saturating_sub(1),
                // Not `.reg`: a boxed declaration.
                Stmt::Decl(d) if depth == 0 && matches!(d.space(), StateSpace::Local | StateSpace::Shared | StateSpace::Global) => {
                    let Some(d) = d.as_var() else { continue };
                    let natural = (d.ty.bits() as u64 / 8).max(1) * d.vector.unwrap_or(1) as u64;
                    let a = log2_of(d.align().unwrap_or(natural));
                    for n in &d.names {
                        if !syms_scope.is_scoped(&n.name) {
                            syms.insert(n.name.clone(), a);
                        }
                    }
                }
                _ => {}
            }
        }
        Sources { f, view, body: f.body.as_deref().unwrap_or(&[]), syms, ptr_params }
    }

    /// The instruction at `k` if it may give an alignment: reachable, of
    /// an [`ALIGNING`] opcode (the statements `propagate` is asked about).
    fn asked(&self, k: usize) -> Option<&'a Instruction> {
        match &self.body[k] {
            Stmt::Instr(ins) if ALIGNING.contains(&ins.opcode) && self.view.reachable(k) => Some(ins),
            _ => None,
        }
    }

    /// The register statement `k` writes and its alignment, if known;
    /// `known` gives the alignment of a version it reads (0: none).
    fn given(&self, k: usize, ins: &Instruction, known: impl Fn(Version) -> u32) -> Option<(RegId, u32)> {
        let f = self.f;
        let d = ins.operands.first().and_then(|o| plain_reg(f, o, None))?;
        if ins.guard.is_some() {
            return None;
        }
        let of = |o: &Operand| -> u32 {
            match o {
                Operand::Imm(i) => log2_of(ins.ty().map_or(0, |t| ptx_ir::eval::imm_bits(i, t)) as u64),
                Operand::Reg(_) => plain_reg(f, o, None).and_then(|r| self.view.read(k, r)).map_or(0, &known),
                Operand::Sym(s) => self.syms.get(&s.name).map_or(0, |&a| a.min(log2_of(s.offset as u64))),
                _ => 0,
            }
        };
        let src = |i: usize| ins.operands.get(i).map_or(0, of);
        let int_like = |t: &ptx_ir::isa::ScalarType| matches!(t.class(), TypeClass::Signed | TypeClass::Unsigned | TypeClass::Bits);
        let integer = ins.ty().is_some_and(|t| int_like(&t));
        let a = match ins.opcode {
            Opcode::LD if ins.space().base() == StateSpace::Param => match ins.operands.get(1) {
                Some(Operand::Addr(a)) => match &a.base {
                    AddrBase::Sym(n) if a.offset == 0 => self.ptr_params.get(n).copied().unwrap_or(0),
                    _ => 0,
                },
                _ => 0,
            },
            Opcode::MOV | Opcode::CVTA => src(1),
            Opcode::CVT if integer && ins.types().iter().all(int_like) && super::operands::only_types(ins) => src(1),
            Opcode::ADD | Opcode::SUB if integer && ins.operands.len() == 3 && super::operands::only_types(ins) => src(1).min(src(2)),
            Opcode::MUL if integer && ins.operands.len() == 3 && !ins.has(Mod::from_text(".hi")?) => (src(1) + src(2)).min(MAX_LOG2),
            Opcode::MAD if integer && ins.operands.len() == 4 && !ins.has(Mod::from_text(".hi")?) && !ins.has(Mod::from_text(".cc")?) => (src(1) + src(2)).min(MAX_LOG2).min(src(3)),
            Opcode::SHL => match ins.operands.get(2) {
                Some(Operand::Imm(i)) => (src(1) + (ptx_ir::eval::imm_bits(i, ptx_ir::isa::ScalarType::U32) as u32).min(64)).min(MAX_LOG2),
                _ => 0,
            },
            Opcode::AND if integer => src(1).max(src(2)),
            _ => 0,
        };
        (a > 0).then_some((d, a))
    }

    /// Every version's alignment, by [`ValueView::propagate`]'s rounds.
    fn every(&self) -> FxHashMap<Version, u32> {
        self.view.propagate(self.body, ALIGNING, |k, ins, known: &FxHashMap<Version, u32>| self.given(k, ins, |v| known.get(&v).copied().unwrap_or(0)))
    }
}

/// A definition the on-demand search reached reads a version defined
/// after it in the text.
struct OutOfOrder;

/// The known alignments of one function's addresses.
pub struct Alignment<'a> {
    sources: Sources<'a>,
    /// What each definition reached so far gives (see [`Sources::given`]).
    given: FxHashMap<usize, Option<(RegId, u32)>>,
    /// Every version's alignment, once the search met a definition out of
    /// order.
    every: Option<FxHashMap<Version, u32>>,
    /// Whether some version or symbol has a known alignment, once asked.
    any: Option<bool>,
}

impl<'a> Alignment<'a> {
    pub fn of(f: &'a Function, view: &'a ValueView) -> Alignment<'a> {
        Alignment { sources: Sources::of(f, view), given: FxHashMap::default(), every: None, any: None }
    }

    /// Is the alignment of some version or symbol known? (Without any, no
    /// address is proven aligned, and the pass changes nothing.)
    pub fn any(&mut self) -> bool {
        if let Some(any) = self.any {
            return any;
        }
        let any = !self.sources.syms.is_empty() || self.some_version_known();
        self.any = Some(any);
        any
    }

    fn some_version_known(&mut self) -> bool {
        for k in 0..self.sources.body.len() {
            if self.every.is_some() {
                break;
            }
            if self.sources.asked(k).is_none() {
                continue;
            }
            match self.given_at(k) {
                Ok(Some(_)) => return true,
                Ok(None) => {}
                Err(OutOfOrder) => self.every = Some(self.sources.every()),
            }
        }
        self.every.as_ref().is_some_and(|e| !e.is_empty())
    }

    /// The known alignment (log2) of a location's address.
    pub fn of_location(&mut self, at: &Location) -> u32 {
        let base = match &at.base {
            Base::Reg(r, v) => self.version(Version { reg: *r, def: *v }),
            Base::Sym(n) => self.sources.syms.get(n).copied().unwrap_or(0),
            Base::Abs(a) => log2_of(*a),
        };
        base.min(log2_of(at.offset as u64))
    }

    /// The known alignment of version `v` (0: none).
    fn version(&mut self, v: Version) -> u32 {
        if self.every.is_none() {
            let VersionDef::Def(k) = v.def else { return 0 };
            match self.given_at(k) {
                Ok(Some((r, a))) if r == v.reg => return a,
                Ok(_) => return 0,
                Err(OutOfOrder) => self.every = Some(self.sources.every()),
            }
        }
        self.every.as_ref().and_then(|e| e.get(&v).copied()).unwrap_or(0)
    }

    /// What statement `k` gives, its inputs found first (each definition
    /// once, with a stack: chains of definitions can be long).
    fn given_at(&mut self, k: usize) -> Result<Option<(RegId, u32)>, OutOfOrder> {
        let s = &self.sources;
        let mut stack = vec![k];
        while let Some(&j) = stack.last() {
            if self.given.contains_key(&j) {
                stack.pop();
                continue;
            }
            let Some(ins) = s.asked(j) else {
                self.given.insert(j, None);
                stack.pop();
                continue;
            };
            let mut waiting = false;
            for (_, u) in s.view.reads(j) {
                let VersionDef::Def(i) = u.def else { continue };
                if s.asked(i).is_none() {
                    continue;
                }
                // Even when `i` is known already: `propagate` sees `j`
                // before `i` in a round, so its rounds decide `j`.
                if i >= j {
                    return Err(OutOfOrder);
                }
                if !self.given.contains_key(&i) {
                    stack.push(i);
                    waiting = true;
                }
            }
            if waiting {
                continue;
            }
            let given = &self.given;
            let got = s.given(j, ins, |u| match u.def {
                VersionDef::Def(i) => given.get(&i).copied().flatten().filter(|(r, _)| *r == u.reg).map_or(0, |(_, a)| a),
                _ => 0,
            });
            self.given.insert(j, got);
            stack.pop();
        }
        Ok(self.given.get(&k).copied().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_ir::analysis::DomTree;
    use ptx_ir::cfg::Cfg;

    fn with_view(src: &str, check: impl FnOnce(&Function, &ValueView)) {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n{src}");
        let m = ptx_ir::parse_str(&text).unwrap();
        let ptx_ir::ir::Item::Func(f) = &m.items[0] else { panic!() };
        let cfg = Cfg::build(f);
        let dom = DomTree::dominators(&cfg);
        check(f, &ValueView::build(f, &cfg, &dom));
    }

    /// Every version any statement reads has the alignment on demand that
    /// `propagate` gives it, asked in any order, and `any` agrees.
    fn agrees_with_propagate(src: &str) {
        with_view(src, |f, view| {
            let every = Sources::of(f, view).every();
            assert!(!every.is_empty(), "the kernel proves no alignment: nothing is compared");
            let body = f.body.as_deref().unwrap();
            let versions: Vec<Version> = (0..body.len()).flat_map(|k| view.reads(k).iter().map(|(_, v)| *v)).collect();
            for order in [versions.clone(), versions.iter().rev().copied().collect()] {
                let mut lazy = Alignment::of(f, view);
                assert!(lazy.any());
                for v in order {
                    assert_eq!(lazy.version(v), every.get(&v).copied().unwrap_or(0), "{v:?}");
                }
            }
        });
    }

    #[test]
    fn alignment_on_demand_is_propagates() {
        // In layout order: found on demand.
        agrees_with_propagate(
            ".entry k(.param .u64 .ptr .global .align 16 p) { .reg .b64 %rd<9>; .reg .b32 %r<3>; .reg .pred %p;
            ld.param.u64 %rd1, [p];
            cvta.to.global.u64 %rd2, %rd1;
            mov.u32 %r1, %tid.x;
            mul.wide.u32 %rd3, %r1, 16;
            add.s64 %rd4, %rd2, %rd3;
            shl.b64 %rd5, %rd3, 2;
            and.b64 %rd6, %rd4, -8;
            setp.eq.s64 %p, %rd6, 0;
            @%p bra L;
            add.s64 %rd7, %rd4, 4;
            ld.global.u32 %r2, [%rd7];
            L:
            add.s64 %rd8, %rd6, %rd5;
            st.global.u32 [%rd8], %r1;
            ret; }",
        );
        // A definition laid out after its reader: every alignment by
        // `propagate`'s rounds.
        agrees_with_propagate(
            ".entry k(.param .u64 .ptr .global .align 16 p) { .reg .b64 %rd<4>; .reg .b32 %r1;
            ld.param.u64 %rd1, [p];
            bra A;
            B:
            add.s64 %rd3, %rd2, 8;
            st.global.u32 [%rd3], %r1;
            ret;
            A:
            cvta.to.global.u64 %rd2, %rd1;
            bra B; }",
        );
    }
}
