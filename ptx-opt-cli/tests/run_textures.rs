//! `ptx-opt run` with textures, samplers and surfaces as users write them:
//! `--texture NAME:SPEC` and `--arg tex:SPEC`, and the errors for specs
//! that do not parse, names the launch leaves unbound and kinds that do not
//! match.

use std::io::Write;
use std::process::{Command, Stdio};

/// Reads texture `tex` (module-scope) and the texture object parameter `obj`
/// at texel 1 (integer coordinates) into out[0] and out[1].
const KERNEL: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.global .texref tex;\n.visible .entry k(.param .u64 out, .param .u64 obj)\n{\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [out];\n\tld.param.u64 %rd2, [obj];\n\tmov.u32 %r1, 1;\n\ttex.1d.v4.s32.s32 {%r2, %r3, %r4, %r5}, [tex, {%r1}];\n\ttex.1d.v4.u32.s32 {%r6, %r7, %r8, %r9}, [%rd2, {%r1}];\n\tst.global.v2.u32 [%rd1], {%r2, %r6};\n\tret;\n}\n";

fn run(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptx-opt")).arg("run").arg("-").args(["--kernel", "k", "--grid", "1", "--block", "1"]).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let _ = child.stdin.take().unwrap().write_all(KERNEL.as_bytes());
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn textures_bound_by_name_and_as_arguments() {
    let (code, out, err) = run(&["--arg", "buf:u32:2=zeros", "--arg", "tex:format=u16,size=3,data=7/8/9", "--texture", "tex:format=s8,size=2,data=-1/-5"]);
    assert_eq!(code, 0, "{err}");
    // s8 -5 sign-extends; u16 8 zero-extends.
    assert!(out.contains("\"values\": [4294967291, 8]"), "{out}");
}

#[test]
fn texture_errors_are_clear() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--arg", "buf:u32:2=zeros", "--arg", "tex:format=u16,size=3", "--texture", "tex:format=f33,size=2"], 2, "`f33` is not a texel format"),
        (&["--arg", "buf:u32:2=zeros", "--arg", "tex:size=3"], 2, "format=... is required"),
        (&["--arg", "buf:u32:2=zeros", "--arg", "tex:format=u16,size=3"], 1, "kernel `k` uses a name the launch does not bind: texture `tex`"),
        (&["--arg", "buf:u32:2=zeros", "--arg", "tex:format=u16,size=3", "--surface", "tex:format=u32,size=2"], 1, "`tex` is a texture, the launch binds a surface to it"),
        (&["--arg", "buf:u32:2=zeros", "--arg", "tex:format=u16,size=3", "--texture", "other:format=u32,size=2"], 1, "the module declares no texture, sampler or surface of that name (it declares: texture `tex`)"),
        (&["--arg", "buf:u32:2=zeros", "--arg", "tex:format=u16,size=3", "--texture", "tex:format=f32,size=2,address=wrap"], 1, "the wrap and mirror address modes need normalized coordinates"),
        (&["--arg", "buf:u32:2=zeros", "--arg", "u64:0", "--texture", "tex:format=s8,size=2"], 1, "0x0 is not a texture, sampler or surface handle"),
    ];
    for (args, want_code, want) in cases {
        let (code, _, err) = run(args);
        assert_eq!(code, *want_code, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
