//! `ptx_ir::ir::scopes::flatten_names` over every function of every corpus
//! file: the result passes the scope check, prints, re-parses to the same
//! text and verifies; every register name means its register at every point
//! of the function (so pure instructions can move anywhere); and ptxas gives
//! the same number of SASS instructions per function for a sample of files
//! (register names do not matter to it).

use ptx_ir::ir::scopes::{self, Meaning, NameUse, Site, Walk};
use ptx_ir::ir::{Function, Item, Module, Stmt};
use ptx_tests::corpus::{manifest, own_corpus_dir, ptx_files, shared_corpus_dir};
use ptx_tests::ptxas::{same_sass, tools};
use rustc_hash::FxHashMap;

/// Every file ptxas accepts: the project's own corpus, then the shared one.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = ptx_files(&own_corpus_dir()).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    if let Some(dir) = shared_corpus_dir() {
        out.extend(manifest(&dir).into_iter().filter(|e| e.ptxas_ok).map(|e| (e.file.clone(), std::fs::read(dir.join(&e.file)).unwrap())));
    }
    out
}

fn flatten_module(name: &str, m: &Module) -> Result<Module, String> {
    let mut m = m.clone();
    for item in &mut m.items {
        if let Item::Func(f) = item {
            let fname = f.name.clone();
            scopes::flatten_names(f).map_err(|e| format!("{name}: `{fname}`: {}", e[0].message))?;
        }
    }
    Ok(m)
}

/// Every register the function uses, with the declaration its name means
/// where it is used, must mean that declaration at every label and at the
/// end of every block too (the deepest points of the function).
fn names_hold_everywhere(f: &Function) -> Result<(), String> {
    let Some(body) = &f.body else { return Ok(()) };
    let mut w = Walk::new(f);
    let mut site: FxHashMap<u32, Site> = FxHashMap::default();
    for (k, s) in body.iter().enumerate() {
        w.step(k);
        if let Stmt::Instr(ins) = s {
            for u in scopes::names_used(ins) {
                if let NameUse::Reg(r) = u {
                    if let Some(Meaning::Reg(st)) = w.lookup(&f.reg(r).name) {
                        site.entry(r.0).or_insert(st);
                    }
                }
            }
        }
    }
    let mut regs: Vec<_> = site.into_iter().collect();
    regs.sort_by_key(|(r, _)| *r);
    let mut w = Walk::new(f);
    let mut points = 0;
    for (k, s) in body.iter().enumerate() {
        w.step(k);
        let deepest = matches!(s, Stmt::Label(_)) || matches!(body.get(k + 1), Some(Stmt::ScopeEnd));
        if !deepest || points >= 64 {
            continue;
        }
        points += 1;
        for (r, st) in &regs {
            let name = &f.regs[*r as usize].name;
            if w.lookup(name) != Some(Meaning::Reg(*st)) {
                return Err(format!("`{}`: at statement {k}, `{name}` means {:?}, not its register", f.name, w.lookup(name)));
            }
        }
    }
    Ok(())
}

/// No `.reg` declaration after the body's leading declarations.
fn regs_declared_first(f: &Function) -> Result<(), String> {
    let Some(body) = &f.body else { return Ok(()) };
    let lead = body.iter().take_while(|s| matches!(s, Stmt::Decl(_))).count();
    match body[lead..].iter().position(|s| matches!(s, Stmt::Decl(d) if d.space() == ptx_ir::isa::StateSpace::Reg)) {
        Some(k) => Err(format!("`{}`: a .reg declaration at statement {}", f.name, lead + k)),
        None => Ok(()),
    }
}

fn check_file(name: &str, text: &[u8]) -> Result<String, String> {
    let parsed = ptx_ir::parse(name, text).map_err(|d| d.to_string())?;
    let had_errors = ptx_ir::verify::verify(&parsed.module, &parsed.source_map, name, text).iter().any(|d| d.is_error());
    let flat = flatten_module(name, &parsed.module)?;
    for item in &flat.items {
        if let Item::Func(f) = item {
            if let Some(e) = scopes::check(f).first() {
                return Err(format!("{name}: flattened: {}", e.message));
            }
            regs_declared_first(f).map_err(|e| format!("{name}: {e}"))?;
            names_hold_everywhere(f).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    let printed = ptx_print::print_module(&flat);
    let again = ptx_ir::parse(name, printed.as_bytes()).map_err(|d| format!("{name}: the flattened module does not parse: {d}"))?;
    let reprinted = ptx_print::print_module(&again.module);
    if reprinted != printed {
        return Err(format!("{name}: the flattened module does not print back to the same text"));
    }
    if !had_errors {
        if let Some(d) = ptx_ir::verify::verify(&again.module, &again.source_map, name, printed.as_bytes()).iter().find(|d| d.is_error()) {
            return Err(format!("{name}: the flattened module does not verify: {d}"));
        }
    }
    Ok(printed)
}

#[test]
fn flattened_corpus_reparses_and_verifies() {
    let files = corpus();
    assert!(!files.is_empty());
    let failures: Vec<String> = files.iter().filter_map(|(name, text)| check_file(name, text).err()).collect();
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// The project's own corpus and every 16th file of the shared one.
#[test]
fn flattened_sample_assembles_to_as_many_instructions() {
    let _ = tools();
    let own = ptx_files(&own_corpus_dir()).len();
    let files: Vec<_> = corpus().into_iter().enumerate().filter(|(k, _)| *k < own || k % 16 == 0).map(|(_, f)| f).collect();
    let next = std::sync::Mutex::new(0usize);
    let failures = std::sync::Mutex::new(Vec::new());
    let identical = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()) {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some((name, text)) = files.get(k) else { break };
                let original = String::from_utf8_lossy(text);
                let result = check_file(name, text).and_then(|flat| same_sass(name, &original, &flat));
                match result {
                    Ok(true) => {
                        identical.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Ok(false) => {}
                    Err(e) => failures.lock().unwrap().push(e),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!("{} files: {} with identical SASS bytes, the others with equal instruction counts", files.len(), identical.into_inner());
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), files.len(), failures.join("\n"));
}
