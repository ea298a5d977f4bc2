//! Name resolution inside a function: nested scopes of registers, local
//! variables and labels, parameterized register ranges (`%r<100>`), and
//! label references resolved at the end of the body.
//!
//! Registers and variables resolve as ptxas resolves them: at the point of
//! use, through the scopes open there, innermost first, among the names
//! declared so far. A label belongs to the `{ }` block that defines it, like
//! a register. A branch target (`bra`, `.branchtargets`) means the label of
//! that name defined in the innermost enclosing block that defines one,
//! before or after the branch; a name that at the point of use already
//! means a `.branchtargets`/`.calltargets`/`.callprototype` label (the
//! table of `brx.idx`, the prototype of `call`) means that one, as ptxas
//! reads it. References are numbered as they are met and resolved in
//! [`FuncState::resolve_labels`].
//!
//! A range's member may be spelled with leading zeros (`%r05` is `%r5`, as
//! ptxas reads it): every spelling gives the member's one register, named
//! `%r5`. Within a scope a range's members come before the names declared
//! on their own ([`FuncState::declare_range`]).

use crate::ir::{is_member_of, member_name, range_member, spells_member_plainly, LabelId, Name, Reg, RegId};
use crate::isa::{ScalarType, StateSpace};
use crate::source::Span;
use hashbrown::hash_table::{Entry as SlotEntry, HashTable};
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::collections::hash_map::Entry;
use std::hash::BuildHasher;

/// What a name bound in a function scope is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Reg(RegId),
    /// An addressable variable (`.local`, `.shared`, `.param` ...).
    Var,
    /// A label defined so far; `code` for a position in the code (`L:`),
    /// not for `.branchtargets`/`.calltargets`/`.callprototype`.
    Label { id: LabelId, code: bool },
}

/// A label named by an operand or a `.branchtargets` list.
#[derive(Clone, Copy, Debug)]
struct LabelRef<'a> {
    name: &'a str,
    /// The innermost scope open at the reference.
    scope: u32,
    span: Span,
    /// Known at the reference (a directive label defined before it).
    known: Option<LabelId>,
}

#[derive(Debug)]
struct Range {
    count: u32,
    ty: ScalarType,
    vector: Option<u8>,
    span: Span,
    /// The registers of the members used so far, by number: every spelling
    /// of a member (`%r5`, `%r05`) finds its one register here.
    members: Members,
}

/// A range's members that have a register, by member number: a dense
/// array while the members used fill a good part of it (machine-made PTX
/// numbers its registers from 0 up), a map for the others (a range
/// declared `%r<1000000>` and used sparsely stays cheap, and so do many
/// ranges declared and little used).
#[derive(Debug, Default)]
struct Members {
    /// Register number plus one; 0 while the member has none there.
    near: Vec<u32>,
    far: FxHashMap<u32, RegId>,
    /// How many members have a register.
    used: u32,
}

/// A scope's register ranges by prefix. A function declares a few (one a
/// register type: `%p`, `%rs`, `%r`, `%rd`, `%f`, `%fd`), and every use of
/// a member finds its range: among a few, comparing the prefixes one after
/// another is cheaper than hashing the name's (matrix_free: 44,323 finds,
/// about 100 host instructions each through a hash table). A scope with
/// more than [`RANGES_SCANNED_MAX`] is indexed.
#[derive(Debug, Default)]
struct Ranges<'a> {
    /// Each prefix's [`short_key`], apart from the ranges: the scan reads
    /// only these.
    keys: Vec<u64>,
    prefixes: Vec<&'a str>,
    ranges: Vec<Range>,
    /// Where each prefix is, once there are more than [`RANGES_SCANNED_MAX`].
    index: FxHashMap<&'a str, usize>,
}

/// The ranges of a scope [`Ranges`] finds by comparing prefixes.
const RANGES_SCANNED_MAX: usize = 16;

/// A name of at most 8 bytes as one number (its bytes, little-endian,
/// zero after its end: no name has a zero byte, so two prefixes have one
/// key only if they are equal); 0 for a longer one. Read in at most two
/// loads, not byte by byte: every name looked up or declared goes through
/// it ([`Key::new`]).
#[inline(always)]
fn short_key(name: &str) -> u64 {
    match name.len() <= SHORT_NAME_MAX {
        true => crate::ir::name_packed(name.as_bytes()),
        false => 0,
    }
}

impl<'a> Ranges<'a> {
    fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    #[inline(always)]
    fn position(&self, prefix: &str) -> Option<usize> {
        if self.keys.len() > RANGES_SCANNED_MAX {
            return self.index.get(prefix).copied();
        }
        let key = short_key(prefix);
        if key == 0 {
            return self.prefixes.iter().position(|p| *p == prefix);
        }
        self.keys.iter().position(|&k| k == key)
    }

    #[inline(always)]
    fn get_mut(&mut self, prefix: &str) -> Option<&mut Range> {
        self.position(prefix).map(|k| &mut self.ranges[k])
    }

    fn get(&self, prefix: &str) -> Option<&Range> {
        self.position(prefix).map(|k| &self.ranges[k])
    }

    /// Declares (or declares again) the range of `prefix`.
    fn insert(&mut self, prefix: &'a str, range: Range) {
        if let Some(k) = self.position(prefix) {
            self.ranges[k] = range;
            return;
        }
        self.keys.push(short_key(prefix));
        self.prefixes.push(prefix);
        self.ranges.push(range);
        if self.keys.len() > RANGES_SCANNED_MAX {
            if self.index.is_empty() {
                self.index = self.prefixes.iter().enumerate().map(|(k, p)| (*p, k)).collect();
            } else {
                self.index.insert(prefix, self.prefixes.len() - 1);
            }
        }
    }
}

/// The member numbers [`Members`] keeps in its dense array at most.
const DENSE_MEMBERS_MAX: usize = 1 << 16;

/// The dense array [`Members`] starts with (at most the range's count).
const DENSE_MEMBERS_FIRST: u32 = 64;

impl Members {
    /// Room for the first members of a range of `count`.
    fn with_room(count: u32) -> Members {
        Members { near: vec![0; count.min(DENSE_MEMBERS_FIRST) as usize], ..Members::default() }
    }

    /// How long the dense array may grow with `used` members in it: a few
    /// times what they fill (158 KB of text declaring 2,000 ranges of
    /// 100,000 and using one member of each made 32 MB of arrays at the
    /// room of 4,096 members a range).
    fn dense_room(used: u32) -> usize {
        (4 * (used as usize + DENSE_MEMBERS_FIRST as usize)).min(DENSE_MEMBERS_MAX)
    }

    fn get(&self, n: u32) -> Option<RegId> {
        match self.near.get(n as usize) {
            Some(&r) if r != 0 => Some(RegId(r - 1)),
            _ if self.far.is_empty() => None,
            _ => self.far.get(&n).copied(),
        }
    }

    /// Gives member `n`, which has none yet, register `id`: in place when
    /// the dense array holds `n` already (most first uses: matrix_free,
    /// 14,668), else [`Members::set_past_near`], the general way.
    #[inline(always)]
    fn set(&mut self, n: u32, id: RegId) {
        match self.near.get_mut(n as usize) {
            Some(r) => {
                *r = id.0 + 1;
                self.used += 1;
            }
            None => self.set_past_near(n, id),
        }
    }

    /// [`Members::set`] for a member past the dense array: the array grows
    /// to hold it while [`Members::dense_room`] allows, else the map does.
    #[inline(never)]
    fn set_past_near(&mut self, n: u32, id: RegId) {
        let k = n as usize;
        let room = Members::dense_room(self.used);
        if k >= self.near.len() && k < room {
            self.near.resize((k + 1).max(2 * self.near.len()).min(room), 0);
        }
        match self.near.get_mut(k) {
            Some(r) => *r = id.0 + 1,
            None => {
                self.far.insert(n, id);
            }
        }
        self.used += 1;
    }
}

/// A name with its hash, computed once: a lookup probes the tables of
/// every open scope, and a declaration checks several tables of its scope
/// before it inserts, all with the one hash. The parser's instruction
/// heads ([`super::cursor::Heads`]) are filed by it too.
///
/// A name of at most 8 bytes (most registers: `%r153`, `%p12`) is hashed
/// from its bytes held in one number ([`short_key`]) by a bijection
/// ([`mix`]): two such names of one length have one hash exactly when they
/// are equal, so they compare by their hashes, with no pass over their
/// bytes and no `memcmp` (renderer, 142,000 lookups of operands: 118 host
/// instructions each through the hash of the text and `memcmp`, 85 so).
#[derive(Clone, Copy, Debug)]
pub(super) struct Key<'a> {
    pub(super) hash: u64,
    name: &'a str,
}

/// The most bytes of a name [`Key`] hashes as a number.
const SHORT_NAME_MAX: usize = 8;

impl<'a> Key<'a> {
    #[inline]
    pub(super) fn new(name: &'a str) -> Key<'a> {
        if name.len() <= SHORT_NAME_MAX {
            return Key { hash: mix(short_key(name)), name };
        }
        Key { hash: long_name_hash(name), name }
    }
}

/// The hash of a name longer than [`SHORT_NAME_MAX`] bytes, kept out of
/// line: it is long, and rare in the lookups that inline [`Key::new`].
#[inline(never)]
fn long_name_hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// A hash of a short name's bytes held as a number, and a bijection (each
/// step is one: an xor with the number shifted right, a product with an
/// odd constant), so that equal hashes mean equal numbers; it moves every
/// byte into the low bits (the table's bucket) and the high ones (its tag).
#[inline(always)]
fn mix(word: u64) -> u64 {
    let h = (word ^ (word >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

impl PartialEq for Key<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        // Two names of one length of at most 8 bytes (zero after their
        // ends in their numbers) are equal exactly when their hashes are.
        self.hash == other.hash && self.name.len() == other.name.len() && (self.name.len() <= SHORT_NAME_MAX || self.name == other.name)
    }
}

impl Eq for Key<'_> {}

/// Values filed by a name's [`Key`]: a lookup probes with the key's hash,
/// computed once, and filing finds the name or the free slot for it in
/// one probe (`HashMap::entry` probed again for the free slot: renderer,
/// 62,600 registers declared one by one). A scope's names ([`Names`]) and
/// the parser's instruction heads ([`super::cursor::Heads`]) are such tables.
pub struct KeyTable<'a, V> {
    table: HashTable<(Key<'a>, V)>,
}

impl<V> Default for KeyTable<'_, V> {
    fn default() -> Self {
        KeyTable { table: HashTable::new() }
    }
}

/// The hash a [`KeyTable`] entry is filed under.
fn entry_hash<V>(entry: &(Key<'_>, V)) -> u64 {
    entry.0.hash
}

impl<'a, V> KeyTable<'a, V> {
    /// What `key` is filed with.
    #[inline]
    pub fn get(&self, key: &Key<'a>) -> Option<&V> {
        self.table.find(key.hash, |e| e.0 == *key).map(|e| &e.1)
    }

    /// Files `key` with `value` (again, if it is filed already).
    pub fn insert(&mut self, key: Key<'a>, value: V) {
        match self.table.entry(key.hash, |e| e.0 == key, entry_hash) {
            SlotEntry::Occupied(mut e) => *e.get_mut() = (key, value),
            SlotEntry::Vacant(e) => {
                e.insert((key, value));
            }
        }
    }

    /// Files `key` with `value` unless it is filed: then `Err` with what it
    /// is filed with.
    #[inline(always)]
    pub fn insert_new(&mut self, key: Key<'a>, value: V) -> Result<(), &V> {
        match self.table.entry(key.hash, |e| e.0 == key, entry_hash) {
            SlotEntry::Occupied(e) => Err(&e.into_mut().1),
            SlotEntry::Vacant(e) => {
                e.insert((key, value));
                Ok(())
            }
        }
    }

    /// Keeps the names `keep` says to.
    fn retain(&mut self, mut keep: impl FnMut(&Key<'a>) -> bool) {
        self.table.retain(|e| keep(&e.0));
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    fn capacity(&self) -> usize {
        self.table.capacity()
    }

    fn clear(&mut self) {
        self.table.clear();
    }
}

/// A scope's registers and variables (not range members), each with its
/// binding and where it was declared.
type Names<'a> = KeyTable<'a, (Binding, Span)>;

/// Names are borrowed from the source text: declaring and looking up
/// thousands of registers allocates nothing but the IR's own names.
///
/// Within one scope, ptxas looks a name up among the registers and
/// variables first (range members included) and among the labels last: a
/// label may be named like a member of a range of its own block (`%r1:`
/// beside `%r<4>`), and then the name still means the register. A scope
/// never has both a member of one of its ranges and a name of its own
/// spelled like it ([`FuncState::declare_range`], [`FuncState::bind_decl`]),
/// so which of the two tables is asked first does not matter.
#[derive(Default)]
struct Scope<'a> {
    /// Declared registers and variables (not range members: their
    /// registers are in [`Range::members`]).
    names: Names<'a>,
    ranges: Ranges<'a>,
    /// It defines labels (in [`FuncState::label_ids`]).
    has_labels: bool,
    /// Where its `{` is (none for the function body itself).
    opened: Option<Span>,
    /// Its number in the function (0: the body itself).
    id: u32,
    /// The first register of [`FuncState::regs`] made while it is the
    /// innermost scope: the registers it declares are among those after.
    first_reg: u32,
    /// The variables it declares whose names end in a digit.
    digit_ended_vars: Vec<Key<'a>>,
}

/// Whether `name` ends in a digit, as a range's members do.
fn ends_in_digit(name: &str) -> bool {
    name.as_bytes().last().is_some_and(u8::is_ascii_digit)
}

impl<'a> Scope<'a> {
    /// Binds a variable.
    fn declare_var(&mut self, key: Key<'a>, span: Span) {
        self.names.insert(key, (Binding::Var, span));
        if ends_in_digit(key.name) {
            self.digit_ended_vars.push(key);
        }
    }

    /// The range of this scope that has `name` as a member.
    fn range_of(&self, name: &str) -> Option<&Range> {
        self.member(name).map(|(r, _)| &*r)
    }

    /// The range of this scope that has `name` as a member, and the
    /// member's number.
    fn member(&self, name: &str) -> Option<(&Range, u32)> {
        // Most scopes declare no range: no need to split the name then.
        if self.ranges.is_empty() {
            return None;
        }
        let (prefix, n) = range_member(name)?;
        self.ranges.get(prefix).filter(|r| n < r.count).map(|r| (r, n))
    }
}

/// The most members of one range the tables make room for ahead (a
/// declared count is no promise of use: `%r<1000000>` stays cheap).
const MEMBERS_RESERVED_MAX: u32 = 1 << 12;

/// The most registers a function makes room for ahead, beyond those it
/// has: many large ranges declared and little used stay cheap (2,000
/// ranges of 100,000 made room for 8 million registers, 0.5 GB).
const REGS_RESERVED_MAX: usize = 1 << 15;

/// The room a table needs for `members` more entries of a new range, when
/// it was given `room` and holds `len`: a table's `reserve` counts from its
/// length, so room made for earlier ranges whose members are not used yet
/// would otherwise be counted again for this one (a function declaring
/// `%r<N>`, `%rd<M>` and `%f<K>` got room for the largest, not the sum,
/// and grew by doubling from there).
fn room_for(room: usize, len: usize, members: usize) -> usize {
    room.max(len) + members
}

/// Per-function parser state.
pub struct FuncState<'a> {
    pub regs: Vec<Reg>,
    /// The registers `regs` aims to hold: those declared on their own so
    /// far and every range's members ([`room_for`]).
    regs_room: usize,
    scopes: Vec<Scope<'a>>,
    /// Every scope's parent, by scope number (the body is its own parent).
    scope_parent: Vec<u32>,
    /// One name per label definition, in order: names repeat across blocks.
    pub labels: Vec<Name>,
    /// Where each label is defined.
    pub label_defs: Vec<Span>,
    /// The labels each scope defines (by scope number), each with whether
    /// it is a position in the code ([`Binding::Label`]).
    label_ids: FxHashMap<(u32, &'a str), (LabelId, bool)>,
    /// Label references in order; `Operand::Label` holds an index into
    /// this list until [`FuncState::resolve_labels`].
    refs: Vec<LabelRef<'a>>,
    /// The first bytes of the names bound in any scope so far ([`FirstBytes`]).
    bound_first: FirstBytes,
    /// Members of the innermost scope's ranges looked up so far.
    seen: SeenMembers,
}

/// The members of the innermost scope's ranges looked up so far, by their
/// names as written, of at most [`Name::INLINE_MAX`] bytes: a member used
/// again (most uses: machine-made PTX names a register a few times) is
/// found in one slot by its name's word, not by splitting the name into
/// prefix and number and finding the range (matrix_free: 40,500 members
/// found, about 130 host instructions each; 24,100 of them are found in a
/// slot, and its -O0 run 85.54 -> 84.35 M, LTO build). A slot stands while its
/// epoch is the current one; the epoch moves on whenever the innermost
/// scope changes (a block opens or closes, a function starts) or a range
/// is declared. Within a scope a member's register never changes (see
/// [`Scope`]), and a scope's members are found before its other names.
struct SeenMembers {
    /// [`SEEN_SLOTS`] of them, made when a function first declares a range
    /// ([`SeenMembers::make_room`]) and handed on from function to function
    /// ([`SpareTables`]); none before (a parser's spare tables are made
    /// anew for every function: zeroing the slots then cost complex, 521
    /// functions, 2.2 M host instructions).
    slots: Box<[SeenMember]>,
    epoch: u32,
    /// Slots are filled (not without fast paths: [`FuncState::without_fast_paths`]).
    on: bool,
}

/// A slot of [`SeenMembers`]: a member's name as a word ([`seen_word`])
/// and its register.
#[derive(Clone, Copy, Default)]
struct SeenMember {
    word: u64,
    epoch: u32,
    reg: u32,
}

/// The slots of [`SeenMembers`] (4 KB).
const SEEN_SLOTS: usize = 256;

impl Default for SeenMembers {
    fn default() -> Self {
        SeenMembers { slots: Box::new([]), epoch: 1, on: true }
    }
}

/// A name of at most [`Name::INLINE_MAX`] bytes as a word: its bytes
/// ([`crate::ir::name_packed`]) and its length in the top byte, so that
/// two names have one word only if they are equal (a name may hold a zero
/// byte); `None` for a longer name.
#[inline(always)]
fn seen_word(name: &str) -> Option<u64> {
    let n = name.len();
    (n <= Name::INLINE_MAX).then(|| crate::ir::name_packed(name.as_bytes()) | (n as u64) << 56)
}

impl SeenMembers {
    #[inline(always)]
    fn slot(word: u64) -> usize {
        (word.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize
    }

    /// The register of the member of the innermost scope's ranges whose
    /// name has the [`seen_word`] `word`, if it was found so far in this
    /// epoch (`None` for a name with no word).
    #[inline(always)]
    fn get(&self, word: Option<u64>) -> Option<RegId> {
        let word = word?;
        let slot = self.slots.get(Self::slot(word))?;
        (slot.word == word && slot.epoch == self.epoch).then_some(RegId(slot.reg))
    }

    /// Keeps that the member of the innermost scope's ranges whose name has
    /// the [`seen_word`] `word` has register `reg` (nothing for a name with
    /// no word).
    #[inline(always)]
    fn put(&mut self, word: Option<u64>, reg: RegId) {
        let Some(word) = word.filter(|_| self.on) else { return };
        if let Some(slot) = self.slots.get_mut(Self::slot(word)) {
            *slot = SeenMember { word, epoch: self.epoch, reg: reg.0 };
        }
    }

    /// Makes the slots if there are none yet (and slots are filled).
    fn make_room(&mut self) {
        if self.slots.is_empty() && self.on {
            self.slots = vec![SeenMember::default(); SEEN_SLOTS].into();
        }
    }

    /// Empties every slot: the innermost scope changed.
    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.slots.fill(SeenMember::default());
            self.epoch = 1;
        }
    }
}

/// A set of bytes: the first bytes of the registers, variables and range
/// prefixes a function has bound so far (none is unbound before the
/// function ends). A name whose first byte is not in it is no register or
/// variable of any scope, and is looked up among the labels only
/// ([`FuncState::lookup_label`]): branch targets (`$L__BB0_3`) went through
/// every scope's names and ranges (matrix_free: 4,542 lookups, about 440
/// host instructions each).
#[derive(Clone, Copy, Debug, Default)]
struct FirstBytes([u64; 4]);

impl FirstBytes {
    /// Every byte: no name is taken for unbound.
    const ALL: FirstBytes = FirstBytes([u64::MAX; 4]);

    #[inline(always)]
    fn add(&mut self, name: &str) {
        if let Some(&b) = name.as_bytes().first() {
            self.0[usize::from(b >> 6)] |= 1 << (b & 63);
        }
    }

    /// Whether `name` may be bound: its first byte is in the set (the
    /// empty name always may).
    #[inline(always)]
    fn may_bind(&self, name: &str) -> bool {
        name.as_bytes().first().is_none_or(|&b| self.0[usize::from(b >> 6)] >> (b & 63) & 1 != 0)
    }
}

/// A parsed function's tables that grow as its body is read, emptied,
/// for the next function of the parser: they grew by rehashing (or
/// copying) from empty in every function (renderer, 570 registers a
/// function declared one by one: 4.0 M host instructions of rehashing in
/// `bind_decl`).
#[derive(Default)]
pub struct SpareTables<'a> {
    /// The body scope's names ([`Scope::names`]).
    names: Names<'a>,
    label_ids: FxHashMap<(u32, &'a str), (LabelId, bool)>,
    refs: Vec<LabelRef<'a>>,
    /// The registers ([`FuncState::regs`]), moved out at their exact
    /// number at the end ([`FuncState::take_regs`]).
    regs: Vec<Reg>,
    seen: SeenMembers,
}

/// The most entries a table kept for the next function may have room for:
/// emptying a table costs a write per bucket, which many small functions
/// after one large one would pay each.
const SPARE_TABLE_MAX: usize = 1 << 13;

/// `table`, emptied, if it is small enough to keep ([`SPARE_TABLE_MAX`]).
fn emptied<T: Default>(mut table: T, capacity: impl Fn(&T) -> usize, clear: impl Fn(&mut T)) -> T {
    if capacity(&table) > SPARE_TABLE_MAX {
        return T::default();
    }
    clear(&mut table);
    table
}

impl<'a> FuncState<'a> {
    #[cfg(test)]
    pub fn new() -> FuncState<'a> {
        FuncState::with_spare_tables(SpareTables::default())
    }

    /// A function's state that starts with the tables `spare` (empty,
    /// with the room an earlier function gave them).
    pub fn with_spare_tables(spare: SpareTables<'a>) -> FuncState<'a> {
        debug_assert!(spare.names.is_empty() && spare.label_ids.is_empty() && spare.refs.is_empty() && spare.regs.is_empty());
        FuncState {
            regs: spare.regs,
            regs_room: 0,
            scopes: vec![Scope { names: spare.names, ..Scope::default() }],
            scope_parent: vec![0],
            labels: Vec::new(),
            label_defs: Vec::new(),
            label_ids: spare.label_ids,
            refs: spare.refs,
            bound_first: FirstBytes::default(),
            seen: {
                let mut seen = spare.seen;
                seen.next_epoch();
                seen.on = true;
                seen
            },
        }
    }

    /// Looks every name up through the scopes' names and ranges, none
    /// among the labels only for its first byte (the general path
    /// [`FirstBytes`] is tested against).
    pub fn without_fast_paths(mut self) -> FuncState<'a> {
        self.bound_first = FirstBytes::ALL;
        self.seen.on = false;
        self
    }

    /// The tables of [`SpareTables`], emptied, for the next function (each
    /// one too large to be worth emptying left out, see [`SPARE_TABLE_MAX`]).
    pub fn take_spare_tables(&mut self) -> SpareTables<'a> {
        SpareTables {
            names: emptied(std::mem::take(&mut self.scopes[0].names), |t| t.capacity(), |t| t.clear()),
            label_ids: emptied(std::mem::take(&mut self.label_ids), |t| t.capacity(), |t| t.clear()),
            refs: emptied(std::mem::take(&mut self.refs), |t| t.capacity(), |t| t.clear()),
            regs: emptied(std::mem::take(&mut self.regs), |t| t.capacity(), |t| t.clear()),
            seen: std::mem::take(&mut self.seen),
        }
    }

    /// The function's registers at their exact number, moved out of the
    /// table, which keeps its room for the next function (a table grown
    /// from empty by doubling in every function and shrunk to fit at its
    /// end: renderer, 570 registers a function declared one by one).
    pub fn take_regs(&mut self) -> Vec<Reg> {
        self.regs.drain(..).collect()
    }

    pub fn push_scope(&mut self, opened: Span) {
        let id = self.scope_parent.len() as u32;
        self.scope_parent.push(self.scopes.last().unwrap().id);
        self.scopes.push(Scope { opened: Some(opened), id, first_reg: self.regs.len() as u32, ..Scope::default() });
        self.seen.next_epoch();
    }

    /// The `{` of the innermost open nested scope.
    pub fn open_scope_span(&self) -> Option<Span> {
        self.scopes.last().and_then(|s| s.opened)
    }

    pub fn pop_scope(&mut self) -> bool {
        if self.scopes.len() > 1 {
            self.scopes.pop();
            self.seen.next_epoch();
            true
        } else {
            false
        }
    }

    pub fn depth(&self) -> usize {
        self.scopes.len() - 1
    }

    /// The label `name` of `scope`, and whether it is a position in the code.
    fn label_of(&self, scope: &Scope, name: &str) -> Option<(LabelId, bool)> {
        if !scope.has_labels {
            return None;
        }
        self.label_ids.get(&(scope.id, name)).copied()
    }

    /// Where `name` is already declared in the innermost scope: as a
    /// register, variable or label, as a range's prefix, or as a member of
    /// a range.
    pub fn declared_here(&self, name: &'a str) -> Option<Span> {
        self.declared_here_as(Key::new(name))
    }

    fn declared_here_as(&self, key: Key<'a>) -> Option<Span> {
        let s = self.scopes.last().unwrap();
        s.names
            .get(&key)
            .map(|(_, sp)| *sp)
            // A member used so far is found first, as a name would be.
            .or_else(|| s.member(key.name).filter(|(r, n)| r.members.get(*n).is_some()).map(|(r, _)| r.span))
            .or_else(|| s.ranges.get(key.name).map(|r| r.span))
            .or_else(|| self.label_of(s, key.name).map(|(id, _)| self.label_defs[id.0 as usize]))
            .or_else(|| s.range_of(key.name).map(|r| r.span))
    }

    /// Declares a register; returns its id.
    fn declare_reg_as(&mut self, key: Key<'a>, ty: ScalarType, vector: Option<u8>, span: Span) -> RegId {
        self.bound_first.add(key.name);
        let id = self.push_declared_reg(key.name, ty, vector);
        self.scopes.last_mut().unwrap().names.insert(key, (Binding::Reg(id), span));
        id
    }

    /// Declares a register in the innermost scope unless that scope already
    /// declares the name ([`FuncState::declared_here`]): then `Err` with
    /// where. One hash of the name in the common case (a scope without
    /// ranges or labels), not one to check and one to declare. Out of
    /// line, and the other case too ([`FuncState::declare_checked_reg`]),
    /// so that its frame is small: inlined into [`FuncState::bind_decl`]
    /// with the other declarations, it saved six registers and made a
    /// frame of 296 bytes for each of renderer's 62,608 registers.
    #[inline(never)]
    pub fn declare_new_reg(&mut self, name: &'a str, ty: ScalarType, vector: Option<u8>, span: Span) -> Result<RegId, Span> {
        let s = self.scopes.last_mut().unwrap();
        if !s.ranges.is_empty() || s.has_labels {
            return self.declare_checked_reg(name, ty, vector, span);
        }
        let key = Key::new(name);
        s.names.insert_new(key, (Binding::Reg(RegId(self.regs.len() as u32)), span)).map_err(|(_, first)| *first)?;
        self.bound_first.add(name);
        Ok(self.push_declared_reg(name, ty, vector))
    }

    /// [`FuncState::declare_new_reg`] in a scope with ranges or labels:
    /// the name is checked against them first.
    #[inline(never)]
    fn declare_checked_reg(&mut self, name: &'a str, ty: ScalarType, vector: Option<u8>, span: Span) -> Result<RegId, Span> {
        let key = Key::new(name);
        if let Some(prev) = self.declared_here_as(key) {
            return Err(prev);
        }
        Ok(self.declare_reg_as(key, ty, vector, span))
    }

    /// Adds a register declared on its own (not a range's member) to the
    /// table, counted in the room the table aims for ([`room_for`]).
    /// Inlined: called out of line, its saved registers and moved arguments
    /// were half its cost (renderer, 62,608 registers declared one by one:
    /// 56 host instructions each).
    #[inline(always)]
    fn push_declared_reg(&mut self, name: &str, ty: ScalarType, vector: Option<u8>) -> RegId {
        let id = RegId(self.regs.len() as u32);
        self.regs.push(Reg { name: name.into(), ty, vector, space: StateSpace::Reg });
        self.regs_room += 1;
        id
    }

    /// Binds a body declaration's name in the innermost scope (a register,
    /// a range `prefix<count>`, or a variable); `Err` with where the scope
    /// already declares it.
    /// Inlined: what is left of it is a test and a call.
    #[inline]
    pub fn bind_decl(&mut self, space: StateSpace, name: &'a str, ty: ScalarType, vector: Option<u8>, range: Option<u32>, span: Span) -> Result<(), Span> {
        if space == StateSpace::Reg && range.is_none() {
            // A plain register: checked and declared with one hash.
            return self.declare_new_reg(name, ty, vector, span).map(|_| ());
        }
        self.bind_other_decl(space, name, ty, vector, range, span)
    }

    /// [`FuncState::bind_decl`] of a range or a variable.
    #[inline(never)]
    fn bind_other_decl(&mut self, space: StateSpace, name: &'a str, ty: ScalarType, vector: Option<u8>, range: Option<u32>, span: Span) -> Result<(), Span> {
        if let Some(prev) = self.declared_here(name) {
            return Err(prev);
        }
        match range.filter(|_| space == StateSpace::Reg) {
            Some(count) => self.declare_range(name, count, ty, vector, span)?,
            None => self.declare_var(name, span),
        }
        Ok(())
    }

    /// Declares `prefix<count>`; registers are created on first use.
    /// Room is made for the members at once (machine-made PTX declares
    /// as many as it uses): the register list does not grow by copying.
    ///
    /// A name of the scope that is one of the members ([`is_member_of`]):
    /// spelled as the member (`%r5` before `%r<9>`), `Err` with where it is
    /// declared; spelled with leading zeros (`%r05`), no longer found.
    pub fn declare_range(&mut self, prefix: &'a str, count: u32, ty: ScalarType, vector: Option<u8>, span: Span) -> Result<(), Span> {
        let scope = self.scopes.last_mut().unwrap();
        // The scope's names that are members: among the registers made
        // since it opened (declared in it, or made in blocks it holds) and
        // its variables, not a walk of `names` (large when kept from an
        // earlier function). Machine-made PTX declares its ranges first.
        let made_here = self.regs[scope.first_reg as usize..].iter().map(|r| &*r.name);
        let mut members = made_here.chain(scope.digit_ended_vars.iter().map(|k| k.name)).filter(|name| is_member_of(name, prefix, count)).peekable();
        if members.peek().is_some() {
            let names = &scope.names;
            let mut declared = members.filter_map(|name| Some((name, names.get(&Key::new(name))?.1)));
            if let Some((_, prev)) = declared.find(|(name, _)| spells_member_plainly(name)) {
                return Err(prev);
            }
            scope.names.retain(|k| !is_member_of(k.name, prefix, count));
            scope.digit_ended_vars.retain(|k| !is_member_of(k.name, prefix, count));
        }
        let members = count.min(MEMBERS_RESERVED_MAX) as usize;
        self.regs_room = room_for(self.regs_room, self.regs.len(), members).min(self.regs.len() + REGS_RESERVED_MAX);
        self.regs.reserve_exact(self.regs_room - self.regs.len());
        self.bound_first.add(prefix);
        self.seen.make_room();
        self.seen.next_epoch();
        let scope = self.scopes.last_mut().unwrap();
        scope.ranges.insert(prefix, Range { count, ty, vector, span, members: Members::with_room(count) });
        Ok(())
    }

    pub fn declare_var(&mut self, name: &'a str, span: Span) {
        self.bound_first.add(name);
        self.scopes.last_mut().unwrap().declare_var(Key::new(name), span);
    }

    /// Resolves a name through the scopes, innermost first; a member of a
    /// range gets its register on its first use.
    #[inline]
    pub fn lookup(&mut self, name: &'a str) -> Option<Binding> {
        // Most names are declared in the innermost scope, or members of
        // one of its ranges (in machine-made PTX), and found there without
        // the walk's call and frame.
        let innermost = self.scopes.last().unwrap();
        if !innermost.ranges.is_empty() {
            // The name's word, made once for the slot's test and, on a
            // miss, for the slot's filling.
            let word = seen_word(name);
            if let Some(id) = self.seen.get(word) {
                return Some(Binding::Reg(id));
            }
            return self.lookup_among_ranges(name, word);
        }
        // A long name is hashed and compared out of line: the path of the
        // short ones (`%r153`) then saves no registers and calls nothing
        // (renderer: 134,686 lone registers looked up).
        if name.len() > SHORT_NAME_MAX {
            return self.lookup_past_members(name);
        }
        let key = Key::new(name);
        if let Some((b, _)) = innermost.names.get(&key) {
            return Some(*b);
        }
        self.lookup_walk(key)
    }

    /// [`FuncState::lookup`] when the innermost scope has ranges: a member
    /// is found by its number, not by hashing its name (matrix_free:
    /// 40,894 lookups, half of them a member's first use). `word` is the
    /// name's [`seen_word`].
    #[inline(never)]
    fn lookup_among_ranges(&mut self, name: &'a str, word: Option<u64>) -> Option<Binding> {
        if !self.bound_first.may_bind(name) {
            return self.lookup_label(name);
        }
        if let Some(id) = self.member_of(self.scopes.len() - 1, name) {
            self.seen.put(word, id);
            return Some(Binding::Reg(id));
        }
        self.lookup_past_members(name)
    }

    /// [`FuncState::lookup_among_ranges`] for a name no range of the
    /// innermost scope has, and [`FuncState::lookup`] for a long name: the
    /// innermost scope's names, then [`FuncState::lookup_walk`].
    /// Out of line, so the members' path stays small (matrix_free parsed
    /// alone: 85.2 -> 85.0 M).
    #[inline(never)]
    fn lookup_past_members(&mut self, name: &'a str) -> Option<Binding> {
        if !self.bound_first.may_bind(name) {
            return self.lookup_label(name);
        }
        let key = Key::new(name);
        if let Some((b, _)) = self.scopes.last().unwrap().names.get(&key) {
            return Some(*b);
        }
        self.lookup_walk(key)
    }

    /// [`FuncState::lookup`] past the innermost scope's names and ranges
    /// (not asked again): its labels, then the enclosing scopes.
    #[inline(never)]
    fn lookup_walk(&mut self, key: Key<'a>) -> Option<Binding> {
        if !self.bound_first.may_bind(key.name) {
            return self.lookup_label(key.name);
        }
        let innermost = self.scopes.len() - 1;
        for k in (0..=innermost).rev() {
            if k != innermost {
                if let Some((b, _)) = self.scopes[k].names.get(&key) {
                    return Some(*b);
                }
                if let Some(id) = self.member_of(k, key.name) {
                    return Some(Binding::Reg(id));
                }
            }
            if let Some((id, code)) = self.label_of(&self.scopes[k], key.name) {
                return Some(Binding::Label { id, code });
            }
        }
        None
    }

    /// [`FuncState::lookup`] for a name no scope binds as a register or
    /// variable ([`FirstBytes`]): the label of that name defined so far in
    /// the innermost scope that defines one.
    fn lookup_label(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| self.label_of(s, name)).map(|(id, code)| Binding::Label { id, code })
    }

    /// The register of `name` as a member of a range of scope `k`, made
    /// on the member's first use under any spelling and named as the
    /// member (`%r5` for `%r05` too).
    #[inline(always)]
    fn member_of(&mut self, k: usize, name: &'a str) -> Option<RegId> {
        let scope = &mut self.scopes[k];
        if scope.ranges.is_empty() {
            return None;
        }
        let (prefix, n) = range_member(name)?;
        let range = scope.ranges.get_mut(prefix).filter(|r| n < r.count)?;
        if let Some(id) = range.members.get(n) {
            return Some(id);
        }
        let id = RegId(self.regs.len() as u32);
        // Spelled with leading zeros: `0` followed by more digits.
        let digits = &name.as_bytes()[prefix.len()..];
        let name = if digits.len() > 1 && digits[0] == b'0' { member_name(prefix, n) } else { name.into() };
        self.regs.push(Reg { name, ty: range.ty, vector: range.vector, space: StateSpace::Reg });
        range.members.set(n, id);
        Some(id)
    }

    /// Defines a label in the innermost scope. `Err` with the earlier
    /// declaration of the name in this scope (a label, register or variable).
    pub fn define_label(&mut self, name: &'a str, span: Span, code: bool) -> Result<LabelId, (Span, Binding)> {
        let scope = self.scopes.last_mut().unwrap();
        let label = match self.label_ids.entry((scope.id, name)) {
            Entry::Occupied(e) => {
                let (id, code) = *e.get();
                return Err((self.label_defs[id.0 as usize], Binding::Label { id, code }));
            }
            Entry::Vacant(e) => e,
        };
        // A used member of a range is no declaration (see `Scope`); a name
        // whose first byte no register or variable has is none of them
        // ([`FirstBytes`]: most labels, `$L__BB0_3`, not hashed again).
        if self.bound_first.may_bind(name) {
            if let Some((b, prev)) = scope.names.get(&Key::new(name)).filter(|_| scope.range_of(name).is_none()) {
                return Err((*prev, *b));
            }
        }
        let id = LabelId(self.labels.len() as u32);
        label.insert((id, code));
        scope.has_labels = true;
        self.labels.push(name.into());
        self.label_defs.push(span);
        Ok(id)
    }

    /// A reference to the label `name` (a branch target, a `brx.idx` table,
    /// a `call` prototype), which means `meaning` at this point (what
    /// [`FuncState::lookup`] gave); returns its provisional number.
    pub fn use_label(&mut self, name: &'a str, span: Span, meaning: Option<Binding>) -> LabelId {
        let known = match meaning {
            Some(Binding::Label { id, code: false }) => Some(id),
            _ => None,
        };
        self.push_ref(name, span, known)
    }

    /// A label of a `.branchtargets` list: always the block rule.
    pub fn use_target(&mut self, name: &'a str, span: Span) -> LabelId {
        self.push_ref(name, span, None)
    }

    fn push_ref(&mut self, name: &'a str, span: Span, known: Option<LabelId>) -> LabelId {
        let scope = self.scopes.last().unwrap().id;
        self.refs.push(LabelRef { name, scope, span, known });
        LabelId(self.refs.len() as u32 - 1)
    }

    /// How many label references have been made so far.
    pub fn ref_count(&self) -> usize {
        self.refs.len()
    }

    /// The label each reference means (indexed by provisional number), or
    /// the first reference no enclosing block defines: its position, its
    /// name, and where a label of that name is defined in another block.
    pub fn resolve_labels(&self) -> Result<Vec<LabelId>, (Span, &'a str, Option<Span>)> {
        let mut out = Vec::with_capacity(self.refs.len());
        for r in &self.refs {
            if let Some(id) = r.known {
                out.push(id);
                continue;
            }
            let mut scope = r.scope;
            let found = loop {
                if let Some(&(id, _)) = self.label_ids.get(&(scope, r.name)) {
                    break Some(id);
                }
                if scope == 0 {
                    break None;
                }
                scope = self.scope_parent[scope as usize];
            };
            match found {
                Some(id) => out.push(id),
                None => {
                    let elsewhere = self.labels.iter().position(|n| &**n == r.name);
                    return Err((r.span, r.name, elsewhere.map(|k| self.label_defs[k])));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`mix`] is a bijection, which [`Key`]'s comparison of short names
    /// by their hashes rests on: undoing its steps gives back every
    /// number, names' and others.
    #[test]
    fn short_name_hash_is_a_bijection() {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        // The inverse of `K` modulo 2^64 (Newton's iteration).
        let mut k_inv = K;
        for _ in 0..6 {
            k_inv = k_inv.wrapping_mul(2u64.wrapping_sub(K.wrapping_mul(k_inv)));
        }
        assert_eq!(K.wrapping_mul(k_inv), 1);
        let unmix = |h: u64| {
            let h = h ^ (h >> 29) ^ (h >> 58);
            let x = h.wrapping_mul(k_inv);
            x ^ (x >> 32)
        };
        let mut words: Vec<u64> = ["", "%r", "%r1", "%rd153", "%p12", "%fd9999", "$L__BB0_", "_"].iter().map(|n| short_key(n)).collect();
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            words.extend([x, x >> 37, x << 29, x & 0xffff]);
        }
        for w in words {
            assert_eq!(unmix(mix(w)), w, "{w:#x}");
        }
    }

    /// [`Key`]s compare as their names do, whether held as a number (at
    /// most 8 bytes) or as text, and equal names hash alike: names of every
    /// length up to past 8 bytes, differing in one byte at every position,
    /// or in length only.
    #[test]
    fn keys_compare_as_their_names() {
        let mut names: Vec<String> = Vec::new();
        for len in 0..=12 {
            let base: String = "%rd_x$Az09q%r".chars().take(len).collect();
            names.push(base.clone());
            for k in 0..len {
                for c in ['0', '9', 'r', '%', 'é'] {
                    let mut chars: Vec<char> = base.chars().collect();
                    chars[k] = c;
                    names.push(chars.into_iter().collect());
                }
            }
        }
        names.extend(["%r1", "%r10", "%r100", "%r1000", "%r10000", "%r100000", "%r1000000", "%r10000000"].map(String::from));
        for a in &names {
            for b in &names {
                let (ka, kb) = (Key::new(a), Key::new(b));
                assert_eq!(ka == kb, a == b, "{a:?} {b:?}");
                if a == b {
                    assert_eq!(ka.hash, kb.hash, "{a:?}");
                }
            }
        }
    }

    /// A scope's [`Names`] binds each name once, short or long: declaring
    /// it again gives where it was first declared and leaves it as it was,
    /// binding it again replaces it, and the names kept by `retain` are
    /// still found after the table grew.
    #[test]
    fn names_bind_each_name_once() {
        let at = |k: usize| Span::new(k, k + 1);
        let names: Vec<String> = (0..300).map(|k| if k % 3 == 0 { format!("%long_name_{k}") } else { format!("%r{k}") }).collect();
        let mut table: Names = Names::default();
        for (k, n) in names.iter().enumerate() {
            assert_eq!(table.insert_new(Key::new(n), (Binding::Reg(RegId(k as u32)), at(k))), Ok(()), "{n}");
        }
        for (k, n) in names.iter().enumerate() {
            assert_eq!(table.insert_new(Key::new(n), (Binding::Var, at(1000))).map_err(|(_, first)| *first), Err(at(k)), "{n}");
            assert_eq!(table.get(&Key::new(n)), Some(&(Binding::Reg(RegId(k as u32)), at(k))), "{n}");
        }
        table.insert(Key::new(&names[4]), (Binding::Var, at(2000)));
        assert_eq!(table.get(&Key::new(&names[4])), Some(&(Binding::Var, at(2000))));
        table.retain(|k| k.name.len() > 6);
        for (k, n) in names.iter().enumerate() {
            let kept = table.get(&Key::new(n)).map(|(_, sp)| *sp);
            assert_eq!(kept, (n.len() > 6).then(|| at(k)), "{n}");
        }
        assert_eq!(table.get(&Key::new("%r")), None);
    }

    #[test]
    fn parameterized_names() {
        assert_eq!(range_member("%r12"), Some(("%r", 12)));
        assert_eq!(range_member("%r0"), Some(("%r", 0)));
        assert_eq!(range_member("%r012"), Some(("%r", 12)));
        assert_eq!(range_member("%r00"), Some(("%r", 0)));
        assert_eq!(range_member("%r0004294967295"), Some(("%r", u32::MAX)));
        assert_eq!(range_member("%r"), None);
        assert_eq!(range_member("12"), None);
        assert_eq!(range_member("%r4294967295"), Some(("%r", u32::MAX)));
        assert_eq!(range_member("%r4294967296"), None);
        let mut f = FuncState::new();
        f.declare_range("%r", 10, ScalarType::B32, None, Span::default()).unwrap();
        assert!(matches!(f.lookup("%r9"), Some(Binding::Reg(_))));
        assert_eq!(f.lookup("%r10"), None);
        let a = f.lookup("%r3");
        assert_eq!(a, f.lookup("%r3"));
    }

    /// [`range_member`]'s one pass over at most nine digits splits as the
    /// definition does: the longest run of digits at the end, after a
    /// nonempty prefix, read in decimal without its leading zeros, when
    /// the value fits a `u32`.
    #[test]
    fn members_split_as_defined() {
        fn defined(name: &str) -> Option<(&str, u32)> {
            let start = name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            let digits = name[start..].trim_start_matches('0');
            if start == 0 || start == name.len() {
                return None;
            }
            let value = if digits.is_empty() { 0 } else if digits.len() > 10 { return None } else { digits.parse::<u64>().ok()? };
            Some((&name[..start], u32::try_from(value).ok()?))
        }
        let prefixes = ["", "%", "%r", "%rd", "a1b", "x_9z", "%é", "_"];
        let numbers = ["", "0", "00", "5", "05", "42", "123456789", "999999999", "0999999999", "1000000000", "4294967295", "4294967296", "0004294967295", "9999999999", "00000000000000000000001", "99999999999999999999999", "18446744073709551616"];
        for p in prefixes {
            for n in numbers {
                let name = format!("{p}{n}");
                assert_eq!(range_member(&name), defined(&name), "{name}");
            }
        }
    }

    /// Ranges are found by prefix whether a scope has a few (compared one
    /// after another, prefixes of up to 8 bytes as numbers, longer ones as
    /// text) or many (indexed), and members by number whether they are
    /// near (an array) or far (a map): each member gets one register, made
    /// on its first use, of its range's type.
    #[test]
    fn members_are_found_among_few_and_many_ranges() {
        for ranges in [1usize, 3, RANGES_SCANNED_MAX, RANGES_SCANNED_MAX + 1, 40] {
            let mut f = FuncState::new();
            // Prefixes that differ in their last byte only, in length only,
            // past their eighth byte only; then more.
            let tricky = ["%rd", "%r", "%rs", "%fd", "%f", "%p", "%rdd", "%abcdefgh", "%abcdefgi", "%abcdefg", "%abcdefghij_", "%abcdefghik_"];
            let more = (0..).map(|k: usize| &*Box::leak(format!("%{}x{}_", "p".repeat(k % 12), char::from(b'a' + (k / 12) as u8)).into_boxed_str()));
            let prefixes: Vec<&'static str> = tricky.into_iter().chain(more).take(ranges).collect();
            for (k, p) in prefixes.iter().enumerate() {
                let ty = if k % 2 == 0 { ScalarType::B32 } else { ScalarType::F64 };
                f.declare_range(p, 1 << 20, ty, None, Span::default()).unwrap();
            }
            let numbers = [0u32, 7, MEMBERS_RESERVED_MAX, DENSE_MEMBERS_MAX as u32 - 1, DENSE_MEMBERS_MAX as u32, (1 << 20) - 1];
            let mut seen = std::collections::HashMap::new();
            for round in 0..2 {
                for (k, p) in prefixes.iter().enumerate().rev() {
                    for n in numbers {
                        let name: &'static str = Box::leak(format!("{p}{n}").into_boxed_str());
                        let Some(Binding::Reg(id)) = f.lookup(name) else { panic!("{name}: no register") };
                        let reg = &f.regs[id.0 as usize];
                        assert_eq!((&*reg.name, reg.ty), (name, if k % 2 == 0 { ScalarType::B32 } else { ScalarType::F64 }));
                        if round == 0 {
                            assert_eq!(seen.insert(name, id), None, "{name}: a register made twice");
                        } else {
                            assert_eq!(seen.get(name), Some(&id), "{name}: another register on its second use");
                        }
                    }
                    let outside: &'static str = Box::leak(format!("{p}{}", 1u32 << 20).into_boxed_str());
                    assert_eq!(f.lookup(outside), None);
                }
            }
            assert_eq!(f.regs.len(), ranges * numbers.len());
            assert_eq!(f.lookup("%q_1"), None);
        }
    }

    /// A member spelled with leading zeros is the member (ptxas 12.9):
    /// every spelling, whichever comes first, gives one register, named as
    /// the member; a register declared before the range under a zero-led
    /// spelling is no longer found by it; spelled plainly, it makes the
    /// range a duplicate.
    #[test]
    fn members_spelled_with_leading_zeros_are_the_member() {
        let mut f = FuncState::new();
        f.declare_range("%r", 10, ScalarType::B32, None, Span::default()).unwrap();
        let r3 = f.lookup("%r3");
        assert_eq!(f.lookup("%r03"), r3);
        let r5 = f.lookup("%r05");
        assert_eq!(f.lookup("%r5"), r5);
        assert_eq!(f.lookup("%r0005"), r5);
        assert_ne!(r3, r5);
        assert_eq!(f.lookup("%r00"), f.lookup("%r0"));
        let Some(Binding::Reg(id)) = r5 else { panic!("{r5:?}") };
        assert_eq!(&*f.regs[id.0 as usize].name, "%r5");
        assert_eq!(f.lookup("%r010"), None);

        let mut g = FuncState::new();
        let own = g.declare_new_reg("%s07", ScalarType::B32, None, Span::default()).unwrap();
        assert_eq!(g.lookup("%s07"), Some(Binding::Reg(own)));
        g.declare_range("%s", 8, ScalarType::B32, None, Span::default()).unwrap();
        let member = g.lookup("%s07");
        assert!(matches!(member, Some(Binding::Reg(id)) if id != own));
        assert_eq!(g.lookup("%s7"), member);

        let mut h = FuncState::new();
        let at = Span { start: 3, end: 6 };
        h.declare_new_reg("%t1", ScalarType::B32, None, at).unwrap();
        assert_eq!(h.declare_range("%t", 4, ScalarType::B32, None, Span::default()), Err(at));
    }

    /// The tables a function hands to the next ([`SpareTables`]) come
    /// empty: nothing the first function bound or referred to is seen by
    /// the second.
    #[test]
    fn spare_tables_carry_no_names() {
        let mut first = FuncState::new();
        first.declare_new_reg("%r1", ScalarType::B32, None, Span::default()).unwrap();
        first.define_label("L", Span::default(), true).unwrap();
        first.use_label("M", Span::default(), None);
        let mut second = FuncState::with_spare_tables(first.take_spare_tables());
        assert_eq!(second.lookup("%r1"), None);
        assert_eq!(second.lookup("L"), None);
        assert!(second.declare_new_reg("%r1", ScalarType::B32, None, Span::default()).is_ok());
        assert!(second.define_label("L", Span::default(), true).is_ok());
        assert_eq!(second.resolve_labels().map(|ids| ids.len()), Ok(0));
        // Nor the members it found ([`SeenMembers`]): a member of the next
        // function's range of that prefix is a register of its own.
        let mut third = FuncState::with_spare_tables(second.take_spare_tables());
        third.declare_range("%s", 4, ScalarType::B32, None, Span::default()).unwrap();
        third.declare_new_reg("%t", ScalarType::B32, None, Span::default()).unwrap();
        third.declare_new_reg("%u", ScalarType::B32, None, Span::default()).unwrap();
        assert_eq!(third.lookup("%s3"), Some(Binding::Reg(RegId(2))));
        assert!(third.seen.get(seen_word("%s3")).is_some());
        let mut fourth = FuncState::with_spare_tables(third.take_spare_tables());
        fourth.declare_range("%s", 4, ScalarType::B32, None, Span::default()).unwrap();
        assert_eq!(fourth.lookup("%s3"), Some(Binding::Reg(RegId(0))));
        assert_eq!(fourth.regs.len(), 1);
    }

    #[test]
    fn room_is_made_for_every_range_declared() {
        let mut f = FuncState::new();
        f.declare_range("%p", 3, ScalarType::Pred, None, Span::default()).unwrap();
        f.declare_range("%r", 40, ScalarType::B32, None, Span::default()).unwrap();
        f.declare_new_reg("%x", ScalarType::B32, None, Span::default()).unwrap();
        f.declare_range("%rd", 20, ScalarType::B64, None, Span::default()).unwrap();
        for name in (0..3).map(|k| format!("%p{k}")).chain((0..40).map(|k| format!("%r{k}"))).chain((0..20).map(|k| format!("%rd{k}"))) {
            let name: &'static str = Box::leak(name.into_boxed_str());
            assert!(matches!(f.lookup(name), Some(Binding::Reg(_))), "{name}");
        }
        // The sum of the members and the plain register, made room for
        // ahead: the table never grew by doubling.
        assert_eq!(f.regs.len(), 64);
        assert_eq!(f.regs.capacity(), 64);
    }

    /// Many large ranges declared and little used make little room: the
    /// registers made room for ahead and the members' arrays stay bounded,
    /// while each member still finds its one register.
    #[test]
    fn room_for_many_large_ranges_is_bounded() {
        let mut f = FuncState::new();
        let prefixes: Vec<&'static str> = (0..2000).map(|k| &*Box::leak(format!("%a{k}x").into_boxed_str())).collect();
        for p in &prefixes {
            f.declare_range(p, 100_000, ScalarType::B32, None, Span::default()).unwrap();
        }
        assert!(f.regs.capacity() <= REGS_RESERVED_MAX, "room for {} registers", f.regs.capacity());
        let dense: usize = f.scopes[0].ranges.ranges.iter().map(|r| r.members.near.len()).sum();
        assert!(dense <= 2000 * DENSE_MEMBERS_FIRST as usize, "{dense} array entries");
        let mut made = Vec::new();
        for p in &prefixes {
            for n in [99_999u32, 1, 65_000] {
                let name: &'static str = Box::leak(format!("{p}{n}").into_boxed_str());
                let Some(Binding::Reg(id)) = f.lookup(name) else { panic!("{name}") };
                made.push((name, id));
            }
        }
        let dense: usize = f.scopes[0].ranges.ranges.iter().map(|r| r.members.near.len()).sum();
        assert!(dense <= 2000 * Members::dense_room(3), "{dense} array entries");
        for (name, id) in made {
            assert_eq!(f.lookup(name), Some(Binding::Reg(id)), "{name}");
        }
        assert_eq!(f.regs.len(), 6000);
    }

    /// [`Members::set`]'s write in place gives what the general way,
    /// [`Members::set_past_near`], gives: members set in the same order
    /// through both, in ranges of every size, first uses within the dense
    /// array, past it, and far past it, leave the same array, map and count.
    #[test]
    fn members_set_in_place_as_the_general_way_sets_them() {
        for count in [1u32, 10, 64, 65, 1000, 1 << 20] {
            let (mut fast, mut general) = (Members::with_room(count), Members::with_room(count));
            let numbers = (0..count.min(300)).chain([63, 64, 200, 5000, 70_000, count - 1]).filter(|&n| n < count);
            let mut in_place = 0;
            for (k, n) in numbers.enumerate() {
                if fast.get(n).is_some() {
                    continue;
                }
                in_place += usize::from((n as usize) < fast.near.len());
                fast.set(n, RegId(k as u32));
                general.set_past_near(n, RegId(k as u32));
                assert_eq!((&fast.near, &fast.far, fast.used), (&general.near, &general.far, general.used), "count {count}, member {n}");
            }
            assert!(in_place > 0, "count {count}");
        }
    }

    #[test]
    fn labels_belong_to_their_block_and_yield_to_registers() {
        let at = |k: usize| Span::new(k, k + 1);
        let mut f = FuncState::new();
        let outer = f.define_label("L", at(0), true).unwrap();
        assert_eq!(f.define_label("L", at(1), true), Err((at(0), Binding::Label { id: outer, code: true })));
        assert_eq!(f.declared_here("L"), Some(at(0)));
        assert_eq!(f.declare_new_reg("L", ScalarType::B32, None, at(2)), Err(at(0)));
        f.push_scope(at(3));
        assert_eq!(f.lookup("L"), Some(Binding::Label { id: outer, code: true }));
        let inner = f.define_label("L", at(4), false).unwrap();
        assert_eq!(f.lookup("L"), Some(Binding::Label { id: inner, code: false }));
        f.pop_scope();
        assert_eq!(f.lookup("L"), Some(Binding::Label { id: outer, code: true }));
        // A label named like a member of a range of its block: the name
        // still means the register.
        f.declare_range("%r", 4, ScalarType::B32, None, at(5)).unwrap();
        f.define_label("%r1", at(6), true).unwrap();
        assert!(matches!(f.lookup("%r1"), Some(Binding::Reg(_))));
    }

    /// The lookups' fast paths, a name whose first byte no bound name has
    /// looked up among the labels only ([`FirstBytes`]) and a member found
    /// again in its slot ([`SeenMembers`]), find what the walk through
    /// every scope's names and ranges finds: random runs of declarations
    /// (registers, variables, ranges, labels of code and of directives,
    /// named with `$` and not, long and short) in nested scopes, every
    /// name looked up after each step, both ways.
    #[test]
    fn lookups_find_what_the_walk_finds() {
        let names = [
            "$L1", "$L__BB0_3", "$r1", "$r12", "%r1", "%r2", "%r02", "%r15", "%r16", "%rd1", "%rd01", "L1", "x", "$x", "$q7", "%q_long_name_1", "$L__long_label_9", "é1", "_a",
        ];
        let prefixes = ["$r", "%r", "%rd", "$L__BB0_"];
        let at = |k: usize| Span::new(k, k + 1);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let (mut differed_from_none, mut seen) = (0, 0);
        for _ in 0..300 {
            let mut fast = FuncState::new();
            let mut general = FuncState::new().without_fast_paths();
            for step in 0..40 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let name = names[(x >> 8) as usize % names.len()];
                match x % 8 {
                    0 => {
                        fast.push_scope(at(step));
                        general.push_scope(at(step));
                    }
                    1 => assert_eq!(fast.pop_scope(), general.pop_scope()),
                    2 => assert_eq!(fast.declare_new_reg(name, ScalarType::B32, None, at(step)), general.declare_new_reg(name, ScalarType::B32, None, at(step))),
                    3 => assert_eq!(fast.bind_decl(StateSpace::Local, name, ScalarType::B32, None, None, at(step)), general.bind_decl(StateSpace::Local, name, ScalarType::B32, None, None, at(step))),
                    4 => {
                        let p = prefixes[(x >> 20) as usize % prefixes.len()];
                        assert_eq!(fast.declare_range(p, 16, ScalarType::B32, None, at(step)), general.declare_range(p, 16, ScalarType::B32, None, at(step)));
                    }
                    _ => assert_eq!(fast.define_label(name, at(step), x % 8 != 5), general.define_label(name, at(step), x % 8 != 5)),
                }
                for n in names {
                    let found = fast.lookup(n);
                    assert_eq!(found, general.lookup(n), "{n} at step {step}");
                    differed_from_none += usize::from(found.is_some() && !fast.bound_first.may_bind(n));
                    seen += usize::from(fast.scopes.last().is_some_and(|s| !s.ranges.is_empty()) && fast.seen.get(seen_word(n)).is_some());
                }
            }
            assert_eq!(fast.regs.len(), general.regs.len());
        }
        // Labels were found by the labels' own look-up, members in their slots.
        assert!(differed_from_none > 1000, "{differed_from_none}");
        assert!(seen > 1000, "{seen}");
    }

    /// A label may not be named as a register or variable of its block,
    /// whatever their first bytes; a name no register or variable starts
    /// like ([`FirstBytes`]) is defined without looking at them.
    #[test]
    fn labels_are_not_named_as_registers_or_variables_of_their_block() {
        for fast_paths in [true, false] {
            let at = |k: usize| Span::new(k, k + 1);
            let f = FuncState::new();
            let mut f = if fast_paths { f } else { f.without_fast_paths() };
            f.declare_new_reg("$r", ScalarType::B32, None, at(0)).unwrap();
            f.declare_var("x", at(1));
            f.declare_new_reg("%long_register_name", ScalarType::B32, None, at(2)).unwrap();
            for (name, k) in [("$r", 0), ("x", 1), ("%long_register_name", 2)] {
                assert!(matches!(f.define_label(name, at(10), true), Err((sp, _)) if sp == at(k)), "{name}");
            }
            assert!(f.define_label("$L__BB0_3", at(11), true).is_ok());
            assert!(f.define_label("L", at(12), true).is_ok());
            f.push_scope(at(13));
            assert!(f.define_label("$r", at(14), true).is_ok());
        }
    }

    #[test]
    fn inner_scopes_shadow() {
        let mut f = FuncState::new();
        let outer = f.declare_new_reg("%x", ScalarType::B32, None, Span::default()).unwrap();
        f.push_scope(Span::default());
        let inner = f.declare_new_reg("%x", ScalarType::F32, None, Span::default()).unwrap();
        assert_eq!(f.lookup("%x"), Some(Binding::Reg(inner)));
        f.pop_scope();
        assert_eq!(f.lookup("%x"), Some(Binding::Reg(outer)));
    }
}
