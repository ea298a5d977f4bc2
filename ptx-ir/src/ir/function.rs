//! Functions: header, register and label tables, and the statement list.
//!
//! A register lives in [`Function::regs`] (what instructions refer to, by
//! [`RegId`]) and in a `.reg` [`Stmt::Decl`] of the body (what the printer
//! writes and the parser reads back). [`Function::new_reg`] keeps the two in
//! step; `verify` reports a register without a visible declaration.

use super::fresh::FreshNames;
use super::{Instruction, Name, VarDecl, Decl, Attribute, ConstExpr};
use super::module::Linkage;
use crate::isa::{ScalarType, StateSpace};

/// A register, numbered within its function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(pub u32);

/// A label (or `.branchtargets`/`.calltargets`/`.callprototype` name), numbered within its function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LabelId(pub u32);

/// `.entry` or `.func`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FuncKind {
    Entry,
    Func,
}

/// A register of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reg {
    pub name: Name,
    pub ty: ScalarType,
    pub vector: Option<u8>,
    /// `.reg` for ordinary registers; `.param` registers never occur.
    pub space: StateSpace,
}

/// A performance-tuning or other directive in a function header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FuncDirective {
    MaxNReg(u32),
    MaxNTid(Vec<u32>),
    ReqNTid(Vec<u32>),
    MinNCtaPerSm(u32),
    MaxNCtaPerSm(u32),
    NoReturn,
    ExplicitCluster,
    ReqNCtaPerCluster(Vec<u32>),
    MaxClusterRank(u32),
    Pragma(Vec<Name>),
    /// `.abi_preserve N` (PTX 9.x).
    AbiPreserve(u32),
    /// `.abi_preserve_control N` (PTX 9.x).
    AbiPreserveControl(u32),
}

/// A kernel (`.entry`) or device function (`.func`).
///
/// `Default` is an unnamed `.func` with an empty body, for struct-update
/// syntax (`Function { name: "f".into(), ..Function::default() }`).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub linkage: Option<Linkage>,
    pub kind: FuncKind,
    pub attributes: Vec<Attribute>,
    /// `.func (ret) name`: the return parameters; `None` when not written.
    pub ret: Option<Vec<VarDecl>>,
    pub name: Name,
    /// The parameter list; `None` when the header has no parentheses.
    pub params: Option<Vec<VarDecl>>,
    pub directives: Vec<FuncDirective>,
    pub regs: Vec<Reg>,
    /// One entry per label definition. Labels are scoped by `{ }` blocks
    /// like registers, so a name may repeat (see [`super::scopes`]).
    pub labels: Vec<Name>,
    /// `None` for a declaration (prototype) without a body.
    pub body: Option<Vec<Stmt>>,
    /// What [`Function::new_reg`] and [`Function::new_label`] remember between
    /// calls (the names in use, where their declarations are). Not part of the
    /// function's meaning: `==` ignores it and nothing prints it.
    pub fresh: FreshNames,
}

impl Function {
    /// A function with an empty body and an empty parameter list:
    /// `Function::new(FuncKind::Entry, "k")` prints as `.entry k() { }`.
    pub fn new(kind: FuncKind, name: &str) -> Function {
        Function {
            linkage: None,
            kind,
            attributes: Vec::new(),
            ret: None,
            name: name.into(),
            params: Some(Vec::new()),
            directives: Vec::new(),
            regs: Vec::new(),
            labels: Vec::new(),
            body: Some(Vec::new()),
            fresh: FreshNames::default(),
        }
    }

    /// # Panics
    /// If `r` is not a register of this function; see [`Function::try_reg`].
    pub fn reg(&self, r: super::RegId) -> &Reg {
        &self.regs[r.0 as usize]
    }
    /// A register's name; for an id outside the table (a pass's bug, which
    /// the verifier reports) a text no parser accepts, rather than a panic.
    pub fn reg_name(&self, r: RegId) -> &str {
        self.regs.get(r.0 as usize).map_or("<register not in the table>", |r| &r.name)
    }
    /// The register, or `None` for an id past the end of the table.
    pub fn try_reg(&self, r: RegId) -> Option<&Reg> {
        self.regs.get(r.0 as usize)
    }
    /// A label's name (names repeat across `{ }` blocks: ids do not); for
    /// an id outside the table, a text no parser accepts.
    pub fn label_name(&self, l: LabelId) -> &str {
        self.labels.get(l.0 as usize).map_or("<label not in the table>", |n| n)
    }
    /// The label's name, or `None` for an id past the end of the table.
    pub fn try_label_name(&self, l: LabelId) -> Option<&str> {
        self.labels.get(l.0 as usize).map(|n| &**n)
    }
    /// Instructions of the body, in order.
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.body.iter().flatten().filter_map(|s| match s {
            Stmt::Instr(i) => Some(&**i),
            _ => None,
        })
    }
}

impl Default for Function {
    fn default() -> Function {
        Function::new(FuncKind::Func, "")
    }
}

/// `.loc file line col {, function_name label{+off}} {, inlined_at file line col}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    /// The two optional attributes, boxed together: most `.loc` lines have
    /// neither, and a statement is as large as its largest variant.
    pub inlining: Option<Box<LocInlining>>,
}

/// The attributes of a `.loc` that describe inlining.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocInlining {
    pub function_name: Option<ConstExpr>,
    pub inlined_at: Option<(u32, u32, u32)>,
}

impl Loc {
    /// `.loc file line col` with neither attribute.
    pub fn new(file: u32, line: u32, col: u32) -> Loc {
        Loc { file, line, col, inlining: None }
    }

    pub fn function_name(&self) -> Option<&ConstExpr> {
        self.inlining.as_ref()?.function_name.as_ref()
    }

    pub fn inlined_at(&self) -> Option<(u32, u32, u32)> {
        self.inlining.as_ref()?.inlined_at
    }
}

/// `.callprototype` signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Prototype {
    pub ret: Option<Vec<VarDecl>>,
    pub params: Vec<VarDecl>,
    /// `.noreturn`, `.abi_preserve N` ...
    pub directives: Vec<FuncDirective>,
}

/// A statement of a function body.
#[derive(Clone, Debug, PartialEq)]
///
/// Large variants are boxed so that a statement is small: bodies of many
/// thousands of statements are moved and grown as vectors.
pub enum Stmt {
    Instr(Box<Instruction>),
    Label(LabelId),
    /// A declaration; a plain `.reg` one held in place ([`Decl`]).
    Decl(Decl),
    Loc(Loc),
    Pragma(Vec<Name>),
    /// `{`: a nested scope opens.
    ScopeBegin,
    /// `}`.
    ScopeEnd,
    /// `name: .branchtargets L1, L2;`
    BranchTargets(LabelId, Vec<LabelId>),
    /// `name: .calltargets f1, f2;`
    CallTargets(LabelId, Vec<Name>),
    /// `name: .callprototype ...;`
    CallPrototype(LabelId, Box<Prototype>),
}
