//! The incremental database against fresh parses: after every edit of a
//! sequence (`Database::edit`, `Database::set_text`), its answers (the parse
//! error and its line:col, the module, the verifier's diagnostics, the
//! printed output, item ranges, the text) are those of `ptx_ir::parse` +
//! `verify` + `print_module` of the current text
//! (`ptx_tests::fuzz_checks::EditSession::check`).
//!
//! Targeted cases (comments and strings opened or closed across item
//! boundaries, merged and split items, header edits, the empty text, edits
//! at item boundaries, invalid ranges), then deterministic random edit
//! sequences over every corpus file and the fuzz target's texts.

use ptx_tests::corpus::{manifest, own_corpus_dir, ptx_files, shared_corpus_dir};
use ptx_tests::fuzz_checks::{Edit, EditSession, EDIT_SNIPPETS, INCREMENTAL_TEXTS};

const TEXT: &str = ".version 8.0\n.target sm_80\n.address_size 64\n// the counter\n.global .u32 counter;\n.visible .entry a()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 1;\n\tret;\n}\n// after a\n.visible .entry b() { ret; }\n.visible .entry c()\n{\n\tret;\n}\n";

/// Applies edits given as (text to find, nth occurrence, bytes to delete from it, replacement).
fn run(name: &str, start: &str, edits: &[(&str, usize, usize, &str)]) {
    let mut s = EditSession::new("t.ptx", start, ptx_opt::OptLevel::O0);
    s.check().unwrap_or_else(|e| panic!("{name}: before any edit: {e}"));
    for (k, (find, nth, del, with)) in edits.iter().enumerate() {
        let at = match s.text.match_indices(find).nth(*nth) {
            Some((i, _)) => i,
            None => panic!("{name}: edit {k}: `{find}` not found in\n{}", s.text),
        };
        let r = at..(at + del).min(s.text.len());
        s.apply(Edit::Replace(r, with.to_string())).unwrap_or_else(|e| panic!("{name}: edit {k}: {e}"));
    }
}

#[test]
fn targeted_edits_agree_with_fresh_parses() {
    // A `//` comment swallows the next function when its newline goes, and gives it back.
    run("comment swallows", TEXT, &[("// after a\n", 0, 0, ""), ("// after a", 0, 10, ""), ("\n.visible .entry b", 0, 0, "// x")]);
    run("newline of the comment", TEXT, &[("a\n.visible .entry b", 0, 2, "a "), ("a .visible", 0, 2, "a\n")]);
    // A block comment opened in one item and closed in a later one.
    run("block comment across items", TEXT, &[("// after a", 0, 0, "/*"), (".entry c", 0, 0, "*/"), ("/*", 0, 2, ""), ("*/", 0, 0, "/*")]);
    // A string opened across the boundary (and a `"` in a comment).
    run("string across items", TEXT, &[("// after a", 0, 0, ".pragma \"x"), ("\"x", 0, 2, "\"x\";"), ("// the", 0, 0, "\"")]);
    // Merging items (a lost `}`), splitting one (a `}` and a new header in a body).
    run("merge and split", TEXT, &[("ret;\n}\n// after", 0, 6, ""), ("mov.u32", 0, 0, "ret;\n}\n.visible .entry m()\n{\n"), ("ret;\n}\n.visible .entry m()\n{\n", 0, 24, "")]);
    // Edits in the header.
    run("header", TEXT, &[(".version 8.0", 0, 12, ""), (".target", 0, 0, ".version 8.0\n"), ("sm_80", 0, 5, "sm_90"), (".address_size 64\n", 0, 17, ""), ("// the", 0, 0, ".address_size 64\n")]);
    run("broken header", TEXT, &[(".version", 0, 3, ""), ("sion", 0, 0, ".ver"), ("8.0", 0, 3, "")]);
    // Everything deleted, then written again.
    run("empty text", TEXT, &[(".version", 0, TEXT.len(), ""), ("", 0, 0, TEXT), (".version", 0, TEXT.len(), " "), (" ", 0, 1, "")]);
    // Edits at exact item boundaries: before an item's first byte, after its last.
    run("boundaries", TEXT, &[(".visible .entry b", 0, 0, "\n"), (".visible .entry b", 0, 0, ".visible .entry z() { ret; }"), ("}.visible", 0, 1, "} "), ("{ ret; }\n", 0, 9, "{ ret; }"), (".visible .entry c", 0, 0, ".extern .func q();\n")]);
    // Linkage and header directives next to boundaries.
    run("linkage chains", TEXT, &[("// after a\n", 0, 11, ".visible\n"), (".visible\n", 0, 9, ""), (".visible .entry b()", 0, 19, ".visible .entry b() .maxntid 1,1,1;"), ("; { ret; }", 0, 1, ";\n.pragma \"nounroll\";"), (";\n.pragma", 0, 1, ""), (".pragma \"nounroll\";", 0, 0, ".func g()\n")]);
    run("header directives", INCREMENTAL_TEXTS[1], &[(".pragma \"x;y\";", 0, 0, ".noreturn;\n.pragma \"z\";\n"), (".noreturn;\n", 0, 11, ""), ("{\n\tret;", 0, 0, ";\n")]);
    // `.func` declarations without `;` (old producers), before a `@@DWARF` line.
    run("old declarations", INCREMENTAL_TEXTS[3], &[("@@DWARF .byte 0x02", 0, 0, ".func other()\n"), (".func other()\n", 0, 14, ""), ("nodecl()", 0, 8, "nodecl();")]);
    // A multi-byte character in a comment, and errors after it on the same line.
    run("multi-byte", TEXT, &[("// the counter", 0, 3, "// é "), ("counter\n.global", 0, 0, "é"), ("é", 1, 2, "")]);
}

#[test]
fn invalid_ranges_are_refused() {
    let mut s = EditSession::new("t.ptx", &TEXT.replace("// the", "// é the"), ptx_opt::OptLevel::O0);
    let len = s.text.len();
    let in_char = s.text.find('é').unwrap() + 1;
    #[allow(clippy::reversed_empty_ranges)]
    for r in [len..len + 1, len + 5..len + 9, 5..4, in_char..in_char, 0..in_char, usize::MAX - 1..usize::MAX] {
        assert!(s.db.edit(s.file, r.clone(), "x").is_err(), "{r:?} accepted");
        s.check().unwrap();
    }
    // After edits that split the text into items, the checks still see the whole text.
    s.apply(Edit::Replace(len..len, "// tail é\n".into())).unwrap();
    let at = s.text.rfind('é').unwrap() + 1;
    assert!(s.db.edit(s.file, at..at + 1, "").is_err());
    s.apply(Edit::Replace(0..s.text.len(), String::new())).unwrap();
    assert!(s.db.edit(s.file, 0..1, "").is_err());
}

/// A deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// One random edit of `text` (`original` is the file's first text): mostly
/// small edits that keep it parsing (a digit, a comment line, an
/// instruction), the rest what breaks items apart and together.
fn random_edit(rng: &mut Rng, s: &EditSession, original: &str, names: &[String]) -> Edit {
    let text = &s.text;
    let len = text.len();
    let at = floor_boundary(text, rng.below(len + 1));
    let line_start = text[..at].rfind('\n').map_or(0, |k| k + 1);
    match rng.below(20) {
        // A digit changed.
        0..=3 => match text[at..].find(|c: char| c.is_ascii_digit()) {
            Some(k) => Edit::Replace(at + k..at + k + 1, rng.below(10).to_string()),
            None => Edit::Replace(at..at, " ".into()),
        },
        // A comment line or a blank line.
        4 | 5 => Edit::Replace(line_start..line_start, ["\t// note\n", "\n", "/* c */ ", "\t// é\n"][rng.below(4)].into()),
        // A line deleted.
        6 => {
            let end = text[at..].find('\n').map_or(len, |k| at + k + 1);
            Edit::Replace(line_start..end, String::new())
        }
        // A newline deleted (a `//` comment may swallow what follows).
        7 => match text[at..].find('\n') {
            Some(k) => Edit::Replace(at + k..at + k + 1, String::new()),
            None => Edit::Replace(at..at, "\n".into()),
        },
        // A snippet inserted, a few bytes replaced.
        8..=10 => {
            let del = floor_boundary(text, at + rng.below(6)).max(at);
            Edit::Replace(at..del, EDIT_SNIPPETS[rng.below(EDIT_SNIPPETS.len())].into())
        }
        // At an item boundary: before or after a function (its range).
        11 | 12 => match names.get(rng.below(names.len())).and_then(|n| s.db.item_range(s.file, n)) {
            Some(r) => {
                let at = if rng.below(2) == 0 { r.start } else { r.end };
                let del = floor_boundary(text, at + rng.below(3)).max(at);
                Edit::Replace(at..del, ["", "\n", " ", "}", "// c", "\n.func w() { ret; }\n", ";", "/*", "\""][rng.below(9)].into())
            }
            None => Edit::Replace(at..at, "\n".into()),
        },
        // A function moved, or deleted.
        13 => match names.get(rng.below(names.len())).and_then(|n| s.db.item_range(s.file, n)) {
            Some(r) if rng.below(2) == 0 => Edit::Replace(r, String::new()),
            Some(r) => Edit::SetText(format!("{}{}{}", &text[..r.start], &text[r.end..], &text[r.clone()])),
            None => Edit::Replace(at..at, ".entry x() { ret; }".into()),
        },
        // The header.
        14 => {
            let end = floor_boundary(text, 50.min(len));
            let del = floor_boundary(text, rng.below(end + 1));
            let from = floor_boundary(text, rng.below(del + 1));
            Edit::Replace(from..del, ["", "8", ".target sm_90\n", " ", ".version 7.8\n"][rng.below(5)].into())
        }
        // Invalid ranges.
        15 => [Edit::Replace(at..len + 1 + rng.below(3), String::new()), Edit::Replace(at + 1..at, String::new())][rng.below(2)].clone(),
        // Everything deleted, or the first text back.
        16 => Edit::Replace(0..len, if rng.below(3) == 0 { String::new() } else { original.to_string() }),
        17 => Edit::SetText(original.to_string()),
        // Raw bytes of the text copied elsewhere.
        _ => {
            let from = floor_boundary(text, rng.below(len + 1));
            let to = floor_boundary(text, from + rng.below(40)).max(from);
            Edit::Replace(at..at, text[from..to].to_string())
        }
    }
}

/// Function names of a text (for edits at their ranges).
fn function_names(text: &str) -> Vec<String> {
    match ptx_ir::parse("t.ptx", text.as_bytes()) {
        Ok(p) => p.module.items.iter().filter_map(|i| if let ptx_ir::ir::Item::Func(f) = i { Some(f.name.to_string()) } else { None }).collect(),
        Err(_) => Vec::new(),
    }
}

fn random_sequences(name: &str, text: &str, edits: usize, seed: u64) -> (usize, usize) {
    let mut rng = Rng(seed | 1);
    let names = function_names(text);
    let mut s = EditSession::new(name, text, ptx_opt::OptLevel::O0);
    s.check().unwrap_or_else(|e| panic!("{name}: before any edit: {e}"));
    for k in 0..edits {
        // Back to the first text now and then, so most edits are of text close to valid.
        let e = if k % 12 == 11 { Edit::SetText(text.to_string()) } else { random_edit(&mut rng, &s, text, &names) };
        if let Err(msg) = s.apply(e) {
            panic!("{name}: edit {k} (seed {seed}): {msg}");
        }
    }
    (edits, s.parsed)
}

#[test]
fn random_edit_sequences_agree_with_fresh_parses() {
    let mut files: Vec<(String, String)> = INCREMENTAL_TEXTS.iter().enumerate().map(|(k, t)| (format!("text{k}"), t.to_string())).collect();
    files.push(("t.ptx".into(), TEXT.to_string()));
    for p in ptx_files(&own_corpus_dir()) {
        files.push((p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()));
    }
    let (mut total, mut parsed) = (0, 0);
    for (k, (name, text)) in files.iter().enumerate() {
        // Fewer edits of large files (each check parses the whole text afresh).
        let edits = (1_000_000 / text.len().max(1000)).clamp(150, 600);
        let (n, p) = random_sequences(name, text, edits, 0x9e37_79b9_7f4a_7c15 ^ k as u64);
        total += n;
        parsed += p;
    }
    eprintln!("{total} edits over {} files, {parsed} of the texts parsed", files.len());
    assert!(total > 10_000 && parsed * 3 > total, "{total} edits, {parsed} parsed");
}

/// The same over the shared corpus (real compiler output, larger files:
/// slow, so run on demand: `cargo test --profile ci -p ptx-tests --test
/// incremental_edits -- --ignored`).
#[test]
#[ignore]
fn random_edit_sequences_on_the_shared_corpus() {
    let Some(dir) = shared_corpus_dir() else { return };
    let (mut total, mut parsed) = (0, 0);
    for (k, e) in manifest(&dir).iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(dir.join(&e.file)) else { continue };
        let (n, p) = random_sequences(&e.file, &text, 60, 0x5eed ^ k as u64);
        total += n;
        parsed += p;
    }
    eprintln!("{total} edits, {parsed} of the texts parsed");
}

/// At -O2 the printed output is the optimized module's (fewer edits: each
/// check optimizes the whole text afresh).
#[test]
fn random_edits_at_o2_agree_with_one_shot_optimization() {
    for (k, text) in [INCREMENTAL_TEXTS[0], TEXT].iter().enumerate() {
        let mut rng = Rng(0x1234_5678 + k as u64);
        let names = function_names(text);
        let mut s = EditSession::new("o2.ptx", text, ptx_opt::OptLevel::O2);
        s.check().unwrap();
        for n in 0..150 {
            let e = random_edit(&mut rng, &s, text, &names);
            if let Err(msg) = s.apply(e) {
                panic!("-O2, text {k}, edit {n}: {msg}");
            }
        }
    }
}
