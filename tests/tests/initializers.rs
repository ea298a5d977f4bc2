//! Initializer lists: the compact integer-list fast path of the parser
//! gives the IR the general parser gives (one representation per written
//! list), round trips, and leaves every other form to the general parser;
//! names declared after their use are still found when the module-level
//! names are looked up lazily.

use ptx_ir::ir::{Initializer, IntList, Item};
use ptx_tests::roundtrip::round_trip;

fn module(decls: &str) -> String {
    format!(".version 8.0\n.target sm_80\n.address_size 64\n{decls}\n")
}

/// The initializer of the first module variable.
fn first_init(text: &str) -> Initializer {
    let parsed = ptx_ir::parse("init.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
    for item in &parsed.module.items {
        if let Item::Var(g) = item {
            return *g.decl.names[0].init.clone().expect("an initializer");
        }
    }
    panic!("no variable in {text}")
}

/// Picks below `n`, pseudo-random (xorshift) and the same for a seed.
fn picker(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

/// Parses the module of `decl` with `LIST` replaced by `list`, once as
/// written and once with a comment after the `{` (which keeps the fast
/// paths out): both give the same module, or both fail. Whether it parsed.
fn both_paths_agree(decl: &str, list: &str) -> bool {
    let parse = |list: &str| ptx_ir::parse("list.ptx", module(&decl.replace("LIST", list)).as_bytes()).map(|p| p.module).map_err(|e| e.to_string());
    let fast = parse(list);
    let general = parse(&list.replacen('{', "{ /* general path */ ", 1));
    match (&fast, &general) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{list}"),
        (Err(_), Err(_)) => {}
        _ => panic!("{list}: the fast path gives {fast:?}, the general parser {general:?}"),
    }
    fast.is_ok()
}

#[test]
fn integer_lists_are_compact_whichever_path_reads_them() {
    let cases = [
        ("{1, 2, 3}", IntList::Bytes(vec![1, 2, 3].into())),
        ("{0,255,\n 7 ,}", IntList::Bytes(vec![0, 255, 7].into())),
        ("{300, 0, 18446744073709551615}", IntList::Words(vec![300, 0, u64::MAX].into())),
        ("{ 9223372036854775808 }", IntList::Words(vec![1 << 63].into())),
    ];
    for (list, want) in cases {
        let fast = first_init(&module(&format!(".global .u64 a[4] = {list};")));
        assert_eq!(fast, Initializer::Ints(want.clone()), "{list}");
        // A comment keeps the fast path out: the general parser must agree.
        let slow_text = list.replacen('{', "{ /* general path */ ", 1);
        let slow = first_init(&module(&format!(".global .u64 a[4] = {slow_text};")));
        assert_eq!(slow, fast, "{slow_text}");
    }
}

/// Lists made of number texts around the edges the fast path decides on
/// (one digit, 19 and 20 digits, `u64::MAX` and one past it, leading
/// zeros) and the blanks between them: the fast path and the general
/// parser agree on every one, on its list or on rejecting it.
#[test]
fn the_fast_path_agrees_with_the_general_parser_on_edges() {
    // Every digit count from one to twenty (the scanner reads up to seven
    // digits a word at a time, more byte by byte), leading zeros, and the
    // edges of 64 bits.
    let numbers = ["0", "7", "10", "42", "123", "255", "256", "9999", "12345", "654321", "1234567", "12345678", "987654321", "00", "007", "0123456", "1000000000000000000", "9999999999999999999", "10000000000000000000", "18446744073709551615", "18446744073709551616", "99999999999999999999"];
    let blanks = ["", " ", "\n\t", " \r\n "];
    let mut next = picker(0x2545_f491_4f6c_dd1d);
    for _ in 0..400 {
        let len = 1 + next(12);
        let mut list = String::from("{");
        for k in 0..len {
            if k > 0 {
                list.push(',');
            }
            list.push_str(blanks[next(blanks.len())]);
            list.push_str(numbers[next(numbers.len())]);
            list.push_str(blanks[next(blanks.len())]);
        }
        if next(4) == 0 {
            list.push(',');
        }
        list.push('}');
        both_paths_agree(".global .u64 a[5] = LIST;", &list);
    }
}

/// Lists of hexadecimal floating-point literals (`0f` and eight digits,
/// `0d` and sixteen), read by the parser's own scan of the bytes, and
/// near misses (other digit counts, a letter after the digits, mixed
/// lists, missing commas, comments): the fast path and the general parser
/// agree on every one, on its IR or on rejecting it.
#[test]
fn hexadecimal_float_lists_agree_with_the_general_parser() {
    let items = ["0f3F800000", "0fbf800000", "0F7FC00000", "0d3FF0000000000000", "0D7ff8000000000001", "0f3F80000", "0f3F8000001", "0d3FF000000000000", "0f3F800000g", "1", "0x10", "0f3F800000U", "1.5"];
    let seps = [", ", ",", " ,\n\t", ",\r\n  ", " ", ",,"];
    let decl = ".global .f64 a[9] = LIST;";
    // A literal one digit short whose eighth byte is the separator or the
    // `}`, followed by what would end a literal: errors.
    for list in ["{0f3F80000,}", "{0f3F80000,,0f3F800000}", "{0d3FF000000000000,}", "{0f3F800000, 0f3F80000,}", "{0f3F80000}}", "{0f3F80000 }"] {
        assert!(!both_paths_agree(decl, list), "{list}");
    }
    let mut next = picker(0x9e37_79b9_7f4a_7c15);
    let mut parsed = 0;
    for _ in 0..600 {
        let len = 1 + next(8);
        // Mostly well-formed literals: a near miss in one list of three.
        let well_formed = next(3) != 0;
        let mut list = String::from("{");
        list.push_str(["", " ", "\n  "][next(3)]);
        for k in 0..len {
            if k > 0 {
                list.push_str(if well_formed { [", ", ",", ",\n  "][next(3)] } else { seps[next(seps.len())] });
            }
            list.push_str(if well_formed { items[next(5)] } else { items[next(items.len())] });
        }
        if next(4) == 0 {
            list.push(',');
        }
        list.push_str(["", " ", "\n"][next(3)]);
        list.push('}');
        parsed += usize::from(both_paths_agree(decl, &list));
    }
    assert!(parsed > 300, "most lists parse: {parsed}");
}

#[test]
fn other_lists_stay_general() {
    for list in ["{01, 2}", "{0x10, 2}", "{1U, 2}", "{-1, 2}", "{1+1, 2}", "{0f3F800000, 0f00000000}", "{a, 2}", "{{1, 2}, {3, 4}}"] {
        let text = module(&format!(".global .u32 a[2][2];\n.global .u64 b[4] = {list};").replace(".global .u32 a[2][2];\n", ""));
        let text = text.replace(".global .u64 b[4] = {a, 2};", ".global .u32 a;\n.global .u64 b[4] = {a, 2};");
        let parsed = ptx_ir::parse("init.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
        let init = parsed.module.items.iter().rev().find_map(|i| match i {
            Item::Var(g) => g.decl.names[0].init.as_deref().cloned(),
            _ => None,
        });
        match init {
            Some(Initializer::List(items)) if list.starts_with("{{") => {
                assert!(items.iter().all(|i| matches!(i, Initializer::Ints(_))), "{list}: inner lists are compact");
            }
            Some(Initializer::List(_)) => {}
            other => panic!("{list}: {other:?}"),
        }
        round_trip("init.ptx", text.as_bytes()).unwrap_or_else(|e| panic!("{list}: {e}"));
    }
}

#[test]
fn long_lists_round_trip_in_filled_lines() {
    let values: Vec<String> = (0..5000u64).map(|k| (k * 7919 % 1000).to_string()).collect();
    let text = module(&format!(".visible .global .align 4 .u32 table[5000] = {{{}}};", values.join(",")));
    let rt = round_trip("long.ptx", text.as_bytes()).unwrap();
    assert!(rt.printed.lines().all(|l| l.len() <= 100), "lines fit the width");
    assert!(rt.printed.lines().count() < 300, "several values per line");
    match first_init(&text) {
        Initializer::Ints(IntList::Words(w)) => assert_eq!(w.len(), 5000),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_lists_get_the_general_parsers_errors() {
    for (list, what) in [("{18446744073709551616}", "18446744073709551616"), ("{1 2}", "2"), ("{1,,2}", ",")] {
        let text = module(&format!(".global .u64 a[2] = {list};"));
        let err = ptx_ir::parse("bad.ptx", text.as_bytes()).err().unwrap_or_else(|| panic!("{list} parsed"));
        let shown = err.to_string();
        assert!(shown.contains("bad.ptx:4:"), "{list}: {shown}");
        assert!(shown.contains(what), "{list}: {shown}");
    }
}

#[test]
fn names_declared_later_are_found() {
    // A function uses a variable and calls a function declared after it.
    let text = module(
        ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .b32 %r<2>;\nmov.u64 %rd1, later;\nld.global.u32 %r1, [later+4];\n\
         { .param .b32 r; call.uni (r), f, (); }\nret;\n}\n.visible .global .align 4 .u32 later[2] = {1, 2};\n\
         .visible .func (.param .b32 out) f()\n{\nst.param.b32 [out], 0;\nret;\n}",
    );
    let rt = round_trip("fwd.ptx", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert!(rt.printed.contains("%rd1, later;"), "{}", rt.printed);
    // An undeclared name is still an error.
    let bad = text.replace("mov.u64 %rd1, later;", "mov.u64 %rd1, nowhere;");
    assert!(ptx_ir::parse("fwd.ptx", bad.as_bytes()).is_err());
}

#[test]
fn the_interpreter_reads_compact_lists() {
    let text = module(
        ".visible .global .align 4 .u32 table[3] = {7, 300, 4000000000};\n\
         .visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<3>;\n.reg .b32 %r<3>;\nld.param.u64 %rd1, [out];\n\
         ld.global.u32 %r1, [table+8];\nld.global.u32 %r2, [table+4];\nadd.s32 %r1, %r1, %r2;\nst.global.u32 [%rd1], %r1;\nret;\n}",
    );
    let parsed = ptx_ir::parse("t.ptx", text.as_bytes()).unwrap();
    let mut launch = ptx_ir::interp::Launch::new("k", [1, 1, 1], [1, 1, 1]);
    launch.args = vec![ptx_ir::interp::KernelArg::Buffer(0)];
    launch.buffers = vec![vec![0; 4]];
    let out = ptx_ir::interp::run(&parsed.module, &parsed.source_map, "t.ptx", text.as_bytes(), &launch).unwrap();
    assert_eq!(u32::from_le_bytes(out.buffers[0].bytes[..4].try_into().unwrap()), 4_000_000_300);
}
