//! The properties the fuzz targets check, one function per target, shared by
//! the cargo-fuzz binaries (`fuzz/fuzz_targets/`) and the seeded tests of the
//! suite (`tests/tests/fuzz_seeded.rs`), so both check exactly the same
//! thing. Each returns a message saying what broke; a panic inside is a
//! failure too.

use crate::differential::{self, DiffOptions, DiffStats, Shape};
use crate::gen::{self, GenOptions, GeneratedKernel};

/// The optimization level the `optimize` and `differential` targets use.
/// The targets grow with the pipeline: raise it as passes land.
pub const LEVEL: ptx_opt::OptLevel = ptx_opt::OptLevel::O2;

/// `parse`: any bytes. An error must be `NAME:LINE:COL: error: ...` with a
/// position inside the input; what parses must be a print∘parse fixed point.
pub fn parse(name: &str, bytes: &[u8]) -> Result<(), String> {
    match ptx_ir::parse(name, bytes) {
        Err(d) => {
            let s = d.to_string();
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            let well_formed = s.starts_with(&format!("{name}:{}:{}: error: ", d.line, d.col)) && d.line >= 1 && d.col >= 1 && d.line <= lines;
            if well_formed {
                Ok(())
            } else {
                Err(format!("badly formed diagnostic: {s}"))
            }
        }
        Ok(_) => crate::roundtrip::round_trip(name, bytes).map(|_| ()),
    }
}

/// `roundtrip`: a generated kernel is a print∘parse fixed point.
pub fn roundtrip(k: &GeneratedKernel) -> Result<(), String> {
    crate::roundtrip::round_trip("gen.ptx", k.text.as_bytes()).map(|_| ()).map_err(|e| format!("{e}\n--- kernel ---\n{}", k.text))
}

/// What a fuzzer's input to `roundtrip` and `optimize` stands for: PTX text
/// when it parses (the targets are seeded with real PTX files, and mutations
/// that still parse stay PTX), otherwise the generator's choice stream.
pub enum FuzzInput {
    Ptx(String),
    Generated(GeneratedKernel),
}

/// Reads a fuzzer's input (see [`FuzzInput`]).
pub fn input_of_bytes(data: &[u8]) -> FuzzInput {
    match std::str::from_utf8(data) {
        Ok(text) if ptx_ir::parse("fuzz.ptx", data).is_ok() => FuzzInput::Ptx(text.to_string()),
        _ => FuzzInput::Generated(kernel_of_input(data)),
    }
}

/// `roundtrip` on any input: PTX text or a generated kernel.
pub fn roundtrip_input(input: &FuzzInput) -> Result<(), String> {
    match input {
        FuzzInput::Ptx(text) => crate::roundtrip::round_trip("fuzz.ptx", text.as_bytes()).map(|_| ()),
        FuzzInput::Generated(k) => roundtrip(k),
    }
}

/// `optimize` on any input: PTX text the verifier accepts (text it refuses
/// is not optimized, as `ptx-opt` refuses it) or a generated kernel.
pub fn optimize_input(input: &FuzzInput) -> Result<(), String> {
    match input {
        FuzzInput::Ptx(text) => optimize_text("fuzz.ptx", text).map(|_| ()),
        FuzzInput::Generated(k) => optimize(k).map(|_| ()),
    }
}

/// Optimizes PTX text the verifier accepts and checks the output as
/// [`optimize`] does. Text that does not verify gives `Ok(None)`.
pub fn optimize_text(name: &str, text: &str) -> Result<Option<String>, String> {
    let Ok((parsed, _)) = ptx_ir::verify::parse_and_verify(name, text.as_bytes()) else { return Ok(None) };
    let out = ptx_opt::optimize(parsed.module, LEVEL);
    check_optimized(text, ptx_print::print_module(&out)).map(|(printed, _)| Some(printed))
}

/// `optimize`: optimizing a generated kernel does not panic; the output
/// re-parses, prints back to the same text and verifies without errors. Returns the
/// optimized text.
pub fn optimize(k: &GeneratedKernel) -> Result<String, String> {
    optimize_at(k, LEVEL)
}

/// [`optimize`] at another level.
pub fn optimize_at(k: &GeneratedKernel, level: ptx_opt::OptLevel) -> Result<String, String> {
    optimize_parsed(k, level).map(|o| o.text)
}

/// A generated kernel and its optimized version, both parsed (the
/// optimized text's parse is the one [`optimize`] checks).
pub struct Optimized {
    pub original: ptx_ir::Parsed,
    pub text: String,
    pub parsed: ptx_ir::Parsed,
}

/// [`optimize_at`], keeping the parses of both texts.
pub fn optimize_parsed(k: &GeneratedKernel, level: ptx_opt::OptLevel) -> Result<Optimized, String> {
    let original = ptx_ir::parse("gen.ptx", k.text.as_bytes()).map_err(|d| format!("a generated kernel does not parse: {d}\n--- kernel ---\n{}", k.text))?;
    let out = ptx_opt::optimize(original.module.clone(), level);
    let (text, parsed) = check_optimized(&k.text, ptx_print::print_module(&out))?;
    Ok(Optimized { original, text, parsed })
}

/// The output of the optimizer re-parses, prints back to the same text and
/// verifies without errors; gives the text back, and its parse.
fn check_optimized(input: &str, printed: String) -> Result<(String, ptx_ir::Parsed), String> {
    let fail = |what: String| format!("{what}\n--- input ---\n{input}\n--- optimized ---\n{printed}");
    let again = ptx_ir::parse("optimized.ptx", printed.as_bytes()).map_err(|d| fail(format!("the optimized module does not re-parse: {d}")))?;
    // The optimizer's tables (register order, new temporaries) need not be
    // the parser's, so the property is on the text: printing what the
    // printed text parses to gives that text again.
    let reprinted = ptx_print::print_module(&again.module);
    if reprinted != printed {
        return Err(fail(format!("printing the re-parsed optimized module gives other text:\n{reprinted}")));
    }
    let errors: Vec<String> = ptx_ir::verify::verify_parsed(&again, "optimized.ptx", printed.as_bytes()).into_iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    if !errors.is_empty() {
        return Err(fail(format!("the optimized module does not verify:\n{}", errors.join("\n"))));
    }
    Ok((printed, again))
}

/// `differential`: a generated kernel and its optimized version compute the
/// same buffers on the reference interpreter, for one launch shape and
/// input seed.
pub fn differential(k: &GeneratedKernel, shape: Shape, input_seed: u64, max_steps: u64) -> Result<DiffStats, String> {
    differential_at(k, shape, input_seed, max_steps, LEVEL)
}

/// [`differential`] at another level.
pub fn differential_at(k: &GeneratedKernel, shape: Shape, input_seed: u64, max_steps: u64, level: ptx_opt::OptLevel) -> Result<DiffStats, String> {
    // The runs take the modules parsed already: the kernel's, and the
    // optimized text's (the parse `check_optimized` made of it).
    let o = optimize_parsed(k, level)?;
    let opts = DiffOptions { shapes: vec![shape], max_steps };
    let original = differential::Prepared { parsed: &o.original, text: &k.text, name: "original" };
    let transformed = differential::Prepared { parsed: &o.parsed, text: &o.text, name: "transformed" };
    differential::same_behaviour_parsed(&original, &transformed, &k.spec, &[input_seed], &opts).map_err(|e| format!("{e}\n--- kernel ---\n{}\n--- optimized ---\n{}", k.text, o.text))
}

/// The kernel a fuzzer's input stands for: the bytes are the generator's
/// choices (small kernels, so that the targets run fast); one input in
/// eight has warp-level matrix tiles ([`wants_matrix_tiles`]), and a third of
/// the others (last byte a multiple of 3) get asynchronous copies.
pub fn kernel_of_input(data: &[u8]) -> GeneratedKernel {
    let async_copy = data.last().is_some_and(|b| b % 3 == 0);
    let opts = if wants_matrix_tiles(data) { GenOptions::with_mma() } else { GenOptions { async_copy, ..GenOptions::small() } };
    gen::kernel_from_bytes(data, &opts)
}

/// One input in eight (by length) makes a kernel with warp-level matrix
/// tiles, which runs on whole warps only.
fn wants_matrix_tiles(data: &[u8]) -> bool {
    data.len() % 8 == 5
}

/// The launch shape and input seed a fuzzer's input runs with.
pub fn launch_of_input(data: &[u8]) -> (Shape, u64) {
    let shapes = &differential::SHAPES;
    let shape = if wants_matrix_tiles(data) {
        // The default shapes of whole warps: one warp, and two CTAs of 8x4.
        shapes[data.len() / 8 % 2]
    } else {
        shapes[data.len() % shapes.len()]
    };
    (shape, data.len() as u64)
}

// ------------------------------------------------------------------------------------------------ incremental

/// Small texts for the `incremental` target: comments and strings next to
/// item boundaries, declarations, header directives, old-style forms.
pub const INCREMENTAL_TEXTS: &[&str] = &[
    ".version 8.0\n.target sm_80\n.address_size 64\n\n// the counter\n.global .u32 counter;\n.visible .entry a(.param .u64 p) // a's header\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [p];\n\tld.global.u32 %r1, [%rd1];\n\tadd.u32 %r2, %r1, 1;\n\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n// after a\n.visible .entry b() { ret; }\n/* a block\n   comment */\n.func (.param .b32 r) f(.param .b32 x)\n{\n\t.reg .b32 %t;\n\tld.param.b32 %t, [x];\n\tst.param.b32 [r], %t;\n\tret;\n}\n.pragma \"nounroll\";\n",
    ".version 7.0 // header comment\n.target sm_70, debug /* here too */\n.address_size 64\n.file 1 \"a // b.cu\", 1700000000, 42\n.extern .func (.param .b32 r) g(.param .b32 a) .noreturn;\n.visible .func h() .pragma \"x;y\";\n{\n\tret;\n}\n.weak .global .align 4 .u32 w = 5;\n.const .align 4 .u32 tab[3] = { 1, 2, 3 };\n.visible .entry k(.param .u32 n) .maxntid 32, 1, 1 .minnctapersm 2\n{\n\t.reg .pred %p;\n\t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [n];\n\tsetp.eq.u32 %p, %r1, 0;\n\t@%p bra DONE;\n\t{\n\t.reg .b32 %q;\n\tL: add.u32 %q, %r1, 1;\n\t}\nDONE:\n\tret;\n}\n",
    ".version 8.7\n.target sm_90\n.address_size 64\n.global .align 8 .u64 p_generic = generic(counter);\n.global .align 4 .u32 counter = 1;\n.func f() \n.func g()\n;\n.visible .entry e()\n{\n\tcall f, ();\n\tret;\n}\n.section .debug_str\n{\n$str:\n.b8 65,66,0\n}\n",
    ".version 1.4\n.target sm_10, map_f64_to_f32\n.file 1 \"x.cu\"\n@@DWARF .section .debug_abbrev, \"\",@progbits\n@@DWARF .byte 0x01\n.entry legacy\n{\n\t.reg .u32 %r<2>;\n\tmov.u32 %r1, 0;\n\texit;\n}\n.func nodecl()\n@@DWARF .byte 0x02\n",
];

/// Replacement texts the edits draw from: item starts, braces, comment and
/// string delimiters, header directives, whole items, a multi-byte character.
pub const EDIT_SNIPPETS: &[&str] = &[
    "", " ", "\n", "{", "}", ";", "(", ")", "//", "// c\n", "/*", "*/", "\"", "\\", ".entry", ".func", ".visible", ".extern", ".global", ".pragma", "@@DWARF x\n",
    ".visible .entry z() { ret; }\n", ".func y()\n{\n\tret;\n}\n", ".global .u32 g;\n", ".pragma \"p\";\n", ".version 8.0\n", ".target sm_90\n", ".address_size 64\n", "ret;",
    "add.u32 %r2, %r1, 7;", "L: ", "bra L;", ".reg .b32 %x;", "é", "\t", ".maxnreg 32", "counter", "7", ",", ".param .b32 q", "{ ret; }", "/* x */",
];

/// One edit of an [`EditSession`].
#[derive(Clone, Debug)]
pub enum Edit {
    /// [`ptx_opt::db::Database::edit`] of a byte range (which may be invalid: then it must be refused).
    Replace(std::ops::Range<usize>, String),
    /// [`ptx_opt::db::Database::set_text`].
    SetText(String),
}

/// A database holding one file, the text it must hold, and the edits so far.
pub struct EditSession {
    pub db: ptx_opt::db::Database,
    pub file: ptx_opt::db::SourceFile,
    pub text: String,
    pub level: ptx_opt::OptLevel,
    name: String,
    history: Vec<Edit>,
    /// Checks where the text parsed.
    pub parsed: usize,
}

impl EditSession {
    pub fn new(name: &str, text: &str, level: ptx_opt::OptLevel) -> EditSession {
        let mut db = ptx_opt::db::Database::default();
        let file = db.add_file(name, text, level);
        EditSession { db, file, text: text.to_string(), level, name: name.to_string(), history: Vec::new(), parsed: 0 }
    }

    /// Applies an edit to the database and to the text, then [`EditSession::check`]s.
    pub fn apply(&mut self, e: Edit) -> Result<(), String> {
        self.history.push(e.clone());
        match e {
            Edit::Replace(range, with) => {
                let valid = range.start <= range.end && range.end <= self.text.len() && self.text.is_char_boundary(range.start) && self.text.is_char_boundary(range.end);
                match (valid, self.db.edit(self.file, range.clone(), &with)) {
                    (true, Ok(())) => self.text.replace_range(range, &with),
                    (false, Err(_)) => {}
                    (true, Err(err)) => return Err(self.failure(&format!("a valid edit was refused: {err}"))),
                    (false, Ok(())) => return Err(self.failure("an invalid edit range was accepted")),
                }
            }
            Edit::SetText(t) => {
                self.db.set_text(self.file, &t);
                self.text = t;
            }
        }
        self.check()
    }

    fn failure(&self, what: &str) -> String {
        let recent: Vec<String> = self.history.iter().rev().take(4).rev().map(|e| format!("{e:?}")).collect();
        format!("{what}\n--- last edits ---\n{}\n--- text ---\n{}", recent.join("\n"), self.text)
    }

    /// The database's answers are those of a fresh parse of the text: the
    /// parse error, the module, the verifier's diagnostics, the printed
    /// (optimized) module or the first error, the text itself, and the
    /// range of every function.
    pub fn check(&mut self) -> Result<(), String> {
        if self.compare()? {
            self.parsed += 1;
        }
        Ok(())
    }

    /// [`EditSession::check`]; true if the text parses.
    fn compare(&self) -> Result<bool, String> {
        let (db, file, name) = (&self.db, self.file, self.name.as_str());
        let fail = |what: String| Err(self.failure(&what));
        let got_text = db.text(file);
        if got_text != self.text || db.len(file) != self.text.len() {
            return fail(format!("the database holds other text ({} bytes):\n{got_text}", db.len(file)));
        }
        let fresh = ptx_ir::parse(name, self.text.as_bytes());
        let want_diags: Vec<String> = fresh.as_ref().err().map(|d| d.to_string()).into_iter().collect();
        let got_diags: Vec<String> = db.diagnostics(file).iter().map(|d| d.to_string()).collect();
        if got_diags != want_diags {
            return fail(format!("diagnostics {got_diags:?}, a fresh parse gives {want_diags:?}"));
        }
        let p = match fresh {
            Err(d) => {
                let want = d.to_string();
                match db.module(file) {
                    Err(e) if e.to_string() == want => {}
                    Err(e) => return fail(format!("module: {e}, a fresh parse gives {want}")),
                    Ok(_) => return fail(format!("module: Ok, a fresh parse gives {want}")),
                }
                return match db.printed(file) {
                    Err(e) if e.to_string() == want => Ok(false),
                    Err(e) => fail(format!("printed: {e}, a fresh parse gives {want}")),
                    Ok(_) => fail(format!("printed: Ok, a fresh parse gives {want}")),
                };
            }
            Ok(p) => p,
        };
        if db.answers_from_whole_parse(file) {
            return fail("the text parses whole but not item by item (the cut disagrees with the parser)".into());
        }
        match db.module(file) {
            Ok(m) if *m == p.module => {}
            Ok(_) => return fail("the module differs from a fresh parse's".into()),
            Err(e) => return fail(format!("module: {e}, a fresh parse succeeds")),
        }
        let verifier: Vec<ptx_ir::source::Diagnostic> = ptx_ir::verify::verify(&p.module, &p.source_map, name, self.text.as_bytes());
        let (got, want): (Vec<String>, Vec<String>) = (db.verifier_diagnostics(file).iter().map(|d| d.to_string()).collect(), verifier.iter().map(|d| d.to_string()).collect());
        if got != want {
            return fail(format!("verifier diagnostics {got:?}, a fresh parse and verify give {want:?}"));
        }
        let want = match verifier.iter().find(|d| d.is_error()) {
            Some(d) => Err(d.to_string()),
            None => Ok(ptx_print::print_module(&ptx_opt::optimize(p.module.clone(), self.level))),
        };
        let got = db.printed(file).map_err(|d| d.to_string());
        if got != want {
            return fail(format!("printed:\n{got:?}\na fresh parse gives:\n{want:?}"));
        }
        // Each function's range is its span in a fresh parse (the first definition of each name).
        let mut seen = std::collections::HashSet::new();
        let defined = |i: &ptx_ir::ir::Item| matches!(i, ptx_ir::ir::Item::Func(f) if f.body.is_some());
        let var_named = |n: &str| p.module.items.iter().any(|i| matches!(i, ptx_ir::ir::Item::Var(v) if v.decl.names.iter().any(|d| &*d.name == n)) || matches!(i, ptx_ir::ir::Item::Alias { alias, .. } if &**alias == n));
        for (k, item) in p.module.items.iter().enumerate() {
            let ptx_ir::ir::Item::Func(f) = item else { continue };
            if var_named(&f.name) {
                continue;
            }
            if !defined(item) && p.module.items.iter().any(|i| defined(i) && matches!(i, ptx_ir::ir::Item::Func(g) if g.name == f.name)) {
                continue;
            }
            if !seen.insert(f.name.clone()) {
                continue;
            }
            let span = p.source_map.items[k];
            let want = span.start as usize..span.end as usize;
            if db.item_range(file, &f.name) != Some(want.clone()) {
                return fail(format!("item_range({}) = {:?}, a fresh parse has the item at {want:?}", f.name, db.item_range(file, &f.name)));
            }
        }
        Ok(true)
    }
}

/// A little-endian reader of the fuzzer's bytes (zeros once they run out).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> usize {
        self.byte() as usize | (self.byte() as usize) << 8
    }
}

/// The largest char boundary of `text` at or before `at` (clamped to its length).
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The file and edits an `incremental` input stands for: the first byte
/// picks one of [`INCREMENTAL_TEXTS`] or says the text follows (up to a
/// 0xff byte); then each edit takes four bytes or more: what to insert (a
/// snippet, raw bytes from the input, a deletion of everything, a newline
/// deleted, an invalid range), where, and how much to delete.
pub fn incremental_input(data: &[u8]) -> (String, Vec<Edit>) {
    let mut b = Bytes(data);
    let pick = b.byte() as usize % (INCREMENTAL_TEXTS.len() + 1);
    let mut text = match INCREMENTAL_TEXTS.get(pick) {
        Some(t) => t.to_string(),
        None => {
            let end = b.0.iter().position(|c| *c == 0xff).unwrap_or(b.0.len());
            let t = String::from_utf8_lossy(&b.0[..end]).into_owned();
            b.0 = &b.0[(end + 1).min(b.0.len())..];
            t
        }
    };
    let original = text.clone();
    let mut edits = Vec::new();
    while !b.0.is_empty() && edits.len() < 64 {
        let op = b.byte();
        let at = floor_boundary(&text, (b.u16() * (text.len() + 1)) >> 16);
        let del = floor_boundary(&text, at + (b.byte() as usize % 24)).max(at);
        let e = match op % 16 {
            0..=8 => Edit::Replace(at..del, EDIT_SNIPPETS[b.byte() as usize % EDIT_SNIPPETS.len()].to_string()),
            9 | 10 => {
                let n = (b.byte() as usize % 16).min(b.0.len());
                let raw = String::from_utf8_lossy(&b.0[..n]).into_owned();
                b.0 = &b.0[n..];
                Edit::Replace(at..del, raw)
            }
            11 => match text[at..].find('\n') {
                // The newline ending the line (of a `//` comment, say).
                Some(k) => Edit::Replace(at + k..at + k + 1, String::new()),
                None => Edit::Replace(at..at, "\n".into()),
            },
            12 => Edit::Replace(0..text.len(), if op & 0x10 != 0 { String::new() } else { original.clone() }),
            13 => Edit::SetText(if op & 0x10 != 0 { original.clone() } else { format!("{}{}", &text[..at], &text[del..]) }),
            // Ranges the database must refuse: past the end, reversed, inside a character.
            14 => match op >> 4 & 3 {
                0 => Edit::Replace(at..text.len() + 1 + op as usize, String::new()),
                1 if at < del => Edit::Replace(del..at, "x".into()),
                2 => match text.char_indices().find(|(_, c)| c.len_utf8() > 1) {
                    Some((i, _)) => Edit::Replace(i + 1..i + 1, "x".into()),
                    None => Edit::Replace(text.len() + 1..text.len() + 1, String::new()),
                },
                _ => Edit::Replace(text.len() + 5..text.len() + 9, "x".into()),
            },
            // A function's text replaced whole, or re-inserted after another item.
            _ => {
                let starts: Vec<usize> = text.match_indices(".entry").chain(text.match_indices(".func")).map(|(i, _)| i).collect();
                match starts.get(op as usize / 16 % starts.len().max(1)) {
                    Some(&s) => Edit::Replace(s..s, ".func w() { ret; }\n".into()),
                    None => Edit::Replace(at..at, ".visible .entry v() { ret; }\n".into()),
                }
            }
        };
        match &e {
            Edit::Replace(r, with) if r.start <= r.end && r.end <= text.len() && text.is_char_boundary(r.start) && text.is_char_boundary(r.end) => text.replace_range(r.clone(), with),
            Edit::SetText(t) => text = t.clone(),
            _ => {}
        }
        edits.push(e);
    }
    (original, edits)
}

/// `incremental`: a file and a sequence of edits from the fuzzer's bytes
/// ([`incremental_input`]); after each edit the database's answers are
/// those of a fresh parse of the text ([`EditSession::check`]), and invalid
/// ranges are refused.
pub fn incremental(data: &[u8]) -> Result<(), String> {
    let (text, edits) = incremental_input(data);
    let mut s = EditSession::new("inc.ptx", &text, ptx_opt::OptLevel::O0);
    s.check()?;
    for e in edits {
        s.apply(e)?;
    }
    Ok(())
}
