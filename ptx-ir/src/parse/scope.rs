//! Name resolution inside a function: nested scopes of registers and local
//! variables, parameterized register ranges (`%r<100>`), and labels with
//! forward references.

use crate::ir::{LabelId, Name, Reg, RegId};
use crate::isa::{ScalarType, StateSpace};
use crate::source::Span;
use rustc_hash::FxHashMap;

/// What a name bound in a function scope is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Reg(RegId),
    /// An addressable variable (`.local`, `.shared`, `.param` ...).
    Var,
}

#[derive(Clone, Debug)]
struct Range {
    count: u32,
    ty: ScalarType,
    vector: Option<u8>,
    span: Span,
}

/// Names are borrowed from the source text: declaring and looking up
/// thousands of registers allocates nothing but the IR's own names.
#[derive(Default)]
struct Scope<'a> {
    names: FxHashMap<&'a str, (Binding, Span)>,
    ranges: FxHashMap<&'a str, Range>,
    /// Where its `{` is (none for the function body itself).
    opened: Option<Span>,
}

/// Per-function parser state.
pub struct FuncState<'a> {
    pub regs: Vec<Reg>,
    scopes: Vec<Scope<'a>>,
    pub labels: Vec<Name>,
    label_ids: FxHashMap<&'a str, LabelId>,
    /// Where each label is defined, if it is.
    pub label_defs: Vec<Option<Span>>,
    /// Where each label was first used.
    pub label_uses: Vec<Option<Span>>,
}

/// Splits `%r123` into (`%r`, 123) for parameterized names.
pub(crate) fn split_index(name: &str) -> Option<(&str, u32)> {
    let digits = name.bytes().rev().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits == name.len() {
        return None;
    }
    let (prefix, num) = name.split_at(name.len() - digits);
    // `%r01` is not `%r1`: parameterized names have no leading zeros.
    if num.len() > 1 && num.starts_with('0') {
        return None;
    }
    Some((prefix, num.parse().ok()?))
}

impl<'a> FuncState<'a> {
    pub fn new() -> FuncState<'a> {
        FuncState {
            regs: Vec::new(),
            scopes: vec![Scope::default()],
            labels: Vec::new(),
            label_ids: FxHashMap::default(),
            label_defs: Vec::new(),
            label_uses: Vec::new(),
        }
    }

    pub fn push_scope(&mut self, opened: Span) {
        self.scopes.push(Scope { opened: Some(opened), ..Scope::default() });
    }

    /// The `{` of the innermost open nested scope.
    pub fn open_scope_span(&self) -> Option<Span> {
        self.scopes.last().and_then(|s| s.opened)
    }

    pub fn pop_scope(&mut self) -> bool {
        if self.scopes.len() > 1 {
            self.scopes.pop();
            true
        } else {
            false
        }
    }

    pub fn depth(&self) -> usize {
        self.scopes.len() - 1
    }

    /// Where `name` is already declared in the innermost scope.
    pub fn declared_here(&self, name: &str) -> Option<Span> {
        let s = self.scopes.last().unwrap();
        s.names.get(name).map(|(_, sp)| *sp).or_else(|| s.ranges.get(name).map(|r| r.span))
    }

    /// Declares a register; returns its id.
    pub fn declare_reg(&mut self, name: &'a str, ty: ScalarType, vector: Option<u8>, span: Span) -> RegId {
        let id = RegId(self.regs.len() as u32);
        self.regs.push(Reg { name: name.into(), ty, vector, space: StateSpace::Reg });
        self.scopes.last_mut().unwrap().names.insert(name, (Binding::Reg(id), span));
        id
    }

    /// Declares `prefix<count>`; registers are created on first use.
    pub fn declare_range(&mut self, prefix: &'a str, count: u32, ty: ScalarType, vector: Option<u8>, span: Span) {
        self.scopes.last_mut().unwrap().ranges.insert(prefix, Range { count, ty, vector, span });
    }

    pub fn declare_var(&mut self, name: &'a str, span: Span) {
        self.scopes.last_mut().unwrap().names.insert(name, (Binding::Var, span));
    }

    /// Resolves a name through the scopes, innermost first.
    pub fn lookup(&mut self, name: &'a str) -> Option<Binding> {
        let split = split_index(name);
        for k in (0..self.scopes.len()).rev() {
            if let Some((b, _)) = self.scopes[k].names.get(name) {
                return Some(*b);
            }
            if let Some((prefix, n)) = split {
                if let Some(r) = self.scopes[k].ranges.get(prefix) {
                    if n < r.count {
                        let (ty, vector, span) = (r.ty, r.vector, r.span);
                        let id = RegId(self.regs.len() as u32);
                        self.regs.push(Reg { name: name.into(), ty, vector, space: StateSpace::Reg });
                        self.scopes[k].names.insert(name, (Binding::Reg(id), span));
                        return Some(Binding::Reg(id));
                    }
                }
            }
        }
        None
    }

    /// The id of a label, created on first mention.
    pub fn label(&mut self, name: &'a str) -> LabelId {
        if let Some(id) = self.label_ids.get(name) {
            return *id;
        }
        let id = LabelId(self.labels.len() as u32);
        self.labels.push(name.into());
        self.label_ids.insert(name, id);
        self.label_defs.push(None);
        self.label_uses.push(None);
        id
    }

    pub fn use_label(&mut self, name: &'a str, span: Span) -> LabelId {
        let id = self.label(name);
        if self.label_uses[id.0 as usize].is_none() {
            self.label_uses[id.0 as usize] = Some(span);
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameterized_names() {
        assert_eq!(split_index("%r12"), Some(("%r", 12)));
        assert_eq!(split_index("%r0"), Some(("%r", 0)));
        assert_eq!(split_index("%r012"), None);
        assert_eq!(split_index("%r"), None);
        let mut f = FuncState::new();
        f.declare_range("%r", 10, ScalarType::B32, None, Span::default());
        assert!(matches!(f.lookup("%r9"), Some(Binding::Reg(_))));
        assert_eq!(f.lookup("%r10"), None);
        let a = f.lookup("%r3");
        assert_eq!(a, f.lookup("%r3"));
    }

    #[test]
    fn inner_scopes_shadow() {
        let mut f = FuncState::new();
        let outer = f.declare_reg("%x", ScalarType::B32, None, Span::default());
        f.push_scope(Span::default());
        let inner = f.declare_reg("%x", ScalarType::F32, None, Span::default());
        assert_eq!(f.lookup("%x"), Some(Binding::Reg(inner)));
        f.pop_scope();
        assert_eq!(f.lookup("%x"), Some(Binding::Reg(outer)));
    }
}
