//! Editing a function body in place: a cursor that walks the statements and
//! inserts, replaces and removes at its position in O(1), so a pass over a
//! body of any size costs O(body) however many edits it makes.
//!
//! The body is held as a gap buffer: the statements before the cursor in a
//! `Vec`, the current one and those after it in a `VecDeque`. Moving the
//! cursor by one moves one statement across the gap; the body is put back
//! together when the cursor is dropped.

use super::fresh::{self, Body};
use super::{Function, Instruction, LabelId, Reg, RegId, Stmt};
use crate::isa::ScalarType;
use std::collections::VecDeque;

/// A position in a function body, with the edits a pass needs (in the
/// manner of Cranelift's `FuncCursor`).
///
/// The cursor is either *at* a statement (the current one) or *between* two
/// (at the start, at the end, or where a statement was just removed).
/// [`FuncCursor::next`] moves to the next statement and returns it:
///
/// ```
/// use ptx_ir::ir::{Item, Stmt};
/// use ptx_ir::isa::Opcode;
/// let mut m = ptx_ir::parse_str(".version 8.0\n.target sm_80\n.address_size 64\n\
///     .visible .entry k() { .reg .b32 %r<3>; mov.u32 %r1, 1; mov.u32 %r2, %r1; ret; }").unwrap();
/// let Item::Func(f) = &mut m.items[0] else { unreachable!() };
/// let mut cur = f.cursor();
/// while let Some(s) = cur.next() {
///     if matches!(s, Stmt::Instr(i) if i.opcode == Opcode::MOV) {
///         cur.remove();
///     }
/// }
/// drop(cur);
/// assert_eq!(f.instructions().count(), 1);
/// ```
///
/// Statements inserted after the current one are visited by later calls to
/// `next`; statements inserted before it are not.
pub struct FuncCursor<'f> {
    func: &'f mut Function,
    gap: Gap,
    /// The function had a body (a declaration is edited as an empty body and
    /// stays a declaration if nothing is inserted).
    had_body: bool,
}

/// The body split at the cursor.
struct Gap {
    /// Statements before the cursor, in order.
    done: Vec<Stmt>,
    /// The current statement (when `at`) and the ones after it, in order.
    rest: VecDeque<Stmt>,
    /// The cursor is at `rest[0]`; otherwise between `done` and `rest`.
    at: bool,
}

impl Body for Gap {
    fn len(&self) -> usize {
        self.done.len() + self.rest.len()
    }
    fn stmt(&self, i: usize) -> Option<&Stmt> {
        if i < self.done.len() {
            self.done.get(i)
        } else {
            self.rest.get(i - self.done.len())
        }
    }
    fn stmt_mut(&mut self, i: usize) -> Option<&mut Stmt> {
        if i < self.done.len() {
            self.done.get_mut(i)
        } else {
            self.rest.get_mut(i - self.done.len())
        }
    }
    fn insert_first(&mut self, s: Stmt) {
        // Into `done`, so that the current statement stays current.
        self.done.insert(0, s);
    }
}

impl Function {
    /// A cursor before the first statement of the body.
    pub fn cursor(&mut self) -> FuncCursor<'_> {
        FuncCursor::new(self)
    }
}

impl<'f> FuncCursor<'f> {
    /// A cursor before the first statement of `func`'s body.
    pub fn new(func: &'f mut Function) -> FuncCursor<'f> {
        let had_body = func.body.is_some();
        let rest = VecDeque::from(func.body.take().unwrap_or_default());
        FuncCursor { func, gap: Gap { done: Vec::new(), rest, at: false }, had_body }
    }

    /// The index of the current statement in the body as edited so far (or
    /// of the statement after the gap when between two).
    pub fn position(&self) -> usize {
        self.gap.done.len()
    }

    /// Number of statements in the body as edited so far.
    pub fn len(&self) -> usize {
        self.gap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gap.len() == 0
    }

    /// The statement at index `i` of the body as edited so far.
    pub fn stmt(&self, i: usize) -> Option<&Stmt> {
        self.gap.stmt(i)
    }

    pub fn current(&self) -> Option<&Stmt> {
        if self.gap.at {
            self.gap.rest.front()
        } else {
            None
        }
    }

    pub fn current_mut(&mut self) -> Option<&mut Stmt> {
        if self.gap.at {
            self.gap.rest.front_mut()
        } else {
            None
        }
    }

    /// The current statement if it is an instruction.
    pub fn instruction_mut(&mut self) -> Option<&mut Instruction> {
        match self.current_mut() {
            Some(Stmt::Instr(i)) => Some(i),
            _ => None,
        }
    }

    /// Moves to the next statement and returns it; `None` at the end (the
    /// cursor is then after the last statement).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&mut Stmt> {
        let g = &mut self.gap;
        if g.at {
            g.done.extend(g.rest.pop_front());
        }
        g.at = !g.rest.is_empty();
        g.rest.front_mut()
    }

    /// Moves to the next instruction, skipping other statements.
    pub fn next_instruction(&mut self) -> Option<&mut Instruction> {
        while let Some(s) = self.next() {
            if matches!(s, Stmt::Instr(_)) {
                return self.instruction_mut();
            }
        }
        None
    }

    /// Moves to the previous statement and returns it; `None` at the start
    /// (the cursor is then before the first statement).
    pub fn prev(&mut self) -> Option<&mut Stmt> {
        let g = &mut self.gap;
        match g.done.pop() {
            Some(s) => {
                g.rest.push_front(s);
                g.at = true;
                g.rest.front_mut()
            }
            None => {
                g.at = false;
                None
            }
        }
    }

    /// Makes statement `i` current (or goes to the end if `i` is past it).
    /// Costs the distance moved.
    pub fn goto(&mut self, i: usize) {
        let g = &mut self.gap;
        while g.done.len() > i {
            let s = g.done.pop().unwrap();
            g.rest.push_front(s);
        }
        while g.done.len() < i {
            let Some(s) = g.rest.pop_front() else { break };
            g.done.push(s);
        }
        g.at = !g.rest.is_empty();
    }

    /// Inserts before the current statement (or into the gap); the cursor
    /// stays on the current statement.
    pub fn insert_before(&mut self, s: impl Into<Stmt>) {
        self.gap.done.push(s.into());
    }

    /// Inserts after the current statement (or into the gap, after
    /// statements inserted before); `next` visits it.
    pub fn insert_after(&mut self, s: impl Into<Stmt>) {
        let g = &mut self.gap;
        if g.at {
            let cur = g.rest.pop_front().unwrap();
            g.rest.push_front(s.into());
            g.rest.push_front(cur);
        } else {
            g.rest.push_front(s.into());
        }
    }

    /// Replaces the current statement; returns the old one (`None`, and
    /// nothing is changed, when between statements).
    pub fn replace(&mut self, s: impl Into<Stmt>) -> Option<Stmt> {
        self.current_mut().map(|cur| std::mem::replace(cur, s.into()))
    }

    /// Removes the current statement; the cursor is then between its
    /// neighbours, and `next` returns the one after it.
    pub fn remove(&mut self) -> Option<Stmt> {
        let g = &mut self.gap;
        if !g.at {
            return None;
        }
        g.at = false;
        g.rest.pop_front()
    }

    /// A fresh register, declared at the top of the body ([`Function::new_reg`]).
    pub fn new_reg(&mut self, ty: ScalarType) -> RegId {
        fresh::new_reg(self.func, &mut self.gap, ty)
    }

    /// A fresh label, not placed ([`Function::new_label`]).
    pub fn new_label(&mut self) -> LabelId {
        fresh::new_label(self.func, &self.gap)
    }

    /// The function's registers.
    pub fn regs(&self) -> &[Reg] {
        &self.func.regs
    }

    pub fn reg(&self, r: RegId) -> &Reg {
        self.func.reg(r)
    }

    pub fn label_name(&self, l: LabelId) -> &str {
        self.func.label_name(l)
    }

    /// Ends the edit (as dropping the cursor does).
    pub fn finish(self) {}
}

impl Drop for FuncCursor<'_> {
    fn drop(&mut self) {
        let mut body = std::mem::take(&mut self.gap.done);
        body.extend(self.gap.rest.drain(..));
        if self.had_body || !body.is_empty() {
            self.func.body = Some(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{Function, FuncKind, Instruction, Operand, Stmt};
    use crate::isa::{Mod, Opcode, ScalarType};

    fn mov(f: &mut Function, v: i64) -> Stmt {
        let r = f.new_reg(ScalarType::U32);
        Instruction::new(Opcode::MOV, &[Mod::U32], [Operand::reg(r), Operand::from(v)]).unwrap().into()
    }

    fn values(f: &Function) -> Vec<i64> {
        f.instructions()
            .map(|i| match &i.operands[1] {
                Operand::Imm(crate::ir::Imm::Int(l)) => l.value as i64,
                _ => -1,
            })
            .collect()
    }

    #[test]
    fn insert_remove_replace_move() {
        let mut f = Function::new(FuncKind::Entry, "k");
        let stmts: Vec<Stmt> = (0..5).map(|v| mov(&mut f, v)).collect();
        f.body.as_mut().unwrap().extend(stmts);
        let extra: Vec<Stmt> = (10..14).map(|v| mov(&mut f, v)).collect();
        let [a, b, c, d] = <[Stmt; 4]>::try_from(extra).ok().unwrap();
        let mut cur = f.cursor();
        // The declaration of the fresh registers is statement 0.
        assert!(matches!(cur.next(), Some(Stmt::Decl(_))));
        cur.next(); // mov 0
        cur.insert_before(a); // 10 before 0
        cur.insert_after(b); // 11 after 0, visited next
        assert!(matches!(cur.next(), Some(Stmt::Instr(i)) if i.operands[1] == Operand::from(11i64)));
        cur.next(); // mov 1
        assert!(cur.remove().is_some());
        assert!(cur.remove().is_none(), "between statements");
        assert!(cur.replace(c.clone()).is_none());
        cur.next(); // mov 2
        cur.replace(c);
        cur.goto(1);
        assert!(matches!(cur.current(), Some(Stmt::Instr(i)) if i.operands[1] == Operand::from(10i64)));
        while cur.next().is_some() {}
        cur.insert_before(d); // at the end
        assert!(cur.prev().is_some());
        drop(cur);
        assert_eq!(values(&f), [10, 0, 11, 12, 3, 4, 13]);
    }

    #[test]
    fn fresh_registers_from_a_cursor_keep_the_current_statement() {
        let mut f = Function::new(FuncKind::Entry, "k");
        let s = mov(&mut f, 7);
        f.body.as_mut().unwrap().push(s);
        let mut cur = f.cursor();
        while cur.next_instruction().is_none_or(|i| i.opcode != Opcode::MOV) {}
        let pos = cur.position();
        let p = cur.new_reg(ScalarType::Pred);
        assert_eq!(cur.position(), pos + 1, "one declaration inserted above");
        assert!(matches!(cur.instruction_mut(), Some(i) if i.opcode == Opcode::MOV));
        assert_eq!(cur.reg(p).ty, ScalarType::Pred);
        drop(cur);
        assert_eq!(f.body.as_ref().unwrap().len(), 3);
    }
}
