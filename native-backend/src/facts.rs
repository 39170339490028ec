//! A tensor's metadata read straight from libtorch, in one call.
//!
//! Why: every tch query (`device()`, `kind()`, `size()`, `data_ptr()`, …) is a C call followed
//! by a check of the shim's thread-local error slot (two more calls and a TLS lookup). A small
//! native call reads about thirty such facts, and those checks alone were a quarter of its
//! time. [`Facts::of`] reads what the boundary and the small-size fast paths need through one
//! call of our own C++ shim (`src/shim.cpp`), which reports failure by its return value; the
//! rest read several facts through tch's shim and check its error slot once.

use std::os::raw::c_int;
use std::sync::OnceLock;

use tch::{Device, Kind, Tensor};
use torch_sys::C_tensor;

/// Device, dtype code, rank, (for rank ≤ 2) sizes and `requires_grad` of a tensor.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    pub device: Device,
    scalar_type: c_int,
    pub rank: usize,
    /// The sizes when `rank ≤ 2` (unused entries 1).
    pub sizes: [i64; 2],
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub requires_grad: bool,
}

/// `tl_tensor_facts` of src/shim.cpp.
#[repr(C)]
struct RawFacts {
    device_type: i32,
    device_index: i32,
    scalar_type: i32,
    requires_grad: i32,
    rank: i64,
    sizes: [i64; 2],
}

/// `tl_dense_layout` of src/shim.cpp.
#[repr(C)]
struct RawLayout {
    device_type: i32,
    scalar_type: i32,
    rank: i32,
    contiguous: i32,
    sizes: [i64; 4],
    data: *mut std::ffi::c_void,
}

extern "C" {
    fn tl_tensor_facts_of(tensor: *const C_tensor, out: *mut RawFacts) -> c_int;
    fn tl_dense_layout_of(tensor: *const C_tensor, out: *mut RawLayout) -> c_int;
}

/// What a kernel over a contiguous float32 CPU tensor of rank ≤ 4 reads of it, in one call of
/// our shim and no allocation (tch's `size()` alone allocates and checks its error slot).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// float32 on the CPU, contiguous
    pub dense_f32_cpu: bool,
    pub rank: usize,
    /// The sizes, the first `rank` entries.
    pub sizes: [i64; 4],
    pub data: *mut f32,
}

impl Layout {
    /// The layout, or `None` when the rank is above 4 or libtorch threw.
    pub fn of(t: &Tensor) -> Option<Layout> {
        let mut raw = RawLayout { device_type: -1, scalar_type: -1, rank: 0, contiguous: 0, sizes: [1; 4], data: std::ptr::null_mut() };
        // SAFETY: `t` is a live tensor handle; the shim only reads it, catches every C++
        // exception and reports failure by its return value.
        if unsafe { tl_dense_layout_of(t.as_ptr(), &mut raw) } != 0 {
            return None;
        }
        let dense_f32_cpu = raw.contiguous == 1 && device_of(raw.device_type, -1) == Device::Cpu && scalar_type_code(Kind::Float) == Some(raw.scalar_type);
        Some(Layout { dense_f32_cpu, rank: raw.rank as usize, sizes: raw.sizes, data: raw.data as *mut f32 })
    }
}

impl Facts {
    /// The facts, or `None` when libtorch threw (an undefined tensor; the caller then asks tch,
    /// which raises its error).
    pub fn of(t: &Tensor) -> Option<Facts> {
        let mut raw = RawFacts { device_type: 0, device_index: -1, scalar_type: 0, requires_grad: 0, rank: 0, sizes: [1, 1] };
        // SAFETY: `t` is a live tensor handle; the shim only reads it, catches every C++
        // exception and writes `raw` only on success (0).
        if unsafe { tl_tensor_facts_of(t.as_ptr(), &mut raw) } != 0 {
            return None;
        }
        Some(Facts {
            device: device_of(raw.device_type, raw.device_index),
            scalar_type: raw.scalar_type,
            rank: raw.rank as usize,
            sizes: raw.sizes,
            requires_grad: raw.requires_grad != 0,
        })
    }

    /// Whether the dtype is `kind` (`Float`, `Int64` or `Bool`, the dtypes annotations name).
    pub fn is_kind(&self, kind: Kind) -> bool {
        scalar_type_code(kind) == Some(self.scalar_type)
    }
}

/// Whether `t` is contiguous, and its data pointer, with one error check; `None` on error.
pub(crate) fn contiguous_data(t: &Tensor) -> Option<(bool, *mut f32)> {
    let raw = raw(t);
    // SAFETY: as in `Facts::of`.
    let (contiguous, data) = unsafe { (torch_sys::at_is_contiguous(raw) == 1, torch_sys::at_data_ptr(raw) as *mut f32) };
    no_error().then_some((contiguous, data))
}

fn raw(t: &Tensor) -> *mut C_tensor {
    // The shim takes a mutable pointer but these queries never write through it.
    t.as_ptr() as *mut C_tensor
}

/// Clears the shim's error slot; `true` when it was empty.
fn no_error() -> bool {
    take_error().is_none()
}

/// Takes the message from the shim's error slot, leaving it empty.
pub(crate) fn take_error() -> Option<String> {
    // SAFETY: returns and resets this thread's slot; a non-null value is a `strdup`ed,
    // NUL-terminated string we now own and free.
    unsafe {
        let error = torch_sys::get_and_reset_last_err();
        if error.is_null() {
            return None;
        }
        let message = std::ffi::CStr::from_ptr(error).to_string_lossy().into_owned();
        libc::free(error as *mut libc::c_void);
        Some(message)
    }
}

#[cfg(feature = "python")]
/// `Some(tensor)` (a new reference to the same storage) for a `torch.Tensor` object or
/// subclass, `None` for anything else; libtorch's message if unpacking failed.
///
/// # Safety
/// `object` is a live Python object and the GIL is held.
pub(crate) unsafe fn unpack(object: *mut torch_sys::python::C_pyobject) -> Result<Option<Tensor>, String> {
    // SAFETY: the caller's guarantees; both shim calls catch C++ exceptions.
    unsafe {
        if !torch_sys::python::thp_variable_check(object) {
            return take_error().map_or(Ok(None), Err);
        }
        let tensor = torch_sys::python::thp_variable_unpack(object);
        if let Some(message) = take_error() {
            return Err(message);
        }
        if tensor.is_null() {
            return Err("THPVariable_Unpack returned no tensor".to_string());
        }
        Ok(Some(Tensor::from_ptr(tensor)))
    }
}

/// `torch.get_num_threads()` (cannot fail; no error check needed).
pub(crate) fn num_threads() -> i32 {
    // SAFETY: reads libtorch's thread-pool setting.
    unsafe { torch_sys::at_get_num_threads() }
}

/// A `c10::DeviceType` and index as a tch device. Native code runs on the CPU and CUDA only;
/// any other device becomes `Mps`, which no annotation names, so the boundary refuses it.
fn device_of(device_type: i32, index: i32) -> Device {
    match device_type {
        0 => Device::Cpu,
        1 => Device::Cuda(index.max(0) as usize),
        _ => Device::Mps,
    }
}

/// libtorch's `ScalarType` code of `kind`, learnt once from a tensor of that kind (so it never
/// depends on a copy of c10's numbering).
fn scalar_type_code(kind: Kind) -> Option<c_int> {
    static FLOAT: OnceLock<Option<c_int>> = OnceLock::new();
    static INT64: OnceLock<Option<c_int>> = OnceLock::new();
    static INT32: OnceLock<Option<c_int>> = OnceLock::new();
    static BOOL: OnceLock<Option<c_int>> = OnceLock::new();
    let learn = |kind: Kind| -> Option<c_int> {
        let probe = Tensor::f_empty([0], (kind, Device::Cpu)).ok()?;
        // SAFETY: a live tensor; the result is checked below.
        let code = unsafe { torch_sys::at_scalar_type(raw(&probe)) };
        no_error().then_some(code)
    };
    match kind {
        Kind::Float => *FLOAT.get_or_init(|| learn(Kind::Float)),
        Kind::Int64 => *INT64.get_or_init(|| learn(Kind::Int64)),
        Kind::Int => *INT32.get_or_init(|| learn(Kind::Int)),
        Kind::Bool => *BOOL.get_or_init(|| learn(Kind::Bool)),
        _ => None,
    }
}

#[cfg(feature = "python")]
/// The tensor handle inside a plain `torch.Tensor` or `nn.Parameter` object, borrowed (never
/// to be dropped: the object owns it), or `None` for anything else (a subclass, another
/// type) or when this libtorch's object layout is not the one checked at first use.
///
/// Why: `THPVariable_Unpack` copies the handle into a new heap `at::Tensor` (an allocation,
/// an atomic increment, then a decrement and a free when the call ends) and two shim calls
/// with their error checks: a tenth of a one-op call. A `THPVariable` holds its `at::Tensor`
/// right after the object header, and tch's tensor pointer is a pointer to an `at::Tensor`,
/// so the handle can be lent in place. The layout is checked once against
/// `THPVariable_Unpack` on a probe tensor; if it differs, every call takes the copying path.
///
/// # Safety
/// `object` stays alive, and the GIL held, for as long as the returned handle is used.
pub(crate) unsafe fn borrow_exact(object: &pyo3::Bound<'_, pyo3::PyAny>) -> Option<std::mem::ManuallyDrop<Tensor>> {
    let layout = EXACT_LAYOUT.get_or_init(|| learn_exact_layout(object.py())).as_ref()?;
    let ty = unsafe { pyo3::ffi::Py_TYPE(object.as_ptr()) } as usize;
    if ty != layout.tensor_type && ty != layout.parameter_type {
        return None;
    }
    // SAFETY: an exact `torch.Tensor`/`nn.Parameter` object holds its `at::Tensor` at this
    // offset (checked in `learn_exact_layout`); `ManuallyDrop` keeps tch from freeing it.
    let handle = unsafe { (object.as_ptr() as *mut u8).add(layout.offset) } as *mut C_tensor;
    Some(std::mem::ManuallyDrop::new(unsafe { Tensor::from_ptr(handle) }))
}

#[cfg(feature = "python")]
/// The two exact types whose handle can be lent, and where it lies in the object.
struct ExactLayout {
    tensor_type: usize,
    parameter_type: usize,
    offset: usize,
}

#[cfg(feature = "python")]
static EXACT_LAYOUT: OnceLock<Option<ExactLayout>> = OnceLock::new();

#[cfg(feature = "python")]
/// Finds `torch.Tensor` and `nn.Parameter`, then checks on a probe tensor that the word after
/// the object header is the `TensorImpl` pointer `THPVariable_Unpack` returns a handle to.
fn learn_exact_layout(py: pyo3::Python<'_>) -> Option<ExactLayout> {
    use pyo3::types::{PyAnyMethods, PyModule};
    let torch = PyModule::import(py, "torch").ok()?;
    let tensor_type = torch.getattr("Tensor").ok()?;
    let parameter_type = torch.getattr("nn").ok()?.getattr("Parameter").ok()?;
    let probe = torch.getattr("empty").ok()?.call1((0,)).ok()?;
    if !probe.get_type().is(&tensor_type) {
        return None;
    }
    let offset = std::mem::size_of::<pyo3::ffi::PyObject>();
    // SAFETY: `probe` is a live tensor object (we hold it and the GIL); `unpack` returns a new
    // handle we own and drop; an `at::Tensor` is one `TensorImpl` pointer.
    let matches = unsafe {
        let copy = unpack(probe.as_ptr() as *mut torch_sys::python::C_pyobject).ok()??;
        let in_object = *((probe.as_ptr() as *const u8).add(offset) as *const *const std::ffi::c_void);
        let in_copy = *(copy.as_ptr() as *const *const std::ffi::c_void);
        !in_object.is_null() && in_object == in_copy
    };
    matches.then(|| ExactLayout {
        tensor_type: tensor_type.as_ptr() as usize,
        parameter_type: parameter_type.as_ptr() as usize,
        offset,
    })
}
