//! The typed IR of a PTX module.
//!
//! A [`Module`] holds module directives, variables and functions in source
//! order. Inside a function, registers and labels are numbered ([`RegId`],
//! [`LabelId`]) and their names live in the function's tables; instructions
//! carry their opcode, matched form and slot-aligned modifiers from the ISA
//! tables, so passes match on typed values rather than text. The IR holds no
//! source positions: equal text gives equal IR.

mod access;
mod builder;
mod construct;
mod cursor;
mod data;
mod decl;
mod fresh;
mod function;
pub mod int_list;
mod instruction;
mod module;
mod name;
pub mod scopes;
mod special;

pub use access::Access;
pub use builder::{BuildError, FuncBuilder, IntoOperands, ModuleBuilder};
pub use cursor::FuncCursor;
pub use data::*;
pub use decl::{Decl, DeclName, DeclNames, RangeMut};
pub use int_list::{IntList, IntListBuilder};
pub use fresh::FreshNames;
pub use function::*;
pub use instruction::*;
pub use module::*;
pub use special::SpecialReg;

pub use name::Name;
pub(crate) use name::packed as name_packed;
