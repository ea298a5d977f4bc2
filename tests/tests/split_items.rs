//! Parsing a module item by item (as the incremental database and the
//! parallel parser do) gives the same IR and positions as parsing it whole,
//! for every corpus file; a text the one-pass parser rejects is never
//! accepted item by item; and parsing, verifying and printing on several
//! threads give what they give on one.

use ptx_ir::parse::{parse_in_one_pass, parse_in_parallel, split};
use ptx_tests::corpus::{manifest, own_corpus_dir, ptx_files, repo_root, shared_corpus_dir};

fn corpus_texts() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = ptx_files(&own_corpus_dir()).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    if let Some(dir) = shared_corpus_dir() {
        for e in manifest(&dir) {
            files.push((e.file.clone(), std::fs::read(dir.join(&e.file)).unwrap()));
        }
    }
    files
}

#[test]
fn item_by_item_parsing_equals_whole_module_parsing() {
    let files = corpus_texts();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, text) in &files {
        let one_pass = parse_in_one_pass(name, text);
        let by_items = parse_in_parallel(name, text);
        match (&one_pass, by_items) {
            (Ok(whole), Some(p)) => {
                compared += 1;
                if p.module != whole.module {
                    failures.push(format!("{name}: different IR ({} items vs {})", p.module.items.len(), whole.module.items.len()));
                } else if p.source_map != whole.source_map {
                    failures.push(format!("{name}: different positions"));
                }
            }
            (Err(d), Some(_)) => failures.push(format!("{name}: accepted item by item, rejected whole ({d})")),
            (Ok(_), None) => failures.push(format!("{name}: parses whole but not item by item")),
            (Err(_), None) => {}
        }
    }
    assert!(compared > 0);
    assert!(failures.is_empty(), "{} of {compared} files differ:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
}

/// Every parse-error spec file, and every corpus file with one item cut
/// short, is rejected item by item too (so `parse` falls back to the
/// one-pass parser and reports its error).
#[test]
fn what_the_one_pass_parser_rejects_is_not_accepted_item_by_item() {
    let mut texts: Vec<(String, Vec<u8>)> = ptx_files(&repo_root().join("tests/spec/parse-errors")).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    for (name, text) in corpus_texts().into_iter().step_by(7) {
        let Some(end) = split::header_end(&text) else { continue };
        let items = split::split_items(&text, end);
        if items.len() < 2 {
            continue;
        }
        // Cut the middle item in half: usually an error, sometimes not.
        let r = &items[items.len() / 2];
        let mut cut = text[..r.start + (r.end - r.start) / 2].to_vec();
        cut.extend_from_slice(&text[r.end..]);
        texts.push((format!("{name} (cut)"), cut));
    }
    let mut rejected = 0;
    for (name, text) in &texts {
        if parse_in_one_pass(name, text).is_err() {
            rejected += 1;
            assert!(parse_in_parallel(name, text).is_none(), "{name}: rejected whole, accepted item by item");
        }
    }
    assert!(rejected > 60, "only {rejected} texts rejected");
}

/// Parsing, verifying and printing the largest corpus files on one thread
/// and on four give the same module, positions, diagnostics and text.
#[test]
fn one_thread_and_four_give_the_same_results() {
    let mut files = corpus_texts();
    files.sort_by_key(|(_, t)| std::cmp::Reverse(t.len()));
    let run = |threads: usize, name: &str, text: &[u8]| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let p = ptx_ir::parse(name, text).map_err(|d| d.to_string())?;
            let diags: Vec<String> = ptx_ir::verify::verify(&p.module, &p.source_map, name, text).iter().map(|d| d.to_string()).collect();
            let printed = ptx_print::print_module(&p.module);
            Ok::<_, String>((p, diags, printed))
        })
    };
    let mut large: Vec<(String, Vec<u8>)> = files.into_iter().filter(|(_, t)| t.len() >= ptx_ir::threads::PARALLEL_MIN_BYTES).take(6).collect();
    large.push(("many-functions.ptx".to_string(), many_functions(2000).into_bytes()));
    for (name, text) in &large {
        assert!(text.len() >= ptx_ir::threads::PARALLEL_MIN_BYTES);
        let one = run(1, name, text);
        assert!(one.is_ok(), "{name}: {:?}", one.as_ref().err());
        assert_eq!(one, run(4, name, text), "{name}");
    }
    // A bad function among many: the same error either way.
    let mut bad = many_functions(2000);
    bad.insert_str(bad.len() * 2 / 3, "\n.func oops( { }\n");
    let one = run(1, "bad.ptx", bad.as_bytes());
    assert!(one.as_ref().is_err_and(|e| e.contains("bad.ptx:")), "{:?}", one.as_ref().err());
    assert_eq!(one, run(4, "bad.ptx", bad.as_bytes()));
}

/// A module of `n` small functions, each calling the next one (declared
/// later: a forward reference) and reading a variable declared at the end.
fn many_functions(n: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    for k in 0..n {
        let next = if k + 1 < n { format!("call.uni (%r3), f{}, (%r2);", k + 1) } else { "mov.u32 %r3, %r2;".to_string() };
        s.push_str(&format!(
            ".visible .func (.reg .b32 r) f{k}(.reg .b32 a)\n{{\n.reg .b32 %r<5>;\n.reg .pred %p<2>;\nmov.u32 %r1, a;\nld.global.u32 %r2, [last_var];\n$L__loop:\nadd.s32 %r2, %r2, %r1;\nsetp.lt.s32 %p1, %r2, {k};\n@%p1 bra $L__loop;\n{{\n.reg .b32 %r<2>;\nmov.u32 %r1, 7;\n}}\n{next}\nmov.u32 r, %r3;\nret;\n}}\n"
        ));
    }
    s.push_str(".global .align 4 .u32 last_var = 5;\n");
    s
}

/// Re-cutting after an edit gives the same items as cutting from scratch:
/// deterministic random edits (insertions, deletions, replacements of a few
/// bytes, sometimes braces or item keywords) of corpus files.
#[test]
fn recutting_after_edits_equals_cutting_from_scratch() {
    let mut files: Vec<Vec<u8>> = ptx_files(&own_corpus_dir()).into_iter().map(|p| std::fs::read(&p).unwrap()).collect();
    if let Some(dir) = shared_corpus_dir() {
        for e in manifest(&dir).iter().step_by(7) {
            files.push(std::fs::read(dir.join(&e.file)).unwrap());
        }
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let snippets: [&[u8]; 8] = [b"{", b"}", b";", b" .entry x() { ret; }\n", b"// c\n", b"\"", b"add.u32 %r1, %r2, 1;", b".global .u32 g;\n"];
    let mut checked = 0;
    for old in &files {
        let Some(start) = split::header_end(old) else { continue };
        let old_ranges = split::split_items(old, start);
        for _ in 0..20 {
            let at = start + next(old.len().saturating_sub(start).max(1));
            let cut = next(8).min(old.len() - at.min(old.len()));
            let mut new = old[..at.min(old.len())].to_vec();
            new.extend_from_slice(snippets[next(snippets.len())]);
            new.extend_from_slice(&old[(at + cut).min(old.len())..]);
            let fresh = split::split_items(&new, start);
            let again = split::resplit_items(old, &old_ranges, &new, start).ranges;
            assert_eq!(again, fresh, "re-cut differs after an edit at byte {at}");
            checked += 1;
        }
    }
    assert!(checked > 100);
}

/// The cut skips what comments and strings hold: a `{` or `}` in a line
/// comment, a block comment or a string inside a body, or in a comment
/// between items, neither opens nor ends anything (an unmatched `{` would
/// hide the next items); a `/*` left open in a body runs to the end of the
/// text.
#[test]
fn braces_in_comments_and_strings_do_not_cut() {
    let header = ".version 8.7\n.target sm_80\n.address_size 64\n";
    let items = [
        ".visible .entry a()\n{\n// a { in a line comment\n/* a { in a block comment, */ /* then one ending in ** */\n.pragma \"{\";\nret;\n}\n/* between items, a { and a \" */\n",
        ".visible .entry b()\n{\n{\nret; // {\n}\n}\n",
        ".global .b8 s[3] = {1, /* { */ 2, 3};\n",
    ];
    let text = format!("{header}{}", items.concat());
    let start = split::header_end(text.as_bytes()).unwrap();
    let cut: Vec<&str> = split::split_items(text.as_bytes(), start).into_iter().map(|r| text[r].trim_start()).collect();
    assert_eq!(cut, items);
    let whole = parse_in_one_pass("braces.ptx", text.as_bytes()).unwrap();
    assert_eq!(parse_in_parallel("braces.ptx", text.as_bytes()), Some(whole));

    let open = format!("{header}.visible .entry c()\n{{\nret; /* never closed }}\n.visible .entry d()\n{{\nret;\n}}\n");
    let start = split::header_end(open.as_bytes()).unwrap();
    assert_eq!(split::split_items(open.as_bytes(), start), vec![start..open.len()]);
}
