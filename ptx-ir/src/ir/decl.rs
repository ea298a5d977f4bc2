//! A declaration statement of a body ([`Stmt::Decl`](super::Stmt::Decl)).
//!
//! Old-style PTX declares each register on a line of its own
//! (`.reg .u32 %r5;`), tens of thousands in a kernel. Such a plain register
//! declaration (`.reg`, one name, perhaps a vector or a range `<N>`, no
//! array, initializer or attribute) is held in the statement itself, with
//! no allocation of its own; any other declaration is a boxed [`VarDecl`].
//! Every way of making or changing a [`Decl`] keeps one representation
//! per declaration (a plain one is never boxed), so `==` compares what is
//! written, and [`Decl::var`] gives any declaration as a [`VarDecl`].

use super::{Declarator, Declarators, Initializer, Name, VarDecl};
use crate::isa::{ScalarType, StateSpace};
use std::borrow::Cow;

/// A declaration in a function body: a plain register declaration held in
/// place, any other boxed (module doc).
#[derive(Clone, PartialEq)]
pub struct Decl(Repr);

#[derive(Clone, PartialEq)]
enum Repr {
    /// `.reg {.vN} .ty name{<range>};`. The vector and the range are
    /// written out as a byte (0: none) and a flag so that a statement
    /// stays 32 bytes.
    Reg { ty: ScalarType, vector: u8, ranged: bool, range: u32, name: Name },
    Var(Box<VarDecl>),
}

/// One declared name of a [`Decl`], as [`Decl::names`] reads it: a
/// [`Declarator`]'s fields by reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeclName<'a> {
    pub name: &'a Name,
    /// `%r<100>`: declares `%r0` .. `%r99`.
    pub range: Option<u32>,
    /// `[4][8]`; `None` for an unsized `[]` dimension.
    pub dims: &'a [Option<u64>],
    pub init: Option<&'a Initializer>,
}

impl<'a> From<&'a Declarator> for DeclName<'a> {
    fn from(d: &'a Declarator) -> DeclName<'a> {
        DeclName { name: &d.name, range: d.range, dims: &d.dims, init: d.init.as_deref() }
    }
}

impl DeclName<'_> {
    /// The [`Declarator`] it reads.
    pub fn to_declarator(&self) -> Declarator {
        Declarator { name: self.name.clone(), range: self.range, dims: self.dims.into(), init: self.init.map(|i| Box::new(i.clone())) }
    }
}

/// The names of a [`Decl`], in order.
#[derive(Clone)]
pub struct DeclNames<'a>(NamesRepr<'a>);

#[derive(Clone)]
enum NamesRepr<'a> {
    One(Option<DeclName<'a>>),
    Many(std::slice::Iter<'a, Declarator>),
}

impl<'a> Iterator for DeclNames<'a> {
    type Item = DeclName<'a>;
    #[inline]
    fn next(&mut self) -> Option<DeclName<'a>> {
        match &mut self.0 {
            NamesRepr::One(n) => n.take(),
            NamesRepr::Many(it) => it.next().map(DeclName::from),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            NamesRepr::One(n) => usize::from(n.is_some()),
            NamesRepr::Many(it) => it.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for DeclNames<'_> {}

/// The vector count as held in place (0: none); `None` when it cannot be
/// (`.v0` is never written, but a hand-made declaration may say it).
fn vector_byte(vector: Option<u8>) -> Option<u8> {
    match vector {
        None => Some(0),
        Some(0) => None,
        Some(n) => Some(n),
    }
}

impl Decl {
    /// `.space .ty name`, as [`VarDecl::new`] (the parser's commonest
    /// declaration), held in place for `.reg`.
    pub fn plain(space: StateSpace, ty: ScalarType, name: &str) -> Decl {
        match space {
            StateSpace::Reg => Decl(Repr::Reg { ty, vector: 0, ranged: false, range: 0, name: name.into() }),
            _ => Decl(Repr::Var(Box::new(VarDecl::new(space, ty, name)))),
        }
    }

    /// `d`, held in place when it is a plain register declaration.
    pub fn new(mut d: VarDecl) -> Decl {
        match (d.space, vector_byte(d.vector), d.attrs.is_none(), &mut *d.names) {
            (StateSpace::Reg, Some(vector), true, [n]) if n.dims.is_empty() && n.init.is_none() => {
                let (ranged, range) = (n.range.is_some(), n.range.unwrap_or(0));
                Decl(Repr::Reg { ty: d.ty, vector, ranged, range, name: std::mem::take(&mut n.name) })
            }
            _ => Decl(Repr::Var(Box::new(d))),
        }
    }

    pub fn space(&self) -> StateSpace {
        match &self.0 {
            Repr::Reg { .. } => StateSpace::Reg,
            Repr::Var(d) => d.space,
        }
    }

    pub fn ty(&self) -> ScalarType {
        match &self.0 {
            Repr::Reg { ty, .. } => *ty,
            Repr::Var(d) => d.ty,
        }
    }

    /// `.v2`, `.v4`, `.v8`.
    pub fn vector(&self) -> Option<u8> {
        match &self.0 {
            Repr::Reg { vector, .. } => (*vector != 0).then_some(*vector),
            Repr::Var(d) => d.vector,
        }
    }

    /// The declared names, in order.
    #[inline]
    pub fn names(&self) -> DeclNames<'_> {
        DeclNames(match &self.0 {
            Repr::Reg { ranged, range, name, .. } => NamesRepr::One(Some(DeclName { name, range: ranged.then_some(*range), dims: &[], init: None })),
            Repr::Var(d) => NamesRepr::Many(d.names.iter()),
        })
    }

    /// How many names it declares.
    pub fn name_count(&self) -> usize {
        match &self.0 {
            Repr::Reg { .. } => 1,
            Repr::Var(d) => d.names.len(),
        }
    }

    /// Name `k`, or `None` past the last.
    pub fn name(&self, k: usize) -> Option<DeclName<'_>> {
        self.names().nth(k)
    }

    /// The declaration as a boxed [`VarDecl`]; `None` for a plain register
    /// declaration, which is held in place (so never for a declaration
    /// with an array, an initializer or an attribute).
    pub fn as_var(&self) -> Option<&VarDecl> {
        match &self.0 {
            Repr::Reg { .. } => None,
            Repr::Var(d) => Some(d),
        }
    }

    /// The declaration as a [`VarDecl`] (made for a plain register one).
    pub fn var(&self) -> Cow<'_, VarDecl> {
        match &self.0 {
            Repr::Reg { ty, vector, ranged, range, name } => Cow::Owned(reg_var(*ty, *vector, *ranged, *range, name.clone())),
            Repr::Var(d) => Cow::Borrowed(d),
        }
    }

    pub fn into_var(self) -> VarDecl {
        match self.0 {
            Repr::Var(d) => *d,
            Repr::Reg { ty, vector, ranged, range, name } => reg_var(ty, vector, ranged, range, name),
        }
    }

    /// The range of a declaration of one name (`%r<N>`: `Some(N)`), to
    /// change in place; `None` when it declares several names or none.
    pub fn range_mut(&mut self) -> Option<RangeMut<'_>> {
        match &mut self.0 {
            Repr::Reg { ranged, range, .. } => Some(RangeMut(RangeRepr::Reg { ranged, range })),
            Repr::Var(d) => match &mut *d.names {
                [n] => Some(RangeMut(RangeRepr::Var(&mut n.range))),
                _ => None,
            },
        }
    }

    /// Changes the declaration through `change` on it as a [`VarDecl`]
    /// (boxed for the time of the change when it is a plain register
    /// declaration), then holds it in place again if it is plain.
    pub fn modify<R>(&mut self, change: impl FnOnce(&mut VarDecl) -> R) -> R {
        let mut d = match std::mem::replace(&mut self.0, Repr::Reg { ty: ScalarType::B32, vector: 0, ranged: false, range: 0, name: Name::default() }) {
            Repr::Var(d) => d,
            reg => Box::new(Decl(reg).into_var()),
        };
        let r = change(&mut d);
        *self = Decl::new_boxed(d);
        r
    }

    /// Replaces the names, giving back the old ones.
    pub fn replace_names(&mut self, mut names: Declarators) -> Declarators {
        // One plain name for one plain name: in place.
        if let (Repr::Reg { ranged, range, name, .. }, [n]) = (&mut self.0, &mut *names) {
            if n.dims.is_empty() && n.init.is_none() {
                let old = Declarator { name: std::mem::take(name), range: ranged.then_some(*range), dims: Box::default(), init: None };
                (*name, *ranged, *range) = (std::mem::take(&mut n.name), n.range.is_some(), n.range.unwrap_or(0));
                return Declarators::one(old);
            }
        }
        self.modify(|d| std::mem::replace(&mut d.names, names))
    }

    /// `d` held in place when plain; kept in its box otherwise.
    fn new_boxed(d: Box<VarDecl>) -> Decl {
        match (d.space, vector_byte(d.vector), d.attrs.is_none(), &*d.names) {
            (StateSpace::Reg, Some(_), true, [n]) if n.dims.is_empty() && n.init.is_none() => Decl::new(*d),
            _ => Decl(Repr::Var(d)),
        }
    }
}

/// A plain register declaration as a [`VarDecl`].
fn reg_var(ty: ScalarType, vector: u8, ranged: bool, range: u32, name: Name) -> VarDecl {
    let n = Declarator { name, range: ranged.then_some(range), dims: Box::default(), init: None };
    VarDecl { space: StateSpace::Reg, vector: (vector != 0).then_some(vector), ty, names: Declarators::one(n), attrs: None }
}

/// The range of a declaration of one name, to read and change in place
/// ([`Decl::range_mut`]).
pub struct RangeMut<'a>(RangeRepr<'a>);

enum RangeRepr<'a> {
    Reg { ranged: &'a mut bool, range: &'a mut u32 },
    Var(&'a mut Option<u32>),
}

impl RangeMut<'_> {
    pub fn get(&self) -> Option<u32> {
        match &self.0 {
            RangeRepr::Reg { ranged, range } => ranged.then_some(**range),
            RangeRepr::Var(r) => **r,
        }
    }

    pub fn set(&mut self, to: Option<u32>) {
        match &mut self.0 {
            RangeRepr::Reg { ranged, range } => {
                **ranged = to.is_some();
                **range = to.unwrap_or(0);
            }
            RangeRepr::Var(r) => **r = to,
        }
    }
}

impl From<VarDecl> for Decl {
    fn from(d: VarDecl) -> Decl {
        Decl::new(d)
    }
}

/// As the [`VarDecl`] it is.
impl std::fmt::Debug for Decl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.var().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Attribute, VarAttributes};

    /// A plain register declaration is held in place; anything more is
    /// boxed; both read back as the declaration they were made from, and
    /// a change that makes a declaration plain holds it in place again.
    #[test]
    fn plain_register_declarations_are_held_in_place() {
        let mut ranged = VarDecl::new(StateSpace::Reg, ScalarType::U32, "%r");
        ranged.names[0].range = Some(7);
        let mut vector = VarDecl::new(StateSpace::Reg, ScalarType::F32, "%v");
        vector.vector = Some(4);
        let plain = [VarDecl::new(StateSpace::Reg, ScalarType::U32, "%r5"), VarDecl::new(StateSpace::Reg, ScalarType::Pred, "%a_long_register_name"), ranged, vector];
        let mut two = VarDecl::new(StateSpace::Reg, ScalarType::U32, "%a");
        two.names.push(Declarator::new("%b"));
        let mut attributed = VarDecl::new(StateSpace::Reg, ScalarType::U32, "%r");
        attributed.attrs = Some(Box::new(VarAttributes { attributes: vec![Attribute::Managed], ..VarAttributes::default() }));
        let mut v0 = VarDecl::new(StateSpace::Reg, ScalarType::U32, "%r");
        v0.vector = Some(0);
        let boxed = [VarDecl::new(StateSpace::Local, ScalarType::U32, "x"), VarDecl::new(StateSpace::Reg, ScalarType::U32, "%r").array(&[4]), two, attributed, v0, VarDecl::default()];
        for (d, in_place) in plain.iter().map(|d| (d, true)).chain(boxed.iter().map(|d| (d, false))) {
            let decl = Decl::new(d.clone());
            assert_eq!(decl.as_var().is_none(), in_place, "{d:?}");
            assert_eq!(*decl.var(), *d);
            assert_eq!((decl.space(), decl.ty(), decl.vector(), decl.name_count()), (d.space, d.ty, d.vector, d.names.len()));
            assert!(decl.names().eq(d.names.iter().map(DeclName::from)));
            assert_eq!(format!("{decl:?}"), format!("{d:?}"));
            assert_eq!(decl.clone().into_var(), *d);
            let mut changed = decl.clone();
            changed.modify(|_| {});
            assert_eq!(changed, decl);
        }
        // Names replaced in place (one plain name for one) give what a
        // change through a `VarDecl` gives.
        let mut ranged = Declarator::new("%d");
        ranged.range = Some(2);
        let lists = [Declarators::one(Declarator::new("%c")), Declarators::one(ranged), boxed[2].names.clone(), boxed[1].names.clone(), Declarators::new()];
        for d in plain.iter().chain(&boxed) {
            for list in &lists {
                let (mut shortcut, mut general) = (Decl::new(d.clone()), Decl::new(d.clone()));
                let old = shortcut.replace_names(list.clone());
                let general_old = general.modify(|d| std::mem::replace(&mut d.names, list.clone()));
                assert_eq!((&shortcut, &old), (&general, &general_old), "{d:?} {list:?}");
                assert_eq!(shortcut.as_var().is_none(), d.space == StateSpace::Reg && d.attrs.is_none() && d.vector != Some(0) && list.len() == 1 && list[0].dims.is_empty(), "{d:?} {list:?}");
            }
        }
        let mut d = Decl::plain(StateSpace::Reg, ScalarType::U32, "%c");
        let mut r = d.range_mut().unwrap();
        assert_eq!(r.get(), None);
        r.set(Some(3));
        assert_eq!(d.name(0).unwrap().range, Some(3));
    }
}
