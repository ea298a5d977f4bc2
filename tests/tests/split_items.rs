//! Parsing a module item by item (as the incremental database does) gives
//! the same IR and positions as parsing it whole, for every corpus file.

use ptx_ir::ir::Module;
use ptx_ir::parse::{parse_header, parse_item, split};
use ptx_tests::corpus::{manifest, own_corpus_dir, ptx_files, shared_corpus_dir};

fn by_items(name: &str, text: &[u8]) -> Result<(Module, Vec<ptx_ir::parse::ItemSpans>), String> {
    let end = split::header_end(text).ok_or("no header")?;
    let h = parse_header(name, &text[..end]).map_err(|d| d.to_string())?;
    let ranges = split::split_items(text, end);
    let mut globals = rustc_hash::FxHashMap::default();
    for r in &ranges {
        for (n, k) in split::item_names(&text[r.clone()]) {
            globals.entry(n).or_insert(k);
        }
    }
    let mut m = Module { version: h.version, target: h.target, address_size: h.address_size, items: Vec::new() };
    let mut spans = Vec::new();
    for r in ranges {
        if let Some((item, s)) = parse_item(name, &text[r.clone()], &globals).map_err(|d| d.to_string())? {
            m.items.push(item);
            spans.push(s.shifted(r.start as u32));
        }
    }
    Ok((m, spans))
}

#[test]
fn item_by_item_parsing_equals_whole_module_parsing() {
    let mut files: Vec<(String, Vec<u8>)> = ptx_files(&own_corpus_dir()).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    if let Some(dir) = shared_corpus_dir() {
        for e in manifest(&dir) {
            files.push((e.file.clone(), std::fs::read(dir.join(&e.file)).unwrap()));
        }
    }
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, text) in &files {
        let Ok(whole) = ptx_ir::parse(name, text) else { continue };
        compared += 1;
        match by_items(name, text) {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((m, spans)) => {
                if m != whole.module {
                    failures.push(format!("{name}: different IR ({} items vs {})", m.items.len(), whole.module.items.len()));
                } else if spans.iter().map(|s| &s.stmts).ne(whole.source_map.stmts.iter()) {
                    failures.push(format!("{name}: different statement positions"));
                }
            }
        }
    }
    assert!(compared > 0);
    assert!(failures.is_empty(), "{} of {compared} files differ:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
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
