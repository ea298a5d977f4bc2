//! Variable initializers (PTX ISA 8.7 §5.4.4): a name denotes the address
//! of a `.global` or `.const` variable or of a function; an address may only
//! stand alone, be offset by a constant (`var+offset`), be made generic
//! (`generic(var)`) or be cut into bytes (`mask(var)`, a whole element);
//! a list has no more elements than its array (ptxas: "Greater number of
//! elements in array initializer").

use crate::ir::{BinOp, ConstExpr, Declarator, Initializer, VarDecl};
use crate::isa::StateSpace;

/// What a constant expression is, as far as addresses go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Constant,
    Address,
    /// An address in a place only constants may take.
    Misplaced,
}

/// Problems with the initializer of declarator `n` of `d`; `space_of` gives
/// the state space of a module variable (`None` for a function or an unknown
/// name) and `is_function` says whether a name is a module function.
pub(super) fn check(d: &VarDecl, n: &Declarator, space_of: &dyn Fn(&str) -> Option<StateSpace>, is_function: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let Some(init) = &n.init else { return out };
    let mut dims: Vec<Option<u64>> = n.dims.to_vec();
    if let Some(v) = d.vector {
        dims.push(Some(v as u64));
    }
    count(init, &dims, &n.name, &mut out);
    init.symbolic_exprs(&mut |e| {
        e.symbols(&mut |name| {
            let ok = is_function(name) || matches!(space_of(name), Some(StateSpace::Global | StateSpace::Const));
            if !ok {
                let what = match space_of(name) {
                    Some(s) => format!("`{name}` is a {} variable; only .global and .const variables and functions can be used in initializers", s.text()),
                    None => format!("`{name}` is not a variable or function of the module"),
                };
                out.push(format!("{what} (in the initializer of `{}`)", n.name));
            }
        });
        if element_shape(e) == Shape::Misplaced {
            out.push(format!("in the initializer of `{}`, an address can only be offset by a constant (`var+offset`) and `mask()` must be a whole element", n.name));
        }
    });
    out.dedup();
    out
}

/// Lists no longer than the dimension they initialize (a flat list may fill
/// all remaining dimensions).
fn count(init: &Initializer, dims: &[Option<u64>], name: &str, out: &mut Vec<String>) {
    let Some(len) = init.list_len() else { return };
    let Some(first) = dims.first() else { return };
    let items: &[Initializer] = match init {
        Initializer::List(items) => items,
        _ => &[],
    };
    let nested = items.iter().any(|i| i.list_len().is_some());
    let limit = if nested {
        *first
    } else {
        dims.iter().try_fold(1u64, |acc, d| d.map(|d| acc.saturating_mul(d)))
    };
    if let Some(limit) = limit {
        if len as u64 > limit {
            out.push(format!("the initializer of `{name}` has {len} elements, more than its {limit}"));
            return;
        }
    }
    if nested {
        for i in items {
            count(i, &dims[1..], name, out);
        }
    }
}

/// An element of an initializer: `mask(addr)` may only be a whole element.
fn element_shape(e: &ConstExpr) -> Shape {
    match e {
        // A byte of an address (or of a constant) is a constant.
        ConstExpr::Mask(_, x) => match shape(x) {
            Shape::Misplaced => Shape::Misplaced,
            _ => Shape::Constant,
        },
        _ => shape(e),
    }
}

fn shape(e: &ConstExpr) -> Shape {
    use Shape::*;
    let join = |parts: &[Shape]| if parts.contains(&Misplaced) { Misplaced } else if parts.contains(&Address) { Misplaced } else { Constant };
    match e {
        ConstExpr::Int(_) | ConstExpr::Float(_) => Constant,
        ConstExpr::Sym(s) if &**s == "WARP_SZ" => Constant,
        ConstExpr::Sym(_) => Address,
        ConstExpr::Generic(x) => match &**x {
            ConstExpr::Sym(_) => Address,
            _ => Misplaced,
        },
        ConstExpr::Mask(..) => Misplaced,
        ConstExpr::Cast(_, x) => shape(x),
        ConstExpr::Binary(BinOp::Add, a, b) => match (shape(a), shape(b)) {
            (Constant, Constant) => Constant,
            (Address, Constant) | (Constant, Address) => Address,
            _ => Misplaced,
        },
        ConstExpr::Binary(BinOp::Sub, a, b) => match (shape(a), shape(b)) {
            (Constant, Constant) => Constant,
            (Address, Constant) => Address,
            _ => Misplaced,
        },
        ConstExpr::Binary(_, a, b) => join(&[shape(a), shape(b)]),
        ConstExpr::Unary(_, x) => join(&[shape(x)]),
        ConstExpr::Cond(a, b, c) => join(&[shape(a), shape(b), shape(c)]),
    }
}
