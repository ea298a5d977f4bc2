//! Building a module from nothing, for compiler back ends: module, then
//! functions with parameters, registers, labels and instructions. Each
//! instruction is written as its head (`"mad.lo.s32"`) and operands, and is
//! checked against the ISA tables when it is added, as the parser checks it;
//! mistakes come back as [`BuildError`]s with a hint, never as panics.
//!
//! ```
//! use ptx_ir::ir::{Address, ModuleBuilder};
//! use ptx_ir::isa::ScalarType::{U32, U64};
//! # fn main() -> Result<(), ptx_ir::ir::BuildError> {
//! let mut m = ModuleBuilder::new("8.0", "sm_80", 64);
//! let mut k = m.entry("iota");
//! let out = k.param(U64, "out");
//! let [p, q] = k.regs(U64);
//! let [i, v] = k.regs(U32);
//! k.ins("ld.param.u64", (p, out))?;
//! k.ins("cvta.to.global.u64", (p, p))?;
//! k.ins("mov.u32", (i, k.sreg("%tid.x")?))?;
//! k.ins("mad.lo.s32", (v, i, i, 1))?;
//! k.ins("mul.wide.u32", (q, i, 4))?;
//! k.ins("add.s64", [q, q, p])?;
//! k.ins("st.global.u32", (Address::reg(q), v))?;
//! k.ins("ret", ())?;
//! // A head the tables do not have is an error with a hint:
//! let e = k.ins("mad.s32", [v, i, i, i]).unwrap_err();
//! assert!(e.to_string().contains("a modifier from {"));
//! let module = m.finish()?;
//! assert_eq!(module.items.len(), 1);
//! # Ok(()) }
//! ```

use super::{Function, FuncKind, GlobalVar, Guard, Instruction, Item, LabelId, Linkage, Module, Operand, Operands, RegId, Stmt, VarDecl, Version};
use super::Address;
use crate::isa::{similar_modifier, FormMismatch, Mod, Opcode, ScalarType};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::fmt;

/// Why a module or instruction could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// No opcode of the tables starts the head.
    UnknownInstruction { head: String },
    /// A dotted part of the head is no modifier of its opcode.
    UnknownModifier { head: String, opcode: Opcode, modifier: String, suggestion: Option<Mod> },
    /// The modifiers and operands fit no form of the opcode.
    Form { head: String, mismatch: FormMismatch },
    /// Not a special register (`%tid.x`, `%laneid` ...).
    UnknownSpecialRegister(String),
    /// The `.version` is not `MAJOR.MINOR`.
    Version(String),
    /// A function the builder made is not printable (see `verify::registers_declared`).
    Invalid { function: String, message: String },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::UnknownInstruction { head } => write!(f, "`{head}`: unknown instruction"),
            BuildError::UnknownModifier { head, opcode, modifier, suggestion } => {
                write!(f, "`{head}`: `{modifier}` is not a modifier of `{}`", opcode.name())?;
                match suggestion {
                    Some(m) => write!(f, "; did you mean `{}`?", m.text()),
                    None => Ok(()),
                }
            }
            BuildError::Form { mismatch, .. } => write!(f, "{mismatch}"),
            BuildError::UnknownSpecialRegister(s) => write!(f, "`{s}` is not a special register"),
            BuildError::Version(v) => write!(f, "`{v}` is not a PTX ISA version (expected MAJOR.MINOR, such as 8.0)"),
            BuildError::Invalid { function, message } => write!(f, "in `{function}`: {message}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Form { mismatch, .. } => Some(mismatch),
            _ => None,
        }
    }
}

/// Operands for [`FuncBuilder::ins`]: `()`, an array of one kind (`[d, a, b]`),
/// a tuple of mixed kinds (`(d, Address::reg(p), 4)`), or a `Vec<Operand>`.
pub trait IntoOperands {
    fn into_operands(self) -> Operands;
}

impl IntoOperands for () {
    fn into_operands(self) -> Operands {
        SmallVec::new()
    }
}

impl<T: Into<Operand>, const N: usize> IntoOperands for [T; N] {
    fn into_operands(self) -> Operands {
        self.into_iter().map(Into::into).collect()
    }
}

impl IntoOperands for Vec<Operand> {
    fn into_operands(self) -> Operands {
        self.into()
    }
}

macro_rules! tuple_operands {
    ($($t:ident),+) => {
        impl<$($t: Into<Operand>),+> IntoOperands for ($($t,)+) {
            #[allow(non_snake_case)]
            fn into_operands(self) -> Operands {
                let ($($t,)+) = self;
                SmallVec::from_iter([$($t.into()),+])
            }
        }
    };
}
tuple_operands!(A);
tuple_operands!(A, B);
tuple_operands!(A, B, C);
tuple_operands!(A, B, C, D);
tuple_operands!(A, B, C, D, E);
tuple_operands!(A, B, C, D, E, F);
tuple_operands!(A, B, C, D, E, F, G);
tuple_operands!(A, B, C, D, E, F, G, H);

/// Splits `mad.lo.s32` into its opcode and modifiers.
fn parse_head(head: &str) -> Result<(Opcode, SmallVec<[Mod; 8]>), BuildError> {
    let Some((opcode, used)) = Opcode::longest_prefix(head) else {
        return Err(BuildError::UnknownInstruction { head: head.to_string() });
    };
    let mut mods = SmallVec::new();
    for part in head.split('.').skip(used) {
        let text = format!(".{part}");
        match Mod::from_text(&text) {
            Some(m) => mods.push(m),
            None => {
                let suggestion = similar_modifier(opcode, &text);
                return Err(BuildError::UnknownModifier { head: head.to_string(), opcode, modifier: text, suggestion });
            }
        }
    }
    Ok((opcode, mods))
}

impl Instruction {
    /// Builds an instruction from its head as written (`"ld.global.v4.f32"`)
    /// and operands, checked against the tables like [`Instruction::new`].
    pub fn from_head(head: &str, operands: impl IntoOperands) -> Result<Instruction, BuildError> {
        let (opcode, mods) = parse_head(head)?;
        Instruction::new(opcode, &mods, operands.into_operands()).map_err(|mismatch| BuildError::Form { head: head.to_string(), mismatch })
    }
}

/// A module under construction.
#[derive(Clone, Debug)]
pub struct ModuleBuilder {
    module: Module,
    version_text: Option<String>,
}

impl ModuleBuilder {
    /// `.version`, `.target` (a comma-separated list such as `"sm_80"` or
    /// `"sm_70, texmode_independent"`) and `.address_size`.
    pub fn new(version: &str, target: &str, address_size: u32) -> ModuleBuilder {
        let parsed = version.split_once('.').and_then(|(a, b)| Some(Version { major: a.parse().ok()?, minor: b.parse().ok()? }));
        let target = target.split(',').map(|t| t.trim()).filter(|t| !t.is_empty()).map(Into::into).collect();
        let module = Module { version: parsed.unwrap_or(Version { major: 0, minor: 0 }), target, address_size: Some(address_size), items: Vec::new() };
        ModuleBuilder { module, version_text: parsed.is_none().then(|| version.to_string()) }
    }

    /// A module variable (`.global .f32 table[256]`, `.const`, `.shared` ...).
    pub fn global(&mut self, linkage: Option<Linkage>, decl: VarDecl) {
        self.module.items.push(Item::Var(GlobalVar { linkage, decl }));
    }

    /// A `.visible .entry` kernel; its parameters and body follow.
    pub fn entry(&mut self, name: &str) -> FuncBuilder<'_> {
        let mut f = Function::new(FuncKind::Entry, name);
        f.linkage = Some(Linkage::Visible);
        self.add_function(f)
    }

    /// A `.func` device function (no linkage: visible in this module only).
    pub fn func(&mut self, name: &str) -> FuncBuilder<'_> {
        self.add_function(Function::new(FuncKind::Func, name))
    }

    /// Continues building `f` (a function made another way).
    pub fn add_function(&mut self, f: Function) -> FuncBuilder<'_> {
        self.module.items.push(Item::Func(Box::new(f)));
        let Some(Item::Func(f)) = self.module.items.last_mut() else { unreachable!("just pushed") };
        let labels = f.labels.iter().enumerate().map(|(k, n)| (n.clone(), LabelId(k as u32))).collect();
        FuncBuilder { f, labels }
    }

    /// The module so far.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The module, if the version parsed and every function is printable
    /// (ids in range, registers declared). Types and targets are the
    /// verifier's to check: print, parse and `verify` for positions.
    pub fn finish(self) -> Result<Module, BuildError> {
        if let Some(v) = self.version_text {
            return Err(BuildError::Version(v));
        }
        for item in &self.module.items {
            if let Item::Func(f) = item {
                if let Some(p) = crate::verify::registers_declared(f).into_iter().next() {
                    return Err(BuildError::Invalid { function: f.name.to_string(), message: format!("statement {}: {}", p.stmt, p.message) });
                }
            }
        }
        Ok(self.module)
    }
}

/// A function under construction, in its module (see [`ModuleBuilder`]).
pub struct FuncBuilder<'m> {
    f: &'m mut Function,
    labels: FxHashMap<super::Name, LabelId>,
}

impl FuncBuilder<'_> {
    /// Adds `.param .ty name` to the parameters; returns `[name]`, the
    /// address `ld.param` reads it from.
    pub fn param(&mut self, ty: ScalarType, name: &str) -> Address {
        self.f.params.get_or_insert_with(Vec::new).push(VarDecl::param(ty, name));
        Address::sym(name)
    }

    /// Adds `.param .ty name` to the return parameters of a `.func`;
    /// returns `[name]`, the address `st.param` writes it to.
    pub fn ret_param(&mut self, ty: ScalarType, name: &str) -> Address {
        self.f.ret.get_or_insert_with(Vec::new).push(VarDecl::param(ty, name));
        Address::sym(name)
    }

    /// A fresh register, declared ([`Function::new_reg`]).
    pub fn reg(&mut self, ty: ScalarType) -> RegId {
        self.f.new_reg(ty)
    }

    /// `N` fresh registers of one type: `let [a, b, c] = f.regs(U32);`.
    pub fn regs<const N: usize>(&mut self, ty: ScalarType) -> [RegId; N] {
        std::array::from_fn(|_| self.f.new_reg(ty))
    }

    /// The label called `name`, made on first mention (place it with [`FuncBuilder::place`]).
    pub fn label(&mut self, name: &str) -> LabelId {
        if let Some(l) = self.labels.get(name) {
            return *l;
        }
        let l = LabelId(self.f.labels.len() as u32);
        self.f.labels.push(name.into());
        self.labels.insert(name.into(), l);
        l
    }

    /// A label with a fresh name ([`Function::new_label`]).
    pub fn new_label(&mut self) -> LabelId {
        self.f.new_label()
    }

    /// `name:` here: the next instructions start a block.
    pub fn place(&mut self, l: LabelId) {
        self.push(Stmt::Label(l));
    }

    /// A special register operand as written: `%tid.x`, `%laneid`.
    pub fn sreg(&self, text: &str) -> Result<Operand, BuildError> {
        match super::SpecialReg::parse(text) {
            Some((s, sel)) => Ok(Operand::SReg(s, sel)),
            None => Err(BuildError::UnknownSpecialRegister(text.to_string())),
        }
    }

    /// Appends an instruction written as its head and operands:
    /// `f.ins("mad.lo.s32", [d, a, b, c])`, `f.ins("st.global.u32", (Address::reg(p), v))`.
    /// Returns it, for a guard or other changes.
    pub fn ins(&mut self, head: &str, operands: impl IntoOperands) -> Result<&mut Instruction, BuildError> {
        let ins = Instruction::from_head(head, operands)?;
        Ok(self.push_instruction(ins))
    }

    /// [`FuncBuilder::ins`] under a guard: `f.ins_if(Guard::when(p), "bra", [exit])`.
    pub fn ins_if(&mut self, guard: Guard, head: &str, operands: impl IntoOperands) -> Result<&mut Instruction, BuildError> {
        let ins = self.ins(head, operands)?;
        ins.guard = Some(guard);
        Ok(ins)
    }

    /// Appends an instruction made another way.
    pub fn push_instruction(&mut self, ins: Instruction) -> &mut Instruction {
        self.push(ins);
        match self.f.body.as_mut().and_then(|b| b.last_mut()) {
            Some(Stmt::Instr(i)) => i,
            _ => unreachable!("just pushed an instruction"),
        }
    }

    /// Appends any statement (a declaration, `.loc`, `{`, `}` ...).
    pub fn push(&mut self, s: impl Into<Stmt>) {
        self.f.body.get_or_insert_with(Vec::new).push(s.into());
    }

    /// The function itself, for anything the builder does not cover
    /// (directives, linkage, attributes).
    pub fn function(&mut self) -> &mut Function {
        self.f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::ScalarType::{Pred, U32};

    #[test]
    fn heads_split_into_opcode_and_modifiers() {
        let (op, mods) = parse_head("cp.async.bulk.tensor.1d.global.shared::cluster").unwrap_or((Opcode::ADD, SmallVec::new()));
        assert_eq!(op, Opcode::CP_ASYNC_BULK_TENSOR, "{mods:?}");
        assert!(matches!(parse_head("frobnicate.u32"), Err(BuildError::UnknownInstruction { .. })));
        let e = parse_head("ld.gloabl.u32").unwrap_err();
        assert_eq!(e.to_string(), "`ld.gloabl.u32`: `.gloabl` is not a modifier of `ld`; did you mean `.global`?");
    }

    #[test]
    fn errors_are_reported_not_panics() {
        let mut m = ModuleBuilder::new("8.0", "sm_80", 64);
        let mut f = m.entry("k");
        let [a, b] = f.regs(U32);
        let e = f.ins("mad.s32", [a, b, b, b]).unwrap_err();
        assert!(matches!(&e, BuildError::Form { mismatch, .. } if mismatch.reason == crate::isa::Mismatch::NoForm));
        assert!(std::error::Error::source(&e).is_some());
        assert!(e.to_string().contains(".lo"), "{e}");
        let e = f.ins("add.u32", [a, b]).unwrap_err();
        assert_eq!(e.to_string(), "`add.u32` takes 3 operands (`add.type d, a, b`), found 2");
        assert!(f.sreg("%tid.w2").is_err());
        assert!(ModuleBuilder::new("eight", "sm_80", 64).finish().is_err());
    }

    #[test]
    fn labels_guards_and_a_loop() {
        let mut m = ModuleBuilder::new("8.0", "sm_80", 64);
        let mut f = m.entry("k");
        let [i] = f.regs(U32);
        let p = f.reg(Pred);
        let top = f.label("$L_top");
        assert_eq!(f.label("$L_top"), top);
        f.ins("mov.u32", (i, 0)).unwrap();
        f.place(top);
        f.ins("add.u32", (i, i, 1)).unwrap();
        f.ins("setp.lt.u32", (p, i, 10)).unwrap();
        f.ins_if(Guard::when(p), "bra", [top]).unwrap();
        f.ins("ret", ()).unwrap();
        let m = m.finish().unwrap();
        let Item::Func(f) = &m.items[0] else { panic!() };
        assert_eq!(f.instructions().filter(|i| i.guard.is_some()).count(), 1);
    }

    #[test]
    fn finish_reports_undeclared_registers() {
        let mut m = ModuleBuilder::new("8.0", "sm_80", 64);
        let mut f = m.entry("k");
        f.function().regs.push(crate::ir::Reg { name: "%lost".into(), ty: U32, vector: None, space: crate::isa::StateSpace::Reg });
        f.ins("mov.u32", (RegId(0), 1)).unwrap();
        let e = m.finish().unwrap_err();
        assert!(e.to_string().starts_with("in `k`: statement 0: register `%lost` has no `.reg` declaration"), "{e}");
    }
}
