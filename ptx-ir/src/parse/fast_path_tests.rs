//! The parser's fast paths (runs of plain body declarations in `decl.rs`, lone
//! literal and register operands and offsets in `instruction.rs`, plain
//! `.loc` lines in `function.rs`, members found again and labels looked up
//! alone in `scope.rs`) against the general
//! parser: the same module, the same positions, the same first error, on
//! inputs that take them, that just miss them, and that fail at each point.

use super::cursor::Parser;
use super::scope::FuncState;
use super::{parse_in_one_pass, parse_without_fast_paths};
use crate::ir::Loc;

/// Parses `body` as a kernel body both ways and checks the results agree.
fn same(body: &str) {
    same_module(&format!(".visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}"));
}

/// Parses the module of `items` both ways and checks the results agree.
fn same_module(items: &str) {
    let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n{items}\n");
    let fast = parse_in_one_pass("t.ptx", text.as_bytes());
    let general = parse_without_fast_paths("t.ptx", text.as_bytes());
    match (&fast, &general) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{items}"),
        (Err(a), Err(b)) => assert_eq!(a, b, "{items}"),
        _ => panic!("one path failed, the other did not, on\n{items}\nfast: {fast:?}\ngeneral: {general:?}"),
    }
}

#[test]
fn plain_declarations_give_the_general_parsers_ir() {
    for body in [
        ".reg .u32 %r1;\nmov.u32 %r1, 0;\nret;",
        ".reg .u32 %r1 ;\n.reg .pred\t%p1\n;\nret;",
        "\t.reg .f32 %f1;\n\t.reg .b64 %rd1;\n\t.local .b32 x;\n\t.shared .u8 s;\n\tld.param.u64 %rd1, [p];\n\tret;",
        // Just missing the fast path: other modifiers, vectors, ranges,
        // arrays, initializers, several names, `_`, comments.
        ".reg .v2 .u32 %v;\n.reg .u32 %r<10>;\nmov.u32 %r9, %v.x;\nret;",
        ".local .align 8 .b8 buf[16];\n.local .u32 a[2] = {1, 2};\n.reg .u32 x, y;\n.reg .b32 _;\nret;",
        ".reg .u32 %r1 /* c */;\n.reg /* c */ .u32 %r2;\n.reg .u32 // c\n%r3;\nret;",
        ".reg .u32 %r1, %r2;\n.reg .u32 %q = 1;\nret;",
        // Shadowing in a nested block, range members, labels.
        ".reg .u32 %r1;\n{\n.reg .u32 %r1;\nmov.u32 %r1, 1;\n}\nret;",
        ".reg .u32 %r<4>;\n{\n.reg .u32 %r2;\nadd.u32 %r2, %r2, %r3;\n}\nret;",
        "L1:\n{\n.reg .u32 L1;\n}\nret;",
        // Runs: on one line, with comments between tokens and lines, ended
        // by another statement or declaration, longer than the window.
        ".reg .u32 %r1;.reg .u32 %r2; .reg .f32 %f1;\nadd.u32 %r1, %r2, 1;\nret;",
        ".reg /* c */ .u32 %r1 // c\n;\n// c\n.reg .u32 %r2;\n.reg .u32 %r3, %r4;\n.reg .b64 %rd1;\nret;",
        ".param .b64 q;\nst.param.b64 [q], 0;\n.reg .u32 %r1;\n.loc 1 2 3\n.reg .u32 %r2;\n.pragma \"nounroll\";\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2<3>;\n.reg .u32 %r3;\n.reg .u32 %r4 = 1;\n.reg .u32 %r5[2];\n.reg .u32 _;\n.reg .u32 %r6;\nret;",
        ".reg .u32 %r1;\n.reg .u32::x %r2;\n.reg .u32 %r3;\nret;",
    ] {
        same(body);
    }
    let run: String = (0..200).map(|k| format!("\t.reg .u32 %r{k};\n")).collect();
    same(&format!("{run}add.u32 %r0, %r199, %r100;\nret;"));
}

#[test]
fn plain_declarations_fail_as_the_general_parser_does() {
    for body in [
        ".reg .u32 %r1;\n.reg .u32 %r1;\nret;",
        ".reg .u32 %r<4>;\n.reg .u32 %r1;\nret;",
        "L:\n.reg .u32 L;\nret;",
        ".reg .u32 x;\n.local .u32 x;\nret;",
        ".local .u32 x;\n.reg .u32 x;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r1;\n#line 3",
        ".reg .u32 %r1;\n#line 3",
        ".reg .u32 %r1;#",
        ".reg .u32 %r1\nret;",
        ".reg .u32 ;",
        ".reg .u33 %r1;",
        ".reg .u32 %r1, ;",
        ".reg .u32 %r1",
        ".reg .u32 %r1;\n.reg .u32 %r1",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 %r1;\n.reg .u32 %r3;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 %r3 /* c\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 %r3$;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 \u{80};\nret;",
        ".reg .u32 %r1; .reg .u32 %r2; @",
    ] {
        same(body);
    }
    let run: String = (0..200).map(|k| format!(".reg .u32 %r{k};\n")).collect();
    same(&format!("{run}.reg .u32 %r150;\nret;"));
}

/// Runs whose declarations repeat the bytes before the name of the one
/// before (read from the bytes), and that stop repeating them in every way:
/// another space, type or spacing, a comment, whitespace or more before `;`,
/// `_`, a name that is no identifier, the end of the text; prefixes of 8
/// and 16 bytes and longer.
#[test]
fn repeated_declaration_prefixes_give_the_general_parsers_ir() {
    for body in [
        "\t.reg .f32 %f1;\n\t.reg .f32 %f2;\n\t.reg .f32 %f3;\n\t.reg .u32 %r1;\n\t.reg .u32 %r2;\nret;",
        ".reg.u8 %r1;\n.reg.u8 %r2;\n.reg.u8 %r3;\nret;",
        ".reg     .u32   %r1;\n.reg     .u32   %r2;\n.reg     .u32    %r3;\n.reg     .u32   %r4;\nret;",
        ".reg      .u32   %r1;\n.reg      .u32   %r2;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.local .u32 x;\n.local .u32 y;\n.reg .u32 %r3;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2 ;\n.reg .u32 %r3;\n/* c */.reg .u32 %r4;\n.reg .u32 %r5/* c */;\nret;",
        ".reg .u32 %r1;\n.reg .u32 _;\n.reg .u32 %r2;\nret;",
        ".reg .u32 %r1;\n.reg .u32 _x;\n.reg .u32 $y;\n.reg .u32 z;\n.reg .u32 %r2, %r3;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2[2];\n.reg .u32 %r3<2>;\n.reg .u32 %r4 = 1;\nret;",
        ".reg .u32 %r1;\n.reg .u32x %r2;\n.reg .u32 %r3;\nret;",
        ".reg .u32 %r1;.reg .u32 %r2;.reg .u32 %r3;\nret;",
        ".reg .u32 %r1;\r\n.reg .u32 %r2;\r\n.reg .u32 %r3;\r\nret;",
        // Types in turns, more than the prefixes kept.
        ".reg .f32 %f1;\n.reg .u32 %r1;\n.reg .pred %p1;\n.reg .u64 %rd1;\n.reg .b16 %h1;\n.reg .f32 %f2;\n.reg .u32 %r2;\n\
         .reg .b16 %h2;\n.reg .pred %p2;\n.local .u32 x;\n.reg .u64 %rd2;\n.local .u32 y;\n.reg .f32 %f3;\nret;",
    ] {
        same(body);
    }
    for body in [
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 %r1;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 1x;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 %r3::x;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 %\nret;",
        ".reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 $;\nret;",
        ".reg .u32 %r1;\nL:\n.reg .u32 %r2;\n.reg .u32 L;\nret;",
        ".reg .f32 %f1;\n.reg .u32 %r1;\n.reg .pred %p1;\n.reg .f32 %f2;\n.reg .u32 %r1;\nret;",
    ] {
        same(body);
    }
    for tail in ["", ";", "x", "%r3", "%r3;"] {
        same_module(&format!(".visible .entry k()\n{{\n.reg .u32 %r1;\n.reg .u32 %r2;\n.reg .u32 {tail}"));
    }
}

#[test]
fn a_run_of_plain_declarations_takes_the_fast_path_and_stops_before_others() {
    let text = ".reg .u32 %r1; .reg .f32 %f1;\n.local .b32 x;\n.reg .u32 %r2, %r3;\nret;";
    let mut p = Parser::new("t.ptx", text.as_bytes());
    p.func = Some(FuncState::new());
    let (mut stmts, mut spans) = (Vec::new(), Vec::new());
    p.plain_body_decls(&mut stmts, &mut spans).unwrap();
    assert_eq!(stmts.len(), 3);
    assert_eq!(spans.iter().map(|s| &text[s.start as usize..s.end as usize]).collect::<Vec<_>>(), [".reg .u32 %r1;", ".reg .f32 %f1;", ".local .b32 x;"]);
    assert_eq!(p.text(p.peek()), ".reg", "stops at the declaration of two names");
    assert_eq!(p.text(p.peek_at(2)), "%r2");
    for text in [".loc 1 2 3\n", ".reg .v2 .u32 %v;\n", ".reg .u32 %r<4>;\n", ".reg .u32 _;\n"] {
        let mut p = Parser::new("t.ptx", text.as_bytes());
        p.func = Some(FuncState::new());
        p.plain_body_decls(&mut stmts, &mut spans).unwrap();
        assert_eq!(stmts.len(), 3, "{text}");
        assert_eq!(p.peek().span.start, 0, "{text}: nothing consumed");
    }
}

#[test]
fn lone_literals_give_the_general_parsers_ir() {
    same(
        ".reg .u32 %r<4>;\n.reg .f32 %f<4>;\n.reg .f64 %d1;\n.reg .b64 %rd<4>;\n.reg .pred %p;\n\
         add.u32 %r1, %r2, 1;\nadd.u32 %r1, %r2, 0x10;\nadd.u32 %r1, %r2, 017;\nadd.u32 %r1, %r2, 0b101;\n\
         add.u32 %r1, %r2, 7U;\nadd.u32 %r1, %r2, 18446744073709551615;\nadd.u32 %r1, %r2, -1;\n\
         add.u32 %r1, %r2, 1+2;\nadd.u32 %r1, %r2, 4*2;\nadd.u32 %r1, %r2, (3);\nadd.u32 %r1, %r2, WARP_SZ;\n\
         add.f32 %f1, %f2, 0f3F800000;\nadd.f32 %f1, %f2, 1.5;\nadd.f32 %f1, %f2, .5;\nadd.f64 %d1, %d1, 0d3FF0000000000000;\n\
         setp.eq.u32 %p, %r1, 1 ;\nld.param.u64 %rd1, [p+8];\nld.global.u32 %r1, [%rd1+4];\nld.global.u32 %r1, [%rd1+-4];\n\
         ld.global.u32 %r1, [%rd1+4+8];\nld.global.u32 %r1, [%rd1+0];\nld.global.u32 %r1, [%rd1+0x10];\nld.global.u32 %r1, [16];\n\
         mov.b64 %rd1, {%r1, %r2};\nmov.u32 %r1, 1 /* c */;\nmov.u32 %r1, 1 // c\n;\nret;",
    );
}

#[test]
fn lone_literals_fail_as_the_general_parser_does() {
    for ins in [
        "add.u32 %r1, %r2, 99999999999999999999;",
        "add.u32 %r1, %r2, 1 %r3;",
        "add.u32 %r1, %r2, 1",
        "ld.global.u32 %r1, [%rd1+99999999999999999999];",
        "ld.global.u32 %r1, [%rd1+1.5];",
        "ld.global.u32 %r1, [%rd1+4;",
        "add.u32 %r1, %r2, 1;#",
        "add.f32 %r1, %r2, 0f3F800000, 1;",
    ] {
        same(&format!(".reg .u32 %r<4>;\n.reg .b64 %rd1;\n{ins}\nret;"));
    }
}

/// [`same`], on a body that parses.
fn same_and_parses(body: &str) {
    let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}\n");
    if let Err(e) = parse_in_one_pass("t.ptx", text.as_bytes()) {
        panic!("{body}\n{e:?}");
    }
    same(body);
}

#[test]
fn lone_registers_give_the_general_parsers_ir() {
    same_and_parses(
        ".reg .u32 %r<4>;\n.reg .u32 %s;\n.reg .v2 .u32 %v;\n.reg .b64 %rd<3>;\n.reg .pred %p<3>;\n.reg .u32 WARP_SZ;\n.reg .u32 _;\n\
         add.u32 %r1, %r2, %r3;\nadd.u32 %r1, %r2, %r03;\nmov.u32 %s, %r1 ;\nmov.u32 %r1, %v.x;\nmov.b64 %rd1, {%r1, %r2};\n\
         mov.u32 %r1, %r2 /* c */;\nmov.u32 %r1, %r2 // c\n;\nsetp.eq.u32 %p1|%p2, %r1, %r2;\nld.global.u32 %r1, [%rd1+4];\n\
         add.u32 %r1, WARP_SZ, _;\n@%p1 bra $L1;\n@!%p1 bra %L2;\nmov.u32 %r1, -%r2;\nmov.u32 %r1, !%p1;\n$L1:\n%L2:\nret;",
    );
    // `%` names that are no register: special registers, variables, labels.
    same_and_parses(".reg .u32 %r1;\n.local .u32 %x;\nmov.u32 %r1, %tid.x;\nld.local.u32 %r1, [%x];\nmov.u32 %r1, %x;\nret;");
    same(".reg .u32 %r1;\nmov.u32 %r1, %tid;\nret;");
    same_and_parses(".reg .u32 %r1;\nbra %r9;\n%r9:\nret;");
    // Nested operands, as deep as they may be and one deeper.
    let nested = |depth: usize| format!(".reg .b32 %r<4>;\nmov.b32 %r1, {}%r2, %r3{};\nret;", "{".repeat(depth), "}".repeat(depth));
    same(&nested(8));
    same(&nested(9));
    assert!(parse_in_one_pass("t.ptx", format!(".version 8.0\n.target sm_80\n.entry k()\n{{\n{}\n}}\n", nested(9)).as_bytes()).is_err());
}

#[test]
fn lone_registers_fail_as_the_general_parser_does() {
    for ins in ["add.u32 %r1, %r2, %q;", "add.u32 %r1, %r2, %r9;", "add.u32 %r1, %r2, %r3", "add.u32 %r1, %r2, %r3 %r1;", "add.u32 %r1, %r2;"] {
        same(&format!(".reg .u32 %r<4>;\n{ins}\nret;"));
    }
}

/// Names no register or variable starts like (branch targets `$L...`)
/// are looked up among the labels only: the same IR and errors as the
/// walk through every scope, with `$` registers, variables and ranges
/// declared before, after and in blocks, labels defined before and after
/// their uses and in nested blocks, and directive labels.
#[test]
fn labels_looked_up_alone_give_the_general_parsers_ir() {
    for body in [
        ".reg .pred %p<2>;\n$L0:\n@%p1 bra $L1;\nbra $L0;\n$L1:\nret;",
        ".reg .pred %p<2>;\n{\n$L1:\nbra $L1;\n}\n@%p1 bra $L1;\n$L1:\nret;",
        ".reg .u32 $r<4>;\nmov.u32 $r1, $r2;\nbra $r3;\n$L1:\nret;",
        ".reg .u32 %r1;\nbra $x;\n{\n.reg .u32 $x;\nmov.u32 $x, %r1;\n}\n$x:\nret;",
        ".reg .u32 %r1;\n$x:\n{\n.local .u32 $x;\nld.local.u32 %r1, [$x];\nbra $x;\n}\nret;",
        ".reg .u32 %r1;\n{\nbra $L__BB0_3;\n$L__BB0_3:\n}\n$L__BB0_3:\nbra $L__BB0_3;\nret;",
        ".reg .u32 %r1;\n.reg .u32 %ri;\n$T: .branchtargets $A, $B;\nbrx.idx %ri, $T;\n$A:\n$B:\nret;",
        ".reg .u32 %r1;\nmov.u32 %r1, $L1;\n$L1:\nret;",
        ".reg .u32 %r1;\nbra $Lnowhere;\nret;",
        ".reg .u32 %r1;\n{\n$L1:\n}\nbra $L1;\nret;",
        ".reg .u32 %r1;\n$L1:\n.reg .u32 $L1;\nret;",
    ] {
        same(body);
    }
}

#[test]
fn literal_values_of_initializers_give_the_general_parsers_ir() {
    for items in [
        ".global .b8 s[4] = {0x2f, 0x68, 0x0, 0xFF};",
        ".global .b8 s[3] = {0x2f,0x68,0x0};",
        ".global .u32 a[4] = {1, 017, 0b101, 7U};",
        ".global .u64 a[2] = {18446744073709551615, 0xffffffffffffffff};",
        ".global .f32 f[3] = {0f3F800000, 1.5, .5};",
        ".global .f64 d[1] = {0d3FF0000000000000};",
        ".global .u32 a[2][2] = {{0x1, 0x2}, {0x3, 0x4}};",
        ".global .b8 s[2] = {0x1 /* c */, 0x2 // c\n};",
        ".global .u32 a[3] = {0x1, 0x2,};",
        // Just missing the fast path: expressions, masks, symbols, scalars.
        ".global .u32 a[3] = {0x1+1, -0x2, (0x3)};",
        ".global .u32 g;\n.global .u64 p[2] = {g, generic(g)};",
        ".global .u64 m[1] = {0xFF(0x1234)};",
        ".global .u32 x = 0x10;",
        ".global .u32 a[2] = {1 ? 2 : 3, 4};",
    ] {
        same_module(items);
    }
}

#[test]
fn literal_values_of_initializers_fail_as_the_general_parser_does() {
    for items in [
        ".global .u64 a[2] = {99999999999999999999, 1};",
        ".global .u64 a[2] = {0x1ffffffffffffffff};",
        ".global .f32 f[1] = {0f3F80};",
        ".global .u32 a[2] = {0x1, 0x2",
        ".global .u32 a[2] = {0x1 0x2};",
        ".global .u32 a[2] = {0x1,, 0x2};",
    ] {
        same_module(items);
    }
}

#[test]
fn plain_locs_give_the_general_parsers_ir() {
    for body in [
        ".loc 1 23 5\nret;",
        ".loc\t1\t23\t5\r\nret;\n.loc 2 0 0\n",
        ".loc 1 23 5 \nret;",
        ".loc 123456789 999999999 1\nret;",
        // Just missing the fast path: other numbers, more parts; comments.
        ".loc 1 23 017\nret;",
        ".loc 1 23 0x10\nret;",
        ".loc 1 23 4294967295\nret;",
        ".loc 1 23 5, inlined_at 1 10 3\nret;",
        ".loc 1 23 5\n, inlined_at 1 10 3\nret;",
        ".loc 1 23 5 // c\nret;",
        ".loc 1 23 5 /* c */ , inlined_at 1 10 3\nret;",
        ".loc 1 23\n5\nret;",
        ".loc 1 23 5;\nret;",
        // Other directives that start like `.loc`.
        ".loc 1 23 5\n.local .u32 x;\n.loc 1 24 5\nret;",
        ".lo 1 23 5\nret;",
        ".locx 1 23 5\nret;",
        ".loc\n1\n23\n5\n.loc 1 23 5\n.loc 1 23 6\n.loc 1 23 7\n.loc 1 23 8\nret;",
    ] {
        same(body);
    }
}

#[test]
fn plain_locs_fail_as_the_general_parser_does() {
    for body in [".loc 1 23 5", ".loc 1 23 5\n", ".loc 1 23 5x\nret;", ".loc 1 23 4294967296\nret;", ".loc 1 23 99999999999\nret;", ".loc 1 23 5\n#line\nret;", ".loc 1 23\nret;", ".loc 1\nret;"] {
        same(body);
    }
}

#[test]
fn a_plain_loc_takes_the_fast_path_and_others_do_not() {
    let mut p = Parser::new("t.ptx", b".loc 1 23 5\nret;");
    assert_eq!(p.plain_loc(), Some(Loc::new(1, 23, 5)));
    assert_eq!(p.text(p.peek()), "ret");
    for text in [".loc 1 23 5, inlined_at 1 10 3\n", ".loc 1 23 017\n", ".loc 1 23 0x10\n", ".loc 1 23 5 /* c */ , inlined_at 1 10 3\n"] {
        let mut p = Parser::new("t.ptx", text.as_bytes());
        assert_eq!(p.plain_loc(), None, "{text}");
        assert_eq!(p.text(p.peek()), ".loc", "{text}: nothing consumed");
    }
}
