//! Declarations and constant data: variables, initializers, literals and
//! constant expressions.

use super::int_list::{is_plain, IntList, IntListBuilder};
use super::Name;
use crate::isa::{ScalarType, StateSpace};

/// A variable declaration in any state space: module variables, function
/// parameters, and `.reg`/`.local`/`.shared`/`.param` declarations in bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub space: StateSpace,
    /// `.v2`, `.v4`, `.v8`.
    pub vector: Option<u8>,
    pub ty: ScalarType,
    pub names: Declarators,
    /// `.align`, `.attribute(...)` and `.ptr`, boxed together: a body's
    /// register declarations, most of its declarations, have none of them.
    /// `None` when none is written (never an empty box, so that equal
    /// declarations compare equal).
    pub attrs: Option<Box<VarAttributes>>,
}

/// The rarely written attributes of a variable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VarAttributes {
    /// `.align N`.
    pub align: Option<u64>,
    /// `.attribute(...)` list, as written inside the parentheses (`.managed`, `.unified(1,2)`).
    pub attributes: Vec<Attribute>,
    /// Kernel parameter attribute `.ptr {.space} {.align N}`.
    pub ptr: Option<PtrAttr>,
}

impl VarDecl {
    pub fn align(&self) -> Option<u64> {
        self.attrs.as_ref()?.align
    }

    pub fn attributes(&self) -> &[Attribute] {
        self.attrs.as_ref().map_or(&[], |a| &a.attributes)
    }

    pub fn ptr(&self) -> Option<&PtrAttr> {
        self.attrs.as_ref()?.ptr.as_ref()
    }
}

/// The names of a declaration, read as a slice: most declare one, held in
/// place (a body of old-style PTX declares each register on a line of its
/// own). Without the capacity word a small vector keeps, a [`VarDecl`] is
/// 64 bytes, one allocation size smaller than 72; lists with the same
/// names are equal whichever way they are held.
#[derive(Clone)]
pub struct Declarators(DeclaratorList);

#[derive(Clone)]
enum DeclaratorList {
    One(Declarator),
    Many(Vec<Declarator>),
}

impl Declarators {
    pub fn new() -> Declarators {
        Declarators(DeclaratorList::Many(Vec::new()))
    }

    pub fn one(d: Declarator) -> Declarators {
        Declarators(DeclaratorList::One(d))
    }

    pub fn push(&mut self, d: Declarator) {
        match &mut self.0 {
            DeclaratorList::Many(v) if v.is_empty() => self.0 = DeclaratorList::One(d),
            DeclaratorList::Many(v) => v.push(d),
            DeclaratorList::One(_) => {
                let DeclaratorList::One(first) = std::mem::replace(&mut self.0, DeclaratorList::Many(Vec::new())) else { unreachable!() };
                self.0 = DeclaratorList::Many(vec![first, d]);
            }
        }
    }

    /// Keeps the declarators `keep` says to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&mut Declarator) -> bool) {
        match &mut self.0 {
            DeclaratorList::Many(v) => v.retain_mut(keep),
            DeclaratorList::One(d) => {
                if !keep(d) {
                    self.0 = DeclaratorList::Many(Vec::new());
                }
            }
        }
    }
}

impl Default for Declarators {
    fn default() -> Declarators {
        Declarators::new()
    }
}

impl std::ops::Deref for Declarators {
    type Target = [Declarator];
    fn deref(&self) -> &[Declarator] {
        match &self.0 {
            DeclaratorList::One(d) => std::slice::from_ref(d),
            DeclaratorList::Many(v) => v,
        }
    }
}

impl std::ops::DerefMut for Declarators {
    fn deref_mut(&mut self) -> &mut [Declarator] {
        match &mut self.0 {
            DeclaratorList::One(d) => std::slice::from_mut(d),
            DeclaratorList::Many(v) => v,
        }
    }
}

impl PartialEq for Declarators {
    fn eq(&self, other: &Declarators) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Declarators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Extend<Declarator> for Declarators {
    fn extend<I: IntoIterator<Item = Declarator>>(&mut self, iter: I) {
        iter.into_iter().for_each(|d| self.push(d));
    }
}

impl FromIterator<Declarator> for Declarators {
    fn from_iter<I: IntoIterator<Item = Declarator>>(iter: I) -> Declarators {
        let mut list = Declarators::new();
        list.extend(iter);
        list
    }
}

impl IntoIterator for Declarators {
    type Item = Declarator;
    type IntoIter = std::vec::IntoIter<Declarator>;
    fn into_iter(self) -> Self::IntoIter {
        match self.0 {
            DeclaratorList::One(d) => vec![d].into_iter(),
            DeclaratorList::Many(v) => v.into_iter(),
        }
    }
}

impl<'a> IntoIterator for &'a Declarators {
    type Item = &'a Declarator;
    type IntoIter = std::slice::Iter<'a, Declarator>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Declarators {
    type Item = &'a mut Declarator;
    type IntoIter = std::slice::IterMut<'a, Declarator>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// `.ptr .global .align 16` on a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtrAttr {
    pub space: Option<StateSpace>,
    pub align: Option<u64>,
}

/// `.managed` or `.unified(uuid1, uuid2)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attribute {
    Managed,
    Unified(Option<(u64, u64)>),
}

/// One declared name with its array dimensions, register range and initializer.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub name: Name,
    /// `%r<100>`: declares `%r0` .. `%r99`.
    pub range: Option<u32>,
    /// `[4][8]`; `None` for an unsized `[]` dimension.
    pub dims: Box<[Option<u64>]>,
    /// Boxed: rare in bodies, and a declarator is held in place.
    pub init: Option<Box<Initializer>>,
}

/// Splits a name into a register range's prefix and index, as ptxas
/// reads a range's members: `%r12` is member 12 of `%r<N>`, and so are
/// `%r012` and `%r0012` (decimal, leading zeros dropped: measured with
/// ptxas 12.9, `%s010` is `%s10`, `%s00` is `%s0`). `None` when the name
/// does not end in a number or the number does not fit a `u32` (ptxas
/// takes `%s4294967301` for `%s5`; that wrap is not followed: such a name
/// is no member here).
// Always inlined: the parser's member lookups (`FuncState::member_of`)
// were left calling it once their code grew (matrix_free +1.7 M).
#[inline(always)]
pub fn range_member(name: &str) -> Option<(&str, u32)> {
    let b = name.as_bytes();
    // The parser splits every use of a range member's name: one pass back
    // over the digits, summing them, while there are at most 9 (their
    // value fits a `u32` whatever they are); more go the general way
    // (iterator adapters and a second pass made it 93 host instructions a
    // name).
    let mut start = b.len();
    let (mut value, mut scale) = (0u32, 1u32);
    while start > 0 {
        let d = b[start - 1].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if b.len() - start == MEMBER_DIGITS_SUMMED {
            return long_range_member(name);
        }
        value += u32::from(d) * scale;
        scale = scale.wrapping_mul(10);
        start -= 1;
    }
    if start == 0 || start == b.len() {
        return None;
    }
    Some((name.split_at(start).0, value))
}

/// The digits [`range_member`] sums in its pass: 9 nines fit a `u32`.
const MEMBER_DIGITS_SUMMED: usize = 9;

/// [`range_member`] for a name ending in more than
/// [`MEMBER_DIGITS_SUMMED`] digits.
#[cold]
fn long_range_member(name: &str) -> Option<(&str, u32)> {
    let b = name.as_bytes();
    let count = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let start = b.len() - count;
    if start == 0 {
        return None;
    }
    let digits = &b[start..];
    // Leading zeros add nothing to the value.
    let zeros = digits[..count - 1].iter().take_while(|&&c| c == b'0').count();
    let value = plain_decimal_u64(&digits[zeros..])?;
    Some((&name[..start], u32::try_from(value).ok()?))
}

/// Whether `name` names a member of the register range `prefix<count>`
/// ([`range_member`]). Within one block ptxas finds a range's members
/// before the names declared on their own, so a register declared before
/// the range under a member's name spelled with leading zeros (`%r05`
/// before `%r<9>`) is no longer found by that name (spelled plainly, `%r5`
/// before `%r<9>`, ptxas rejects the range as a duplicate).
pub fn is_member_of(name: &str, prefix: &str, count: u32) -> bool {
    name.starts_with(prefix) && range_member(name).is_some_and(|(p, n)| p.len() == prefix.len() && n < count)
}

/// Whether `name`, a member of a range per [`range_member`], is written
/// as the member's own name (`%r12`, not `%r012`): the parser names a
/// member's register so however its uses spell it.
pub fn spells_member_plainly(name: &str) -> bool {
    range_member(name).is_some_and(|(prefix, _)| {
        let digits = &name.as_bytes()[prefix.len()..];
        digits.len() == 1 || digits[0] != b'0'
    })
}

/// The name of member `index` of the register range `prefix<N>`.
pub fn member_name(prefix: &str, index: u32) -> Name {
    format!("{prefix}{index}").into()
}

/// The value of a decimal number written without a leading zero (`0`
/// itself aside: `017` is octal in PTX) that fits a `u32`; `None` for
/// anything else, empty text included.
pub(crate) fn plain_decimal(digits: &[u8]) -> Option<u32> {
    plain_decimal_u64(digits).and_then(|v| u32::try_from(v).ok())
}

/// The most decimal digits whose value always fits a `u64` (`u64::MAX`
/// has 20).
pub(crate) const DIGITS_THAT_FIT_U64: usize = 19;

/// [`plain_decimal`] for values that fit a `u64`.
#[inline]
pub(crate) fn plain_decimal_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    let digit = |c: u8| c.is_ascii_digit().then(|| u64::from(c - b'0'));
    if digits.len() <= DIGITS_THAT_FIT_U64 {
        digits.iter().try_fold(0u64, |n, &c| Some(n * 10 + digit(c)?))
    } else {
        digits.iter().try_fold(0u64, |n, &c| n.checked_mul(10)?.checked_add(digit(c)?))
    }
}

/// The value after `=` in a declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Initializer {
    Expr(ConstExpr),
    /// A list that is not all plain decimal integers (see [`Initializer::list`]).
    List(Vec<Initializer>),
    /// A list of plain decimal integers, stored compactly.
    Ints(IntList),
    /// Texture/sampler fields: `{ filter_mode = nearest, addr_mode_0 = wrap }`.
    Fields(Vec<(Name, ConstExpr)>),
}

/// An integer literal: the value (two's complement for negative values made by
/// constant folding), how it was written, and whether it carries `U`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntLit {
    pub value: u64,
    pub radix: Radix,
    /// Unsigned (`.u64`) under the manual's rules: a `U` suffix or too big for `.s64`.
    pub unsigned: bool,
    /// Written with the `U` suffix.
    pub suffix: bool,
}

impl IntLit {
    pub fn dec(value: i64) -> IntLit {
        IntLit { value: value as u64, radix: Radix::Dec, unsigned: false, suffix: false }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Radix {
    Dec,
    Hex,
    Oct,
    Bin,
}

/// A floating-point literal.
#[derive(Clone, Debug, PartialEq)]
pub enum FloatLit {
    /// `0fXXXXXXXX`: an exact single-precision value.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`: an exact double-precision value.
    F64(u64),
    /// A decimal literal (boxed: rare, and an operand stays small).
    Dec(Box<DecimalLit>),
}

/// A decimal floating-point literal: its text (printed back as written)
/// and its double value's bits.
#[derive(Clone, Debug, PartialEq)]
pub struct DecimalLit {
    pub text: Name,
    pub bits: u64,
}

impl FloatLit {
    pub fn decimal(text: Name, bits: u64) -> FloatLit {
        FloatLit::Dec(Box::new(DecimalLit { text, bits }))
    }

    /// The value as a double (single-precision literals widen exactly).
    pub fn to_f64(&self) -> f64 {
        match self {
            FloatLit::F32(b) => f32::from_bits(*b) as f64,
            FloatLit::F64(b) => f64::from_bits(*b),
            FloatLit::Dec(d) => f64::from_bits(d.bits),
        }
    }
}

/// A constant expression, kept as written (initializers, debug sections).
#[derive(Clone, Debug, PartialEq)]
pub enum ConstExpr {
    Int(IntLit),
    Float(FloatLit),
    /// The address of a variable or function (or a label in debug sections).
    Sym(Name),
    /// `generic(sym)`.
    Generic(Box<ConstExpr>),
    /// `0xFF00(expr)`: the `mask()` operator.
    Mask(IntLit, Box<ConstExpr>),
    Unary(UnOp, Box<ConstExpr>),
    Binary(BinOp, Box<ConstExpr>, Box<ConstExpr>),
    Cond(Box<ConstExpr>, Box<ConstExpr>, Box<ConstExpr>),
    /// `(.s64) e` / `(.u64) e`.
    Cast(bool, Box<ConstExpr>),
}

impl ConstExpr {
    /// Every name this expression takes the address of (`WARP_SZ`, a
    /// constant, is none).
    pub fn symbols<'a>(&'a self, f: &mut dyn FnMut(&'a str)) {
        match self {
            ConstExpr::Sym(s) if &**s != "WARP_SZ" => f(s),
            ConstExpr::Sym(_) | ConstExpr::Int(_) | ConstExpr::Float(_) => {}
            ConstExpr::Generic(x) | ConstExpr::Mask(_, x) | ConstExpr::Unary(_, x) | ConstExpr::Cast(_, x) => x.symbols(f),
            ConstExpr::Binary(_, a, b) => {
                a.symbols(f);
                b.symbols(f);
            }
            ConstExpr::Cond(a, b, c) => {
                a.symbols(f);
                b.symbols(f);
                c.symbols(f);
            }
        }
    }
}

impl Initializer {
    /// A list of items: an [`IntList`] when every item is a plain decimal
    /// integer literal (the one representation of such a list), else `List`.
    pub fn list(items: Vec<Initializer>) -> Initializer {
        let plain = |i: &Initializer| matches!(i, Initializer::Expr(ConstExpr::Int(l)) if is_plain(l));
        if items.is_empty() || !items.iter().all(plain) {
            return Initializer::List(items);
        }
        let mut b = IntListBuilder::new();
        for i in &items {
            if let Initializer::Expr(ConstExpr::Int(l)) = i {
                b.push(l.value);
            }
        }
        match b.finish() {
            Some(l) => Initializer::Ints(l),
            None => Initializer::List(items),
        }
    }

    /// The number of items of a list (of the outermost level); `None` for
    /// an expression or fields.
    pub fn list_len(&self) -> Option<usize> {
        match self {
            Initializer::List(items) => Some(items.len()),
            Initializer::Ints(l) => Some(l.len()),
            Initializer::Expr(_) | Initializer::Fields(_) => None,
        }
    }

    /// Every expression of the initializer (texture and sampler fields name
    /// modes, not values, and are none).
    pub fn exprs(&self, f: &mut dyn FnMut(&ConstExpr)) {
        match self {
            Initializer::Expr(e) => f(e),
            Initializer::List(items) => items.iter().for_each(|i| i.exprs(f)),
            Initializer::Ints(l) => (0..l.len()).for_each(|i| f(&ConstExpr::Int(l.lit(i)))),
            Initializer::Fields(_) => {}
        }
    }

    /// Like [`Initializer::exprs`], skipping integer lists, which name no
    /// variable (for walks that only look for names).
    pub fn symbolic_exprs<'a>(&'a self, f: &mut dyn FnMut(&'a ConstExpr)) {
        match self {
            Initializer::Expr(e) => f(e),
            Initializer::List(items) => items.iter().for_each(|i| i.symbolic_exprs(f)),
            Initializer::Ints(_) | Initializer::Fields(_) => {}
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Plus,
    Neg,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

impl BinOp {
    /// C precedence level (higher binds tighter).
    pub fn precedence(self) -> u8 {
        use BinOp::*;
        match self {
            Mul | Div | Rem => 10,
            Add | Sub => 9,
            Shl | Shr => 8,
            Lt | Gt | Le | Ge => 7,
            Eq | Ne => 6,
            BitAnd => 5,
            BitXor => 4,
            BitOr => 3,
            And => 2,
            Or => 1,
        }
    }
    pub fn text(self) -> &'static str {
        use BinOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Rem => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            And => "&&",
            Or => "||",
        }
    }
}

impl UnOp {
    pub fn text(self) -> &'static str {
        match self {
            UnOp::Plus => "+",
            UnOp::Neg => "-",
            UnOp::Not => "!",
            UnOp::BitNot => "~",
        }
    }
}
