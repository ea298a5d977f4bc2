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
