//! The e-graph language: one node kind for every pure instruction of the
//! ISA, plus typed constants and opaque leaves.
//!
//! An [`Node::Op`] is a *shape* and its children. A shape is the instruction
//! with its operands abstracted: the destination is the placeholder register
//! [`DEST`] and the k-th source value is the placeholder `RegId(k)`, so the
//! opcode, the matched form and every modifier (type, rounding, `.ftz`,
//! `.sat`, operand prefixes such as `!p`) are part of what the node means,
//! exactly as the ISA tables say. Shapes are interned per e-graph
//! ([`ShapeTable`]); the node holds the small [`ShapeId`], so the e-graph's
//! hash-consing merges identical instructions on identical values (global
//! value numbering). The shapes themselves are made once per thread and
//! shared by the tables of its e-graphs (`MadeShapes`).
//!
//! A value is the full content of the register that would hold it: the
//! shape's `width` is the destination register's width, and a result
//! narrower than it is extended the way the hardware writes a register
//! (see [`Shape::eval`]).

use egg::Id;
use ptx_ir::eval::{self, Dialect, Quality};
use ptx_ir::ir::{Instruction, Operand, Operands, Prefix, RegId, RegOperand};
use ptx_ir::isa::{Mod, Opcode, ScalarType, TypeClass};
use rustc_hash::{FxHashMap, FxHasher};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::rc::Rc;

/// The destination placeholder of a shape.
pub const DEST: RegId = RegId(u32::MAX);

/// An interned shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeId(pub u32);

/// An opaque value: a register version the engine does not look into, a
/// special register, a symbol's address. Indexes the engine's leaf table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeafId(pub u32);

/// An e-node.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Node {
    /// A pure instruction on its children's values.
    Op(ShapeId, SmallVec<[Id; 3]>),
    /// A bit pattern of `width` bits (1 for predicates).
    Const { width: u8, bits: u128 },
    Leaf(LeafId),
}

/// Up to three children written in place, more copied as a slice:
/// `SmallVec`'s own `clone` collects them one by one through `extend`, and
/// `from_slice` calls `memcpy` for a few bytes (egg clones a node three
/// times to add it and once more to rebuild it; matrix_free -O2: 64k
/// clones, 2.8 M host instructions with the slice copied).
impl Clone for Node {
    #[inline]
    fn clone(&self) -> Node {
        match self {
            Node::Op(shape, kids) => Node::Op(*shape, kids_copy(kids)),
            Node::Const { width, bits } => Node::Const { width: *width, bits: *bits },
            Node::Leaf(l) => Node::Leaf(*l),
        }
    }
}

/// A copy of a node's children (see `Clone for Node`): up to three in
/// place, unused places zero.
#[inline]
fn kids_copy(kids: &[Id]) -> SmallVec<[Id; 3]> {
    let at = |k: usize| kids.get(k).copied().unwrap_or(Id::from(0usize));
    match kids.len() {
        n @ 0..=3 => SmallVec::from_buf_and_len([at(0), at(1), at(2)], n),
        _ => spilled_kids_copy(kids),
    }
}

/// A copy of more than three children, on the heap (rare: out of the way
/// of [`kids_copy`], whose copy in place then needs no registers saved).
#[cold]
#[inline(never)]
fn spilled_kids_copy(kids: &[Id]) -> SmallVec<[Id; 3]> {
    SmallVec::from_slice(kids)
}

/// Hashed in words: the kind with the shape and the number of children (or
/// the constant's width, the leaf), then the children two to a word. egg
/// hashes every node it adds, looks up and rebuilds (matrix_free -O2: the
/// derived hash, a word per field and per child, was 3.2 M host
/// instructions). Equal nodes give equal words. Only egg's table of nodes
/// hashes them, and nothing reads that table in its order.
impl std::hash::Hash for Node {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            Node::Op(shape, kids) => {
                let id = |k: usize| kids.get(k).map_or(0, |&c| usize::from(c) as u64);
                h.write_u64(u64::from(shape.0) | (kids.len() as u64) << 32);
                h.write_u64(id(0) | id(1) << 32);
                if kids.len() > 2 {
                    for pair in kids[2..].chunks(2) {
                        let id = |k: usize| pair.get(k).map_or(0, |&c| usize::from(c) as u64);
                        h.write_u64(id(0) | id(1) << 32);
                    }
                }
            }
            Node::Const { width, bits } => {
                h.write_u64(1 << 63 | u64::from(*width));
                h.write_u128(*bits);
            }
            Node::Leaf(l) => h.write_u64(1 << 62 | u64::from(l.0)),
        }
    }
}

impl egg::Language for Node {
    /// What egg keys its per-operator index of classes by, and filters
    /// pattern matches with: one key for every node. The engine's rules
    /// read neither (they search the classes [`crate::rules::RootIndex`]
    /// lists), and egg rebuilds the index on every rebuild: one key makes
    /// it one set of classes instead of a set per shape.
    type Discriminant = ();

    fn discriminant(&self) {}

    fn matches(&self, other: &Self) -> bool {
        match (self, other) {
            (Node::Op(a, x), Node::Op(b, y)) => a == b && x.len() == y.len(),
            (a, b) => a == b,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            Node::Op(_, c) => c,
            _ => &[],
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            Node::Op(_, c) => c,
            _ => &mut [],
        }
    }
}

/// How one child feeds the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// The operand type at that position (`None`: untyped).
    pub ty: Option<ScalarType>,
    pub prefix: Prefix,
    /// A lane or byte selector written on the operand (video instructions).
    pub sel: Option<ptx_ir::ir::Selector>,
    /// An element of a vector operand (`{a, b}`): registers only.
    pub in_vector: bool,
}

/// An instruction with abstracted operands (see the module documentation).
#[derive(Clone, Debug)]
pub struct Shape {
    pub ins: Instruction,
    /// Width in bits of the destination register (1 for `.pred`).
    pub width: u8,
    /// The type the destination operand is written with.
    pub dest_ty: Option<ScalarType>,
    /// Per child, in operand order.
    pub sources: SmallVec<[Source; 3]>,
    /// The instruction's data types ([`Instruction::types`]; rules ask
    /// them at every node they look at).
    types: SmallVec<[ScalarType; 4]>,
    /// [`crate::rules::plain_int`] of this shape (rules ask it at every
    /// node they look at).
    plain_int: Option<(ScalarType, u8)>,
    /// Whether the known-bits analysis understands its modifiers and
    /// operands ([`super::known`]'s `plain`; asked at every node made).
    known_plain: bool,
    /// What the extraction's cost model found this shape's instruction
    /// costs, kept with the shape for the tables of later functions
    /// ([`super::cost`]; shapes are made once per thread, see [`MadeShapes`]).
    pub(super) priced: super::cost::Priced,
}

/// Width in bits a value of this type takes in a register (1 for `.pred`).
pub fn type_width(t: ScalarType) -> u8 {
    if t == ScalarType::Pred {
        1
    } else {
        t.bits().min(128) as u8
    }
}

fn trunc(v: u128, bits: u32) -> u128 {
    v & eval::bits_mask(bits)
}

impl Shape {
    /// Builds a shape from an instruction whose destination is [`DEST`] and
    /// whose sources are the placeholders `RegId(0..n)` in order. `width`
    /// is the destination register's width.
    pub fn new(ins: Instruction, width: u8) -> Shape {
        let specs = ins.form.operands();
        let mut sources = SmallVec::new();
        let mut dest_ty = None;
        for (k, (op, spec)) in ins.operands.iter().zip(specs).enumerate() {
            let ty = ins.operand_type(k);
            if spec.write {
                dest_ty = ty;
                continue;
            }
            let mut push = |o: &Operand, in_vector: bool| {
                if let Operand::Reg(r) = o {
                    sources.push(Source { ty, prefix: r.prefix, sel: r.sel, in_vector });
                }
            };
            match op {
                Operand::Vector(v) => v.iter().for_each(|o| push(o, true)),
                o => push(o, false),
            }
        }
        let types = ins.types();
        let mut shape = Shape { ins, width, dest_ty, sources, types, plain_int: None, known_plain: false, priced: super::cost::Priced::default() };
        shape.plain_int = crate::rules::plain_int_of(&shape);
        shape.known_plain = super::known::plain(&shape);
        shape
    }

    /// The instruction's data types, in the order of its modifiers
    /// ([`Instruction::types`]).
    pub fn types(&self) -> &[ScalarType] {
        &self.types
    }

    /// The first data type ([`Instruction::ty`]).
    pub fn ty(&self) -> Option<ScalarType> {
        self.types.first().copied()
    }

    /// See [`crate::rules::plain_int`].
    pub fn plain_int(&self) -> Option<(ScalarType, u8)> {
        self.plain_int
    }

    /// See `known::plain`.
    pub(crate) fn known_plain(&self) -> bool {
        self.known_plain
    }

    pub fn opcode(&self) -> Opcode {
        self.ins.opcode
    }

    /// The value this shape computes from its children's values (each the
    /// full content of a register of width `widths[k]`), or `None` when the
    /// result is not exactly determined (unspecified, approximate, any NaN)
    /// or cannot be evaluated.
    pub fn eval(&self, dialect: &Dialect, kids: &[(u128, u8)]) -> Option<u128> {
        let mut srcs: SmallVec<[u128; 4]> = SmallVec::with_capacity(kids.len());
        for (s, &(v, w)) in self.sources.iter().zip(kids) {
            let mut v = v;
            match s.prefix {
                Prefix::Not => v = (v & 1) ^ 1,
                Prefix::Neg => v = trunc(v.wrapping_neg(), w as u32),
                Prefix::None => {}
            }
            if let Some(t) = s.ty {
                if t != ScalarType::Pred && t.bits() < w as u32 {
                    v = trunc(v, t.bits());
                }
            }
            srcs.push(v);
        }
        let ins = eval::effective(&self.ins, dialect);
        let r = eval::eval(&ins, &srcs, false).ok()?;
        if r.carry_out.is_some() || r.dests.len() != 1 {
            return None;
        }
        let d = r.dests[0];
        if d.quality != Quality::Exact {
            return None;
        }
        Some(extend(d.bits, self.dest_ty, self.width))
    }
}

/// A result of type `ty` written into a register of `width` bits: signed
/// types sign-extend, others zero-extend (as the interpreter writes registers).
pub fn extend(bits: u128, ty: Option<ScalarType>, width: u8) -> u128 {
    let w = width as u32;
    match ty {
        Some(t) if t != ScalarType::Pred && t.bits() < w && t.class() == TypeClass::Signed => trunc(eval::sext(bits, t.bits()) as u128, w),
        Some(t) if t != ScalarType::Pred && t.bits() < w => trunc(bits, t.bits()),
        _ => trunc(bits, w),
    }
}

/// The shapes of one e-graph, numbered in the order the e-graph first
/// meets them (nodes sort by their shape's number: egg sorts each class's
/// nodes). The shapes themselves are made once per thread ([`MadeShapes`])
/// and shared by the tables of every function.
#[derive(Default)]
pub struct ShapeTable {
    shapes: Vec<Rc<Shape>>,
    /// The shapes of each [`shape_key`] (a hash of the template and the
    /// width; a lookup compares the template itself among them).
    index: FxHashMap<u64, SmallVec<[ShapeId; 1]>>,
    /// Shapes made from text by rules: (head, number of sources) -> shape.
    by_text: FxHashMap<(&'static str, u8), ShapeId>,
    /// Per shape, one entry of `by_text` a rule derived from it
    /// ([`Self::of_text_from`]): the same head asked again from the same
    /// shape is answered without hashing the text (`unsigned-twin` asks it
    /// of every signed add, sub and mul.lo at every iteration).
    from_shape: Vec<Option<TextShape>>,
    /// Whether each shape was first made by a rule (not taken from the input).
    by_rule: Vec<bool>,
    /// The shapes of plain templates ([`PlainKey`]) found so far: most
    /// value statements have one, and this key is cheaper to make and to
    /// compare than the template's (renderer at -O2: 58,549 lookups, all
    /// but 2,613 of them found).
    plain: FxHashMap<PlainKey, ShapeId>,
}

/// What fixes a *plain* template, one whose operands are scalar with no
/// prefix or selector (a register read or written as such, an immediate,
/// a special register, a symbol): its destination is [`DEST`] at `dest`
/// and its k-th other operand the placeholder `RegId(k)`, so the
/// instruction's head, the destination's position and the number of
/// operands give the whole template.
#[derive(Clone, Copy, PartialEq, Eq)]
struct PlainKey {
    opcode: Opcode,
    form: ptx_ir::isa::FormId,
    /// The slots' modifiers, [`Mod::NONE`] past `n_mods`.
    mods: [Mod; PLAIN_MODS],
    n_mods: u8,
    operands: u8,
    dest: u8,
    width: u8,
}

/// The most modifier slots a [`PlainKey`] holds (an instruction's own
/// list holds eight in place).
const PLAIN_MODS: usize = 8;

/// A key hashed as three words: its fields one by one (eight modifiers
/// among them) were about 40 host instructions of hashing a look-up, one
/// per value statement (renderer at -O2: 58,549). Equal keys give equal
/// words: every number is below 65,536.
impl std::hash::Hash for PlainKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        const _: () = assert!(PLAIN_MODS == 8, "three words hold eight modifiers");
        let m = |k: usize| self.mods[k].index() as u64;
        h.write_u64(self.opcode.index() as u64 | (self.form.index() as u64) << 16 | u64::from(self.n_mods) << 32 | u64::from(self.operands) << 40 | u64::from(self.dest) << 48 | u64::from(self.width) << 56);
        h.write_u64(m(0) | m(1) << 16 | m(2) << 32 | m(3) << 48);
        h.write_u64(m(4) | m(5) << 16 | m(6) << 32 | m(7) << 48);
    }
}

/// The shapes made on this thread, for the tables of the functions that
/// follow: a module's functions repeat most of their shapes, and making
/// one (its template, its types and facts, its price) for each function
/// again cost complex at -O2 2.2 M host instructions for its 247
/// functions. A table finds a shape here by the key and template it would
/// find its own by, so it holds the shape it would have made. Cleared
/// when it holds [`MADE_SHAPES_LIMIT`] shapes.
#[derive(Default)]
struct MadeShapes {
    /// By [`shape_key`] (templates of equal keys compared).
    by_key: FxHashMap<u64, SmallVec<[Rc<Shape>; 1]>>,
    /// The shape of each plain template ([`PlainKey`]), and its key.
    by_plain: FxHashMap<PlainKey, (u64, Rc<Shape>)>,
    /// The shape of each rule's text ([`ShapeTable::of_text`]), and its key.
    by_text: FxHashMap<(&'static str, u8), (u64, Rc<Shape>)>,
    /// Shapes held.
    count: usize,
}

/// The most shapes [`MadeShapes`] holds before it starts again (a long
/// run over many modules keeps no more).
const MADE_SHAPES_LIMIT: usize = 1 << 14;

thread_local! {
    static MADE_SHAPES: RefCell<MadeShapes> = RefCell::default();
}

impl MadeShapes {
    /// The shape this thread made of key `key` at `width` whose template
    /// `same` accepts.
    fn find(key: u64, width: u8, same: impl Fn(&Instruction) -> bool) -> Option<Rc<Shape>> {
        MADE_SHAPES.with(|m| m.borrow().by_key.get(&key).and_then(|v| v.iter().find(|s| s.width == width && same(&s.ins)).cloned()))
    }

    /// Keeps a new shape of key `key` (none [`MadeShapes::find`] finds).
    fn keep(key: u64, shape: Shape) -> Rc<Shape> {
        let shape = Rc::new(shape);
        MADE_SHAPES.with(|m| {
            let mut m = m.borrow_mut();
            if m.count >= MADE_SHAPES_LIMIT {
                *m = MadeShapes::default();
            }
            m.count += 1;
            m.by_key.entry(key).or_default().push(shape.clone());
        });
        shape
    }
}

/// Forgets the shapes this thread made ([`MadeShapes`]): the tables made
/// after make their shapes afresh.
#[cfg(test)]
pub(crate) fn forget_made_shapes() {
    MADE_SHAPES.with(|m| *m.borrow_mut() = MadeShapes::default());
}

impl ShapeTable {
    /// The table's shape of key `key` that is `shape` (the same shape, or
    /// one of the same template and width).
    fn lookup_shape(&self, key: u64, shape: &Rc<Shape>) -> Option<ShapeId> {
        self.index.get(&key)?.iter().copied().find(|s| {
            let mine = &self.shapes[s.0 as usize];
            Rc::ptr_eq(mine, shape) || (mine.width == shape.width && mine.ins == shape.ins)
        })
    }

    fn lookup_keyed(&self, key: u64, ins: &Instruction, width: u8) -> Option<ShapeId> {
        self.index.get(&key)?.iter().copied().find(|s| {
            let shape = &self.shapes[s.0 as usize];
            shape.width == width && shape.ins == *ins
        })
    }

    /// The shape of a value statement's template, built only when the
    /// table has none yet: the build step looks up one per value statement
    /// and finds most (matrix_free: 1,676 new of 12,981), and making the
    /// template to compare and then drop it cost 700 instructions a lookup.
    pub fn intern_template_of(&mut self, view: TemplateView<'_>, width: u8) -> ShapeId {
        let Some(plain) = view.plain_key(width) else { return self.intern_template_of_any(view, width).0 };
        if let Some(&s) = self.plain.get(&plain) {
            return s;
        }
        // A plain template this thread made a shape of: the key gives the
        // whole template, so that shape is this one's.
        let s = match MADE_SHAPES.with(|m| m.borrow().by_plain.get(&plain).cloned()) {
            Some((key, shape)) => {
                debug_assert!(shape.width == width && view.is_template(&shape.ins) && key == view.key(width));
                match self.lookup_shape(key, &shape) {
                    Some(s) => s,
                    None => self.insert(key, shape),
                }
            }
            None => {
                let (s, key) = self.intern_template_of_any(view, width);
                let shape = self.shapes[s.0 as usize].clone();
                MADE_SHAPES.with(|m| m.borrow_mut().by_plain.insert(plain, (key, shape)));
                s
            }
        };
        self.plain.insert(plain, s);
        s
    }

    /// [`Self::intern_template_of`] by the template's own key and
    /// comparison (plain or not); with the key.
    fn intern_template_of_any(&mut self, view: TemplateView<'_>, width: u8) -> (ShapeId, u64) {
        let key = view.key(width);
        let found = self.index.get(&key).and_then(|ids| {
            ids.iter().copied().find(|s| {
                let shape = &self.shapes[s.0 as usize];
                shape.width == width && view.is_template(&shape.ins)
            })
        });
        if let Some(s) = found {
            return (s, key);
        }
        let shape = MadeShapes::find(key, width, |ins| view.is_template(ins)).unwrap_or_else(|| MadeShapes::keep(key, Shape::new(view.template(), width)));
        debug_assert_eq!(key, shape_key(&shape.ins, width));
        (self.insert(key, shape), key)
    }

    fn insert(&mut self, key: u64, shape: Rc<Shape>) -> ShapeId {
        let id = ShapeId(self.shapes.len() as u32);
        self.index.entry(key).or_default().push(id);
        self.shapes.push(shape);
        self.by_rule.push(false);
        id
    }

    fn lookup(&self, ins: &Instruction, width: u8) -> Option<ShapeId> {
        self.lookup_keyed(shape_key(ins, width), ins, width)
    }

    pub fn intern(&mut self, ins: Instruction, width: u8) -> ShapeId {
        let key = shape_key(&ins, width);
        if let Some(s) = self.lookup_keyed(key, &ins, width) {
            return s;
        }
        let shape = MadeShapes::find(key, width, |i| *i == ins).unwrap_or_else(|| MadeShapes::keep(key, Shape::new(ins, width)));
        self.insert(key, shape)
    }

    /// The shape of an instruction a rule builds (over placeholders, as
    /// [`Shape::new`] wants it), marked as made by a rule if it is new.
    pub fn intern_for_rule(&mut self, ins: Instruction, width: u8) -> ShapeId {
        let known = self.lookup(&ins, width).is_some();
        let id = self.intern(ins, width);
        if !known {
            self.by_rule[id.0 as usize] = true;
        }
        id
    }

    /// Was the shape first made by a rule rather than taken from the input?
    pub fn made_by_rule(&self, s: ShapeId) -> bool {
        self.by_rule[s.0 as usize]
    }

    pub fn get(&self, s: ShapeId) -> &Shape {
        &self.shapes[s.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// [`Self::of_text_known`], for a head a rule derives from shape
    /// `from`: answered from `from`'s entry when it holds this head (the
    /// same `&'static str`), else by the text.
    pub fn of_text_known_from(&self, from: ShapeId, head: &'static str, n: u8) -> Option<ShapeId> {
        match self.from_shape.get(from.0 as usize) {
            Some(Some(t)) if t.is(head, n) => Some(t.shape),
            _ => self.of_text_known(head, n),
        }
    }

    /// [`Self::of_text`], for a head a rule derives from shape `from`;
    /// `from` keeps the answer (see [`Self::of_text_known_from`]).
    pub fn of_text_from(&mut self, from: ShapeId, head: &'static str, n: u8) -> ShapeId {
        if let Some(Some(t)) = self.from_shape.get(from.0 as usize) {
            if t.is(head, n) {
                return t.shape;
            }
        }
        let shape = self.of_text(head, n);
        let k = from.0 as usize;
        if self.from_shape.len() <= k {
            self.from_shape.resize(k + 1, None);
        }
        self.from_shape[k] = Some(TextShape { head, n, shape });
        shape
    }

    /// The shape [`Self::of_text`] gave for `head` with `n` sources; `None`
    /// when it was not asked for yet (a node of that shape may still exist,
    /// taken from the input).
    pub fn of_text_known(&self, head: &'static str, n: u8) -> Option<ShapeId> {
        self.by_text.get(&(head, n)).copied()
    }

    /// The shape of an instruction written as text (`mul.hi.u32`) with `n`
    /// sources, for rules. The width is the destination type's.
    ///
    /// Panics if the text is not an instruction of the tables: rule text is
    /// fixed, and the rule tests build every rule's right-hand sides.
    pub fn of_text(&mut self, head: &'static str, n: u8) -> ShapeId {
        if let Some(&s) = self.by_text.get(&(head, n)) {
            return s;
        }
        // The text is read once per thread ([`MadeShapes`]).
        let (key, shape) = match MADE_SHAPES.with(|m| m.borrow().by_text.get(&(head, n)).cloned()) {
            Some(made) => made,
            None => {
                let ins = template(head, n as usize).unwrap_or_else(|e| panic!("rule instruction `{head}` with {n} sources: {e}"));
                let width = ins.operand_type(0).map(type_width).unwrap_or(32);
                let key = shape_key(&ins, width);
                let shape = MadeShapes::find(key, width, |i| *i == ins).unwrap_or_else(|| MadeShapes::keep(key, Shape::new(ins, width)));
                MADE_SHAPES.with(|m| m.borrow_mut().by_text.insert((head, n), (key, shape.clone())));
                (key, shape)
            }
        };
        let id = match self.lookup_shape(key, &shape) {
            Some(id) => id,
            None => {
                let id = self.insert(key, shape);
                self.by_rule[id.0 as usize] = true;
                id
            }
        };
        self.by_text.insert((head, n), id);
        id
    }
}

/// An entry of [`ShapeTable::by_text`] kept with a shape.
#[derive(Clone, Copy)]
struct TextShape {
    head: &'static str,
    n: u8,
    shape: ShapeId,
}

impl TextShape {
    /// Is this the entry of `head` with `n` sources? The same text at
    /// another address is not recognized (the caller then asks by the
    /// text): comparing the addresses is what makes this cheaper.
    fn is(&self, head: &'static str, n: u8) -> bool {
        std::ptr::eq(self.head, head) && self.n == n
    }
}

/// A hash of a template at a destination width: what tells templates
/// apart (opcode, form, modifiers, and per operand its kind, prefix,
/// selector and placeholder), cheaper than hashing the whole
/// [`Instruction`] (equal templates hash equally: [`ShapeTable`] compares
/// the templates of equal keys).
fn shape_key(ins: &Instruction, width: u8) -> u64 {
    use std::hash::{Hash, Hasher};
    fn operand(h: &mut FxHasher, o: &Operand) {
        match o {
            Operand::Reg(r) => key_reg(h, r),
            Operand::Vector(v) => {
                h.write_usize(v.len());
                v.iter().for_each(|e| operand(h, e));
            }
            o => o.hash(h),
        }
    }
    let mut h = key_head(ins, ins.guard, width);
    ins.operands.iter().for_each(|o| operand(&mut h, o));
    h.finish()
}

/// The part of [`shape_key`] before the operands (with the guard given:
/// a template's is none).
fn key_head(ins: &Instruction, guard: Option<ptx_ir::ir::Guard>, width: u8) -> FxHasher {
    use std::hash::{Hash, Hasher};
    let mut h = FxHasher::default();
    h.write_u8(width);
    ins.opcode.hash(&mut h);
    ins.form.hash(&mut h);
    guard.hash(&mut h);
    ins.mods.hash(&mut h);
    h.write_usize(ins.operands.len());
    h
}

/// A register operand in [`shape_key`].
fn key_reg(h: &mut FxHasher, r: &RegOperand) {
    use std::hash::{Hash, Hasher};
    h.write_u32(r.reg.0);
    h.write_u8(r.prefix as u8);
    r.sel.hash(h);
}

/// The template of a value statement seen in the statement itself (not
/// built): operand `dest` is the destination, [`DEST`]; every other
/// operand is a source, and the k-th scalar source (in operand order,
/// vector elements one by one) the placeholder `RegId(k)`. A register
/// source keeps its prefix and selector; an immediate, special register or
/// symbol becomes a plain placeholder. The statement must be one the build
/// step takes as a value (vector elements are registers).
#[derive(Clone, Copy)]
pub struct TemplateView<'a> {
    pub ins: &'a Instruction,
    pub dest: usize,
}

/// One operand of a [`TemplateView`].
enum TemplateOperand<'a> {
    Reg(RegOperand),
    /// A vector of registers whose first element is the placeholder `first`.
    Vector { elems: &'a [Operand], first: u32 },
}

impl<'a> TemplateView<'a> {
    fn operands(self) -> impl Iterator<Item = TemplateOperand<'a>> {
        let mut next = 0u32;
        let mut placeholder = move |n: u32| {
            let r = RegId(next);
            next += n;
            r
        };
        self.ins.operands.iter().enumerate().map(move |(k, o)| match o {
            _ if k == self.dest => TemplateOperand::Reg(RegOperand::plain(DEST)),
            Operand::Reg(r) => TemplateOperand::Reg(RegOperand { reg: placeholder(1), ..*r }),
            Operand::Vector(v) => TemplateOperand::Vector { elems: v, first: placeholder(v.len() as u32).0 },
            _ => TemplateOperand::Reg(RegOperand::plain(placeholder(1))),
        })
    }

    /// The placeholders of a vector's elements.
    fn elements(elems: &[Operand], first: u32) -> impl Iterator<Item = RegOperand> + '_ {
        elems.iter().zip(first..).map(|(e, k)| match e {
            Operand::Reg(r) => RegOperand { reg: RegId(k), ..*r },
            _ => RegOperand::plain(RegId(k)),
        })
    }

    /// The template itself.
    pub fn template(self) -> Instruction {
        let operands = self
            .operands()
            .map(|o| match o {
                TemplateOperand::Reg(r) => Operand::Reg(r),
                TemplateOperand::Vector { elems, first } => Operand::Vector(Self::elements(elems, first).map(Operand::Reg).collect()),
            })
            .collect();
        Instruction { guard: None, opcode: self.ins.opcode, form: self.ins.form, mods: self.ins.mods.clone(), operands }
    }

    /// The [`PlainKey`] of [`Self::template`] at `width`, when it is plain
    /// (and its modifiers fit).
    fn plain_key(self, width: u8) -> Option<PlainKey> {
        let ins = self.ins;
        let plain = |o: &Operand| match o {
            Operand::Reg(r) => r.prefix == Prefix::None && r.sel.is_none(),
            Operand::Vector(_) => false,
            _ => true,
        };
        if ins.mods.len() > PLAIN_MODS || ins.operands.len() > usize::from(u8::MAX) || !ins.operands.iter().all(plain) {
            return None;
        }
        let mut mods = [Mod::NONE; PLAIN_MODS];
        mods[..ins.mods.len()].copy_from_slice(&ins.mods);
        Some(PlainKey {
            opcode: ins.opcode,
            form: ins.form,
            mods,
            n_mods: ins.mods.len() as u8,
            operands: ins.operands.len() as u8,
            dest: self.dest as u8,
            width,
        })
    }

    /// [`shape_key`] of [`Self::template`] at `width`.
    fn key(self, width: u8) -> u64 {
        use std::hash::Hasher;
        let mut h = key_head(self.ins, None, width);
        for o in self.operands() {
            match o {
                TemplateOperand::Reg(r) => key_reg(&mut h, &r),
                TemplateOperand::Vector { elems, first } => {
                    h.write_usize(elems.len());
                    Self::elements(elems, first).for_each(|r| key_reg(&mut h, &r));
                }
            }
        }
        h.finish()
    }

    /// Whether `ins` is [`Self::template`].
    fn is_template(self, ins: &Instruction) -> bool {
        let same_operand = |(o, t): (TemplateOperand, &Operand)| match (o, t) {
            (TemplateOperand::Reg(r), Operand::Reg(t)) => r == *t,
            (TemplateOperand::Vector { elems, first }, Operand::Vector(t)) => {
                elems.len() == t.len() && Self::elements(elems, first).zip(t.iter()).all(|(r, t)| matches!(t, Operand::Reg(t) if r == *t))
            }
            _ => false,
        };
        ins.guard.is_none()
            && ins.opcode == self.ins.opcode
            && ins.form == self.ins.form
            && ins.mods == self.ins.mods
            && ins.operands.len() == self.ins.operands.len()
            && self.operands().zip(ins.operands.iter()).all(same_operand)
    }
}

/// `head` (`add.u32`, `setp.lt.s32`) as an instruction over placeholders:
/// destination [`DEST`], sources `RegId(0..n)`.
pub fn template(head: &str, n: usize) -> Result<Instruction, String> {
    let (op, parts) = Opcode::longest_prefix(head).ok_or_else(|| format!("no opcode in `{head}`"))?;
    let rest: Vec<&str> = head.split('.').skip(parts).collect();
    let mut mods = Vec::with_capacity(rest.len());
    for m in rest {
        let text = format!(".{m}");
        mods.push(Mod::from_text(&text).ok_or_else(|| format!("unknown modifier `{text}`"))?);
    }
    let mut operands: Operands = SmallVec::new();
    operands.push(Operand::reg(DEST));
    for k in 0..n {
        operands.push(Operand::reg(RegId(k as u32)));
    }
    Instruction::new(op, &mods, operands).map_err(|e| format!("{e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shape's kept entry ([`ShapeTable::of_text_from`]) answers as the
    /// text does ([`ShapeTable::of_text`], [`ShapeTable::of_text_known`]):
    /// before and after it is made, for the head it holds, another head,
    /// another number of sources, and the same text at another address.
    #[test]
    fn a_text_kept_with_a_shape_answers_as_the_text_does() {
        let mut t = ShapeTable::default();
        let (a, b) = (t.of_text("add.s32", 2), t.of_text("sub.s64", 2));
        // The same text as "add.u32" at an address of its own.
        let elsewhere: &'static str = Box::leak(String::from("add.u32").into_boxed_str());
        let heads: [(&'static str, u8); 5] = [("add.u32", 2), ("sub.u64", 2), ("add.u32", 3), (elsewhere, 2), ("mul.lo.u16", 2)];
        let agree = |t: &ShapeTable| {
            for from in [a, b] {
                for (h, n) in heads {
                    assert_eq!(t.of_text_known_from(from, h, n), t.of_text_known(h, n), "{h} with {n} sources, from {from:?}");
                }
            }
        };
        agree(&t);
        // (`add.u32` with 3 sources is no instruction: only asked whether known.)
        for (from, (h, n)) in [(a, heads[0]), (b, heads[1]), (b, heads[3]), (a, heads[0]), (a, heads[4])] {
            let kept = t.of_text_from(from, h, n);
            assert_eq!(kept, t.of_text(h, n), "{h} with {n} sources");
            agree(&t);
        }
        assert_eq!(t.of_text_from(a, elsewhere, 2), t.of_text("add.u32", 2));
    }

    /// A node's clone (children written in place up to three) is the
    /// node, and the words it hashes to follow equality: a node and its
    /// clone hash alike, and the nodes here (children differing in number,
    /// order or value; shapes, kinds, widths, leaves) each hash otherwise.
    #[test]
    fn nodes_clone_and_hash_as_equality_says() {
        use std::hash::BuildHasher;
        let hash = |n: &Node| rustc_hash::FxBuildHasher.hash_one(n);
        let mut nodes = vec![Node::Const { width: 32, bits: 0 }, Node::Const { width: 1, bits: 0 }, Node::Const { width: 64, bits: 1 << 70 }, Node::Leaf(LeafId(0)), Node::Leaf(LeafId(7))];
        let lists: [&[usize]; 12] = [&[], &[0], &[1], &[0, 0], &[0, 1], &[1, 0], &[0, 0, 0], &[0, 1, 2], &[2, 1, 0], &[0, 1, 2, 3], &[0, 1, 2, 3, 0], &[0, 1, 2, 3, 4]];
        for kids in lists {
            for shape in [0, 1] {
                nodes.push(Node::Op(ShapeId(shape), kids.iter().map(|&k| Id::from(k)).collect()));
            }
        }
        let mut seen: FxHashMap<u64, &Node> = FxHashMap::default();
        for n in &nodes {
            let c = n.clone();
            assert_eq!(&c, n);
            assert_eq!(hash(&c), hash(n), "{n:?}");
            if let Some(other) = seen.insert(hash(n), n) {
                panic!("{n:?} and {other:?} hash alike");
            }
        }
    }

    #[test]
    fn shapes_evaluate_with_register_widths() {
        let mut t = ShapeTable::default();
        let add = t.of_text("add.u32", 2);
        let s = t.get(add);
        assert_eq!(s.width, 32);
        assert_eq!(s.eval(&Dialect::MODERN, &[(0xffff_ffff, 32), (2, 32)]), Some(1));
        // A 64-bit register read by a 32-bit instruction: its low half.
        assert_eq!(s.eval(&Dialect::MODERN, &[(0x1_0000_0005, 64), (1, 32)]), Some(6));
        let setp = t.of_text("setp.lt.s32", 2);
        assert_eq!(t.get(setp).width, 1);
        assert_eq!(t.get(setp).eval(&Dialect::MODERN, &[(0xffff_ffff, 32), (0, 32)]), Some(1));
        // Division by zero is not folded.
        let div = t.of_text("div.u32", 2);
        assert_eq!(t.get(div).eval(&Dialect::MODERN, &[(5, 32), (0, 32)]), None);
        assert_eq!(t.of_text("add.u32", 2), add);
    }
}
