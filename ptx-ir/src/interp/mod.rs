//! The reference interpreter: runs a kernel on the CPU, thread by thread,
//! for a given grid, block and parameters.
//!
//! Each thread has its own registers, program counter and call stack; the
//! threads of a CTA run one after another until they block at a barrier or a
//! warp-collective instruction, which completes when every participant has
//! arrived (so divergent control flow and independent thread scheduling
//! behave as on sm_70 and newer for race-free programs). Memory is
//! bounds-checked: global allocations (the kernel's buffers and module
//! variables), constant, shared (per CTA), local (per thread) and parameter
//! spaces, with the generic address space windowing onto them. Pure
//! instructions are computed by [`crate::eval`]; values the manual leaves
//! open (and values computed from them) are tracked as such, so a
//! differential comparison knows which bytes it may compare.
//!
//! Asynchronous copies and mbarriers (`async_copy.rs`, `mbarrier.rs`) run
//! with checks that no thread touches a copy's bytes before it completes;
//! `vprintf` and `__assertfail` are built-ins (`builtins.rs`).
//!
//! Tensor maps come with the launch too ([`KernelArg::TensorMap`]); the
//! tensor copies (`cp.async.bulk.tensor` ...) are in [`tensor`].
//!
//! Textures, samplers and surfaces come with the launch ([`Launch::textures`],
//! [`texture`]). Warp-level matrix instructions (`mma`, `wmma`, `ldmatrix`,
//! `stmatrix`, `movmatrix`) run as warp collectives ([`matrix`]), dense
//! `wgmma.mma_async` as a warpgroup collective with asynchronous completion
//! (`matrix/wgmma/`).
//!
//! An instruction it cannot execute (sparse `wgmma`, `tcgen05`, clusters of more
//! than one CTA ...) stops the run with
//! "unsupported instruction X at line:col" — never a wrong answer.

mod async_copy;
#[cfg(test)]
mod async_tests;
mod builtins;
mod cluster;
mod decode;
mod exec;
mod fast;
mod init;
mod mbarrier;
mod matrix;
pub mod memory;
mod program;
mod special;
pub mod tensor;
pub mod texture;
mod warp;

pub use memory::{Fault, Space};
pub use texture::{Binding, SamplerDesc, TexelData, TextureDesc};

use crate::eval::Quality;
use crate::ir::Module;
use crate::isa::ScalarType;
use crate::parse::SourceMap;
use std::fmt;

/// One kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    /// A scalar of this type (its bits in the low bits).
    Scalar { ty: ScalarType, bits: u128 },
    /// A pointer to buffer `index` of the launch.
    Buffer(usize),
    /// The bytes of a parameter passed by value (a `.b8` array: a struct).
    Bytes(Vec<u8>),
    /// A texture, sampler or surface handle (a `.param .texref` parameter, or
    /// a `.u64` texture object of bindless code): 8 bytes.
    Handle(Binding),
    /// A tensor map (§5.5.8: a `.param .align 64 .b8 name[128]` grid
    /// constant) over buffer `buffer`: the 128 bytes of the interpreter's
    /// encoding ([`tensor::TensorMap::encode`]) with the map's global
    /// address set to the buffer's address plus `offset`.
    TensorMap { buffer: usize, offset: u64, map: tensor::TensorMap },
}

/// How to run a kernel.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<KernelArg>,
    /// Initial contents of the global buffers the arguments point to.
    pub buffers: Vec<Vec<u8>>,
    /// Bytes of dynamic shared memory (for `.extern .shared` arrays).
    pub dynamic_shared: usize,
    /// Stop with an error after this many instructions (all threads together).
    pub max_steps: u64,
    /// Textures and surfaces ([`Binding::Texture`] and [`Binding::Surface`] index them).
    pub textures: Vec<TextureDesc>,
    /// Samplers (independent texturing mode; [`Binding::Sampler`] indexes them).
    pub samplers: Vec<SamplerDesc>,
    /// Module-scope `.texref`/`.samplerref`/`.surfref` (and PTX 1.x `.tex`)
    /// names and what they are bound to.
    pub bindings: Vec<(String, Binding)>,
}

impl Launch {
    pub fn new(kernel: &str, grid: [u32; 3], block: [u32; 3]) -> Launch {
        Launch { kernel: kernel.to_string(), grid, block, args: Vec::new(), buffers: Vec::new(), dynamic_shared: 0, max_steps: DEFAULT_MAX_STEPS, textures: Vec::new(), samplers: Vec::new(), bindings: Vec::new() }
    }
}

/// The default step limit.
pub const DEFAULT_MAX_STEPS: u64 = 100_000_000;

/// A buffer after the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferOut {
    pub bytes: Vec<u8>,
    /// For each byte, whether its value is fully determined by the program
    /// (`Exact`) or not (a NaN of unspecified payload, an approximation, or a
    /// value the manual leaves open).
    pub quality: Vec<Quality>,
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    pub buffers: Vec<BufferOut>,
    /// Instructions executed, over all threads.
    pub steps: u64,
    /// Where control flow or an address first depended on a value that is not
    /// exactly determined (an uninitialized register, an unspecified result,
    /// an approximation, a NaN payload): from there on the run shows one
    /// possible execution, and buffers may differ on hardware even where
    /// marked exact.
    pub depends_on_unspecified: Option<String>,
    /// What `printf` (`vprintf`) printed, in the order the interpreter ran the calls.
    pub printed: Vec<Printed>,
}

/// One `printf` call's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// `ctaid (x,y,z) tid (x,y,z)`.
    pub thread: String,
    pub text: String,
    /// False when the text shows a value that is not exactly determined
    /// (an unspecified or approximate argument, or string bytes): it may
    /// differ on hardware, and a differential comparison skips it.
    pub exact: bool,
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// Bad arguments (unknown kernel, wrong argument count ...).
    Launch(String),
    /// An instruction the interpreter does not execute.
    Unsupported { what: String, at: String },
    /// An out-of-bounds or otherwise invalid memory access.
    Fault { message: String, thread: String, at: String },
    /// Threads wait for each other forever.
    Deadlock(String),
    /// More than `max_steps` instructions.
    StepLimit { limit: u64, thread: String, at: String },
    /// A thread executed `trap`.
    Trap { thread: String, at: String },
    /// The program did something the manual calls undefined (a warp
    /// collective executed by a lane outside its member mask ...).
    Undefined { message: String, thread: String, at: String },
    /// A thread called `__assertfail` (a failed `assert`).
    AssertFailed { message: String, file: String, line: u32, function: String, thread: String, at: String },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Launch(m) => write!(f, "error: {m}"),
            RunError::Unsupported { what, at } => write!(f, "{at}: error: unsupported instruction `{what}` (the interpreter does not execute it)"),
            RunError::Fault { message, thread, at } => write!(f, "{at}: error: {message} (thread {thread})"),
            RunError::Deadlock(m) => write!(f, "error: barrier deadlock: {m}"),
            RunError::StepLimit { limit, thread, at } => write!(f, "{at}: error: step limit of {limit} instructions reached (thread {thread}); raise it with --max-steps"),
            RunError::Trap { thread, at } => write!(f, "{at}: error: `trap` executed by thread {thread}"),
            RunError::Undefined { message, thread, at } => write!(f, "{at}: error: undefined behaviour: {message} (thread {thread})"),
            RunError::AssertFailed { message, file, line, function, thread, at } => write!(f, "{at}: error: {file}:{line}: {function}: assertion `{message}` failed (thread {thread})"),
        }
    }
}

impl std::error::Error for RunError {}

/// Runs `launch.kernel` of a parsed module. `file` and `text` give
/// positions in error messages.
pub fn run(module: &Module, source_map: &SourceMap, file: &str, text: &[u8], launch: &Launch) -> Result<RunOutput, RunError> {
    Prepared::new(module, source_map, file, text, launch.buffers.len())?.run(launch)
}

/// [`run`] with every instruction through the reference path (no
/// pre-decoded fast path): what the fast path is checked against.
pub fn run_without_fast_path(module: &Module, source_map: &SourceMap, file: &str, text: &[u8], launch: &Launch) -> Result<RunOutput, RunError> {
    let mut prog = program::Program::prepare(module, source_map, file, text, launch.buffers.len())?;
    prog.fast_path = false;
    prog.run(launch)
}

/// A parsed module laid out and pre-decoded once, to run many launches
/// that pass the same number of buffers (other shapes, other inputs):
/// [`run`] in two steps, with the first step done once.
pub struct Prepared<'m>(program::Program<'m>);

impl<'m> Prepared<'m> {
    /// Prepares `module` for launches of `buffers` buffers. `file` and
    /// `text` give positions in error messages.
    pub fn new(module: &'m Module, source_map: &SourceMap, file: &str, text: &'m [u8], buffers: usize) -> Result<Prepared<'m>, RunError> {
        program::Program::prepare(module, source_map, file, text, buffers).map(Prepared)
    }

    /// Runs `launch.kernel`, as [`run`] does; a launch with another number
    /// of buffers than the module was prepared for is refused.
    pub fn run(&self, launch: &Launch) -> Result<RunOutput, RunError> {
        self.0.run(launch)
    }
}
