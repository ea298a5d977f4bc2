//! The `ptx-opt` command as users run it: exit statuses, stdin/stdout, and
//! output written only on success (never clobbering the input).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const VALID: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
const INVALID: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tfrobnicate;\n}\n";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptx-opt"))
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx-opt-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_with_stdin(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // The command may exit (usage error) before reading its input.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn reads_stdin_and_writes_stdout() {
    for args in [&[][..], &["-"][..], &["-O0"][..]] {
        let (code, out, err) = run_with_stdin(args, VALID);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(".visible .entry k()"), "{out}");
        assert!(err.is_empty());
    }
}

#[test]
fn invalid_input_exits_1_with_a_positioned_diagnostic() {
    let (code, out, err) = run_with_stdin(&[], INVALID);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "nothing is written on failure: {out}");
    assert_eq!(err, "error: unknown instruction `frobnicate`\n --> <stdin>:6:2\n  |\n6 |     frobnicate;\n  |     ^^^^^^^^^^\n");
    let (_, _, short) = run_with_stdin(&["--error-format=short"], INVALID);
    assert_eq!(short.trim(), "<stdin>:6:2: error: unknown instruction `frobnicate`");
}

#[test]
fn usage_errors_exit_2() {
    for args in [&["--frobnicate"][..], &["-o"][..], &["a.ptx", "b.ptx"][..], &["-O"][..], &["-O7"][..], &["--emit=svg"][..], &["--opt-bisect-limit=x"][..], &["--passes"][..]] {
        let (code, out, err) = run_with_stdin(args, VALID);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        // One line saying what is wrong, one saying where the help is; not the whole help.
        assert_eq!(err.lines().count(), 2, "{args:?}: {err}");
        assert!(err.starts_with("ptx-opt: ") && err.ends_with("see `ptx-opt --help`\n"), "{err}");
    }
    let (code, out, _) = run_with_stdin(&["--help"], "");
    assert_eq!(code, 0);
    assert!(out.contains("-o <PATH>") && out.contains("--out-dir <DIR>") && out.contains("--error-format"), "{out}");
    let (code, out, _) = run_with_stdin(&["--version"], "");
    assert_eq!((code, out.trim()), (0, concat!("ptx-opt ", env!("CARGO_PKG_VERSION"))));
}

#[test]
fn writes_the_output_file_only_on_success() {
    let d = scratch("out");
    let input = d.join("in.ptx");
    let output = d.join("out.ptx");
    std::fs::write(&input, VALID).unwrap();
    let st = bin().arg(&input).arg("-o").arg(&output).status().unwrap();
    assert_eq!(st.code(), Some(0));
    assert!(std::fs::read_to_string(&output).unwrap().contains(".entry k()"));

    // A failing run leaves an existing output untouched and creates nothing else.
    std::fs::write(&input, INVALID).unwrap();
    std::fs::write(&output, "previous contents").unwrap();
    let st = bin().arg(&input).arg("-o").arg(&output).stderr(Stdio::null()).status().unwrap();
    assert_eq!(st.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "previous contents");
    let entries: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(entries.len(), 2, "no temporary files are left behind: {entries:?}");
}

#[test]
fn never_clobbers_its_input_on_failure() {
    let d = scratch("inplace");
    let input = d.join("k.ptx");
    std::fs::write(&input, INVALID).unwrap();
    let st = bin().arg(&input).arg("-o").arg(&input).stderr(Stdio::null()).status().unwrap();
    assert_eq!(st.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), INVALID);
    // On success, writing over the input is allowed and atomic.
    std::fs::write(&input, VALID).unwrap();
    let st = bin().arg(&input).arg("-o").arg(&input).status().unwrap();
    assert_eq!(st.code(), Some(0));
    assert!(std::fs::read_to_string(&input).unwrap().contains(".entry k()"));
}

/// `-o /dev/null` discards the output and leaves `/dev/null` a device
/// (an atomic rename over it would make it a regular file).
#[test]
fn writing_to_dev_null_keeps_the_device() {
    use std::os::unix::fs::FileTypeExt;
    let d = scratch("devnull");
    let input = d.join("k.ptx");
    std::fs::write(&input, VALID).unwrap();
    for level in ["-O0", "-O2"] {
        let st = bin().arg(level).arg(&input).arg("-o").arg("/dev/null").status().unwrap();
        assert_eq!(st.code(), Some(0));
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }
}

#[test]
fn unreadable_input_and_output_are_errors() {
    let d = scratch("io");
    let (code, _, err) = run_with_stdin(&[d.join("missing.ptx").to_str().unwrap()], "");
    assert_eq!(code, 1);
    assert!(err.contains("cannot read"), "{err}");
    let input = d.join("k.ptx");
    std::fs::write(&input, VALID).unwrap();
    let (code, _, err) = run_with_stdin(&[input.to_str().unwrap(), "-o", d.join("no/such/dir/out.ptx").to_str().unwrap()], "");
    assert_eq!(code, 1);
    assert!(err.contains("cannot write"), "{err}");
}

#[test]
fn verify_reports_errors_without_writing() {
    let bad_type = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .f32 %f;\n\t.reg .b32 %r;\n\tadd.u32 %r, %r, %f;\n\tret;\n}\n";
    let (code, out, err) = run_with_stdin(&["--verify"], bad_type);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.starts_with("error: operand 3 of `add` is `%f` of type .f32"), "{err}");
    assert!(err.contains("--> <stdin>:8:2") && err.contains("= note: in function `k`"), "{err}");
    let (code, out, err) = run_with_stdin(&["--verify"], VALID);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
}

/// `mad.lo.s32` with a `.b64` register: ptxas says "Arguments mismatch".
const TYPE_ERROR: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<4>;\n\tld.param.u64 %rd1, [p];\n\tmad.lo.s32 %r1, %rd1, %r2, %r3;\n\tret;\n}\n";

#[test]
fn every_run_verifies_before_optimizing() {
    let d = scratch("verify-default");
    let input = d.join("typeerr.ptx");
    let output = d.join("out.ptx");
    std::fs::write(&input, TYPE_ERROR).unwrap();
    for extra in [&[][..], &["-O0"][..], &["--emit=cfg-dot"][..]] {
        let out = bin().arg(&input).args(extra).arg("-o").arg(&output).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: operand 2 of `mad` is `%rd1` of type .b64"), "{err}");
        assert!(err.contains(&format!("--> {}:9:2", input.display())), "{err}");
        assert!(!output.exists(), "nothing is written");
    }
    // --no-verify: the caller takes responsibility.
    let out = bin().arg(&input).args(["--no-verify", "-O0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("mad.lo.s32"));
    let (code, _, err) = run_with_stdin(&["--verify", "--no-verify"], VALID);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn unknown_targets_and_versions_are_errors_at_their_token() {
    for (text, expected) in [
        (".version 8.0\n.target sm_200\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n", "<stdin>:2:9: error: unknown target `sm_200`"),
        (".version 99.9\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n", "<stdin>:1:10: error: unknown PTX ISA version 99.9"),
        (".version 8.4\n.target sm_80, sm_120\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n", "<stdin>:2:16: error: .target sm_120 requires PTX ISA version 8.7 or later"),
    ] {
        for args in [&["--verify", "--error-format=short"][..], &["--error-format", "short"][..]] {
            let (code, out, err) = run_with_stdin(args, text);
            assert_eq!(code, 1, "{args:?} {text}");
            assert!(out.is_empty());
            assert!(err.starts_with(expected), "{args:?}: {err}");
        }
    }
}

#[test]
fn warnings_print_but_do_not_fail() {
    // `addc` with no carry producer: ptxas accepts it, the verifier warns.
    let carry = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\taddc.u32 %r1, %r2, %r3;\n\tret;\n}\n";
    let (code, out, err) = run_with_stdin(&["-O0"], carry);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("addc.u32"));
    assert!(err.starts_with("warning: this instruction reads the carry flag"), "{err}");
    assert!(err.contains("--> <stdin>:7:2"), "{err}");
}

#[test]
fn emits_cfg_dot() {
    let branchy = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .pred %p;\n\t.reg .b32 %r;\n\tsetp.eq.u32 %p, %r, 0;\n\t@%p bra L;\n\tadd.u32 %r, %r, 1;\nL:\n\tret;\n}\n";
    let (code, out, err) = run_with_stdin(&["--emit=cfg-dot", "-O0"], branchy);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("digraph ptx {"), "{out}");
    assert!(out.contains("label=\"taken\"") && out.contains("label=\"fall-through\""), "{out}");
    assert!(out.contains("subgraph cluster_0"), "{out}");
}

// ------------------------------------------------------------------------------------------------ ptx-opt run

/// out[i] = in[i] * k + bias (u32), one thread per element; `bias` is a
/// by-value 8-byte struct whose second word is added.
const SCALE: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
.visible .entry scale(.param .u64 in, .param .u64 out, .param .u32 k, .param .align 4 .b8 bias[8])\n{\n\
\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<6>;\n\
\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n\tld.param.u32 %r1, [k];\n\tld.param.u32 %r5, [bias+4];\n\
\tmov.u32 %r2, %tid.x;\n\tmul.wide.u32 %rd3, %r2, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n\tadd.s64 %rd5, %rd2, %rd3;\n\
\tld.global.u32 %r3, [%rd4];\n\tmad.lo.s32 %r4, %r3, %r1, %r5;\n\tst.global.u32 [%rd5], %r4;\n\tret;\n}\n";

const SCALE_ARGS: [&str; 15] = ["run", "-", "--kernel", "scale", "--grid", "1", "--block", "4", "--arg", "buf:u32:4=1,2,3,4", "--arg", "buf:u32:4=zeros", "--arg", "u32:10", "--arg"];

#[test]
fn run_prints_every_buffer_as_json() {
    let mut args = SCALE_ARGS.to_vec();
    args.push("bytes:0000000007000000");
    let (code, out, err) = run_with_stdin(&args, SCALE);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(out, "[\n  {\"arg\": 0, \"type\": \"u32\", \"values\": [1, 2, 3, 4]},\n  {\"arg\": 1, \"type\": \"u32\", \"values\": [17, 27, 37, 47]}\n]\n");
}

#[test]
fn run_writes_json_to_a_file_only_on_success() {
    let d = scratch("run-json");
    let input = d.join("scale.ptx");
    let json = d.join("out.json");
    std::fs::write(&input, SCALE).unwrap();
    let mut args: Vec<String> = SCALE_ARGS.iter().map(|s| s.to_string()).collect();
    args[1] = input.display().to_string();
    args.push("bytes:0000000001000000".into());
    args.extend(["--out-json".to_string(), json.display().to_string()]);
    let out = bin().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "the JSON goes to the file");
    assert!(std::fs::read_to_string(&json).unwrap().contains("[11, 21, 31, 41]"));
    // A run that faults (the output buffer is one element short) leaves the
    // previous JSON untouched and creates nothing else.
    let short: Vec<String> = args.iter().map(|a| if a == "buf:u32:4=zeros" { "buf:u32:3=zeros".to_string() } else { a.clone() }).collect();
    let out = bin().args(&short).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("ptx-opt run: "), "{err}");
    assert!(err.contains("scale.ptx:18:2: error: 4-byte access at offset 12 of buffer 1 (12 bytes) is out of bounds (thread ctaid (0,0,0) tid (3,0,0))"), "{err}");
    assert!(std::fs::read_to_string(&json).unwrap().contains("[11, 21, 31, 41]"));
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2, "no temporary file is left behind");
}

#[test]
fn run_usage_and_input_errors() {
    // Usage errors: exit 2, one line naming `ptx-opt run`, and where its help is.
    for args in [
        &["run", "-", "--kernel", "scale", "--grid", "0", "--block", "4"][..],
        &["run", "-", "--kernel", "scale", "--grid", "1", "--block", "4", "--arg", "buf:u33:4=zeros"][..],
        &["run", "-", "--kernel", "scale", "--grid", "1", "--block", "4", "--arg", "buf:u32:4=1,2"][..],
        &["run", "-", "--grid", "1", "--block", "4"][..],
        &["run", "-", "--kernel", "scale", "--grid", "1", "--block", "4", "--kernal", "x"][..],
        &["run", "--kernel", "scale", "--grid", "1", "--block", "4"][..],
    ] {
        let (code, out, err) = run_with_stdin(args, SCALE);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.starts_with("ptx-opt run: ") && err.ends_with("see `ptx-opt run --help`\n"), "{err}");
        assert_eq!(err.lines().count(), 2, "{err}");
    }
    // Invalid input and launches that do not fit the kernel: exit 1, a diagnostic, no JSON.
    let cases: [(&[&str], &str, &str); 4] = [
        (&["run", "-", "--kernel", "scale", "--grid", "1", "--block", "4"], INVALID, "ptx-opt run: error: unknown instruction `frobnicate`\n --> <stdin>:6:2"),
        (&["run", "-", "--kernel", "k", "--grid", "1", "--block", "1", "--arg", "u64:0"], TYPE_ERROR, "ptx-opt run: error: operand 2 of `mad`"),
        (&["run", "-", "--kernel", "nope", "--grid", "1", "--block", "4"], SCALE, "ptx-opt run: no kernel `nope`"),
        (&["run", "-", "--kernel", "scale", "--grid", "1", "--block", "4", "--arg", "u32:1"], SCALE, "ptx-opt run: kernel `scale` takes 4 parameter(s) (.u64 in, .u64 out, .u32 k, .b8 bias[8]), 1 --arg given"),
    ];
    for (args, input, expected) in cases {
        let (code, out, err) = run_with_stdin(args, input);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

/// A clang -O0 shape: a stack slot in `__local_depot0`, read in a loop.
const STACK: &str = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.local .align 4 .b8 __local_depot0[8];\n\t.reg .b64 %SP;\n\t.reg .b64 %SPL;\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<3>;\n\tmov.u64 %SPL, __local_depot0;\n\tcvta.local.u64 %SP, %SPL;\n\tst.u32 [%SP+0], 0;\n$L__loop:\n\tld.u32 %r1, [%SP+0];\n\tadd.s32 %r2, %r1, 1;\n\tst.u32 [%SP+0], %r2;\n\tsetp.lt.s32 %p1, %r2, 10;\n\t@%p1 bra $L__loop;\n\tld.param.u64 %rd1, [p];\n\tld.u32 %r3, [%SP+0];\n\tst.u32 [%rd1], %r3;\n\tret;\n}\n";

#[test]
fn optimizes_at_o2_by_default() {
    let (code, default, err) = run_with_stdin(&[], STACK);
    assert_eq!(code, 0, "{err}");
    let (_, o2, _) = run_with_stdin(&["-O2"], STACK);
    let (_, o0, _) = run_with_stdin(&["-O0"], STACK);
    assert_eq!(default, o2);
    assert!(o0.contains("__local_depot0") && !default.contains("__local_depot0"), "{default}");
}

#[test]
fn lists_passes_and_runs_a_named_pipeline() {
    let (code, out, _) = run_with_stdin(&["--list-passes"], "");
    assert_eq!(code, 0);
    for p in ["promote-local", "copy-prop", "address-space", "fold-offsets", "egraph", "dce", "simplify-cfg", "dead-decls", "compact-regs", "div-bypass"] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(p)), "{p} missing from\n{out}");
    }
    // Only promote-local: the stack goes, the declaration stays (dead-decls did not run).
    for args in [&["--passes=promote-local"][..], &["--passes", "promote-local"][..]] {
        let (code, out, err) = run_with_stdin(args, STACK);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("__local_depot0[8]") && !out.contains("[%SP+0]"), "{out}");
    }
    let (code, _, err) = run_with_stdin(&["--passes=promote-local,frobnicate"], STACK);
    assert_eq!(code, 2);
    assert!(err.contains("unknown pass `frobnicate`"), "{err}");
}

#[test]
fn bisects_times_prints_and_validates() {
    // Limit 0 runs nothing: the -O0 output. Each step is logged.
    let (_, o0, _) = run_with_stdin(&["-O0"], STACK);
    let (code, none, err) = run_with_stdin(&["--opt-bisect-limit=0"], STACK);
    assert_eq!(code, 0);
    assert_eq!(none, o0);
    assert!(err.lines().next().unwrap().starts_with("BISECT: NOT running pass (1) promote-local on k"), "{err}");
    let (_, one, err) = run_with_stdin(&["--opt-bisect-limit", "1"], STACK);
    assert!(err.contains("BISECT: running pass (1) promote-local on k") && err.contains("BISECT: NOT running pass (2)"), "{err}");
    assert!(one != o0 && one.contains("__local_depot0"), "only the first step ran:\n{one}");
    let (code, _, err) = run_with_stdin(&["--time-passes", "--validate-after-all"], STACK);
    assert_eq!(code, 0, "{err}");
    for p in ["promote-local", "egraph", "dce", "total"] {
        assert!(err.contains(p), "{p} missing from the timing table:\n{err}");
    }
    let (_, _, err) = run_with_stdin(&["--print-after-all", "--passes=promote-local,dce"], STACK);
    assert!(err.contains("// *** after promote-local on k ***") && err.contains("// *** after dce on k ***"), "{err}");
}

// ------------------------------------------------------------------------------------------------ arguments

#[test]
fn the_optimize_subcommand_is_the_default_and_flags_take_either_spelling() {
    let d = scratch("spellings");
    let input = d.join("k.ptx");
    std::fs::write(&input, STACK).unwrap();
    let (_, expected, _) = run_with_stdin(&["-O2"], STACK);
    let i = input.to_str().unwrap();
    let o = d.join("o.ptx");
    let o = o.to_str().unwrap();
    for args in [
        vec![i, "-O2", "-o", o],
        vec!["-O2", i, &format!("-o{o}")],
        vec!["opt", i, "-O", "2", "-o", o],
        vec!["opt", "-O=2", "--passes=promote-local,copy-prop,address-space,egraph,dce,simplify-cfg,dead-decls", i, "-o", o],
        vec!["--passes", "promote-local,copy-prop,address-space,egraph,dce,simplify-cfg,dead-decls", "--emit", "ptx", i, "-o", o],
    ] {
        let _ = std::fs::remove_file(o);
        let (code, out, err) = run_with_stdin(&args, "");
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.is_empty() && err.is_empty(), "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(o).unwrap(), expected, "{args:?}");
    }
    // A file named like a subcommand, after an option or after `--`.
    std::fs::write(d.join("run"), VALID).unwrap();
    let out = bin().current_dir(&d).args(["-O0", "run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = bin().current_dir(&d).args(["--", "run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn mistyped_flags_get_a_suggestion() {
    for (args, expected) in [
        (&["--verif", "x.ptx"][..], "ptx-opt: unexpected argument '--verif' found; did you mean `--verify`?\nsee `ptx-opt --help`\n"),
        (&["--list-pass"][..], "did you mean `--list-passes`?"),
        (&["--emit=cfg"][..], "did you mean `cfg-dot`?"),
        (&["run", "-", "--kernal=k"][..], "ptx-opt run: unexpected argument '--kernal' found; did you mean `--kernel`?"),
        (&["rnu"][..], ""),
    ] {
        let (code, out, err) = run_with_stdin(args, VALID);
        assert!(out.is_empty());
        if args == ["rnu"] {
            // A file that does not exist (not a subcommand): an input error.
            assert_eq!(code, 1, "{err}");
            assert!(err.contains("cannot read `rnu`"), "{err}");
            continue;
        }
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

#[test]
fn verify_with_an_output_is_a_usage_error() {
    let d = scratch("verify-output");
    let input = d.join("k.ptx");
    std::fs::write(&input, VALID).unwrap();
    for extra in [&["-o", "x.ptx"][..], &["--out-dir", "out"][..], &["--emit=cfg-dot"][..]] {
        let out = bin().current_dir(&d).arg("--verify").arg(&input).args(extra).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("'--verify' cannot be used with"), "{err}");
        assert!(!d.join("x.ptx").exists() && !d.join("out").exists());
    }
}

#[test]
fn lists_passes_with_descriptions_and_pipelines() {
    let (code, out, _) = run_with_stdin(&["--list-passes"], "");
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.trim_start().starts_with("dce") && l.contains("removes instructions")), "{out}");
    for level in ["-O1", "-O2", "-O3"] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(level) && l.contains("promote-local,")), "{level} missing from\n{out}");
    }
}

#[test]
fn prints_shell_completions() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = run_with_stdin(&["completions", shell], "");
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("out-dir") && out.contains("kernel") && out.contains("completions"), "{shell}: {out}");
    }
    let (code, _, err) = run_with_stdin(&["completions", "tcsh"], "");
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
}

// ------------------------------------------------------------------------------------------------ diagnostics

/// Two verifier errors in one function, and a warning.
const TWO_ERRORS: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .f32 %f;\n\t.reg .b32 %r;\n\tadd.u32 %r, %r, %f;\n\tmul.lo.u32 %r, %f, 2;\n\tret;\n}\n";

#[test]
fn json_diagnostics_are_one_object_per_line() {
    let (code, out, err) = run_with_stdin(&["--error-format=json"], TWO_ERRORS);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    let lines: Vec<serde_json::Value> = err.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(lines.len(), 2, "{err}");
    let first = &lines[0];
    assert_eq!(first["file"], "<stdin>");
    assert_eq!((first["line"].as_u64(), first["column"].as_u64()), (Some(8), Some(2)));
    assert!(first["end_line"].as_u64().unwrap() >= 8 && first["end_column"].as_u64().unwrap() > 2, "{first}");
    assert_eq!(first["severity"], "error");
    assert!(first["message"].as_str().unwrap().starts_with("operand 3 of `add`"), "{first}");
    assert_eq!(first["notes"], serde_json::json!(["in function `k`"]));
    assert_eq!(lines[1]["line"].as_u64(), Some(9));
    // A parse error, and an unreadable file, in the same shape.
    let (_, _, err) = run_with_stdin(&["--error-format", "json"], INVALID);
    let v: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!((v["line"].as_u64(), v["column"].as_u64(), v["end_column"].as_u64()), (Some(6), Some(2), Some(12)));
    assert_eq!(v["notes"], serde_json::json!([]));
    let (code, _, err) = run_with_stdin(&["--error-format=json", "/no/such/file.ptx"], "");
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!((v["file"].as_str(), v["line"].as_u64()), (Some("/no/such/file.ptx"), Some(0)));
    assert!(v["message"].as_str().unwrap().contains("cannot read"), "{v}");
    // `run` too.
    let (code, _, err) = run_with_stdin(&["run", "-", "--kernel", "k", "--grid", "1", "--block", "1", "--error-format=json"], TWO_ERRORS);
    assert_eq!(code, 1);
    let parsed: Vec<serde_json::Value> = err.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(parsed.len(), 2, "{err}");
    assert!(parsed.iter().all(|v| v["severity"] == "error" && v["notes"][0] == "in function `k`"), "{err}");
}

#[test]
fn human_diagnostics_show_the_line_a_caret_and_the_function() {
    let (_, _, err) = run_with_stdin(&[], TWO_ERRORS);
    assert!(err.contains("8 |     add.u32 %r, %r, %f;"), "{err}");
    assert!(err.contains("9 |     mul.lo.u32 %r, %f, 2;"), "{err}");
    assert_eq!(err.matches("= note: in function `k`").count(), 2, "{err}");
    assert!(err.lines().filter(|l| l.contains('^')).count() == 2, "{err}");
}

#[test]
fn color_only_when_asked_or_on_a_terminal() {
    let esc = '\u{1b}';
    let (_, _, plain) = run_with_stdin(&[], INVALID);
    assert!(!plain.contains(esc), "stderr is not a terminal here: {plain}");
    let (_, _, never) = run_with_stdin(&["--color=never"], INVALID);
    assert!(!never.contains(esc));
    let (_, _, always) = run_with_stdin(&["--color", "always"], INVALID);
    assert!(always.contains(esc), "{always}");
    let (_, _, run) = run_with_stdin(&["run", "-", "--kernel", "k", "--grid", "1", "--block", "1", "--color=always"], INVALID);
    assert!(run.contains(esc) && run.contains("ptx-opt run: error"), "{run}");
    // NO_COLOR turns off only auto; an explicit --color=always wins.
    let out = bin().arg("--color=always").env("NO_COLOR", "1").stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = out;
    out.stdin.take().unwrap().write_all(INVALID.as_bytes()).unwrap();
    assert!(String::from_utf8_lossy(&out.wait_with_output().unwrap().stderr).contains(esc));
}

// ------------------------------------------------------------------------------------------------ many files

/// `a.ptx`, `sub/b.ptx` (stack code), `sub/deeper/bad.ptx` (invalid), `notes.txt`.
fn tree(name: &str) -> PathBuf {
    let d = scratch(name);
    std::fs::create_dir_all(d.join("in/sub/deeper")).unwrap();
    std::fs::write(d.join("in/a.ptx"), VALID).unwrap();
    std::fs::write(d.join("in/sub/b.ptx"), STACK).unwrap();
    std::fs::write(d.join("in/sub/deeper/bad.ptx"), INVALID).unwrap();
    std::fs::write(d.join("in/notes.txt"), "not PTX").unwrap();
    std::fs::write(d.join("extra.ptx"), VALID).unwrap();
    d
}

#[test]
fn optimizes_many_files_into_a_mirrored_tree() {
    let d = tree("batch");
    let out = bin().current_dir(&d).args(["-O2", "in", "extra.ptx", "--out-dir", "out"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "one file failed: {err}");
    assert!(out.stdout.is_empty());
    // The failure is reported with its diagnostic; the others are written.
    assert!(err.contains("error: unknown instruction `frobnicate`") && err.contains("--> in/sub/deeper/bad.ptx:6:2"), "{err}");
    let (_, b_expected, _) = run_with_stdin(&["-O2"], STACK);
    assert_eq!(std::fs::read_to_string(d.join("out/sub/b.ptx")).unwrap(), b_expected);
    assert!(std::fs::read_to_string(d.join("out/a.ptx")).unwrap().contains(".entry k()"));
    assert!(std::fs::read_to_string(d.join("out/extra.ptx")).unwrap().contains(".entry k()"));
    assert!(!d.join("out/sub/deeper/bad.ptx").exists() && !d.join("out/notes.txt").exists());
    // The last line sums it up: 3 ok, 1 failed; 3 kernels; instructions before and after.
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("ptx-opt: 3 files ok, 1 failed; 3 kernels; "), "{last}");
    let nums: Vec<usize> = last.split("; ").nth(2).unwrap().split(' ').take(3).filter_map(|w| w.parse().ok()).collect();
    assert_eq!(nums.len(), 2, "{last}");
    assert!(nums[1] < nums[0], "the stack code shrank: {last}");
    assert!(last.ends_with(" s"), "{last}");
    // Not a terminal: no progress bar drawn.
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
    // All good: exit 0; the summary in JSON with --error-format=json.
    std::fs::remove_file(d.join("in/sub/deeper/bad.ptx")).unwrap();
    let out = bin().current_dir(&d).args(["in", "--out-dir=out", "--error-format=json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&out.stderr).trim()).unwrap();
    assert_eq!((v["summary"]["files_ok"].as_u64(), v["summary"]["files_failed"].as_u64()), (Some(2), Some(0)));
}

#[test]
fn many_inputs_need_an_output_directory() {
    let d = tree("batch-usage");
    for (args, expected) in [
        (&["in/a.ptx", "extra.ptx"][..], "2 inputs need --out-dir DIR"),
        (&["in/a.ptx", "extra.ptx", "-o", "x.ptx"][..], "-o names one output file, but 2 inputs were given"),
        (&["in"][..], "`in` is a directory: give --out-dir DIR"),
        (&["in", "-o", "x.ptx"][..], "`in` is a directory: give --out-dir DIR"),
        (&["in", "-o", "x.ptx", "--out-dir", "out"][..], "'-o <PATH>' cannot be used with '--out-dir <DIR>'"),
    ] {
        let out = bin().current_dir(&d).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{err}");
        assert!(!d.join("x.ptx").exists() && !d.join("out").exists());
    }
    // `run` on a directory names it as one.
    let out = bin().current_dir(&d).args(["run", "in", "--kernel", "k", "--grid", "1", "--block", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ptx-opt run: `in` is a directory, not a PTX file"));
}

#[test]
fn verifies_many_files_without_writing() {
    let d = tree("batch-verify");
    let out = bin().current_dir(&d).args(["--verify", "in", "extra.ptx"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("in/sub/deeper/bad.ptx:6:2"), "{err}");
    assert!(err.lines().last().unwrap().starts_with("ptx-opt: 3 files verified, 1 failed; 3 kernels; "), "{err}");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2, "nothing written");
}

// ------------------------------------------------------------------------------------------------ run: arguments

#[test]
fn run_takes_either_spelling_and_asks_for_its_input() {
    let mut args: Vec<String> = SCALE_ARGS.iter().map(|a| a.to_string()).collect();
    args.push("bytes:0000000007000000".into());
    let joined: Vec<String> = args.iter().enumerate().filter_map(|(k, a)| match (a.starts_with("--"), args.get(k + 1)) {
        (true, Some(v)) => Some(format!("{a}={v}")),
        _ if k > 0 && args[k - 1].starts_with("--") => None,
        _ => Some(a.clone()),
    }).collect();
    assert!(joined.contains(&"--kernel=scale".to_string()), "{joined:?}");
    let (code, out, err) = run_with_stdin(&joined.iter().map(String::as_str).collect::<Vec<_>>(), SCALE);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[17, 27, 37, 47]"), "{out}");
    let (code, _, err) = run_with_stdin(&["run", "--kernel", "scale", "--grid", "1", "--block", "4"], SCALE);
    assert_eq!(code, 2);
    assert_eq!(err, "ptx-opt run: which PTX file? give INPUT, a path (or `-` for standard input)\nsee `ptx-opt run --help`\n");
}

#[test]
fn run_checks_arguments_against_the_parameter_types() {
    let base = ["run", "-", "--kernel", "scale", "--grid", "1", "--block", "4", "--arg", "buf:u32:4=1,2,3,4", "--arg", "buf:u32:4=zeros"];
    for (extra, expected) in [
        (&["--arg", "f32:3", "--arg", "bytes:0000000007000000"][..], "ptx-opt run: --arg 3 is a .f32 scalar, but parameter 3 of `scale` is `.u32 k` (pass u32:VALUE)"),
        (&["--arg", "u32:3", "--arg", "u64:7"][..], "ptx-opt run: --arg 4 is a .u64 scalar, but parameter 4 of `scale` is `.b8 bias[8]` (pass its 8 bytes as bytes:HEX)"),
        (&["--arg", "buf:u32:1=zeros", "--arg", "bytes:0000000007000000"][..], "ptx-opt run: --arg 3 is a buffer of .u32, but parameter 3 of `scale` is `.u32 k`"),
        (&["--arg", "u32:3"][..], "ptx-opt run: kernel `scale` takes 4 parameter(s) (.u64 in, .u64 out, .u32 k, .b8 bias[8]), 3 --arg given"),
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let (code, out, err) = run_with_stdin(&args, SCALE);
        assert_eq!(code, 1, "{extra:?}: {err}");
        assert!(out.is_empty());
        assert!(err.starts_with(expected), "{extra:?}: {err}");
    }
}

#[test]
fn run_spells_non_finite_floats_one_way() {
    let keep = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\tret;\n}\n";
    let (code, out, err) = run_with_stdin(&["run", "-", "--kernel", "k", "--grid", "1", "--block", "1", "--arg", "buf:f32:4=0x7f800000,0xff800000,0x7fc00000,0xffffffff"], keep);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["values"], serde_json::json!(["inf", "-inf", "nan", "nan"]));
    assert_eq!(v[0]["bits"][3], "0xffffffff");
    let (_, help, _) = run_with_stdin(&["run", "--help"], "");
    assert!(help.contains("\"inf\", \"-inf\" and \"nan\""), "{help}");
}

/// A corpus module: NVRTC's `k_warp` (7 kernels, line info, 16 KB).
fn k_warp() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ptx-opt/tests/data/k_warp.sm_80.lineinfo.ptx")
}

#[test]
fn reduce_shrinks_a_corpus_file_while_the_test_holds() {
    let d = scratch("reduce");
    let output = d.join("small.ptx");
    let out = bin().current_dir(&d).args(["reduce", "--test", "grep -q mul.wide.u32"]).arg(k_warp()).arg("-o").arg(&output).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let small = std::fs::read_to_string(&output).unwrap();
    assert!(small.contains("mul.wide.u32"), "{small}");
    assert!(small.lines().count() <= 12, "{small}");
    // The result is valid PTX: the optimize command verifies it.
    let (code, _, verify_err) = run_with_stdin(&["--verify", output.to_str().unwrap()], "");
    assert_eq!(code, 0, "{verify_err}");
    // One summary line: sizes before and after, tests, time.
    let summary = err.lines().last().unwrap_or_default();
    assert!(summary.starts_with("ptx-opt reduce: 16118 -> ") && summary.contains("666 -> ") && summary.contains(" tests, "), "{err}");
    // No candidate file is left behind where the test ran.
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
}

#[test]
fn reduce_pipelines_name_the_candidate_as_dollar_zero() {
    let d = scratch("reduce-pipe");
    let output = d.join("small.ptx");
    let test = "grep -c 'shfl.sync' \"$0\" | grep -qv '^0$'";
    let out = bin().current_dir(&d).args(["reduce", "--test", test, "--max-tests", "5"]).arg(k_warp()).arg("-o").arg(&output).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let small = std::fs::read_to_string(&output).unwrap();
    assert!(small.contains("shfl.sync"), "{small}");
    assert!(err.contains("5 tests") && err.contains("stopped at --max-tests 5"), "{err}");
}

#[test]
fn reduce_refuses_uninteresting_or_invalid_input_and_its_own_input_as_output() {
    let d = scratch("reduce-refuse");
    let output = d.join("small.ptx");
    let out = bin().current_dir(&d).args(["reduce", "--test", "grep -q frobnicate"]).arg(k_warp()).arg("-o").arg(&output).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the test does not hold on the input"), "{err}");
    assert!(!output.exists());

    let input = d.join("bad.ptx");
    std::fs::write(&input, INVALID).unwrap();
    let out = bin().current_dir(&d).args(["reduce", "--test", "true"]).arg(&input).arg("-o").arg(&output).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("unknown instruction `frobnicate`") && err.contains("not valid PTX"), "{err}");
    assert!(!output.exists());

    std::fs::write(&input, VALID).unwrap();
    for args in [&["--test", "true", "-o", "bad.ptx"][..], &["--test", "true", "-o", "./bad.ptx"][..], &["-o", "x.ptx"][..], &["--test", "true", "-o", "x.ptx", "--timeout", "-1"][..]] {
        let out = bin().current_dir(&d).arg("reduce").arg("bad.ptx").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("ptx-opt reduce: ") && err.ends_with("see `ptx-opt reduce --help`\n"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&input).unwrap(), VALID);
}

/// A kernel with work for the engine (`x ^ x` is `self-zero`, then `x + 0`)
/// and for `dce` (a load nobody reads).
const REDUNDANT: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\txor.b32 %r2, %r1, %r1;\n\tadd.s32 %r3, %r1, %r2;\n\tld.global.u32 %r4, [%rd2+4];\n\tst.global.u32 [%rd2], %r3;\n\tret;\n}\n";

#[test]
fn stats_show_the_passes_and_rules_per_function() {
    let (code, out, err) = run_with_stdin(&["--stats"], REDUNDANT);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".entry k"));
    let row = err.lines().find(|l| l.starts_with("k ")).unwrap_or_default();
    assert!(row.contains("8 -> 6 (-2)") && row.contains("12 -> 12") && row.contains("egraph 1") && row.contains("dce 1"), "{err}");
    assert!(err.lines().any(|l| l.starts_with("k ") && l.contains("self-zero 1")), "{err}");

    let (code, _, err) = run_with_stdin(&["--stats=json"], REDUNDANT);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&err).unwrap_or_else(|e| panic!("{e}: {err}"));
    let k = &j["functions"][0];
    assert_eq!((k["name"].as_str(), k["before"]["instructions"].as_u64(), k["after"]["instructions"].as_u64()), (Some("k"), Some(8), Some(6)));
    let passes: Vec<(&str, u64)> = k["passes"].as_array().unwrap().iter().map(|p| (p["pass"].as_str().unwrap(), p["changes"].as_u64().unwrap())).collect();
    assert_eq!(passes, [("egraph", 1), ("dce", 1)]);
    assert!(k["rules"].as_array().unwrap().iter().any(|r| r["rule"] == "self-zero" && r["count"] == 1), "{k}");

    // A corpus file where a known rule fires: division by a constant.
    let d = scratch("stats-file");
    let stats = d.join("stats.json");
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/integer.ptx");
    let out = bin().arg(&input).arg("--stats-file").arg(&stats).arg("-o").arg(d.join("out.ptx")).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "the statistics go to the file");
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let fired: Vec<&str> = j["functions"].as_array().unwrap().iter().flat_map(|f| f["rules"].as_array().unwrap().iter().map(|r| r["rule"].as_str().unwrap())).collect();
    assert!(fired.contains(&"div-by-constant"), "{j}");

    // Many inputs: one document with every file, and each file's remarks.
    std::fs::write(d.join("redundant.ptx"), REDUNDANT).unwrap();
    let out = bin().arg(d.join("redundant.ptx")).arg(&input).args(["--stats=json", "--remarks=dce", "--out-dir"]).arg(d.join("many")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("redundant.ptx:13: remark: dce changed `k`"), "{err}");
    let doc: String = err.lines().skip_while(|l| *l != "{").take_while(|l| !l.starts_with("ptx-opt: ")).collect::<Vec<_>>().join("\n");
    let j: serde_json::Value = serde_json::from_str(&doc).unwrap_or_else(|e| panic!("{e}: {err}"));
    let files: Vec<&str> = j["files"].as_array().unwrap().iter().map(|f| f["file"].as_str().unwrap()).collect();
    assert!(files.len() == 2 && files[0].ends_with("redundant.ptx") && files[1].ends_with("integer.ptx"), "{files:?}");

    // Not with --verify; a filter must be a regular expression.
    for args in [&["--verify", "--stats"][..], &["--remarks=("][..]] {
        let (code, _, err) = run_with_stdin(args, REDUNDANT);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
}

#[test]
fn remarks_name_the_pass_the_function_and_the_input_lines() {
    let (code, _, err) = run_with_stdin(&["--remarks"], REDUNDANT);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("<stdin>:11: remark: egraph changed `k`: 2 instructions removed, 1 added; rules: ") && err.contains("self-zero 1"), "{err}");
    assert!(err.contains("<stdin>:11") && err.contains("- xor.b32 %r2, %r1, %r1;"), "{err}");
    assert!(err.contains("<stdin>:13: remark: dce changed `k`: 1 instruction removed, 0 added"), "{err}");
    assert!(err.lines().any(|l| l.trim_start().starts_with("<stdin>:13") && l.ends_with("- ld.global.u32 %r4, [%rd2+4];")), "{err}");

    // A filter picks passes; JSON lines with --error-format=json.
    let (code, _, err) = run_with_stdin(&["--remarks=^dce$", "--error-format=json"], REDUNDANT);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> = err.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert_eq!((lines[0]["pass"].as_str(), lines[0]["line"].as_u64(), lines[0]["changes"][0]["op"].as_str()), (Some("dce"), Some(13), Some("-")));

    // Missed: the engine's rules fired and it kept the input.
    let (code, _, err) = run_with_stdin(&["--remarks-missed"], ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry m(.param .u64 p)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n\tadd.s32 %r2, %r1, 5;\n\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("remark (missed): egraph kept `m` as it was: rules fired ("), "{err}");
}

/// ptxas as `ptx-opt check` finds it; `None` (and a note) when it is not installed.
fn ptxas_or_skip(test: &str) -> Option<PathBuf> {
    match ptx_opt_cli::ptx_tools::locate() {
        Ok(t) => Some(t.ptxas),
        Err(m) => {
            eprintln!("{test}: skipped: {m}");
            None
        }
    }
}

#[test]
fn check_compares_the_sass_of_input_and_output_per_kernel() {
    if ptxas_or_skip("check_compares_the_sass_of_input_and_output_per_kernel").is_none() {
        return;
    }
    let saxpy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/saxpy-O0.ptx");
    let out = bin().arg("check").arg(&saxpy).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.lines().next().unwrap_or_default().ends_with("-arch=sm_80 -O3"), "{stdout}");
    // The stack of clang -O0 goes: fewer instructions and registers.
    let row: Vec<&str> = stdout.lines().find(|l| l.starts_with("saxpy ")).unwrap_or_default().split_whitespace().collect();
    let (before, after): (u64, u64) = (row[1].parse().unwrap(), row[2].parse().unwrap());
    assert!(after < before, "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("total ")), "{stdout}");

    // A corpus file with a target older than sm_75 and several kernels; -O0 changes nothing.
    let legacy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/legacy-1x.ptx");
    let out = bin().arg("check").arg(&legacy).arg("-O0").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("-arch=sm_75") && stdout.contains("assembled for sm_75"), "{stdout}");
    let rows: Vec<&str> = stdout.lines().skip(2).collect();
    assert!(rows.len() >= 3 && rows.iter().all(|r| r.split_whitespace().nth(3) == Some("0")), "{stdout}");
}

#[test]
fn check_fails_when_the_output_does_not_assemble_or_ptxas_is_missing() {
    let Some(ptxas) = ptxas_or_skip("check_fails_when_the_output_does_not_assemble_or_ptxas_is_missing") else { return };
    let d = scratch("check");
    // A ptxas that assembles the input and rejects the optimizer's output.
    let fake = d.join("ptxas");
    std::fs::write(&fake, format!("#!/bin/sh\nfor a; do last=$a; done\ncase $last in *output.ptx) echo \"ptxas fatal   : planted failure in $last\" >&2; exit 255;; esac\nexec '{}' \"$@\"\n", ptxas.display())).unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    let saxpy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/saxpy.ptx");
    let out = bin().env("PTXAS", &fake).arg("check").arg(&saxpy).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("the -O2 output does not assemble") && stderr.contains("planted failure"), "{stderr}");
    assert!(stdout.is_empty());

    let out = bin().env("PTXAS", d.join("missing")).arg("check").arg(&saxpy).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("tools/setup-ptx-tools.sh"), "{stderr}");
}

#[test]
fn reduce_and_check_usage_errors_name_their_subcommand() {
    for (args, command) in [(&["reduce", "k.ptx", "--test", "true"][..], "ptx-opt reduce"), (&["check"][..], "ptx-opt check"), (&["check", "k.ptx", "-O9"][..], "ptx-opt check")] {
        let (code, out, err) = run_with_stdin(args, "");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.starts_with(&format!("{command}: ")) && err.ends_with(&format!("see `{command} --help`\n")), "{err}");
    }
    let (code, out, _) = run_with_stdin(&["reduce", "--help"], "");
    assert_eq!(code, 0);
    assert!(out.contains("--test <CMD>") && out.contains("$0") && out.contains("--max-tests <N>") && out.contains("--timeout <SECS>"), "{out}");
}
