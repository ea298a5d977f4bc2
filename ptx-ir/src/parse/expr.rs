//! Literals and constant expressions: parsing (C precedence, PTX ISA §4.5.4)
//! and evaluation by the manual's rules (§4.5.5–4.5.6: 64-bit signed/unsigned
//! integers, double-precision floats).

use super::cursor::{PResult, Parser};
use crate::ir::{BinOp, ConstExpr, FloatLit, Imm, IntLit, Radix, UnOp};
use crate::lexer::TokenKind;

/// Deepest nesting of parentheses and unary operators accepted.
pub const MAX_EXPR_DEPTH: u32 = 256;

/// Parses the text of an integer literal token. A plain decimal number
/// (offsets, shift amounts, counts: the commonest) is read in one pass of
/// its digits ([`crate::ir::plain_decimal_u64`]), not through the
/// prefixes, suffix and `from_str_radix` of [`written_int_literal`], which
/// gives the same literal (tested).
#[inline]
pub fn int_literal(text: &str) -> Option<IntLit> {
    if let Some(value) = crate::ir::plain_decimal_u64(text.as_bytes()) {
        return Some(IntLit { value, radix: Radix::Dec, unsigned: value > i64::MAX as u64, suffix: false });
    }
    written_int_literal(text)
}

/// [`int_literal`] of any text: a suffix `U`, a prefix of its radix.
fn written_int_literal(text: &str) -> Option<IntLit> {
    let (body, suffix) = match text.strip_suffix('U') {
        Some(b) => (b, true),
        None => (text, false),
    };
    let (digits, radix, base) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        (h, Radix::Hex, 16)
    } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        (b, Radix::Bin, 2)
    } else if body.len() > 1 && body.starts_with('0') {
        (&body[1..], Radix::Oct, 8)
    } else {
        (body, Radix::Dec, 10)
    };
    let value = u64::from_str_radix(digits, base).ok()?;
    Some(IntLit { value, radix, unsigned: suffix || value > i64::MAX as u64, suffix })
}

/// Parses the text of a floating-point literal token.
pub fn float_literal(kind: TokenKind, text: &str) -> Option<FloatLit> {
    match kind {
        TokenKind::HexF32 => u32::from_str_radix(&text[2..], 16).ok().map(FloatLit::F32),
        TokenKind::HexF64 => u64::from_str_radix(&text[2..], 16).ok().map(FloatLit::F64),
        _ => text.parse::<f64>().ok().map(|v| FloatLit::decimal(text.into(), v.to_bits())),
    }
}

/// The value of a constant expression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExprValue {
    Int { value: u64, unsigned: bool },
    Float(f64),
}

impl Parser<'_> {
    /// A constant expression (with `?:`).
    pub fn const_expr(&mut self) -> PResult<ConstExpr> {
        self.cexpr_cond(0)
    }

    fn depth_check(&self, depth: u32) -> PResult<()> {
        if depth > MAX_EXPR_DEPTH {
            return self.error_at(self.peek().span, format!("expression nested more than {MAX_EXPR_DEPTH} levels deep"));
        }
        Ok(())
    }

    fn cexpr_cond(&mut self, depth: u32) -> PResult<ConstExpr> {
        self.depth_check(depth)?;
        let c = self.cexpr_binary(1, depth)?;
        if self.eat(TokenKind::Question) {
            let a = self.cexpr_cond(depth + 1)?;
            self.expect(TokenKind::Colon, "`:` of a conditional expression")?;
            let b = self.cexpr_cond(depth + 1)?;
            return Ok(ConstExpr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binop(&self) -> Option<BinOp> {
        use TokenKind::*;
        Some(match self.kind() {
            Star => BinOp::Mul,
            Slash => BinOp::Div,
            Percent => BinOp::Rem,
            Plus => BinOp::Add,
            Minus => BinOp::Sub,
            Shl => BinOp::Shl,
            Shr => BinOp::Shr,
            Lt => BinOp::Lt,
            Gt => BinOp::Gt,
            Le => BinOp::Le,
            Ge => BinOp::Ge,
            EqEq => BinOp::Eq,
            Ne => BinOp::Ne,
            Amp => BinOp::BitAnd,
            Caret => BinOp::BitXor,
            Pipe => BinOp::BitOr,
            AndAnd => BinOp::And,
            OrOr => BinOp::Or,
            _ => return None,
        })
    }

    /// Precedence climbing over the binary operators; left-associative.
    fn cexpr_binary(&mut self, min_prec: u8, depth: u32) -> PResult<ConstExpr> {
        let mut lhs = self.cexpr_unary(depth)?;
        while let Some(op) = self.binop() {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            self.bump();
            let rhs = self.cexpr_binary(prec + 1, depth + 1)?;
            lhs = ConstExpr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn cexpr_unary(&mut self, depth: u32) -> PResult<ConstExpr> {
        self.depth_check(depth)?;
        let op = match self.kind() {
            TokenKind::Plus => UnOp::Plus,
            TokenKind::Minus => UnOp::Neg,
            TokenKind::Bang => UnOp::Not,
            TokenKind::Tilde => UnOp::BitNot,
            _ => return self.cexpr_primary(depth),
        };
        self.bump();
        let e = self.cexpr_unary(depth + 1)?;
        Ok(ConstExpr::Unary(op, Box::new(e)))
    }

    fn cexpr_primary(&mut self, depth: u32) -> PResult<ConstExpr> {
        let t = self.peek();
        match t.kind {
            TokenKind::Int => {
                self.bump();
                let Some(lit) = int_literal(self.text(t)) else {
                    return self.error_at(t.span, format!("integer {} does not fit in 64 bits", self.describe(t)));
                };
                // `0xFF(expr)`: the mask() operator of initializers.
                if self.at(TokenKind::LParen) && self.peek().glued {
                    self.bump();
                    let e = self.cexpr_cond(depth + 1)?;
                    self.expect(TokenKind::RParen, "`)` closing a mask() operand")?;
                    return Ok(ConstExpr::Mask(lit, Box::new(e)));
                }
                Ok(ConstExpr::Int(lit))
            }
            TokenKind::Float | TokenKind::HexF32 | TokenKind::HexF64 => {
                self.bump();
                match float_literal(t.kind, self.text(t)) {
                    Some(f) => Ok(ConstExpr::Float(f)),
                    None => self.error_at(t.span, format!("malformed floating-point literal {}", self.describe(t))),
                }
            }
            TokenKind::Ident => {
                self.bump();
                let name = self.text(t);
                if name == "generic" && self.at(TokenKind::LParen) {
                    self.bump();
                    let e = self.cexpr_cond(depth + 1)?;
                    self.expect(TokenKind::RParen, "`)` closing generic()")?;
                    return Ok(ConstExpr::Generic(Box::new(e)));
                }
                Ok(ConstExpr::Sym(name.into()))
            }
            TokenKind::DotWord => {
                // Section-relative references in debug data: `.b32 .debug_abbrev`.
                self.bump();
                Ok(ConstExpr::Sym(self.text(t).into()))
            }
            TokenKind::LParen => {
                self.bump();
                if self.at(TokenKind::DotWord) && matches!(self.text(self.peek()), ".s64" | ".u64") && self.peek_at(1).kind == TokenKind::RParen {
                    let signed = self.text(self.peek()) == ".s64";
                    self.bump();
                    self.bump();
                    let e = self.cexpr_unary(depth + 1)?;
                    return Ok(ConstExpr::Cast(signed, Box::new(e)));
                }
                let e = self.cexpr_cond(depth + 1)?;
                self.expect(TokenKind::RParen, "`)`")?;
                Ok(e)
            }
            _ => self.expected("a constant expression"),
        }
    }
}

/// Evaluates a constant expression. Symbols have no compile-time value except `WARP_SZ` (32).
pub fn eval(e: &ConstExpr) -> Result<ExprValue, String> {
    eval_depth(e, 0)
}

fn eval_depth(e: &ConstExpr, depth: u32) -> Result<ExprValue, String> {
    use ExprValue::*;
    if depth > 4 * MAX_EXPR_DEPTH {
        return Err("expression too deep".into());
    }
    let d = depth + 1;
    Ok(match e {
        ConstExpr::Int(l) => Int { value: l.value, unsigned: l.unsigned },
        ConstExpr::Float(f) => match f {
            FloatLit::Dec(_) | FloatLit::F64(_) => Float(f.to_f64()),
            FloatLit::F32(_) => Float(f.to_f64()),
        },
        ConstExpr::Sym(s) if &**s == "WARP_SZ" => Int { value: 32, unsigned: false },
        ConstExpr::Sym(s) => return Err(format!("`{s}` is an address, not a constant")),
        ConstExpr::Generic(_) | ConstExpr::Mask(..) => return Err("generic() and mask() are only allowed in initializers".into()),
        ConstExpr::Cast(signed, x) => match eval_depth(x, d)? {
            Int { value, .. } => Int { value, unsigned: !signed },
            Float(_) => return Err("casts apply to integers only".into()),
        },
        ConstExpr::Unary(op, x) => {
            let v = eval_depth(x, d)?;
            match (op, v) {
                (UnOp::Plus, v) => v,
                (UnOp::Neg, Int { value, unsigned }) => Int { value: value.wrapping_neg(), unsigned },
                (UnOp::Neg, Float(f)) => Float(-f),
                (UnOp::Not, Int { value, .. }) => Int { value: (value == 0) as u64, unsigned: false },
                (UnOp::BitNot, Int { value, .. }) => Int { value: !value, unsigned: true },
                (_, Float(_)) => return Err(format!("`{}` applies to integers only", op.text())),
            }
        }
        ConstExpr::Cond(c, a, b) => {
            let c = match eval_depth(c, d)? {
                Int { value, .. } => value != 0,
                Float(_) => return Err("the condition of `?:` must be an integer".into()),
            };
            let (a, b) = (eval_depth(a, d)?, eval_depth(b, d)?);
            match (a, b) {
                (Int { value: x, unsigned: ux }, Int { value: y, unsigned: uy }) => Int { value: if c { x } else { y }, unsigned: ux || uy },
                (Float(x), Float(y)) => Float(if c { x } else { y }),
                _ => return Err("both arms of `?:` must be integers or both floats".into()),
            }
        }
        ConstExpr::Binary(op, a, b) => binary(*op, eval_depth(a, d)?, eval_depth(b, d)?)?,
    })
}

fn binary(op: BinOp, a: ExprValue, b: ExprValue) -> Result<ExprValue, String> {
    use ExprValue::*;
    let bool_int = |b: bool| Int { value: b as u64, unsigned: false };
    match (a, b) {
        (Float(x), Float(y)) => Ok(match op {
            BinOp::Add => Float(x + y),
            BinOp::Sub => Float(x - y),
            BinOp::Mul => Float(x * y),
            BinOp::Div => Float(x / y),
            BinOp::Lt => bool_int(x < y),
            BinOp::Gt => bool_int(x > y),
            BinOp::Le => bool_int(x <= y),
            BinOp::Ge => bool_int(x >= y),
            BinOp::Eq => bool_int(x == y),
            BinOp::Ne => bool_int(x != y),
            _ => return Err(format!("`{}` applies to integers only", op.text())),
        }),
        (Int { value: x, unsigned: ux }, Int { value: y, unsigned: uy }) => {
            let u = ux || uy;
            Ok(match op {
                BinOp::Add => Int { value: x.wrapping_add(y), unsigned: u },
                BinOp::Sub => Int { value: x.wrapping_sub(y), unsigned: u },
                BinOp::Mul => Int { value: x.wrapping_mul(y), unsigned: u },
                BinOp::Div => {
                    if y == 0 {
                        return Err("division by zero in a constant expression".into());
                    }
                    let v = if u { x / y } else { (x as i64).wrapping_div(y as i64) as u64 };
                    Int { value: v, unsigned: u }
                }
                BinOp::Rem => {
                    if y == 0 {
                        return Err("remainder by zero in a constant expression".into());
                    }
                    Int { value: x % y, unsigned: false }
                }
                BinOp::Shl => Int { value: if y >= 64 { 0 } else { x << y }, unsigned: ux },
                BinOp::Shr => {
                    let v = if ux {
                        if y >= 64 { 0 } else { x >> y }
                    } else {
                        ((x as i64) >> y.min(63)) as u64
                    };
                    Int { value: v, unsigned: ux }
                }
                BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
                    let ord = if u { x.cmp(&y) } else { (x as i64).cmp(&(y as i64)) };
                    bool_int(match op {
                        BinOp::Lt => ord.is_lt(),
                        BinOp::Gt => ord.is_gt(),
                        BinOp::Le => ord.is_le(),
                        _ => ord.is_ge(),
                    })
                }
                BinOp::Eq => bool_int(x == y),
                BinOp::Ne => bool_int(x != y),
                BinOp::BitAnd => Int { value: x & y, unsigned: u },
                BinOp::BitXor => Int { value: x ^ y, unsigned: u },
                BinOp::BitOr => Int { value: x | y, unsigned: u },
                BinOp::And => bool_int(x != 0 && y != 0),
                BinOp::Or => bool_int(x != 0 || y != 0),
            })
        }
        _ => Err("constant expressions do not mix integers and floats".into()),
    }
}

/// Evaluates to an integer (array sizes, offsets).
pub fn eval_int(e: &ConstExpr) -> Result<i64, String> {
    match eval(e)? {
        ExprValue::Int { value, .. } => Ok(value as i64),
        ExprValue::Float(_) => Err("expected an integer constant, found a floating-point value".into()),
    }
}

/// Turns an operand's constant expression into an immediate, keeping how a
/// lone (possibly negated) literal was written.
pub fn to_imm(e: &ConstExpr) -> Result<Imm, String> {
    match e {
        ConstExpr::Int(l) => return Ok(Imm::Int(*l)),
        ConstExpr::Float(f) => return Ok(Imm::Float(f.clone())),
        ConstExpr::Unary(UnOp::Neg, x) => match &**x {
            ConstExpr::Int(l) => return Ok(Imm::Int(IntLit { value: l.value.wrapping_neg(), ..*l })),
            ConstExpr::Float(FloatLit::Dec(d)) if !d.text.starts_with('-') => {
                return Ok(Imm::Float(FloatLit::decimal(format!("-{}", d.text).into(), d.bits ^ (1 << 63))))
            }
            ConstExpr::Float(FloatLit::F32(b)) => return Ok(Imm::Float(FloatLit::F32(b ^ (1 << 31)))),
            ConstExpr::Float(FloatLit::F64(b)) => return Ok(Imm::Float(FloatLit::F64(b ^ (1 << 63)))),
            _ => {}
        },
        _ => {}
    }
    Ok(match eval(e)? {
        ExprValue::Int { value, unsigned } => Imm::Int(IntLit { value, radix: Radix::Dec, unsigned, suffix: unsigned }),
        ExprValue::Float(f) => Imm::Float(FloatLit::F64(f.to_bits())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_follow_the_manual() {
        assert_eq!(int_literal("42").unwrap(), IntLit { value: 42, radix: Radix::Dec, unsigned: false, suffix: false });
        assert!(int_literal("0xfabc123400000000").unwrap().unsigned);
        assert!(int_literal("42U").unwrap().unsigned);
        assert_eq!(int_literal("017").unwrap().value, 15);
        assert_eq!(int_literal("0b101").unwrap().value, 5);
        assert!(int_literal("0x1ffffffffffffffff").is_none());
    }

    /// [`int_literal`]'s plain decimals give what the general reading
    /// gives: digits of every length to past `u64::MAX`, leading zeros
    /// (octal), the bounds of `i64` and `u64`, signs, suffixes, prefixes,
    /// other bytes.
    #[test]
    fn plain_decimal_literals_read_as_written_ones() {
        let mut texts: Vec<String> = [
            "", "0", "00", "01", "08", "1", "9", "10", "017", "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
            "99999999999999999999", "000000000000000000001", "+5", "-5", "5U", "0U", "0x10", "0X10", "0b1", "1_0", "1 ", " 1", "\u{661}", "12a", "1.0",
        ]
        .map(String::from)
        .to_vec();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in 1..=22 {
            for _ in 0..200 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let digits: String = (0..len).map(|k| char::from(b'0' + ((x >> (k % 60)) % 10) as u8)).collect();
                texts.push(digits);
            }
        }
        for t in &texts {
            assert_eq!(int_literal(t), written_int_literal(t), "{t:?}");
        }
    }

    fn lit(v: i64) -> Box<ConstExpr> {
        Box::new(ConstExpr::Int(IntLit::dec(v)))
    }

    #[test]
    fn signedness_rules() {
        // -1 >> 1 is an arithmetic shift (signed); ~0 is unsigned so ~0 >> 63 is 1.
        let e = ConstExpr::Binary(BinOp::Shr, Box::new(ConstExpr::Unary(UnOp::Neg, lit(1))), lit(1));
        assert_eq!(eval(&e).unwrap(), ExprValue::Int { value: u64::MAX, unsigned: false });
        let e = ConstExpr::Binary(BinOp::Shr, Box::new(ConstExpr::Unary(UnOp::BitNot, lit(0))), lit(63));
        assert_eq!(eval(&e).unwrap(), ExprValue::Int { value: 1, unsigned: true });
        // Ordered comparison after the usual conversions: -1 < 1U is false (both unsigned).
        let one_u = Box::new(ConstExpr::Int(IntLit { value: 1, radix: Radix::Dec, unsigned: true, suffix: true }));
        let e = ConstExpr::Binary(BinOp::Lt, Box::new(ConstExpr::Unary(UnOp::Neg, lit(1))), one_u);
        assert_eq!(eval(&e).unwrap(), ExprValue::Int { value: 0, unsigned: false });
        assert!(eval(&ConstExpr::Binary(BinOp::Div, lit(1), lit(0))).is_err());
    }
}
