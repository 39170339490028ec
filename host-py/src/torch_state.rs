//! Two flags of libtorch's thread state read in C: whether an autocast region is enabled (for
//! the CPU or CUDA) and whether grad mode is on. torch's Python functions for them cost
//! ~0.1 µs and ~0.04 µs per call (`torch._C._is_any_autocast_enabled` walks every device
//! type); the C++ functions behind them read a thread-local flag.
//!
//! This crate does not link libtorch (the analyzer host works without torch), so the two
//! functions are found at run time in the libraries torch has already loaded
//! (`dlopen(RTLD_NOLOAD)`, nothing is loaded here). When either is missing (another libtorch
//! build, a renamed symbol) the caller keeps torch's Python functions.

use std::ffi::{c_void, CString};
use std::sync::OnceLock;

/// libtorch's C++ functions (C++ linkage, plain C ABI for these signatures).
pub struct TorchState {
    /// `at::autocast::is_autocast_enabled(c10::DeviceType)`: an `int8_t` enum in
    autocast_enabled_for: unsafe extern "C" fn(i8) -> bool,
    /// `c10::GradMode::is_enabled()`
    grad_mode_enabled: unsafe extern "C" fn() -> bool,
}

static STATE: OnceLock<Option<TorchState>> = OnceLock::new();

impl TorchState {
    /// The functions, resolved once per process from torch's `lib` folder.
    pub fn get(lib_dir: &str) -> Option<&'static TorchState> {
        STATE.get_or_init(|| Self::resolve(lib_dir)).as_ref()
    }

    fn resolve(lib_dir: &str) -> Option<TorchState> {
        let autocast = symbol(&format!("{lib_dir}/libtorch_cpu.so"), "_ZN2at8autocast19is_autocast_enabledEN3c1010DeviceTypeE")?;
        let grad = symbol(&format!("{lib_dir}/libc10.so"), "_ZN3c108GradMode10is_enabledEv")?;
        // SAFETY: the symbols are the functions named above, whose signatures these are.
        unsafe {
            Some(TorchState {
                autocast_enabled_for: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(i8) -> bool>(autocast),
                grad_mode_enabled: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> bool>(grad),
            })
        }
    }

    /// Whether an autocast region is on for the CPU or CUDA (`c10::DeviceType` 0 and 1).
    pub fn autocast_enabled(&self) -> bool {
        // SAFETY: reads of thread-local state without preconditions; they cannot throw.
        unsafe { (self.autocast_enabled_for)(0) || (self.autocast_enabled_for)(1) }
    }

    pub fn grad_enabled(&self) -> bool {
        // SAFETY: as above.
        unsafe { (self.grad_mode_enabled)() }
    }
}

/// `name` in the already loaded library `path` (None when it is not loaded or lacks it). The
/// handle is kept open for the life of the process, as torch keeps the library.
fn symbol(path: &str, name: &str) -> Option<*mut c_void> {
    let (path, name) = (CString::new(path).ok()?, CString::new(name).ok()?);
    // SAFETY: C strings live across the calls; RTLD_NOLOAD never loads (no initialisers run).
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if handle.is_null() {
            return None;
        }
        let found = libc::dlsym(handle, name.as_ptr());
        (!found.is_null()).then_some(found)
    }
}
