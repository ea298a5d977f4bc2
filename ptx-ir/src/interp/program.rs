//! A module prepared for running: function layouts (registers, labels,
//! local and parameter variables), module variables placed in memory, and
//! the per-CTA scheduler.

use super::memory::{Flat, Global, FUNC_BASE};
use super::{BufferOut, KernelArg, Launch, RunError, RunOutput};
use crate::eval::Val;
use crate::ir::{FuncKind, Function, Item, LabelId, Module, Name, Stmt, VarDecl};
use crate::isa::{ScalarType, StateSpace};
use crate::parse::SourceMap;
use crate::source::{LineIndex, Span};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Where a named variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarLoc {
    /// A global address (also its generic address).
    Global(u64),
    Const(u64),
    Shared(u64),
    /// An offset in the frame's local area.
    Local(u64),
    /// A module-scope `.local` variable: an offset from the start of every
    /// thread's local memory (before the kernel's frame).
    ModuleLocal(u64),
    /// An offset in the frame's parameter area.
    Param(u64),
    /// A function's address.
    Func(u64),
    /// A `.reg` parameter: the register.
    Reg(u32),
}

/// Size and alignment of a declared variable.
pub fn var_size(d: &VarDecl, dims: &[Option<u64>]) -> (usize, usize) {
    let elem = (d.ty.bits().max(8) / 8) as usize * d.vector.unwrap_or(1) as usize;
    let count: u64 = dims.iter().map(|x| x.unwrap_or(0)).product::<u64>().max(if dims.is_empty() { 1 } else { 0 });
    let align = d.align().map(|a| a as usize).unwrap_or(elem.max(1));
    (elem * count as usize, align)
}

/// One function, laid out for execution.
pub struct FuncLayout<'m> {
    pub f: &'m Function,
    /// First value slot of each register; a vector register has one slot per lane.
    pub reg_base: Vec<u32>,
    pub nslots: usize,
    /// The statement each label names.
    pub label_stmt: Vec<Option<usize>>,
    /// `.branchtargets` tables.
    pub tables: FxHashMap<LabelId, Vec<LabelId>>,
    /// Variables declared in the function (locals, body `.param`s, signature
    /// parameters), with the scope that declares each: nested `{ }` blocks
    /// may declare the same name again (compilers' call sequences do).
    pub vars: FxHashMap<Name, SmallVec<[(u32, VarLoc); 1]>>,
    /// The scope of each statement (0: the function's), and each scope's parent.
    pub stmt_scope: Vec<u32>,
    pub scope_parent: Vec<u32>,
    /// Size of each parameter-space variable, by offset.
    pub param_sizes: FxHashMap<u64, usize>,
    pub local_size: usize,
    pub param_size: usize,
    /// The signature's return and ordinary parameters, in order, with their places.
    pub ret_params: Vec<VarLoc>,
    pub params: Vec<VarLoc>,
    /// Statement spans, for messages.
    pub spans: Vec<Span>,
    /// What each instruction statement needs at every execution, worked
    /// out once (`None` for other statements).
    pub decoded: Vec<Option<Decoded>>,
    /// Every statement pre-decoded for the fast path (fast.rs).
    pub fast: Vec<super::decode::FastIns>,
}

/// An instruction prepared for execution.
pub struct Decoded {
    /// The instruction as the module's target reads it
    /// ([`crate::eval::effective`]), when that differs from what is written.
    pub effective: Option<Box<crate::ir::Instruction>>,
    /// The type each operand position expects ([`operand_type`]).
    pub operand_types: SmallVec<[Option<ScalarType>; 6]>,
}

/// A module laid out and pre-decoded for launches that pass a given number
/// of buffers (their allocations come first in global memory, so the
/// addresses of module variables depend on how many there are): made once,
/// it runs any number of such launches ([`Program::run`]).
pub struct Program<'m> {
    pub module: &'m Module,
    pub funcs: Vec<FuncLayout<'m>>,
    pub func_index: FxHashMap<&'m str, usize>,
    pub globals: FxHashMap<Name, VarLoc>,
    /// Global memory before a launch: an empty allocation for each buffer,
    /// then the module variables with their initial contents.
    pub global_mem: Global,
    pub const_mem: Flat,
    /// Static shared memory per CTA (module and function `.shared` variables).
    pub static_shared_size: usize,
    /// Where dynamic shared memory (`.extern .shared x[]`) starts.
    pub dynamic_shared_at: usize,
    /// Does the module declare `.extern .shared` arrays (dynamic shared memory)?
    pub has_dynamic_shared: bool,
    pub file: String,
    /// The module's text, and its line index, made on the first message
    /// that needs a position (most runs need none).
    pub text: &'m [u8],
    lines: std::cell::OnceCell<LineIndex>,
    /// Allocation index of each launch buffer.
    pub buffer_allocs: Vec<usize>,
    /// Bytes of module-scope `.local` variables at the start of each thread's local memory.
    pub module_local_size: usize,
    /// The module's target-dependent rules (sm_1x flushing ...).
    pub dialect: crate::eval::Dialect,
    /// Run pre-decoded statements through the fast path (fast.rs)?
    pub fast_path: bool,
}

/// A program bound to one launch: the kernel, the CTA's shared memory
/// size, and the launch's textures, samplers and surfaces. The rest is
/// the program's ([`Deref`](std::ops::Deref)).
pub struct Bound<'p, 'm> {
    pub program: &'p Program<'m>,
    pub kernel: usize,
    /// Shared memory per CTA: the static variables, then the launch's dynamic shared memory.
    pub shared_size: usize,
    /// The launch's textures, samplers and surfaces.
    pub resources: super::texture::Resources,
}

impl<'m> std::ops::Deref for Bound<'_, 'm> {
    type Target = Program<'m>;

    fn deref(&self) -> &Program<'m> {
        self.program
    }
}

impl<'m> Program<'m> {
    /// Lays `module` out and pre-decodes it for launches of `buffers`
    /// buffers. `file` and `text` give positions in error messages.
    pub fn prepare(module: &'m Module, map: &SourceMap, file: &str, text: &'m [u8], buffers: usize) -> Result<Program<'m>, RunError> {
        let mut p = Program {
            module,
            dialect: crate::eval::Dialect::of_module(module),
            module_local_size: 0,
            funcs: Vec::new(),
            func_index: FxHashMap::default(),
            globals: FxHashMap::default(),
            global_mem: Global::default(),
            const_mem: Flat::new("constant", 0),
            static_shared_size: 0,
            dynamic_shared_at: 0,
            has_dynamic_shared: false,
            file: file.to_string(),
            text,
            lines: std::cell::OnceCell::new(),
            buffer_allocs: Vec::new(),
            fast_path: true,
        };
        // Launch buffers first: their allocations are 0..n (a launch fills them).
        for k in 0..buffers {
            p.buffer_allocs.push(p.global_mem.allocs.len());
            p.global_mem.alloc(format!("buffer {k}"), Vec::new());
        }
        // Functions get addresses (for indirect calls and function tables).
        let mut fk = 0u64;
        for item in &module.items {
            if let Item::Func(f) = item {
                p.globals.entry(f.name.clone()).or_insert(VarLoc::Func(FUNC_BASE + fk));
                fk += 1;
            }
        }
        // Module variables.
        let mut shared_extern = Vec::new();
        for item in &module.items {
            let Item::Var(g) = item else { continue };
            let d = &g.decl;
            for n in &d.names {
                if p.globals.contains_key(&n.name) && !matches!(p.globals[&n.name], VarLoc::Func(_)) {
                    continue; // an `.extern` declaration and its definition
                }
                let (size, align) = var_size(d, &n.dims);
                let loc = match d.space {
                    StateSpace::Global => VarLoc::Global(p.global_mem.alloc(format!("variable `{}`", n.name), vec![0; size.max(1)])),
                    StateSpace::Const => VarLoc::Const(p.const_mem.grow(size, align) as u64),
                    StateSpace::Shared if n.dims.first() == Some(&None) => {
                        shared_extern.push(n.name.clone());
                        continue;
                    }
                    StateSpace::Shared => {
                        let off = p.static_shared_size.div_ceil(align.max(1)) * align.max(1);
                        p.static_shared_size = off + size;
                        VarLoc::Shared(off as u64)
                    }
                    StateSpace::Local => {
                        let off = p.module_local_size.div_ceil(align.max(1)) * align.max(1);
                        p.module_local_size = off + size;
                        VarLoc::ModuleLocal(off as u64)
                    }
                    // `.tex` references and the like: no storage the interpreter uses.
                    _ => continue,
                };
                p.globals.insert(n.name.clone(), loc);
            }
        }
        // Functions.
        for (k, item) in module.items.iter().enumerate() {
            let Item::Func(f) = item else { continue };
            if f.body.is_none() {
                continue;
            }
            let spans = map.stmts.get(k).cloned().unwrap_or_default();
            let layout = p.layout_function(f, spans);
            p.func_index.insert(&f.name, p.funcs.len());
            p.funcs.push(layout);
        }
        // Dynamic shared memory follows the static variables.
        p.dynamic_shared_at = p.static_shared_size.div_ceil(16) * 16;
        p.has_dynamic_shared = !shared_extern.is_empty();
        for name in shared_extern {
            p.globals.insert(name, VarLoc::Shared(p.dynamic_shared_at as u64));
        }
        for k in 0..p.funcs.len() {
            let fast = super::decode::decode_function(&super::decode::Context { layout: &p.funcs[k], globals: &p.globals });
            p.funcs[k].fast = fast;
        }
        super::init::initialize(&mut p).map_err(RunError::Launch)?;
        Ok(p)
    }

    /// Binds the program to `launch`: finds the kernel, checks the
    /// arguments against its parameters, and places the launch's textures
    /// in `global` (the launch's global memory).
    pub fn bind<'p>(&'p self, launch: &Launch, global: &mut Global) -> Result<Bound<'p, 'm>, RunError> {
        if launch.buffers.len() != self.buffer_allocs.len() {
            return Err(RunError::Launch(format!("the program was prepared for {} buffer(s), the launch gives {}", self.buffer_allocs.len(), launch.buffers.len())));
        }
        let Some(&kernel) = self.func_index.get(launch.kernel.as_str()) else {
            let kernels: Vec<&str> = self.funcs.iter().filter(|f| f.f.kind == FuncKind::Entry).map(|f| &*f.f.name).collect();
            return Err(RunError::Launch(format!("no kernel `{}` with a body in the module (kernels: {})", launch.kernel, kernels.join(", "))));
        };
        if self.funcs[kernel].f.kind != FuncKind::Entry {
            return Err(RunError::Launch(format!("`{}` is a .func, not a kernel (.entry)", launch.kernel)));
        }
        let nparams = self.funcs[kernel].params.len();
        if launch.args.len() != nparams {
            return Err(RunError::Launch(format!("kernel `{}` takes {nparams} parameter(s), {} given", launch.kernel, launch.args.len())));
        }
        let decls = self.funcs[kernel].f.params.iter().flatten().flat_map(|d| d.names.iter().map(move |n| (d, n)));
        for (k, (a, (d, nm))) in launch.args.iter().zip(decls).enumerate() {
            let (size, _) = var_size(d, &nm.dims);
            let what = |given: String| RunError::Launch(format!("parameter {k} (`{}`) is {size} byte(s), {given}", nm.name));
            match a {
                KernelArg::Buffer(i) if *i >= launch.buffers.len() => {
                    return Err(RunError::Launch(format!("argument {k} points to buffer {i}, but only {} were given", launch.buffers.len())));
                }
                KernelArg::Buffer(_) if size != 8 => return Err(what("a buffer pointer is 8".into())),
                KernelArg::Scalar { ty, .. } if type_bytes(*ty) != size => return Err(what(format!("the argument (.{}) is {}", &ty.text()[1..], type_bytes(*ty)))),
                KernelArg::Bytes(b) if b.len() != size => return Err(what(format!("the argument is {}", b.len()))),
                KernelArg::Handle(_) if size != 8 => return Err(what("a handle is 8".into())),
                KernelArg::TensorMap { buffer, .. } if *buffer >= launch.buffers.len() => {
                    return Err(RunError::Launch(format!("argument {k} is a tensor map over buffer {buffer}, but only {} were given", launch.buffers.len())));
                }
                KernelArg::TensorMap { .. } if size != super::tensor::map::MAP_BYTES => return Err(what("a tensor map is 128".into())),
                KernelArg::TensorMap { map, .. } => map.check().map_err(|e| RunError::Launch(format!("argument {k} (`{}`): {e}", nm.name)))?,
                _ => {}
            }
        }
        let resources = super::texture::Resources::new(self.module, launch, self.funcs[kernel].f, global, &self.buffer_allocs, &self.globals).map_err(RunError::Launch)?;
        Ok(Bound { program: self, kernel, shared_size: self.dynamic_shared_at + launch.dynamic_shared, resources })
    }

    fn layout_function(&mut self, f: &'m Function, spans: Vec<Span>) -> FuncLayout<'m> {
        let mut reg_base = Vec::with_capacity(f.regs.len());
        let mut n = 0u32;
        for r in &f.regs {
            reg_base.push(n);
            n += r.vector.unwrap_or(1).max(1) as u32;
        }
        let body = f.body.as_ref().unwrap();
        let mut label_stmt = vec![None; f.labels.len()];
        let mut tables = FxHashMap::default();
        for (k, s) in body.iter().enumerate() {
            match s {
                Stmt::Label(l) => label_stmt[l.0 as usize] = Some(k),
                Stmt::BranchTargets(l, t) => {
                    tables.insert(*l, t.clone());
                }
                _ => {}
            }
        }
        let mut vars: FxHashMap<Name, SmallVec<[(u32, VarLoc); 1]>> = FxHashMap::default();
        let mut param_sizes = FxHashMap::default();
        let mut param = Flat::new("param", 0);
        let mut place_params = |decls: &Option<Vec<VarDecl>>, vars: &mut FxHashMap<Name, SmallVec<[(u32, VarLoc); 1]>>| -> Vec<VarLoc> {
            let mut out = Vec::new();
            for d in decls.iter().flatten() {
                for nm in &d.names {
                    let loc = if d.space == StateSpace::Reg {
                        // `.reg` parameters are registers of the function.
                        match f.regs.iter().position(|r| r.name == nm.name) {
                            Some(r) => VarLoc::Reg(r as u32),
                            None => continue,
                        }
                    } else {
                        let (size, align) = var_size(d, &nm.dims);
                        let off = param.grow(size.max(1), align) as u64;
                        param_sizes.insert(off, size.max(1));
                        VarLoc::Param(off)
                    };
                    vars.entry(nm.name.clone()).or_default().push((0, loc));
                    out.push(loc);
                }
            }
            out
        };
        let ret_params = place_params(&f.ret, &mut vars);
        let params = place_params(&f.params, &mut vars);
        let mut local = Flat::new("local", 0);
        let crate::ir::scopes::ScopeTree { stmt_scope, parent: scope_parent, .. } = crate::ir::scopes::ScopeTree::of(body);
        for (s, &scope) in body.iter().zip(&stmt_scope) {
            // A plain register declaration (held in place) places nothing.
            let Some(d) = (match s {
                Stmt::Decl(d) => d.as_var(),
                _ => None,
            }) else {
                continue;
            };
            for nm in &d.names {
                let (size, align) = var_size(d, &nm.dims);
                let loc = match d.space {
                    StateSpace::Local => VarLoc::Local(local.grow(size, align) as u64),
                    StateSpace::Param => {
                        let off = param.grow(size.max(1), align) as u64;
                        param_sizes.insert(off, size.max(1));
                        VarLoc::Param(off)
                    }
                    StateSpace::Shared => {
                        let off = self.static_shared_size.div_ceil(align.max(1)) * align.max(1);
                        self.static_shared_size = off + size;
                        VarLoc::Shared(off as u64)
                    }
                    StateSpace::Global => VarLoc::Global(self.global_mem.alloc(format!("variable `{}`", nm.name), vec![0; size.max(1)])),
                    StateSpace::Const => VarLoc::Const(self.const_mem.grow(size, align) as u64),
                    _ => continue,
                };
                vars.entry(nm.name.clone()).or_default().push((scope, loc));
            }
        }
        let decoded = body
            .iter()
            .map(|s| match s {
                Stmt::Instr(ins) => Some(Decoded {
                    effective: match crate::eval::effective(ins, &self.dialect) {
                        std::borrow::Cow::Owned(e) => Some(Box::new(e)),
                        std::borrow::Cow::Borrowed(_) => None,
                    },
                    operand_types: (0..ins.operands.len()).map(|k| ins.operand_type(k)).collect(),
                }),
                _ => None,
            })
            .collect();
        FuncLayout { f, reg_base, nslots: n as usize, label_stmt, tables, vars, stmt_scope, scope_parent, param_sizes, local_size: local.bytes.len(), param_size: param.bytes.len(), ret_params, params, spans, decoded, fast: Vec::new() }
    }

    /// `file:line:col` of a statement.
    pub fn position(&self, func: usize, stmt: usize) -> String {
        let span = self.funcs[func].spans.get(stmt).copied().unwrap_or_default();
        let (l, c) = self.lines.get_or_init(|| LineIndex::new(self.text)).line_col(span.start);
        format!("{}:{l}:{c}", self.file)
    }

    /// Runs `launch` (which must pass as many buffers as the program was
    /// prepared for) on a copy of the program's global memory with the
    /// launch's buffers in it.
    pub fn run(&self, launch: &Launch) -> Result<RunOutput, RunError> {
        let mut global = self.global_mem.clone();
        let bound = self.bind(launch, &mut global)?;
        for (&k, b) in self.buffer_allocs.iter().zip(&launch.buffers) {
            global.fill(k, b.clone());
        }
        bound.run(launch, global)
    }
}

impl Bound<'_, '_> {
    /// Runs every CTA of the grid in order, in the launch's global memory.
    fn run(&self, launch: &Launch, mut global: Global) -> Result<RunOutput, RunError> {
        let mut steps = 0u64;
        let [gx, gy, gz] = launch.grid;
        if launch.grid.contains(&0) || launch.block.contains(&0) {
            return Err(RunError::Launch("grid and block dimensions must be at least 1".into()));
        }
        let threads = launch.block.iter().map(|&x| x as u64).product::<u64>();
        if threads > 1024 {
            return Err(RunError::Launch(format!("a block of {threads} threads is more than 1024")));
        }
        // The manual's maximum values of `%ntid` and `%nctaid` per dimension
        // (the optimizer relies on them: `SpecialReg::max_value`).
        use crate::ir::{Selector, SpecialReg};
        for (d, (sel, axis)) in [(Selector::X, "x"), (Selector::Y, "y"), (Selector::Z, "z")].into_iter().enumerate() {
            let (b, g) = (launch.block[d] as u128, launch.grid[d] as u128);
            if let Some(max) = SpecialReg::NTID.max_value(Some(sel)).filter(|m| b > *m) {
                return Err(RunError::Launch(format!("a block dimension of {b} is more than {max}, the largest %ntid.{axis}")));
            }
            if let Some(max) = SpecialReg::NCTAID.max_value(Some(sel)).filter(|m| g > *m) {
                return Err(RunError::Launch(format!("a grid dimension of {g} is more than {max}, the largest %nctaid.{axis}")));
            }
        }
        let mut depends_on_unspecified = None;
        let mut printed = Vec::new();
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    let mut cta = super::exec::Cta::new(self, launch, [x, y, z]);
                    let (g, result) = cta.run(global, &mut steps);
                    global = g;
                    if depends_on_unspecified.is_none() {
                        depends_on_unspecified = cta.unspecified_dependence.take();
                    }
                    printed.append(&mut cta.printed);
                    result?;
                }
            }
        }
        // The run's memory is dropped after: the buffers move out of it.
        let buffers = self
            .buffer_allocs
            .iter()
            .map(|&k| BufferOut { bytes: std::mem::take(&mut global.allocs[k].bytes), quality: std::mem::take(&mut global.allocs[k].quality) })
            .collect();
        Ok(RunOutput { buffers, steps, depends_on_unspecified, printed })
    }
}

impl FuncLayout<'_> {
    /// The variable `name` means at statement `pc`: the declaration of the
    /// innermost enclosing scope.
    pub fn lookup(&self, name: &str, pc: usize) -> Option<VarLoc> {
        let decls = self.vars.get(name)?;
        let mut scope = self.stmt_scope.get(pc).copied().unwrap_or(0);
        loop {
            if let Some((_, loc)) = decls.iter().rev().find(|(s, _)| *s == scope) {
                return Some(*loc);
            }
            if scope == 0 {
                return None;
            }
            scope = self.scope_parent[scope as usize];
        }
    }

    /// The size of the parameter-space variable at `loc`.
    pub fn param_size_at(&self, loc: VarLoc) -> usize {
        match loc {
            VarLoc::Param(o) => self.param_sizes.get(&o).copied().unwrap_or(0),
            _ => 16,
        }
    }
}

/// Registers of a frame: a value per slot.
pub type Regs = Vec<Val>;

/// The bytes a kernel argument puts in its parameter.
pub fn arg_bytes(a: &KernelArg, buffer_addrs: &[u64]) -> Vec<u8> {
    match a {
        KernelArg::Scalar { ty, bits } => bits.to_le_bytes()[..type_bytes(*ty)].to_vec(),
        KernelArg::Buffer(i) => buffer_addrs[*i].to_le_bytes().to_vec(),
        KernelArg::Bytes(b) => b.clone(),
        KernelArg::Handle(h) => super::texture::handle_value(*h).to_le_bytes().to_vec(),
        KernelArg::TensorMap { buffer, offset, map } => {
            let mut m = map.clone();
            m.global_address = buffer_addrs[*buffer].wrapping_add(*offset);
            m.encode().to_vec()
        }
    }
}

/// Width in bytes of a scalar type in memory.
pub fn type_bytes(t: ScalarType) -> usize {
    (t.bits().max(8) / 8) as usize
}

#[cfg(test)]
mod tests {
    use crate::interp::{run, Launch, RunError};

    #[test]
    fn launches_beyond_the_manuals_limits_are_refused() {
        let text = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
        let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap();
        let go = |grid: [u32; 3], block: [u32; 3]| run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &Launch::new("k", grid, block));
        assert!(go([1, 1, 1], [1, 1, 64]).is_ok());
        assert!(matches!(go([1, 1, 1], [1, 1, 65]), Err(RunError::Launch(m)) if m.contains("%ntid.z")));
        assert!(matches!(go([1, 65_536, 1], [1, 1, 1]), Err(RunError::Launch(m)) if m.contains("%nctaid.y")));
        assert!(matches!(go([1, 1, 1], [1025, 1, 1]), Err(RunError::Launch(_))));
    }

    /// A prepared module runs each launch as `run` does, from fresh memory
    /// each time (a module variable the kernel changes starts from its
    /// initializer again), and refuses a launch of another buffer count.
    #[test]
    fn a_prepared_module_runs_launches_as_run_does() {
        use crate::interp::{KernelArg, Prepared};
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n.global .u32 counter = 5;\n.visible .entry k(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, %tid.x;\n\tatom.global.add.u32 %r2, [counter], 1;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tld.global.u32 %r3, [%rd3];\n\tadd.u32 %r3, %r3, %r2;\n\tst.global.u32 [%rd3], %r3;\n\tret;\n}\n";
        let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap();
        let launch = |threads: u32, first: u8| {
            let mut l = Launch::new("k", [1, 1, 1], [threads, 1, 1]);
            l.buffers.push(vec![first; 4 * threads as usize]);
            l.args = vec![KernelArg::Buffer(0)];
            l
        };
        let prepared = Prepared::new(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), 1).unwrap();
        for l in [launch(3, 1), launch(7, 2), launch(3, 1)] {
            let once = run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l);
            assert_eq!(prepared.run(&l), once);
            // Thread 1 adds the counter's second value, 5 + 1, to its word.
            assert_eq!(once.unwrap().buffers[0].bytes[4], l.buffers[0][4] + 6);
        }
        let mut two = launch(3, 1);
        two.buffers.push(vec![0; 4]);
        assert!(matches!(prepared.run(&two), Err(RunError::Launch(m)) if m.contains("prepared for 1 buffer")));
    }

    /// The interpreter's own checks (`ptx-opt run` checks types before it).
    #[test]
    fn arguments_must_match_the_parameters() {
        use crate::interp::KernelArg;
        use crate::isa::ScalarType;
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out, .param .u32 n)\n{\n\tret;\n}\n";
        let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap();
        let go = |args: Vec<KernelArg>| {
            let mut l = Launch::new("k", [1, 1, 1], [1, 1, 1]);
            l.buffers.push(vec![0; 4]);
            l.args = args;
            run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l)
        };
        assert!(matches!(go(vec![KernelArg::Buffer(0)]), Err(RunError::Launch(m)) if m == "kernel `k` takes 2 parameter(s), 1 given"));
        let wide = KernelArg::Scalar { ty: ScalarType::U64, bits: 5 };
        assert!(matches!(go(vec![KernelArg::Buffer(0), wide]), Err(RunError::Launch(m)) if m == "parameter 1 (`n`) is 4 byte(s), the argument (.u64) is 8"));
        assert!(go(vec![KernelArg::Buffer(0), KernelArg::Scalar { ty: ScalarType::U32, bits: 5 }]).is_ok());
    }
}
