//! Functions: header, register and label tables, and the statement list.

use super::{Instruction, Name, VarDecl, Attribute, ConstExpr};
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
}

impl Function {
    pub fn reg(&self, r: super::RegId) -> &Reg {
        &self.regs[r.0 as usize]
    }
    /// A register's name; for an id outside the table (a pass's bug, which
    /// the verifier reports) a text no parser accepts, rather than a panic.
    pub fn reg_name(&self, r: RegId) -> &str {
        self.regs.get(r.0 as usize).map_or("<register not in the table>", |r| &r.name)
    }
    /// A label's name (names repeat across `{ }` blocks: ids do not); for
    /// an id outside the table, a text no parser accepts.
    pub fn label_name(&self, l: LabelId) -> &str {
        self.labels.get(l.0 as usize).map_or("<label not in the table>", |n| n)
    }
    /// Instructions of the body, in order.
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.body.iter().flatten().filter_map(|s| match s {
            Stmt::Instr(i) => Some(&**i),
            _ => None,
        })
    }
}

/// `.loc file line col {, function_name label{+off}} {, inlined_at file line col}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    pub function_name: Option<Box<ConstExpr>>,
    pub inlined_at: Option<(u32, u32, u32)>,
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
    Decl(Box<VarDecl>),
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
