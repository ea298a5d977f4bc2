//! The incremental database: it computes what the one-shot path computes,
//! and editing one function re-runs only that function's queries (checked on
//! salsa's execution log).

use ptx_opt::db::{Database, ItemSource};
use ptx_opt::OptLevel;
use salsa::plumbing::AsId;

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn function(name: &str, body: &str) -> String {
    format!(".visible .entry {name}(.param .u64 p)\n{{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\t.reg .pred %q;\n\tld.param.u64 %rd1, [p];\n\tld.global.u32 %r1, [%rd1];\n{body}\tst.global.u32 [%rd1], %r2;\n\tret;\n}}\n")
}

fn module(b_body: &str) -> String {
    let loop_body = "L:\n\tadd.u32 %r2, %r1, 1;\n\tsetp.lt.u32 %q, %r2, 9;\n\t@%q bra L;\n";
    format!("{HEAD}.global .u32 counter;\n{}{}{}", function("a", loop_body), function("b", b_body), function("c", loop_body))
}

/// The per-item queries that ran for `item`, by query name.
fn ran_for(db: &Database, item: ItemSource) -> Vec<String> {
    let log = db.log().unwrap().lock().unwrap();
    let id = item.as_id();
    log.iter().filter(|k| k.key_index() == id).map(|k| db.query_name(*k)).collect()
}

#[test]
fn editing_one_function_reruns_only_its_queries() {
    let (mut db, log) = Database::with_log();
    let file = db.add_file("m.ptx", &module("\tmov.u32 %r2, 1;\n"), OptLevel::O2);
    let cold = db.printed(file).unwrap();
    let (a, b, c) = (db.function_item(file, "a").unwrap(), db.function_item(file, "b").unwrap(), db.function_item(file, "c").unwrap());
    assert!(ran_for(&db, a).contains(&"optimized_item".to_string()), "the cold run optimizes every function");
    log.lock().unwrap().clear();

    db.set_text(file, &module("\tmov.u32 %r2, 2;\n"));
    let warm = db.printed(file).unwrap();
    assert_ne!(cold, warm);
    assert!(warm.contains("%r2, 2;"), "{warm}");
    for other in [a, c] {
        assert!(ran_for(&db, other).is_empty(), "queries of an unchanged function ran: {:?}", ran_for(&db, other));
    }
    let edited = ran_for(&db, b);
    for q in ["parsed_item", "verified_item", "optimized_item", "printed_item"] {
        assert!(edited.iter().any(|e| e == q), "`{q}` did not run for the edited function: {edited:?}");
    }
    // The items keep their identities across the edit.
    assert_eq!(db.function_item(file, "b"), Some(b));
}

#[test]
fn the_database_computes_what_the_one_shot_path_computes() {
    let text = module("\tmov.u32 %r2, 1;\n");
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &text, OptLevel::O0);
    let one_shot = ptx_ir::parse("m.ptx", text.as_bytes()).unwrap().module;
    assert_eq!(*db.module(file).unwrap(), one_shot);
    assert_eq!(db.printed(file).unwrap(), ptx_print::print_module(&one_shot));
}

#[test]
fn errors_carry_file_positions_after_edits() {
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &module("\tmov.u32 %r2, 1;\n"), OptLevel::O0);
    db.set_text(file, &module("\tmov.u32 %r2, 1;\n\tfrobnicate;\n"));
    let e = db.printed(file).unwrap_err();
    assert_eq!(e.to_string(), ptx_ir::parse("m.ptx", module("\tmov.u32 %r2, 1;\n\tfrobnicate;\n").as_bytes()).unwrap_err().to_string());
    // Fixing it brings the old result back.
    db.set_text(file, &module("\tmov.u32 %r2, 1;\n"));
    assert!(db.printed(file).is_ok());
}

#[test]
fn adding_and_removing_functions() {
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &module("\tmov.u32 %r2, 1;\n"), OptLevel::O0);
    let a = db.function_item(file, "a").unwrap();
    let extra = module("\tmov.u32 %r2, 1;\n") + &function("d", "\tmov.u32 %r2, 4;\n");
    db.set_text(file, &extra);
    assert_eq!(db.function_item(file, "a"), Some(a));
    assert!(db.printed(file).unwrap().contains(".entry d("));
    db.set_text(file, &module("\tmov.u32 %r2, 1;\n"));
    assert!(db.function_item(file, "d").is_none());
    assert_eq!(db.printed(file).unwrap(), ptx_print::print_module(&ptx_ir::parse("m", module("\tmov.u32 %r2, 1;\n").as_bytes()).unwrap().module));
}

#[test]
fn editor_style_edits_agree_with_whole_text_updates() {
    let mut text = module("\tmov.u32 %r2, 1;\n");
    let (mut db, log) = Database::with_log();
    let file = db.add_file("m.ptx", &text, OptLevel::O0);
    db.printed(file).unwrap();
    let (a, c) = (db.function_item(file, "a").unwrap(), db.function_item(file, "c").unwrap());
    // Inside function b: change a constant.
    let at = text.find("mov.u32 %r2, 1;").unwrap() + "mov.u32 %r2, ".len();
    log.lock().unwrap().clear();
    db.edit(file, at..at + 1, "7").unwrap();
    text.replace_range(at..at + 1, "7");
    assert_eq!(db.printed(file).unwrap(), ptx_print::print_module(&ptx_ir::parse("m", text.as_bytes()).unwrap().module));
    assert!(ran_for(&db, a).is_empty() && ran_for(&db, c).is_empty(), "an edit inside b re-ran other functions' queries");
    // Edits that change the cut (a new function, an unclosed brace) still give the right result.
    let end = text.len();
    for (range, repl) in [(end..end, ".visible .entry z() { ret; }\n"), (at..at + 1, "7;\n\t{\n"), (at..at + 4, "3")] {
        let range = range.start.min(text.len())..range.end.min(text.len());
        db.edit(file, range.clone(), repl).unwrap();
        text.replace_range(range, repl);
        let want = ptx_ir::parse("m.ptx", text.as_bytes()).map(|p| ptx_print::print_module(&p.module)).map_err(|d| d.to_string());
        assert_eq!(db.printed(file).map_err(|d| d.to_string()), want);
    }
}

/// The verifier's diagnostics of a whole text, as the command gives them.
fn one_shot_verifier(text: &str) -> Vec<String> {
    let p = ptx_ir::parse("m.ptx", text.as_bytes()).unwrap();
    ptx_ir::verify::verify(&p.module, &p.source_map, "m.ptx", text.as_bytes()).iter().map(|d| d.to_string()).collect()
}

#[test]
fn verifier_errors_carry_file_positions_and_stop_the_output() {
    let (mut db, log) = Database::with_log();
    let good = module("\tmov.u32 %r2, 1;\n");
    let file = db.add_file("m.ptx", &good, OptLevel::O0);
    db.printed(file).unwrap();
    let (a, c) = (db.function_item(file, "a").unwrap(), db.function_item(file, "c").unwrap());
    // A type error in b (a 64-bit register where mad.lo.s32 reads 32 bits), at the middle of the file.
    log.lock().unwrap().clear();
    let bad = module("\tmad.lo.s32 %r2, %rd1, %r1, %r1;\n");
    db.set_text(file, &bad);
    let want = one_shot_verifier(&bad);
    assert_eq!(want.len(), 1, "{want:?}");
    let got: Vec<String> = db.verifier_diagnostics(file).iter().map(|d| d.to_string()).collect();
    assert_eq!(got, want);
    assert_eq!(db.printed(file).unwrap_err().to_string(), want[0]);
    assert!(ran_for(&db, a).is_empty() && ran_for(&db, c).is_empty(), "other functions were re-verified");
    // A body edit changes no declaration: the verifier's context is not recomputed.
    let ran: Vec<String> = log.lock().unwrap().iter().map(|k| db.query_name(*k)).collect();
    assert!(!ran.iter().any(|q| q == "verify_context"), "{ran:?}");
    // The header: an unknown target is reported at its token; fixing it brings the output back.
    let bad_target = bad.replace("sm_80", "sm_200").replace("mad.lo.s32 %r2, %rd1", "mad.lo.s32 %r2, %r1");
    db.set_text(file, &bad_target);
    assert_eq!(db.verifier_diagnostics(file).iter().map(|d| d.to_string()).collect::<Vec<_>>(), one_shot_verifier(&bad_target));
    assert!(db.printed(file).unwrap_err().to_string().starts_with("m.ptx:2:9: error: unknown target `sm_200`"));
    db.set_text(file, &good);
    assert!(db.verifier_diagnostics(file).is_empty());
    assert_eq!(db.printed(file).unwrap(), ptx_print::print_module(&ptx_ir::parse("m", good.as_bytes()).unwrap().module));
}

#[test]
fn a_changed_declaration_re_verifies_its_users() {
    // b calls f; changing f's parameter list makes the call wrong.
    let f = |params: &str| format!(".func f({params})\n{{\n\tret;\n}}\n");
    let caller = ".visible .entry b()\n{\n\t.reg .b32 %r<2>;\n\t{\n\t.param .b32 x;\n\tst.param.b32 [x], %r1;\n\tcall f, (x);\n\t}\n\tret;\n}\n";
    let text = |params: &str| format!("{HEAD}{}{caller}", f(params));
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &text(".param .b32 a"), OptLevel::O0);
    assert!(db.verifier_diagnostics(file).is_empty(), "{:?}", db.verifier_diagnostics(file));
    let two = text(".param .b32 a, .param .b32 b");
    db.set_text(file, &two);
    let got: Vec<String> = db.verifier_diagnostics(file).iter().map(|d| d.to_string()).collect();
    assert_eq!(got, one_shot_verifier(&two));
    assert!(got[0].contains("call to `f` passes 1 argument(s)"), "{got:?}");
}

/// What a fresh parse of `text` gives: the printed module or the first error, as `Database::printed` gives them.
fn fresh(text: &str) -> Result<String, String> {
    let p = ptx_ir::parse("m.ptx", text.as_bytes()).map_err(|d| d.to_string())?;
    if let Some(d) = ptx_ir::verify::verify(&p.module, &p.source_map, "m.ptx", text.as_bytes()).into_iter().find(|d| d.is_error()) {
        return Err(d.to_string());
    }
    Ok(ptx_print::print_module(&p.module))
}

/// Applies `edits` (byte ranges of the current text) to a database and to a
/// copy of the text, and compares after each.
fn edits_agree(start: &str, edits: &[(std::ops::Range<usize>, &str)]) {
    let mut text = start.to_string();
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &text, OptLevel::O0);
    for (k, (range, with)) in edits.iter().enumerate() {
        db.edit(file, range.clone(), with).unwrap();
        text.replace_range(range.clone(), with);
        assert_eq!(db.text(file), text);
        assert_eq!(db.printed(file).map_err(|d| d.to_string()), fresh(&text), "after edit {k} the text is:\n{text}");
        let want_diags: Vec<String> = ptx_ir::parse("m.ptx", text.as_bytes()).err().map(|d| d.to_string()).into_iter().collect();
        assert_eq!(db.diagnostics(file).iter().map(|d| d.to_string()).collect::<Vec<_>>(), want_diags);
    }
}

#[test]
fn a_comment_that_loses_its_newline_swallows_the_next_function() {
    let text = format!("{HEAD}.visible .entry a() {{ ret; }}\n// a comment\n.visible .entry b() {{ ret; }}\n");
    let nl = text.find("// a comment").unwrap() + "// a comment".len();
    // Swallowed (b is gone, the `}` of b is an error), then given back.
    edits_agree(&text, &[(nl..nl + 1, ""), (nl..nl, "\n")]);
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &text, OptLevel::O0);
    db.edit(file, nl..nl + 1, " ").unwrap();
    assert!(!db.printed(file).unwrap().contains(".entry b"));
}

#[test]
fn comments_and_strings_across_items_and_merged_items() {
    let text = module("\tmov.u32 %r2, 1;\n");
    let a_end = text.find(".visible .entry b").unwrap();
    let c_start = text.find(".visible .entry c").unwrap();
    // `/*` opened before b and closed before c: b is commented out.
    edits_agree(&text, &[(a_end..a_end, "/*"), (c_start + 2..c_start + 2, "*/"), (a_end..a_end + 2, "")]);
    // A string opened before b.
    edits_agree(&text, &[(a_end..a_end, ".pragma \"x"), (a_end + 10..a_end + 10, "\";\n")]);
    // b's closing brace deleted: b swallows c; then back.
    let close = c_start - 2;
    assert_eq!(&text[close..c_start], "}\n");
    edits_agree(&text, &[(close..close + 1, ""), (close..close, "}")]);
    // The header broken and mended; everything deleted and written again.
    edits_agree(&text, &[(0..3, ""), (0..0, ".ve"), (0..text.len(), ""), (0..0, &text)]);
}

#[test]
fn a_declaration_changed_after_body_edits_re_verifies_its_users() {
    // f's text is of low durability after its first edit; changing its
    // parameter list afterwards must still re-verify b, which calls it.
    let caller = ".visible .entry b()\n{\n\t.reg .b32 %r<2>;\n\t{\n\t.param .b32 x;\n\tst.param.b32 [x], %r1;\n\tcall f, (x);\n\t}\n\tret;\n}\n";
    let text = format!("{HEAD}.func f(.param .b32 a)\n{{\n\tret;\n}}\n{caller}");
    let body = text.find("\tret;").unwrap();
    let params = text.find(".param .b32 a").unwrap() + ".param .b32 a".len();
    let more = ", .param .b32 b";
    edits_agree(&text, &[(body..body, "\tret;\n"), (body..body, "\tret;\n"), (params..params, more), (params..params + more.len(), "")]);
    let mut changed = text.clone();
    changed.insert_str(params, more);
    assert!(fresh(&changed).unwrap_err().contains("call to `f` passes 1 argument(s)"), "{:?}", fresh(&changed));
}

#[test]
fn invalid_edit_ranges_are_errors() {
    let text = format!("{HEAD}// é\n.visible .entry a() {{ ret; }}\n");
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &text, OptLevel::O0);
    let e = text.find('é').unwrap();
    let len = text.len();
    let reversed = std::ops::Range { start: 7, end: 3 };
    let bad = [len..len + 1, reversed.clone(), e + 1..e + 2, len + 10..len + 10];
    for r in bad {
        assert!(db.edit(file, r.clone(), "x").is_err(), "{r:?}");
    }
    assert_eq!(db.edit(file, reversed.clone(), ""), Err(ptx_opt::db::EditError::Reversed { range: reversed }));
    assert_eq!(db.edit(file, 0..len + 1, ""), Err(ptx_opt::db::EditError::OutOfRange { range: 0..len + 1, len }));
    assert_eq!(db.edit(file, e + 1..e + 1, ""), Err(ptx_opt::db::EditError::NotCharBoundary { offset: e + 1 }));
    assert_eq!(db.text(file), text);
    assert_eq!(db.printed(file).map_err(|d| d.to_string()), fresh(&text));
}

#[test]
fn item_ranges_follow_edits() {
    let mut text = module("\tmov.u32 %r2, 1;\n");
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &text, OptLevel::O0);
    let b = db.item_range(file, "b").unwrap();
    assert!(text[b.clone()].starts_with(".visible .entry b(") && text[b.clone()].ends_with('}'), "{:?}", &text[b.clone()]);
    assert_eq!(&text[db.item_range(file, "counter").unwrap()], ".global .u32 counter;");
    // An edit in a shifts b's range; replacing b through its range replaces it.
    let at = text.find("add.u32").unwrap();
    db.edit(file, at..at, "\t").unwrap();
    text.insert(at, '\t');
    let b = db.item_range(file, "b").unwrap();
    assert!(text[b.clone()].starts_with(".visible .entry b("));
    db.edit(file, b, ".visible .entry b2() { ret; }").unwrap();
    assert!(db.item_range(file, "b").is_none());
    assert!(db.printed(file).unwrap().contains(".entry b2()"));
    assert!(db.item_range(file, "nothing").is_none());
}
