//! Constructors and conversions for making IR by hand (backends, passes,
//! tests): declarations, addresses, guards, and operands from registers,
//! addresses, labels, special registers and literals.
//!
//! ```
//! use ptx_ir::ir::{Address, Operand, RegId, SpecialReg, Selector};
//! let r = RegId(0);
//! let ops: [Operand; 5] = [r.into(), 4i64.into(), 1.5f32.into(), Address::reg(r).offset(8).into(), (SpecialReg::TID, Selector::X).into()];
//! assert_eq!(ops[1], Operand::from(4i32));
//! ```

use super::{Address, AddrBase, Declarator, Declarators, FloatLit, Guard, Imm, Instruction, IntLit, LabelId, Operand, Radix, RegId, RegOperand, Selector, SpecialReg, Stmt, VarDecl};
use crate::isa::{ScalarType, StateSpace};

impl VarDecl {
    /// `.space .ty name`: no attributes, alignment, vector, dimensions or initializer.
    pub fn new(space: StateSpace, ty: ScalarType, name: &str) -> VarDecl {
        VarDecl { space, vector: None, ty, names: Declarators::one(Declarator::new(name)), attrs: None }
    }

    /// `.param .ty name`, a kernel or function parameter.
    pub fn param(ty: ScalarType, name: &str) -> VarDecl {
        VarDecl::new(StateSpace::Param, ty, name)
    }

    /// With `.align bytes`.
    pub fn aligned(mut self, bytes: u64) -> VarDecl {
        self.attrs.get_or_insert_default().align = Some(bytes);
        self
    }

    /// With array dimensions on every declared name (`[4][8]`).
    pub fn array(mut self, dims: &[u64]) -> VarDecl {
        for n in &mut self.names {
            n.dims = dims.iter().map(|d| Some(*d)).collect();
        }
        self
    }
}

/// `.reg .b32` with no names, for struct-update syntax
/// (`VarDecl { space: StateSpace::Shared, ..VarDecl::default() }`).
impl Default for VarDecl {
    fn default() -> VarDecl {
        VarDecl { space: StateSpace::Reg, vector: None, ty: ScalarType::B32, names: Declarators::new(), attrs: None }
    }
}

impl Declarator {
    /// `name`: no dimensions, range or initializer.
    pub fn new(name: &str) -> Declarator {
        Declarator { name: name.into(), range: None, dims: Box::default(), init: None }
    }
}

impl Address {
    /// `[r]`.
    pub fn reg(r: RegId) -> Address {
        Address { base: AddrBase::Reg(r), offset: 0, unified: false, zero_written: false }
    }
    /// `[name]`: a variable or parameter.
    pub fn sym(name: &str) -> Address {
        Address { base: AddrBase::Sym(name.into()), offset: 0, unified: false, zero_written: false }
    }
    /// `[addr]`: an absolute address.
    pub fn abs(addr: u64) -> Address {
        Address { base: AddrBase::Imm(addr), offset: 0, unified: false, zero_written: false }
    }
    /// The same base plus `bytes` (`[r+8]`).
    pub fn offset(mut self, bytes: i64) -> Address {
        self.offset = bytes;
        self
    }
}

impl Guard {
    /// `@p`.
    pub fn when(p: RegId) -> Guard {
        Guard { reg: p, negated: false }
    }
    /// `@!p`.
    pub fn unless(p: RegId) -> Guard {
        Guard { reg: p, negated: true }
    }
}

impl IntLit {
    /// A decimal literal; values above `i64::MAX` are unsigned (`.u64`), as
    /// the manual reads such literals.
    pub fn unsigned(value: u64) -> IntLit {
        IntLit { value, radix: Radix::Dec, unsigned: value > i64::MAX as u64, suffix: false }
    }
}

impl Operand {
    /// `{a, b, c, d}`.
    pub fn vector(elems: impl IntoIterator<Item = Operand>) -> Operand {
        Operand::Vector(elems.into_iter().collect())
    }
}

impl From<RegId> for Operand {
    fn from(r: RegId) -> Operand {
        Operand::reg(r)
    }
}

impl From<RegOperand> for Operand {
    fn from(r: RegOperand) -> Operand {
        Operand::Reg(r)
    }
}

impl From<Address> for Operand {
    fn from(a: Address) -> Operand {
        Operand::Addr(Box::new(a))
    }
}

impl From<&Address> for Operand {
    fn from(a: &Address) -> Operand {
        Operand::Addr(Box::new(a.clone()))
    }
}

impl From<LabelId> for Operand {
    fn from(l: LabelId) -> Operand {
        Operand::Label(l)
    }
}

impl From<Imm> for Operand {
    fn from(i: Imm) -> Operand {
        Operand::Imm(i)
    }
}

/// A decimal integer literal (`-4`).
impl From<i64> for Operand {
    fn from(v: i64) -> Operand {
        Operand::Imm(Imm::Int(IntLit::dec(v)))
    }
}

impl From<i32> for Operand {
    fn from(v: i32) -> Operand {
        Operand::from(v as i64)
    }
}

impl From<u32> for Operand {
    fn from(v: u32) -> Operand {
        Operand::from(v as i64)
    }
}

/// See [`IntLit::unsigned`].
impl From<u64> for Operand {
    fn from(v: u64) -> Operand {
        Operand::Imm(Imm::Int(IntLit::unsigned(v)))
    }
}

/// An exact single-precision literal, printed `0fXXXXXXXX`.
impl From<f32> for Operand {
    fn from(v: f32) -> Operand {
        Operand::Imm(Imm::Float(FloatLit::F32(v.to_bits())))
    }
}

/// An exact double-precision literal, printed `0dXXXXXXXXXXXXXXXX`.
impl From<f64> for Operand {
    fn from(v: f64) -> Operand {
        Operand::Imm(Imm::Float(FloatLit::F64(v.to_bits())))
    }
}

/// `%laneid`.
impl From<SpecialReg> for Operand {
    fn from(s: SpecialReg) -> Operand {
        Operand::SReg(s, None)
    }
}

/// `%tid.x`.
impl From<(SpecialReg, Selector)> for Operand {
    fn from((s, sel): (SpecialReg, Selector)) -> Operand {
        Operand::SReg(s, Some(sel))
    }
}

impl From<Instruction> for Stmt {
    fn from(i: Instruction) -> Stmt {
        Stmt::Instr(Box::new(i))
    }
}

impl From<VarDecl> for Stmt {
    fn from(d: VarDecl) -> Stmt {
        Stmt::Decl(d.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_keep_their_exact_value() {
        assert_eq!(Operand::from(-4i64), Operand::Imm(Imm::Int(IntLit { value: (-4i64) as u64, radix: Radix::Dec, unsigned: false, suffix: false })));
        assert!(matches!(Operand::from(u64::MAX), Operand::Imm(Imm::Int(IntLit { unsigned: true, .. }))));
        assert!(matches!(Operand::from(7u64), Operand::Imm(Imm::Int(IntLit { unsigned: false, value: 7, .. }))));
        assert_eq!(Operand::from(1.0f32), Operand::Imm(Imm::Float(FloatLit::F32(0x3f80_0000))));
        assert_eq!(Operand::from(-0.0f64), Operand::Imm(Imm::Float(FloatLit::F64(0x8000_0000_0000_0000))));
    }

    #[test]
    fn addresses_and_declarations() {
        let a = Address::reg(RegId(3)).offset(-8);
        assert_eq!((a.base.clone(), a.offset), (AddrBase::Reg(RegId(3)), -8));
        let d = VarDecl::new(StateSpace::Shared, ScalarType::F32, "tile").aligned(16).array(&[32, 33]);
        assert_eq!(*d.names[0].dims, [Some(32), Some(33)]);
        assert_eq!(VarDecl { ty: ScalarType::U64, ..VarDecl::default() }.space, StateSpace::Reg);
    }
}
