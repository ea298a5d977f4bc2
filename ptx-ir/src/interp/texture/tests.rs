//! Launches with textures through the library API: bad launch descriptions
//! are refused with clear messages; 3d and array textures, `tld4`,
//! normalized-float reads and surface arrays give the manual's values.

use crate::interp::texture::{AddressMode, ChannelType, Filter, TexelFormat};
use crate::interp::{run, Binding, KernelArg, Launch, RunError, RunOutput, TexelData, TextureDesc};

fn go(text: &str, setup: impl FnOnce(&mut Launch)) -> Result<RunOutput, RunError> {
    let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap();
    let mut l = Launch::new("k", [1, 1, 1], [1, 1, 1]);
    l.buffers.push(vec![0; 64]);
    l.args.push(KernelArg::Buffer(0));
    setup(&mut l);
    run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l)
}

fn words(o: &RunOutput) -> Vec<u32> {
    o.buffers[0].bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn f32_texture(size: &[u32], values: &[f32]) -> TextureDesc {
    let mut t = TextureDesc::new(TexelFormat::new(ChannelType::F32, 1), size);
    t.data = TexelData::Bytes(values.iter().flat_map(|v| v.to_le_bytes()).collect());
    t
}

#[test]
fn bad_launch_descriptions_are_refused() {
    let text = format!("{HEAD}.global .texref tex;\n.visible .entry k(.param .u64 out, .param .texref t)\n{{\n\tret;\n}}\n");
    let launch_error = |setup: &dyn Fn(&mut Launch)| match go(&text, setup) {
        Err(RunError::Launch(m)) => m,
        other => panic!("{other:?}"),
    };
    let ok = |l: &mut Launch| {
        l.textures.push(f32_texture(&[2], &[1.0, 2.0]));
        l.args.push(KernelArg::Handle(Binding::Texture(0)));
    };
    assert!(go(&text, ok).is_ok());
    let m = launch_error(&|l: &mut Launch| l.args.push(KernelArg::Buffer(0)));
    assert!(m.contains("parameter 1 (`t`) is a .texref: pass a texture handle"), "{m}");
    let m = launch_error(&|l: &mut Launch| l.args.push(KernelArg::Handle(Binding::Texture(3))));
    assert!(m.contains("texture 3 does not exist (the launch has 0 textures)"), "{m}");
    let m = launch_error(&|l: &mut Launch| {
        ok(l);
        l.textures[0].data = TexelData::Bytes(vec![0; 7]);
    });
    assert!(m.contains("its data has 7 bytes, the texels need 8"), "{m}");
    let m = launch_error(&|l: &mut Launch| {
        ok(l);
        l.textures[0].format = TexelFormat::new(ChannelType::U8, 4);
        l.textures[0].sampler.filter = Filter::Linear;
    });
    assert!(m.contains("linear filtering needs floating-point texels or normalized-float reads"), "{m}");
    let m = launch_error(&|l: &mut Launch| {
        ok(l);
        l.bindings.push(("tex".into(), Binding::Sampler(0)));
    });
    assert!(m.contains("binding `tex`: sampler 0 does not exist"), "{m}");
}

/// tex.3d (nearest, texel (1,2,1) of a 2x3x2 texture holds 1 + 2*2 + 1*6 = 11),
/// tex.a2d (layer 1), and tld4.r's footprint in the manual's order
/// (counter-clockwise from the lower left).
#[test]
fn three_d_arrays_and_gather() {
    let text = format!(
        "{HEAD}.global .texref t3;\n.global .texref ta;\n.visible .entry k(.param .u64 out)\n{{\n\t.reg .f32 %f<20>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [out];\n\tmov.f32 %f1, 0f3FC00000;\n\tmov.f32 %f2, 0f40200000;\n\ttex.3d.v4.f32.f32 {{%f3, %f4, %f5, %f6}}, [t3, {{%f1, %f2, %f1, %f1}}];\n\tmov.b32 %r1, 1;\n\tmov.b32 %r2, 1065353216;\n\ttex.a2d.v4.f32.f32 {{%f7, %f8, %f9, %f10}}, [ta, {{%r1, %r2, %r2, %r2}}];\n\tmov.f32 %f11, 0f3F800000;\n\ttld4.r.2d.v4.f32.f32 {{%f12, %f13, %f14, %f15}}, [t3, {{%f11, %f11}}];\n\tst.global.v4.f32 [%rd1], {{%f3, %f7, %f12, %f13}};\n\tst.global.v2.f32 [%rd1+16], {{%f14, %f15}};\n\tret;\n}}\n"
    );
    let out = go(&text, |l| {
        l.textures.push(f32_texture(&[2, 3, 2], &(0..12).map(|v| v as f32).collect::<Vec<_>>()));
        let mut a = f32_texture(&[2, 2], &[0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]);
        a.layers = Some(2);
        a.sampler.address = [AddressMode::ClampToEdge; 3];
        l.textures.push(a);
        l.bindings.push(("t3".into(), Binding::Texture(0)));
        l.bindings.push(("ta".into(), Binding::Texture(1)));
    });
    // tld4 of a 3d texture is not a 2d gather: tld4 only takes .2d textures here.
    let err = out.unwrap_err();
    assert!(matches!(&err, RunError::Undefined { message, .. } if message.contains("a .2d access to a 3d texture")), "{err:?}");
    let text = text.replace("[t3, {%f11, %f11}]", "[ta2, {%f11, %f11}]").replace(".global .texref ta;", ".global .texref ta;\n.global .texref ta2;");
    let out = go(&text, |l| {
        l.textures.push(f32_texture(&[2, 3, 2], &(0..12).map(|v| v as f32).collect::<Vec<_>>()));
        let mut a = f32_texture(&[2, 2], &[0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]);
        a.layers = Some(2);
        l.textures.push(a);
        l.textures.push(f32_texture(&[2, 2], &[0.0, 1.0, 2.0, 3.0]));
        l.bindings.push(("t3".into(), Binding::Texture(0)));
        l.bindings.push(("ta".into(), Binding::Texture(1)));
        l.bindings.push(("ta2".into(), Binding::Texture(2)));
    })
    .unwrap();
    let f: Vec<f32> = words(&out).iter().map(|w| f32::from_bits(*w)).collect();
    // (1.5, 2.5, 1.5) -> texel (1, 2, 1) = 11; layer 1 at (1, 1) = 13; the footprint at
    // (1, 1) is texels (0,0) (1,0) (0,1) (1,1): lower left (0,1)=2, (1,1)=3, (1,0)=1, (0,0)=0.
    assert_eq!(&f[..6], &[11.0, 13.0, 2.0, 3.0, 1.0, 0.0]);
    assert!(out.buffers[0].quality[..24].iter().all(|q| *q == crate::eval::Quality::Exact));
}

/// u8 texels read as normalized floats: 0 -> 0.0, 255 -> 1.0 exactly, 51 -> 0.2 (within an ulp).
#[test]
fn normalized_float_reads() {
    let text = format!("{HEAD}.global .texref t;\n.visible .entry k(.param .u64 out)\n{{\n\t.reg .f32 %f<6>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, 0;\n\ttex.1d.v4.f32.s32 {{%f1, %f2, %f3, %f4}}, [t, {{%r1}}];\n\tst.global.v4.f32 [%rd1], {{%f1, %f2, %f3, %f4}};\n\tret;\n}}\n");
    let out = go(&text, |l| {
        let mut t = TextureDesc::new(TexelFormat::new(ChannelType::U8, 4), &[1]);
        t.data = TexelData::Bytes(vec![0, 255, 51, 7]);
        t.read_normalized = true;
        l.textures.push(t);
        l.bindings.push(("t".into(), Binding::Texture(0)));
    })
    .unwrap();
    let f: Vec<f32> = words(&out).iter().map(|w| f32::from_bits(*w)).collect();
    assert_eq!(&f[..3], &[0.0, 1.0, 0.2]);
    assert_eq!(out.buffers[0].quality[0], crate::eval::Quality::Exact);
    assert_eq!(out.buffers[0].quality[4], crate::eval::Quality::Exact);
    assert_eq!(out.buffers[0].quality[8], crate::eval::Quality::Approx { ulps: 1 });
}
