//! The incremental database (salsa): editing one function re-parses,
//! re-analyses, re-optimizes and re-prints only that function.
//!
//! Inputs: a [`SourceFile`] (its name, optimization level, header text and
//! the list of its top-level items) and one [`ItemSource`] per item (its
//! text). [`Database::set_text`] cuts new text into items
//! ([`ptx_ir::parse::split`]) and updates only the items whose text changed,
//! keeping the others' inputs (and so every query result that depends on
//! them). Queries, per item: its declared names, its parse, its function IR,
//! CFG and analyses, its optimized IR, its printed text; per file: the
//! module's names, header, diagnostics, the whole parsed module and the
//! printed module (a concatenation of memoized item texts). The verifier
//! runs item by item too (`verify.rs`); [`Database::printed`] gives the
//! first verifier error instead of output.
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
use ptx_ir::source::{Diagnostic, LineIndex};
use std::sync::{Arc, Mutex};

/// A source file: its name, the level it is optimized at, its header text
/// (`.version` ...) and its items in order.
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
}

/// One top-level item's text (a function, a variable, a directive), with
/// the whitespace and comments after it. Its identity survives edits to
/// other items, so their query results stay valid.
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
    let names = module_names(db, file);
    let parsed = parse_item(file.name(db), item.text(db).as_bytes(), names)?;
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
            let ctx = crate::ModuleContext::new(h.version, &h.target);
            Some(Arc::new(Item::Func(Box::new(optimize_function(f, &ctx, level)))))
        }
        _ => Some(parsed),
    }
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

/// Every error of the file, with file positions, in order.
#[salsa::tracked(returns(ref))]
pub fn diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Err(d) = header(db, file) {
        out.push(d.clone());
    }
    // Item positions follow from the lengths of the texts before them.
    let mut offset = file.header_text(db).len();
    let mut full: Option<String> = None;
    for item in file.items(db) {
        if let Err(d) = parsed_item(db, *item) {
            let text = full.get_or_insert_with(|| full_text(db, file));
            let lines = LineIndex::new(text.as_bytes());
            let local = LineIndex::new(item.text(db).as_bytes());
            // Map the item-relative line:col back to a byte offset, then to the file.
            let off = offset_of(&local, item.text(db), d.line, d.col) + offset;
            let (line, col) = lines.line_col(off as u32);
            out.push(Diagnostic { line, col, ..d.clone() });
        }
        offset += item.text(db).len();
    }
    out
}

fn offset_of(_lines: &LineIndex, text: &str, line: u32, col: u32) -> usize {
    let mut l = 1;
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if l == line {
            break;
        }
        if b == b'\n' {
            l += 1;
            start = i + 1;
        }
    }
    start + col as usize - 1
}

fn full_text(db: &dyn salsa::Database, file: SourceFile) -> String {
    let mut s = file.header_text(db).clone();
    for item in file.items(db) {
        s.push_str(item.text(db));
    }
    s
}

/// The whole parsed module (for callers that want the one-shot result).
#[salsa::tracked(returns(ref))]
pub fn module(db: &dyn salsa::Database, file: SourceFile) -> Result<Arc<Module>, Diagnostic> {
    if let Some(d) = diagnostics(db, file).first() {
        return Err(d.clone());
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

/// The optimized module's text: the header and the memoized text of each item.
#[salsa::tracked(returns(ref))]
pub fn printed_module(db: &dyn salsa::Database, file: SourceFile) -> Result<PrintedModule, Diagnostic> {
    let first_error = || diagnostics(db, file).first().cloned().expect("an item failed to parse");
    let h = header(db, file).as_ref().map_err(|d| d.clone())?;
    let head = Module { version: h.version, target: h.target.clone(), address_size: h.address_size, items: Vec::new() };
    let mut header_text = String::new();
    ptx_print::write_header(&mut header_text, &head);
    let items = file.items(db);
    let mut pieces: Vec<Arc<str>> = Vec::with_capacity(items.len() * 2 + 1);
    pieces.push(header_text.into());
    let separator: Arc<str> = Arc::from("\n");
    let mut prev_func = false;
    for item in items {
        match printed_item(db, *item) {
            Some((is_func, text)) => {
                if is_func || prev_func {
                    pieces.push(separator.clone());
                }
                prev_func = is_func;
                pieces.push(text);
            }
            None if parsed_item(db, *item).is_err() => return Err(first_error()),
            None => {}
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

#[derive(Clone)]
struct Cut {
    /// The file's text; `None` after [`Database::edit`]s (rebuilt from the items when needed).
    text: Option<String>,
    header_end: usize,
    ranges: Vec<std::ops::Range<usize>>,
}

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
        let file = SourceFile::new(self, name.to_string(), level, String::new(), Vec::new());
        self.set_text(file, text);
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
            Some(Cut { text: Some(old), header_end: h, ranges }) if *h == header_end && old.as_bytes()[..header_end] == bytes[..header_end] => {
                let r = split::resplit_items(old.as_bytes(), ranges, bytes, header_end);
                (r.ranges, r.prefix, r.suffix)
            }
            _ => (split::split_items(bytes, header_end), 0, 0),
        };
        let new: Vec<&str> = ranges.iter().map(|r| &text[r.clone()]).collect();
        let old: Vec<ItemSource> = file.items(self).clone();
        // Unchanged items at both ends keep their inputs as they are. Items
        // inside the unchanged bytes need no comparison; others are compared.
        let prefix = old
            .iter()
            .zip(ranges.iter().zip(&new))
            .take_while(|(o, (r, n))| r.end <= same_head || o.text(self) == **n)
            .count();
        let max_suffix = old.len().min(new.len()) - prefix;
        let tail_start = text.len() - same_tail;
        let suffix = old
            .iter()
            .rev()
            .zip(ranges.iter().rev().zip(new.iter().rev()))
            .take(max_suffix)
            .take_while(|(o, (r, n))| r.start >= tail_start || o.text(self) == **n)
            .count();
        let mut items: Vec<ItemSource> = old[..prefix].to_vec();
        let (old_mid, new_mid) = (&old[prefix..old.len() - suffix], &new[prefix..new.len() - suffix]);
        for (k, t) in new_mid.iter().enumerate() {
            match old_mid.get(k) {
                // The k-th changed item takes over the k-th old input.
                Some(o) => {
                    if o.text(self) != *t {
                        o.set_text(self).to(t.to_string());
                    }
                    items.push(*o);
                }
                None => items.push(ItemSource::new(self, file, t.to_string())),
            }
        }
        items.extend_from_slice(&old[old.len() - suffix..]);
        if *file.header_text(self) != text[..header_end] {
            file.set_header_text(self).to(text[..header_end].to_string());
        }
        if items != old {
            file.set_items(self).to(items);
        }
        // Reuse the cached buffer: a fresh multi-megabyte copy per edit costs page faults.
        let cut = self.cuts.entry(file.as_id()).or_insert_with(|| Cut { text: None, header_end, ranges: Vec::new() });
        let mut buffer = cut.text.take().unwrap_or_default();
        buffer.clear();
        buffer.push_str(text);
        cut.text = Some(buffer);
        cut.header_end = header_end;
        cut.ranges = ranges;
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

    /// Replaces the bytes `range` of the file's text with `replacement`, the
    /// way an editor reports a change. An edit inside one item touches only
    /// that item's input; anything else falls back to [`Database::set_text`].
    pub fn edit(&mut self, file: SourceFile, range: std::ops::Range<usize>, replacement: &str) {
        use salsa::plumbing::AsId;
        use salsa::Setter;
        let Some(cut) = self.cuts.get(&file.as_id()) else {
            return self.edit_whole(file, range, replacement);
        };
        // The item holding the edit (an edit at an item's end belongs to it).
        let k = cut.ranges.partition_point(|r| r.end < range.end);
        let fits = cut.ranges.get(k).is_some_and(|r| r.start <= range.start && range.end <= r.end && range.start >= cut.header_end);
        let items = file.items(self).clone();
        if !fits || items.len() != cut.ranges.len() {
            return self.edit_whole(file, range, replacement);
        }
        let r = cut.ranges[k].clone();
        let item = items[k];
        let old = item.text(self);
        let mut text = String::with_capacity(old.len() + replacement.len());
        text.push_str(&old[..range.start - r.start]);
        text.push_str(replacement);
        text.push_str(&old[range.end - r.start..]);
        // Still one item, closed off: the cut around it stays as it was.
        if !split::is_self_contained_item(text.as_bytes()) || (k > 0 && split::item_starts_at(text.as_bytes()) != Some(0)) {
            return self.edit_whole(file, range, replacement);
        }
        let delta = text.len() as isize - (r.end - r.start) as isize;
        item.set_text(self).to(text);
        let cut = self.cuts.get_mut(&file.as_id()).unwrap();
        // Rebuilt from the items only if a whole-text update needs it.
        cut.text = None;
        cut.ranges[k].end = (cut.ranges[k].end as isize + delta) as usize;
        for later in &mut cut.ranges[k + 1..] {
            later.start = (later.start as isize + delta) as usize;
            later.end = (later.end as isize + delta) as usize;
        }
    }

    fn edit_whole(&mut self, file: SourceFile, range: std::ops::Range<usize>, replacement: &str) {
        let mut text = full_text(self, file);
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

    /// The log recorded by a database made with [`Database::with_log`].
    pub fn log(&self) -> Option<&ExecutionLog> {
        self.log.as_ref()
    }
}
