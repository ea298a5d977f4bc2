"""CUDA C++ to PTX with NVIDIA's NVRTC library (through ctypes)."""
import ctypes, os

class Nvrtc:
    def __init__(self, libdir):
        self.lib = ctypes.CDLL(os.path.join(libdir, "libnvrtc.so.12"))

    def compile(self, source, name, options):
        lib = self.lib
        prog = ctypes.c_void_p()
        r = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None)
        if r != 0:
            raise RuntimeError(f"nvrtcCreateProgram failed ({r})")
        opts = [o.encode() for o in options]
        r = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        if r != 0:
            raise RuntimeError(f"NVRTC cannot compile {name} with {options}:\n{log.value.decode()}")
        lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
        ptx = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetPTX(prog, ptx)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return ptx.value.decode()
