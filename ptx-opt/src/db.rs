//! The incremental database (salsa): editing one function re-parses,
//! re-analyses, re-optimizes and re-prints only that function.
//!
//! Inputs: a [`SourceFile`] (its name, optimization level, header text and
//! the list of its top-level items) and one [`ItemSource`] per item (its
//! text). [`Database::set_text`] cuts new text into items
//! ([`ptx_ir::parse::split`]) and updates only the items whose text changed,
//! keeping the others' inputs (and so every query result that depends on
//! them); [`Database::edit`] applies an editor's range edit (byte offsets
//! into the whole current text). Queries, per item: its declared names, its
//! parse, its function IR, CFG and analyses, its optimized IR, its printed
//! text; per file: the module's names, header, diagnostics, the whole
//! parsed module, the items the printed module leaves out and the printed
//! module (a concatenation of memoized item texts). The verifier runs item
//! by item too (`verify.rs`); [`Database::printed`] gives the first
//! verifier error instead of output.
//!
//! **The invariant:** after any sequence of edits and `set_text`s, every
//! answer (`printed`, `module`, `diagnostics`, `verifier_diagnostics`, with
//! their line:col and messages) is what a fresh [`ptx_ir::parse()`] (+
//! [`ptx_ir::verify::verify`] + [`crate::optimize`] + `print_module`) of the
//! current text gives. Two things keep it: the cut is always exactly
//! [`split::split_items`] of the whole current text (an edit keeps it only
//! when [`split::keeps_cut`] proves the boundaries did not move, else the
//! text is re-cut), and when the header or an item does not parse on its
//! own ([`items_parse`]) the answers come from a fresh parse of the whole
//! text ([`whole`]), so errors are the one-shot parser's, positions and
//! messages included.
//!
//! **What an edit costs:** the queries of one item read only that item's
//! text and inputs of the file: its header, and the module's names and
//! verifier context, which the [`Database`] copies from their queries
//! ([`module_names`], [`verify::verify_context`]) after every change, so
//! the queries of an item do not depend on the text of any other. An
//! item's text is of high durability until it first changes and of low
//! durability after, so once a function has been edited, editing it again
//! re-checks the queries of the edited items only, and the per-file
//! queries that gather every item re-check the others' in one step each
//! (salsa's durability check) instead of walking their dependencies.
//!
//! ```
//! use ptx_opt::db::Database;
//! let mut db = Database::default();
//! let file = db.add_file("k.ptx", ".version 8.0\n.target sm_80\n.entry a() { ret; }\n.entry b() { ret; }\n", ptx_opt::OptLevel::O0);
//! assert!(db.printed(file).unwrap().contains(".entry b()"));
//! db.set_text(file, ".version 8.0\n.target sm_80\n.entry a() { ret; }\n.entry b() { exit; }\n");
//! assert!(db.printed(file).unwrap().contains("exit;"));
//! ```

pub mod verify;

use crate::{optimize_function, OptLevel};
use ptx_ir::analysis::FunctionAnalyses;
use ptx_ir::ir::{Function, Item, Module};
use ptx_ir::parse::{parse_header, parse_item, split, GlobalKind, Header, ItemSpans};
use ptx_ir::source::Diagnostic;
use ptx_ir::verify::Declarations;
use salsa::Durability;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// A source file: its name, the level it is optimized at, its header text
/// (`.version` ...) and its items in order, and two module-wide facts
/// derived from them that the [`Database`] keeps equal to their queries
/// after every change (`Database::refresh_module_facts`).
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub name: String,
    #[returns(copy)]
    pub level: OptLevel,
    #[returns(ref)]
    pub header_text: String,
    #[returns(ref)]
    pub items: Vec<ItemSource>,
    /// What [`module_names`] gives: the names every item parses against.
    #[returns(ref)]
    pub names: rustc_hash::FxHashMap<Box<str>, GlobalKind>,
    /// What [`verify::verify_context`] gives: what every item is verified against.
    #[returns(ref)]
    pub context: ptx_ir::verify::Context,
}

/// One top-level item's text (a function, a variable, a directive), with
/// the whitespace and comments after it. Its identity survives edits to
/// other items, so their query results stay valid. The text is of high
/// durability until it first changes, of low durability after (see
/// [`Database`]).
#[salsa::input(debug)]
pub struct ItemSource {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(ref)]
    pub text: String,
}

/// A parsed item, positions relative to its text.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedItem {
    pub item: Option<Arc<Item>>,
    pub spans: ItemSpans,
}

/// The module-level names an item declares.
#[salsa::tracked(returns(ref))]
pub fn item_names(db: &dyn salsa::Database, item: ItemSource) -> Vec<(Box<str>, GlobalKind)> {
    split::item_names(item.text(db).as_bytes())
}

/// Every module-level name of a file (the first declaration of each wins).
#[salsa::tracked(returns(ref))]
pub fn module_names(db: &dyn salsa::Database, file: SourceFile) -> rustc_hash::FxHashMap<Box<str>, GlobalKind> {
    let mut out = rustc_hash::FxHashMap::default();
    for item in file.items(db) {
        for (n, k) in item_names(db, *item) {
            out.entry(n.clone()).or_insert(*k);
        }
    }
    out
}

/// The module header.
#[salsa::tracked(returns(ref))]
pub fn header(db: &dyn salsa::Database, file: SourceFile) -> Result<Header, Diagnostic> {
    parse_header(file.name(db), file.header_text(db).as_bytes())
}

/// One item, parsed. Diagnostics are relative to the item's text; see [`diagnostics`].
#[salsa::tracked(returns(ref))]
pub fn parsed_item(db: &dyn salsa::Database, item: ItemSource) -> Result<ParsedItem, Diagnostic> {
    let file = item.file(db);
    let parsed = parse_item(file.name(db), item.text(db).as_bytes(), file.names(db))?;
    Ok(match parsed {
        Some((i, spans)) => ParsedItem { item: Some(Arc::new(i)), spans },
        None => ParsedItem { item: None, spans: ItemSpans::default() },
    })
}

/// The function an item defines, if it is one and parses.
#[salsa::tracked(returns(clone))]
pub fn function(db: &dyn salsa::Database, item: ItemSource) -> Option<Arc<Function>> {
    match parsed_item(db, item) {
        Ok(ParsedItem { item: Some(i), .. }) => match &**i {
            Item::Func(f) => Some(Arc::new((**f).clone())),
            _ => None,
        },
        _ => None,
    }
}

/// CFG, dominators, loops, liveness and def-use of an item's function.
#[salsa::tracked(returns(clone))]
pub fn analyses(db: &dyn salsa::Database, item: ItemSource) -> Option<Arc<FunctionAnalyses>> {
    match parsed_item(db, item) {
        Ok(ParsedItem { item: Some(i), .. }) => match &**i {
            Item::Func(f) if f.body.is_some() => Some(Arc::new(FunctionAnalyses::compute(f))),
            _ => None,
        },
        _ => None,
    }
}

/// An item after the file's pass pipeline (functions only change).
#[salsa::tracked(returns(clone))]
pub fn optimized_item(db: &dyn salsa::Database, item: ItemSource) -> Option<Arc<Item>> {
    let parsed = parsed_item(db, item).as_ref().ok()?.item.clone()?;
    match &*parsed {
        Item::Func(f) => {
            let file = item.file(db);
            let level = file.level(db);
            if level == OptLevel::O0 {
                return Some(parsed);
            }
            let Ok(h) = header(db, file) else { return Some(parsed) };
            let ctx = crate::ModuleContext::new(h.version, &h.target, h.address_size);
            Some(Arc::new(Item::Func(Box::new(optimize_function(f, &ctx, level)))))
        }
        _ => Some(parsed),
    }
}

/// What the module-level half of `dead-decls` needs of an optimized item
/// (its internal names, the names it mentions).
#[salsa::tracked(returns(ref))]
pub fn item_symbols(db: &dyn salsa::Database, item: ItemSource) -> Option<crate::passes::dead_decls::SymbolFacts> {
    optimized_item(db, item).map(|i| crate::passes::dead_decls::symbol_facts(&i))
}

/// An item's optimized text, and whether it is a function (for spacing).
/// `None` when the item does not parse or holds no item.
#[salsa::tracked(returns(clone))]
pub fn printed_item(db: &dyn salsa::Database, item: ItemSource) -> Option<(bool, Arc<str>)> {
    let i = optimized_item(db, item)?;
    let mut out = String::new();
    ptx_print::write_item(&mut out, &i);
    Some((matches!(&*i, Item::Func(_)), out.into()))
}

/// Do the header and every item parse on their own? Then the file's
/// answers are assembled from the items' (a cut that equals
/// [`split::split_items`] of the whole text makes them those of a fresh
/// parse); otherwise they come from [`whole`]. It reads each item's
/// declarations rather than its parse, which an edit inside a body changes.
#[salsa::tracked(returns(copy))]
pub fn items_parse(db: &dyn salsa::Database, file: SourceFile) -> bool {
    header(db, file).is_ok() && file.items(db).iter().all(|i| verify::item_declarations(db, *i).is_some())
}

/// What a fresh parse of the whole text gives: the module and the
/// verifier's diagnostics, or the parse error. Computed only when an item or
/// the header does not parse on its own ([`items_parse`]), so every answer
/// about a file that does not parse (the error, its line:col) is exactly the
/// one-shot parser's.
#[derive(Clone, Debug, PartialEq)]
pub struct Whole {
    pub module: Arc<Module>,
    pub verifier: Vec<Diagnostic>,
}

/// The fresh parse of the whole text (see [`Whole`]).
#[salsa::tracked(returns(ref))]
pub fn whole(db: &dyn salsa::Database, file: SourceFile) -> Result<Whole, Diagnostic> {
    let text = full_text(db, file);
    let name = file.name(db);
    let p = ptx_ir::parse(name, text.as_bytes())?;
    let verifier = ptx_ir::verify::verify_parsed(&p, name, text.as_bytes());
    Ok(Whole { module: Arc::new(p.module), verifier })
}

/// The file's parse error with its file position, as a fresh parse of the
/// whole text gives it (the parser stops at the first error, so there is at
/// most one); empty when the file parses.
#[salsa::tracked(returns(ref))]
pub fn diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    if items_parse(db, file) {
        return Vec::new();
    }
    match whole(db, file) {
        Err(d) => vec![d.clone()],
        Ok(_) => Vec::new(),
    }
}

fn full_text(db: &dyn salsa::Database, file: SourceFile) -> String {
    let len = file.header_text(db).len() + file.items(db).iter().map(|i| i.text(db).len()).sum::<usize>();
    let mut s = String::with_capacity(len);
    s.push_str(file.header_text(db));
    for item in file.items(db) {
        s.push_str(item.text(db));
    }
    s
}

/// The whole parsed module (for callers that want the one-shot result).
#[salsa::tracked(returns(ref))]
pub fn module(db: &dyn salsa::Database, file: SourceFile) -> Result<Arc<Module>, Diagnostic> {
    if !items_parse(db, file) {
        return whole(db, file).as_ref().map(|w| w.module.clone()).map_err(|d| d.clone());
    }
    let h = header(db, file).as_ref().map_err(|d| d.clone())?;
    let mut m = Module { version: h.version, target: h.target.clone(), address_size: h.address_size, items: Vec::new() };
    for item in file.items(db) {
        if let Ok(ParsedItem { item: Some(i), .. }) = parsed_item(db, *item) {
            m.items.push((**i).clone());
        }
    }
    Ok(Arc::new(m))
}

/// A printed module as pieces: the header, then each item's memoized text
/// (a rope, so an edit does not copy the whole module).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintedModule {
    pub pieces: Vec<Arc<str>>,
}

impl PrintedModule {
    /// Total length in bytes.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(|p| p.len()).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes the text out piece by piece.
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.pieces.iter().try_for_each(|p| w.write_all(p.as_bytes()))
    }
}

impl std::fmt::Display for PrintedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pieces.iter().try_for_each(|p| f.write_str(p))
    }
}

/// The positions of the items that are internal symbols nothing names, when
/// the level's pipeline removes them (as `optimize` does after the
/// functions), from the items' memoized facts. Unchanged by an edit that
/// changes no item's symbols, so [`printed_module`] reads it in one step.
#[salsa::tracked(returns(ref))]
pub fn dead_items(db: &dyn salsa::Database, file: SourceFile) -> rustc_hash::FxHashSet<usize> {
    use crate::passes::dead_decls;
    if !crate::passes::pipeline(file.level(db)).contains(&dead_decls::PASS.name) {
        return rustc_hash::FxHashSet::default();
    }
    let facts: Vec<(usize, &dead_decls::SymbolFacts)> = file.items(db).iter().enumerate().filter_map(|(k, i)| Some((k, item_symbols(db, *i).as_ref()?))).collect();
    let found = dead_decls::dead_items(&facts.iter().map(|(_, f)| *f).collect::<Vec<_>>());
    found.into_iter().map(|j| facts[j].0).collect()
}

/// The optimized module's text: the header and the memoized text of each item.
#[salsa::tracked(returns(ref))]
pub fn printed_module(db: &dyn salsa::Database, file: SourceFile) -> Result<PrintedModule, Diagnostic> {
    if !items_parse(db, file) {
        let w = whole(db, file).as_ref().map_err(|d| d.clone())?;
        let text = ptx_print::print_module(&crate::optimize((*w.module).clone(), file.level(db)));
        return Ok(PrintedModule { pieces: vec![text.into()] });
    }
    let h = header(db, file).as_ref().map_err(|d| d.clone())?;
    let head = Module { version: h.version, target: h.target.clone(), address_size: h.address_size, items: Vec::new() };
    let mut header_text = String::new();
    ptx_print::write_header(&mut header_text, &head);
    let items = file.items(db);
    let dead = dead_items(db, file);
    let mut pieces: Vec<Arc<str>> = Vec::with_capacity(items.len() * 2 + 1);
    pieces.push(header_text.into());
    let separator: Arc<str> = Arc::from("\n");
    let mut prev_func = false;
    for (k, item) in items.iter().enumerate() {
        if dead.contains(&k) {
            continue;
        }
        if let Some((is_func, text)) = printed_item(db, *item) {
            if is_func || prev_func {
                pieces.push(separator.clone());
            }
            prev_func = is_func;
            pieces.push(text);
        }
    }
    Ok(PrintedModule { pieces })
}

/// Which queries ran, for tests and tools: (query name, key) per execution.
pub type ExecutionLog = Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>>;

/// The database.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    log: Option<ExecutionLog>,
    /// Each file's last text and how it was cut, so an edit re-scans only
    /// around the change (a plain cache beside the queries, not an input).
    cuts: rustc_hash::FxHashMap<salsa::Id, Cut>,
}

/// How a file's text is cut: always what [`split::header_end`] and
/// [`split::split_items`] give for the whole current text.
#[derive(Clone)]
struct Cut {
    /// The file's text; `None` after [`Database::edit`]s (rebuilt from the items when needed).
    text: Option<String>,
    header_end: usize,
    /// The items' byte ranges, one per [`SourceFile::items`] entry.
    ranges: Vec<Range<usize>>,
    /// The length of the text.
    len: usize,
}

/// Why [`Database::edit`] refused an edit (the text is left as it was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditError {
    /// The range starts after it ends.
    Reversed { range: Range<usize> },
    /// The range ends past the end of the text (`len` bytes).
    OutOfRange { range: Range<usize>, len: usize },
    /// An end of the range falls inside a UTF-8 character.
    NotCharBoundary { offset: usize },
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::Reversed { range } => write!(f, "edit range {}..{} starts after it ends", range.start, range.end),
            EditError::OutOfRange { range, len } => write!(f, "edit range {}..{} ends past the end of the text ({len} bytes)", range.start, range.end),
            EditError::NotCharBoundary { offset } => write!(f, "edit range boundary {offset} falls inside a UTF-8 character"),
        }
    }
}

impl std::error::Error for EditError {}

impl Default for Database {
    fn default() -> Self {
        Database { storage: salsa::Storage::new(None), log: None, cuts: Default::default() }
    }
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that records every query execution in the returned log.
    pub fn with_log() -> (Database, ExecutionLog) {
        let log: ExecutionLog = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |e: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = e.kind {
                sink.lock().unwrap().push(database_key);
            }
        })));
        (Database { storage, log: Some(log.clone()), cuts: Default::default() }, log)
    }

    /// The name of the query a logged key belongs to (`analyses`, `parsed_item` ...).
    pub fn query_name(&self, key: salsa::DatabaseKeyIndex) -> String {
        use salsa::Database as _;
        self.ingredient_debug_name(key.ingredient_index()).to_string()
    }

    /// Adds a file.
    pub fn add_file(&mut self, name: &str, text: &str, level: OptLevel) -> SourceFile {
        let file = SourceFile::builder(name.to_string(), level, String::new(), Vec::new(), Default::default(), Default::default()).durability(Durability::HIGH).new(self);
        self.set_text(file, text);
        // A text with no header and no items changes no input.
        self.refresh_module_facts(file);
        file
    }

    /// Replaces a file's text. Items whose text is unchanged keep their
    /// inputs; an edited item keeps its identity when the items around it
    /// are unchanged.
    pub fn set_text(&mut self, file: SourceFile, text: &str) {
        use salsa::plumbing::AsId;
        use salsa::Setter;
        let bytes = text.as_bytes();
        let header_end = split::header_end(bytes).unwrap_or(bytes.len());
        // Byte ranges of the items, and how much text at each end is unchanged.
        if let Some(c) = self.cuts.get(&file.as_id()) {
            if c.text.is_none() {
                let t = full_text(self, file);
                self.cuts.get_mut(&file.as_id()).unwrap().text = Some(t);
            }
        }
        let (ranges, same_head, same_tail) = match self.cuts.get(&file.as_id()) {
            Some(Cut { text: Some(old), header_end: h, ranges, .. }) if *h == header_end && old.len() >= header_end && old.as_bytes()[..header_end] == bytes[..header_end] => {
                let r = split::resplit_items(old.as_bytes(), ranges, bytes, header_end);
                (r.ranges, r.prefix, r.suffix)
            }
            _ => (split::split_items(bytes, header_end), 0, 0),
        };
        let new: Vec<&str> = ranges.iter().map(|r| &text[r.clone()]).collect();
        let old: Vec<ItemSource> = file.items(self).clone();
        let old_ranges: Vec<Range<usize>> = match self.cuts.get(&file.as_id()) {
            Some(c) if c.ranges.len() == old.len() => c.ranges.clone(),
            // Unknown: compare every item's text.
            _ => vec![usize::MAX..usize::MAX; old.len()],
        };
        let delta = text.len() as isize - self.cuts.get(&file.as_id()).map_or(0, |c| c.len) as isize;
        // Unchanged items at both ends keep their inputs as they are. An item
        // cut as before inside the unchanged bytes needs no comparison (one
        // inside them but cut otherwise, say the rest of an item a comment
        // swallowed, does); others are compared.
        let prefix = old
            .iter()
            .zip(&old_ranges)
            .zip(ranges.iter().zip(&new))
            .take_while(|((o, or), (r, n))| (r.end <= same_head && *or == *r) || o.text(self) == **n)
            .count();
        let max_suffix = old.len().min(new.len()) - prefix;
        let tail_start = text.len() - same_tail;
        let moved = |r: &Range<usize>| (r.start as isize + delta) as usize..(r.end as isize + delta) as usize;
        let suffix = old
            .iter()
            .zip(&old_ranges)
            .rev()
            .zip(ranges.iter().rev().zip(new.iter().rev()))
            .take(max_suffix)
            .take_while(|((o, or), (r, n))| (r.start >= tail_start && or.start != usize::MAX && moved(or) == **r) || o.text(self) == **n)
            .count();
        let mut items: Vec<ItemSource> = old[..prefix].to_vec();
        let (old_mid, new_mid) = (&old[prefix..old.len() - suffix], &new[prefix..new.len() - suffix]);
        let mut facts_changed = false;
        for (k, t) in new_mid.iter().enumerate() {
            match old_mid.get(k) {
                // The k-th changed item takes over the k-th old input.
                Some(o) => {
                    if o.text(self) != *t {
                        facts_changed |= self.set_item_text(*o, t.to_string());
                    }
                    items.push(*o);
                }
                None => items.push(ItemSource::builder(file, t.to_string()).durability(Durability::HIGH).new(self)),
            }
        }
        items.extend_from_slice(&old[old.len() - suffix..]);
        if *file.header_text(self) != text[..header_end] {
            file.set_header_text(self).to(text[..header_end].to_string());
            facts_changed = true;
        }
        if items != old {
            file.set_items(self).to(items);
            facts_changed = true;
        }
        // Reuse the cached buffer: a fresh multi-megabyte copy per edit costs page faults.
        let cut = self.cuts.entry(file.as_id()).or_insert_with(|| Cut { text: None, header_end, ranges: Vec::new(), len: 0 });
        let mut buffer = cut.text.take().unwrap_or_default();
        buffer.clear();
        buffer.push_str(text);
        cut.text = Some(buffer);
        cut.header_end = header_end;
        cut.ranges = ranges;
        cut.len = text.len();
        if facts_changed {
            self.refresh_module_facts(file);
        }
    }

    /// Sets an item's text (of low durability from now on) and says whether
    /// its names or declarations changed (then the module-wide inputs may
    /// have: see [`Database::refresh_module_facts`]).
    fn set_item_text(&mut self, item: ItemSource, text: String) -> bool {
        use salsa::Setter;
        let before = self.module_facts_of(item);
        item.set_text(self).with_durability(Durability::LOW).to(text);
        self.module_facts_of(item) != before
    }

    /// Sets [`SourceFile::names`] and [`SourceFile::context`] to what their
    /// queries give now, each only when it differs (setting one re-checks
    /// every query of the file).
    fn refresh_module_facts(&mut self, file: SourceFile) {
        use salsa::Setter;
        if module_names(self, file) != file.names(self) {
            let names = module_names(self, file).clone();
            file.set_names(self).to(names);
        }
        if verify::verify_context(self, file) != file.context(self) {
            let context = verify::verify_context(self, file).clone();
            file.set_context(self).to(context);
        }
    }

    /// What an item gives the module-wide inputs: its names and declarations.
    fn module_facts_of(&self, item: ItemSource) -> (Vec<(Box<str>, GlobalKind)>, Option<Declarations>) {
        (item_names(self, item).clone(), verify::item_declarations(self, item).clone())
    }

    pub fn set_level(&mut self, file: SourceFile, level: OptLevel) {
        use salsa::Setter;
        file.set_level(self).to(level);
    }

    /// The optimized module's text, or the first error (a parse error, or
    /// a verifier error: only verified input is optimized). The query
    /// [`printed_module`] prints without verifying.
    pub fn printed(&self, file: SourceFile) -> Result<String, Diagnostic> {
        self.printed_pieces(file).map(|p| p.to_string()).map_err(|d| d.clone())
    }

    /// The optimized module as pieces (no copy of the whole text), or the first error.
    pub fn printed_pieces(&self, file: SourceFile) -> Result<&PrintedModule, &Diagnostic> {
        if let Some(d) = self.first_verifier_error(file) {
            return Err(d);
        }
        printed_module(self, file).as_ref()
    }

    /// The file's parse error, if any, with its file position: the error a
    /// fresh parse of the current text gives (see [`diagnostics`]).
    pub fn diagnostics(&self, file: SourceFile) -> &[Diagnostic] {
        diagnostics(self, file)
    }

    /// The file's current text.
    pub fn text(&self, file: SourceFile) -> String {
        use salsa::plumbing::AsId;
        match self.cuts.get(&file.as_id()) {
            Some(Cut { text: Some(t), .. }) => t.clone(),
            _ => full_text(self, file),
        }
    }

    /// The length of the file's current text in bytes.
    pub fn len(&self, file: SourceFile) -> usize {
        use salsa::plumbing::AsId;
        match self.cuts.get(&file.as_id()) {
            Some(c) => c.len,
            None => full_text(self, file).len(),
        }
    }

    /// Replaces the bytes `range` of the file's current text with
    /// `replacement`, the way an editor reports a change: `range` is a pair
    /// of byte offsets into the whole current text (the text given to
    /// [`Database::add_file`] or [`Database::set_text`] with every edit
    /// since applied, [`Database::text`]), `start <= end <= len`, both on
    /// UTF-8 character boundaries; otherwise the edit is refused with an
    /// [`EditError`] and nothing changes. [`Database::item_range`] gives an
    /// item's current range.
    ///
    /// Afterwards every answer of the database is what a fresh parse of the
    /// new text gives. An edit inside one item that leaves the item
    /// boundaries where they were (checked by [`split::keeps_cut`]: no
    /// comment, string, brace or item opened or closed across them) updates
    /// only that item's input, so only its queries re-run; anything else
    /// (an edit across items, in the header, one that merges, splits or
    /// swallows items) re-cuts the text as [`Database::set_text`] does.
    pub fn edit(&mut self, file: SourceFile, range: Range<usize>, replacement: &str) -> Result<(), EditError> {
        use salsa::plumbing::AsId;
        self.check_range(file, &range)?;
        let Some(cut) = self.cuts.get(&file.as_id()) else {
            self.edit_whole(file, range, replacement);
            return Ok(());
        };
        // The item holding the edit (an edit at an item's end belongs to it).
        let k = cut.ranges.partition_point(|r| r.end < range.end);
        let fits = cut.ranges.get(k).is_some_and(|r| r.start <= range.start && range.end <= r.end && range.start >= cut.header_end);
        let items = file.items(self).clone();
        if !fits || items.len() != cut.ranges.len() {
            self.edit_whole(file, range, replacement);
            return Ok(());
        }
        let (r, header_end) = (cut.ranges[k].clone(), cut.header_end);
        let item = items[k];
        let old = item.text(self);
        let mut text = String::with_capacity(old.len() + replacement.len());
        text.push_str(&old[..range.start - r.start]);
        text.push_str(replacement);
        text.push_str(&old[range.end - r.start..]);
        // The cut around the item stays as it was; for the first item, the
        // header also ends where it did.
        let next = items.get(k + 1).map_or(&b""[..], |i| i.text(self).as_bytes());
        let mut same = split::keeps_cut(text.as_bytes(), k == 0, next);
        if same && k == 0 {
            let mut head = file.header_text(self).clone();
            head.push_str(&text);
            same = split::header_end(head.as_bytes()) == Some(header_end);
        }
        if !same {
            self.edit_whole(file, range, replacement);
            return Ok(());
        }
        let delta = text.len() as isize - (r.end - r.start) as isize;
        // The header and the other items are as they were: the module-wide
        // inputs change only if this item's names or declarations did.
        if self.set_item_text(item, text) {
            self.refresh_module_facts(file);
        }
        let cut = self.cuts.get_mut(&file.as_id()).unwrap();
        // Rebuilt from the items only if a whole-text update needs it.
        cut.text = None;
        cut.len = (cut.len as isize + delta) as usize;
        cut.ranges[k].end = (cut.ranges[k].end as isize + delta) as usize;
        for later in &mut cut.ranges[k + 1..] {
            later.start = (later.start as isize + delta) as usize;
            later.end = (later.end as isize + delta) as usize;
        }
        Ok(())
    }

    /// Is `range` a range of the file's text [`Database::edit`] takes?
    fn check_range(&self, file: SourceFile, range: &Range<usize>) -> Result<(), EditError> {
        use salsa::plumbing::AsId;
        if range.start > range.end {
            return Err(EditError::Reversed { range: range.clone() });
        }
        let Some(cut) = self.cuts.get(&file.as_id()) else {
            let text = full_text(self, file);
            if range.end > text.len() {
                return Err(EditError::OutOfRange { range: range.clone(), len: text.len() });
            }
            return match [range.start, range.end].into_iter().find(|o| !text.is_char_boundary(*o)) {
                Some(offset) => Err(EditError::NotCharBoundary { offset }),
                None => Ok(()),
            };
        };
        if range.end > cut.len {
            return Err(EditError::OutOfRange { range: range.clone(), len: cut.len });
        }
        // Each end must fall on a character boundary of the piece holding it.
        let boundary = |o: usize| -> bool {
            if let Some(t) = &cut.text {
                return t.is_char_boundary(o);
            }
            if o < cut.header_end {
                return file.header_text(self).is_char_boundary(o);
            }
            let k = cut.ranges.partition_point(|r| r.end <= o);
            match (cut.ranges.get(k), file.items(self).get(k)) {
                (Some(r), Some(i)) => i.text(self).is_char_boundary(o - r.start),
                _ => true,
            }
        };
        match [range.start, range.end].into_iter().find(|o| !boundary(*o)) {
            Some(offset) => Err(EditError::NotCharBoundary { offset }),
            None => Ok(()),
        }
    }

    fn edit_whole(&mut self, file: SourceFile, range: Range<usize>, replacement: &str) {
        let mut text = self.text(file);
        text.replace_range(range, replacement);
        self.set_text(file, &text);
    }

    /// The parsed module, or the first error.
    pub fn module(&self, file: SourceFile) -> Result<Arc<Module>, Diagnostic> {
        module(self, file).clone()
    }

    /// The item defining function `name`.
    pub fn function_item(&self, file: SourceFile, name: &str) -> Option<ItemSource> {
        file.items(self).iter().copied().find(|i| item_names(self, *i).iter().any(|(n, k)| &**n == name && *k == GlobalKind::Func))
    }

    /// The current byte range, in the whole text, of the item that defines
    /// the module-level name `name` (a function or a variable): the first
    /// item declaring it that is a definition (a function with a body, a
    /// variable that is not `.extern`), else the first declaring it. The
    /// range runs from the item's first byte to the end of its last token
    /// (the whitespace and comments after it are not included); for an item
    /// that does not parse, up to where the next item starts. Pass it (or
    /// part of it) to [`Database::edit`].
    pub fn item_range(&self, file: SourceFile, name: &str) -> Option<Range<usize>> {
        use salsa::plumbing::AsId;
        let cut = self.cuts.get(&file.as_id())?;
        let items = file.items(self);
        let declaring: Vec<usize> = (0..items.len()).filter(|k| item_names(self, items[*k]).iter().any(|(n, _)| &**n == name)).collect();
        let defines = |k: &usize| match parsed_item(self, items[*k]) {
            Ok(ParsedItem { item: Some(i), .. }) => match &**i {
                Item::Func(f) => f.body.is_some(),
                Item::Var(v) => v.linkage != Some(ptx_ir::ir::Linkage::Extern),
                _ => false,
            },
            _ => false,
        };
        let k = declaring.iter().copied().find(defines).or(declaring.first().copied())?;
        let r = cut.ranges.get(k)?;
        let text = items[k].text(self);
        Some(match parsed_item(self, items[k]) {
            Ok(ParsedItem { item: Some(_), spans }) => r.start + spans.item.start as usize..r.start + spans.item.end as usize,
            _ => r.start + split::item_starts_at(text.as_bytes()).unwrap_or(0)..r.end,
        })
    }

    /// Whether the file's answers come from a fresh parse of the whole text
    /// because an item or the header does not parse on its own (for tests:
    /// on text that parses, this means the cut disagrees with the parser).
    #[doc(hidden)]
    pub fn answers_from_whole_parse(&self, file: SourceFile) -> bool {
        !items_parse(self, file)
    }

    /// The log recorded by a database made with [`Database::with_log`].
    pub fn log(&self) -> Option<&ExecutionLog> {
        self.log.as_ref()
    }
}
