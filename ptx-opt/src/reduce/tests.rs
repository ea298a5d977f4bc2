//! Unit tests of the families (which sites each offers, and that applying
//! them gives a valid module without what they name) and of the search on
//! small hand-written modules.

use super::check::valid;
use super::family::{self, Family};
use super::{reduce, ReduceOptions, Reduced};
use ptx_ir::ir::Module;

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn module(body: &str) -> Module {
    let text = format!("{HEAD}{body}");
    match valid(&text) {
        Some(m) => m,
        None => panic!("the test module is not valid:\n{text}\n{:?}", ptx_ir::verify::parse_and_verify("t.ptx", text.as_bytes()).err()),
    }
}

/// Applies every site of `family` at once: the printed result, which must be valid.
fn apply_all(family: &dyn Family, m: &Module) -> String {
    let sites = family.sites(m);
    let text = ptx_print::print_module(&family.apply(m, &sites));
    assert!(valid(&text).is_some(), "{} made an invalid module:\n{text}", family.name());
    text
}

fn family_named(name: &str) -> Box<dyn Family> {
    match family::all().into_iter().find(|f| f.name() == name) {
        Some(f) => f,
        None => panic!("no family {name}"),
    }
}

fn reduce_with(body: &str, test: &mut dyn FnMut(&str) -> bool) -> Reduced {
    match reduce(&module(body), test, &ReduceOptions::default(), &mut |_| {}) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn drop_items_with_uses_takes_calls_and_accesses_along() {
    let m = module(
        ".global .u32 g;\n.func f() { ret; }\n.func h() { ret; }\n\
         .visible .entry k() {\n.reg .b32 %r<2>;\nld.global.u32 %r1, [g];\ncall f;\nret;\n}\n",
    );
    let with_uses = family_named("drop-items-with-uses");
    // `g` and `f` are named by `k`; `h` and `k` by nothing.
    assert_eq!(with_uses.sites(&m).len(), 2);
    assert_eq!(family_named("drop-items").sites(&m).len(), 2);
    let text = apply_all(&*with_uses, &m);
    assert!(!text.contains(" g") && !text.contains("call") && !text.contains(".func f"), "{text}");
    assert!(text.contains(".func h") && text.contains("ret;"), "{text}");
}

#[test]
fn drop_debug_takes_locations_files_pragmas_and_directives() {
    let text = ".version 8.0\n.target sm_80, debug\n.address_size 64\n.file 1 \"k.cu\"\n.visible .entry k() .maxntid 64 {\n.pragma \"nounroll\";\n.loc 1 2 3\nret;\n}\n";
    let m = valid(text).expect("the test module is valid");
    let debug = family_named("drop-debug");
    assert_eq!(debug.sites(&m).len(), 5);
    let text = apply_all(&*debug, &m);
    assert!(text.contains(".target sm_80\n"), "{text}");
    assert!(!text.contains(".file") && !text.contains(".loc") && !text.contains(".pragma") && !text.contains(".maxntid"), "{text}");
}

#[test]
fn unused_declarations_labels_and_parameters_are_the_only_sites() {
    let m = module(
        ".visible .entry k(.param .u64 used, .param .u32 unused) {\n.reg .b32 %r<4>;\n.reg .b32 %s<2>;\n.reg .b64 %rd<2>;\n\
         .shared .u32 buf[4];\nld.param.u64 %rd1, [used];\nmov.u32 %r3, 1;\nbra L1;\nL1:\nL2:\nret;\n}\n",
    );
    assert_eq!(family_named("drop-unused-decls").sites(&m).len(), 2, "%s and buf");
    assert_eq!(family_named("drop-unused-labels").sites(&m).len(), 1, "L2");
    assert_eq!(family_named("drop-unused-params").sites(&m).len(), 1, "unused");
    let text = apply_all(&*family_named("drop-unused-decls"), &m);
    assert!(!text.contains("%s") && !text.contains("buf") && text.contains("%r<4>"), "{text}");
    let text = apply_all(&*family_named("drop-unused-labels"), &m);
    assert!(text.contains("L1:") && !text.contains("L2"), "{text}");
    let text = apply_all(&*family_named("drop-unused-params"), &m);
    assert!(text.contains("used") && !text.contains("unused"), "{text}");
}

#[test]
fn drop_scopes_keeps_the_block_statements() {
    let m = module(".visible .entry k() {\n{\n.reg .b32 %t;\nmov.b32 %t, 5;\n}\nret;\n}\n");
    let text = apply_all(&*family_named("drop-scopes"), &m);
    assert!(!text.contains('{') || text.matches('{').count() == 1, "{text}");
    assert!(text.contains("mov.b32"), "{text}");
}

#[test]
fn to_constant_rewrites_only_plain_register_sources_of_known_types() {
    let m = module(
        ".visible .entry k(.param .u64 p) {\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .f32 %f<3>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [p];\nadd.s32 %r3, %r1, %r2;\nadd.f32 %f2, %f1, %f1;\nsetp.eq.s32 %p1, %r3, %r1;\nselp.b32 %r1, %r2, %r3, %p1;\n\
         st.global.u32 [%rd1], %r3;\nret;\n}\n",
    );
    let zero = family_named("to-constant-0");
    // add.s32: 2, add.f32: 2, setp: 2, selp: 2 (not the predicate), st: the value (not the address).
    assert_eq!(zero.sites(&m).len(), 9);
    let text = apply_all(&*zero, &m);
    assert!(text.contains("add.s32 \t%r3, 0, 0;") && text.contains("add.f32 \t%f2, 0f00000000, 0f00000000;"), "{text}");
    assert!(text.contains("selp.b32 \t%r1, 0, 0, %p1;") && text.contains("[%rd1], 0;"), "{text}");
    let one = apply_all(&*family_named("to-constant-1"), &m);
    assert!(one.contains("0f3F800000"), "{one}");
}

#[test]
fn guards_go_and_a_conditional_branch_becomes_unconditional() {
    let body = ".visible .entry k(.param .u32 n) {\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\nld.param.u32 %r1, [n];\n\
                setp.eq.s32 %p1, %r1, 0;\n@%p1 bra DONE;\nadd.s32 %r2, %r1, 1;\nDONE:\nret;\n}\n";
    let r = reduce_with(body, &mut |ptx| ptx.contains("bra"));
    assert!(!r.text.contains('@') && !r.text.contains("setp"), "{}", r.text);
    assert_eq!(r.after.instructions, 1, "{}", r.text);
}

#[test]
fn candidates_that_do_not_verify_are_skipped_and_counted() {
    // Without its braces the block's `%x` would be declared twice.
    let body = ".visible .entry k() {\n.reg .b32 %x;\n{\n.reg .b32 %x;\nadd.s32 %x, %x, 1;\n}\nsub.s32 %x, %x, 2;\nret;\n}\n";
    let r = reduce_with(body, &mut |ptx| ptx.contains("add.s32") && ptx.contains("sub.s32"));
    assert!(r.invalid_candidates >= 1, "{r:?}");
    assert!(valid(&r.text).is_some());
    assert!(r.text.contains("add.s32 \t%x, 0, 1;") && r.text.contains("sub.s32 \t%x, 0, 2;"), "{}", r.text);
}

#[test]
fn to_constant_one_keeps_a_divisor_nonzero() {
    let body = ".visible .entry k() {\n.reg .b32 %r<4>;\ndiv.s32 %r3, %r1, %r2;\nret;\n}\n";
    let r = reduce_with(body, &mut |ptx| ptx.contains("div.s32") && !ptx.contains(", 0;"));
    assert!(r.text.contains("div.s32 \t%r3, 0, 1;"), "{}", r.text);
}

#[test]
fn register_ranges_shrink_to_the_highest_member_named() {
    let m = module(".visible .entry k() {\n.reg .b32 %r<31>;\n.reg .b64 %rd<3>;\nadd.s32 %r5, %r2, 1;\nmov.b64 %rd2, 0;\nret;\n}\n");
    let shrink = family_named("shrink-reg-ranges");
    assert_eq!(shrink.sites(&m).len(), 1, "%rd<3> is tight already");
    let text = apply_all(&*shrink, &m);
    assert!(text.contains("%r<6>;") && text.contains("%rd<3>;"), "{text}");
}
