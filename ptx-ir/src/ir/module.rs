//! Module-level items: header directives, debug sections, variables, functions.

use super::{Function, Name, VarDecl, ConstExpr};

/// A parsed PTX module.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub version: Version,
    /// The first `.target` directive's list (`sm_80`, `texmode_independent`, `debug` ...).
    pub target: Vec<Name>,
    pub address_size: Option<u32>,
    pub items: Vec<Item>,
}

/// `.version major.minor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

/// Everything after the module header, in source order.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A later `.target` directive (the manual allows several).
    Target(Vec<Name>),
    File(FileDecl),
    Section(Section),
    Pragma(Vec<Name>),
    /// `.alias alias, aliasee;`
    Alias { alias: Name, aliasee: Name },
    Var(GlobalVar),
    Func(Box<Function>),
    /// A PTX 1.x `@@DWARF` line: its text after `@@DWARF`, kept verbatim.
    Dwarf(Name),
}

/// `.extern`, `.visible`, `.weak`, `.common`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    Extern,
    Visible,
    Weak,
    Common,
}

impl Linkage {
    pub fn text(self) -> &'static str {
        match self {
            Linkage::Extern => ".extern",
            Linkage::Visible => ".visible",
            Linkage::Weak => ".weak",
            Linkage::Common => ".common",
        }
    }
}

/// A module-scope variable declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalVar {
    pub linkage: Option<Linkage>,
    pub decl: VarDecl,
}

/// `.file index "name" {, timestamp, size}`.
#[derive(Clone, Debug, PartialEq)]
pub struct FileDecl {
    pub index: u32,
    /// The string with its quotes, as written.
    pub name: Name,
    pub timestamp: Option<u64>,
    pub size: Option<u64>,
}

/// A `.section name { ... }` debug section.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: Name,
    pub entries: Vec<SectionEntry>,
}

/// One line of a debug section.
#[derive(Clone, Debug, PartialEq)]
pub enum SectionEntry {
    Label(Name),
    /// `.b8 1, 2, 3` / `.b32 $L__end0-$L__begin0` / `.b64 sym+8`.
    Data { width: u32, values: Vec<ConstExpr> },
}
